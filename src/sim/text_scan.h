// Helpers that every trace reader shares: walking lines, splitting fields, reading numbers and
// calendar dates, and turning malformed lines into errors (or counting them, with --skip-bad).
// Internal to src/sim. Nothing here allocates per field or throws.
#ifndef BERTH_SIM_TEXT_SCAN_H_
#define BERTH_SIM_TEXT_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/trace.h"

namespace berth::sim::internal {

// The largest magnitude a number in a trace may have. Larger values are malformed rather than
// silently wrapped: 1e15 s is 30 million years, and sums of a few such values still fit int64.
inline constexpr int64_t kMaxTraceNumber = 1'000'000'000'000'000;

// How many "file:line: ..." messages a Trace keeps with --skip-bad.
inline constexpr size_t kMaxBadLineMessages = 20;

// Walks the lines of a text. A line ends at '\n'; a '\r' before it is dropped; the last line
// need not end with '\n'. A UTF-8 byte order mark at the very start is skipped.
class LineScanner {
 public:
  explicit LineScanner(std::string_view text);

  // Stores the next line in *line and returns true, or returns false at the end.
  bool Next(std::string_view* line);
  // The 1-based number of the line Next returned last.
  int64_t line_number() const { return line_number_; }

 private:
  std::string_view rest_;
  int64_t line_number_ = 0;
  bool done_ = false;
};

// The extension of a path's file name without the dot, lower-cased ("" when none).
std::string LowerExtension(std::string_view path);
// The file name without directories.
std::string_view BaseName(std::string_view path);

// A whole token as an integer: optional sign, then digits. Rejects empty text, trailing junk
// and magnitudes above kMaxTraceNumber.
std::optional<int64_t> ParseInteger(std::string_view s);
// A whole token as a number that may be decimal or use an exponent ("552.21", "66.0", "1e3"),
// rounded down to an integer. Rejects NaN, infinities, empty text, trailing junk and
// magnitudes above kMaxTraceNumber.
std::optional<int64_t> ParseNumber(std::string_view s);

// Days from 1970-01-01 to the given proleptic Gregorian date (negative before 1970).
// REQUIRES: 1 <= month <= 12, 1 <= day <= 31.
int64_t DaysFromCivil(int64_t year, int month, int day);
// "2017-10-09 07:01:55" (a 'T' may stand for the space; ":SS" may be left out) as seconds since
// 1970-01-01 00:00:00, reading the time as UTC: pure calendar arithmetic, no time zones, so the
// differences between two stamps of one trace are right except across a DST change.
std::optional<int64_t> ParseDateTime(std::string_view s);

// The most characters of a bad value that a trace reader's message shows.
inline constexpr size_t kMaxQuoted = 40;
// The text for a message: quoted, cut to kMaxQuoted characters, non-printable bytes shown as '?'
// (QuoteForMessage in common/strings.h).
std::string Quote(std::string_view s);

// Splits one CSV line at ','. A field may be quoted with '"' ("" inside stands for a quote);
// spaces around fields are dropped (some traces write ", " between fields).
class CsvSplitter {
 public:
  // Returns false, with the reason in *error, for an unterminated quote. The views in fields()
  // point into `line` or into this object; they stay valid until the next Split.
  bool Split(std::string_view line, std::string* error);
  const std::vector<std::string_view>& fields() const { return fields_; }

 private:
  std::vector<std::string_view> fields_;
  std::deque<std::string> unescaped_;  // quoted fields that held "" (a deque keeps addresses)
};

// Applies ReadOptions::skip_bad to malformed lines: the first one fails the read, or each one
// is counted in the trace and the first kMaxBadLineMessages are described there.
class BadLineSink {
 public:
  // `trace` must outlive this object.
  BadLineSink(std::string_view name, bool skip_bad, Trace* trace)
      : name_(name), skip_bad_(skip_bad), trace_(trace) {}

  // Returns InvalidArgument "name:line: what", or OK after recording it when skipping.
  [[nodiscard]] Status Report(int64_t line, std::string_view what);

 private:
  std::string name_;
  bool skip_bad_;
  Trace* trace_;
};

}  // namespace berth::sim::internal

#endif  // BERTH_SIM_TEXT_SCAN_H_
