#include "sim/text_scan.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

#include "common/strings.h"

namespace berth::sim::internal {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// Reads exactly `width` digits at s[*pos] into *value.
bool ReadDigits(std::string_view s, size_t* pos, size_t width, int* value) {
  if (*pos + width > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < width; ++i) {
    char c = s[*pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *pos += width;
  *value = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

bool IsLeapYear(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

}  // namespace

LineScanner::LineScanner(std::string_view text) : rest_(text) {
  if (rest_.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    rest_.remove_prefix(kByteOrderMark.size());
  }
  done_ = rest_.empty();
}

bool LineScanner::Next(std::string_view* line) {
  if (done_) return false;
  const char* begin = rest_.data();
  const void* nl = std::memchr(begin, '\n', rest_.size());
  size_t len = nl == nullptr ? rest_.size() : static_cast<const char*>(nl) - begin;
  *line = rest_.substr(0, len);
  if (nl == nullptr) {
    done_ = true;
    rest_ = {};
  } else {
    rest_.remove_prefix(len + 1);
    done_ = rest_.empty();
  }
  if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
  ++line_number_;
  return true;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string LowerExtension(std::string_view path) {
  std::string_view base = BaseName(path);
  size_t dot = base.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  return ToLower(base.substr(dot + 1));
}

std::optional<int64_t> ParseInteger(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  if (v > kMaxTraceNumber || v < -kMaxTraceNumber) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseNumber(std::string_view s) {
  if (std::optional<int64_t> v = ParseInteger(s)) return v;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double d = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(d)) return std::nullopt;
  d = std::floor(d);
  if (d > static_cast<double>(kMaxTraceNumber) || d < -static_cast<double>(kMaxTraceNumber)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(d);
}

// Howard Hinnant's days_from_civil: exact for every proleptic Gregorian date.
int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t yoe = year - era * 400;
  const int64_t mp = (month + 9) % 12;  // March = 0
  const int64_t doy = (153 * mp + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

std::optional<int64_t> ParseDateTime(std::string_view s) {
  s = TrimWhitespace(s);
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(s, &pos, 4, &year) || !Expect(s, &pos, '-') || !ReadDigits(s, &pos, 2, &month) ||
      !Expect(s, &pos, '-') || !ReadDigits(s, &pos, 2, &day)) {
    return std::nullopt;
  }
  if (pos < s.size()) {
    if (s[pos] != ' ' && s[pos] != 'T') return std::nullopt;
    ++pos;
    if (!ReadDigits(s, &pos, 2, &hour) || !Expect(s, &pos, ':') ||
        !ReadDigits(s, &pos, 2, &minute)) {
      return std::nullopt;
    }
    if (pos < s.size() && (!Expect(s, &pos, ':') || !ReadDigits(s, &pos, 2, &second))) {
      return std::nullopt;
    }
    if (pos != s.size()) return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 60) {
    return std::nullopt;
  }
  return DaysFromCivil(year, month, day) * 86400 + int64_t{hour} * 3600 + int64_t{minute} * 60 +
         second;
}

std::string Quote(std::string_view s) {
  return QuoteForMessage(s, kMaxQuoted);
}

bool CsvSplitter::Split(std::string_view line, std::string* error) {
  fields_.clear();
  unescaped_.clear();
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i < line.size() && line[i] == '"') {
      size_t start = ++i;
      bool escaped = false;
      while (true) {
        if (i >= line.size()) {
          *error = "unterminated quote in field " + std::to_string(fields_.size() + 1);
          return false;
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            escaped = true;
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      std::string_view raw = line.substr(start, i - start);
      ++i;  // the closing quote
      if (escaped) {
        std::string& text = unescaped_.emplace_back();
        for (size_t k = 0; k < raw.size(); ++k) {
          text += raw[k];
          if (raw[k] == '"') ++k;  // skip the second of ""
        }
        raw = text;
      }
      fields_.push_back(raw);
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',') {
        *error = "text after the closing quote in field " + std::to_string(fields_.size());
        return false;
      }
    } else {
      size_t comma = line.find(',', i);
      size_t end = comma == std::string_view::npos ? line.size() : comma;
      fields_.push_back(TrimWhitespace(line.substr(i, end - i)));
      i = end;
    }
    if (i >= line.size()) return true;
    ++i;  // the comma
  }
}

Status BadLineSink::Report(int64_t line, std::string_view what) {
  std::string message = name_ + ":" + std::to_string(line) + ": " + std::string(what);
  if (!skip_bad_) return Status::InvalidArgument(std::move(message));
  ++trace_->skipped_bad;
  if (trace_->bad_lines.size() < kMaxBadLineMessages) {
    trace_->bad_lines.push_back(std::move(message));
  }
  return Status::Ok();
}

}  // namespace berth::sim::internal
