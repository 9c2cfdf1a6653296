#include "common/strings.h"

#include <algorithm>

namespace berth {
namespace {

std::vector<std::string> SplitDroppingEmpty(std::string_view text, char sep, bool trim) {
  std::vector<std::string> out;
  for (std::string_view item : Split(text, sep)) {
    if (trim) item = Trim(item);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

}  // namespace

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ToLowerAscii(c);
  return out;
}

std::string ToUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ToUpperAscii(c);
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLowerAscii(a[i]) != ToLowerAscii(b[i])) return false;
  }
  return true;
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view word, size_t pos) {
  return pos <= s.size() && s.size() - pos >= word.size() &&
         EqualsIgnoreCase(s.substr(pos, word.size()), word);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view TrimWhitespace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

std::vector<std::string> SplitList(std::string_view text, char sep) {
  return SplitDroppingEmpty(text, sep, /*trim=*/true);
}

std::vector<std::string> SplitNonEmpty(std::string_view text, char sep) {
  return SplitDroppingEmpty(text, sep, /*trim=*/false);
}

std::string Printable(std::string_view s, size_t max_chars) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max_chars; ++i) {
    auto u = static_cast<unsigned char>(s[i]);
    out += (u >= 0x20 && u < 0x7f) ? s[i] : '?';
  }
  return out;
}

std::string QuoteForMessage(std::string_view s, size_t max_chars) {
  return "'" + Printable(s, max_chars) + (s.size() > max_chars ? "...'" : "'");
}

bool IsUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80;  // the range the second byte must fall in (RFC 3629's table)
    unsigned char hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) {
      len = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      len = 3;
      if (b == 0xe0) lo = 0xa0;  // no overlong 3-byte form
      if (b == 0xed) hi = 0x9f;  // no UTF-16 surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      len = 4;
      if (b == 0xf0) lo = 0x90;  // no overlong 4-byte form
      if (b == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
    } else {
      return false;  // a continuation byte first, an overlong 2-byte lead, or 0xf5..0xff
    }
    if (s.size() - i < len) return false;
    const auto second = static_cast<unsigned char>(s[i + 1]);
    if (second < lo || second > hi) return false;
    for (size_t k = 2; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < 0x80 || c > 0xbf) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace berth
