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

}  // namespace berth
