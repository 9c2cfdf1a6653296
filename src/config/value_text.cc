#include "config/value_text.h"

#include <charconv>
#include <cmath>

#include "common/slurm_time.h"
#include "common/strings.h"

namespace berth::config {
namespace {

Status Bad(std::string reason) {
  return Status::InvalidArgument(std::move(reason));
}

// Reads one licence entry ("name", "name:count", "name*count").
Result<core::NamedCount> ParseLicense(std::string_view item, int64_t min_count) {
  size_t sep = item.find_first_of(":*");
  core::NamedCount lic;
  lic.name = std::string(item.substr(0, sep));
  lic.count = 1;
  if (lic.name.empty()) return Bad("empty licence name in '" + std::string(item) + "'");
  if (sep != std::string_view::npos) {
    Result<int64_t> count = ParseInteger(item.substr(sep + 1), min_count, INT32_MAX);
    if (!count.ok()) {
      return Bad("bad count in '" + std::string(item) + "': " + count.status().message());
    }
    lic.count = *count;
  }
  return lic;
}

}  // namespace

Status InvalidValue(std::string_view what, std::string_view value, std::string_view reason) {
  std::string msg = "invalid " + std::string(what) + " value '" + std::string(value) + "'";
  if (!reason.empty()) msg += ": " + std::string(reason);
  return Status::InvalidArgument(std::move(msg));
}

std::string Reason(const Status& s) {
  const std::string& m = s.message();
  size_t quote_end = m.find("': ");
  if ((m.rfind("invalid ", 0) == 0 || m.rfind("bad ", 0) == 0) && quote_end != std::string::npos) {
    return m.substr(quote_end + 3);
  }
  return m;
}

Result<int64_t> ParseInteger(std::string_view s, int64_t min, int64_t max) {
  auto range = [&] {
    return Bad("expected an integer from " + std::to_string(min) + " to " + std::to_string(max));
  };
  bool negative = !s.empty() && s[0] == '-';
  std::string_view digits = negative ? s.substr(1) : s;
  if (digits.empty() || (negative && min >= 0)) return range();
  int64_t v = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return range();
    if (v > (INT64_MAX - 9) / 10) return range();
    v = v * 10 + (c - '0');
  }
  if (negative) v = -v;
  if (v < min || v > max) return range();
  return v;
}

Result<double> ParseDecimal(std::string_view s) {
  bool any_digit = false;
  int dots = 0;
  for (char c : s) {
    if (IsDigit(c)) {
      any_digit = true;
    } else if (c == '.') {
      ++dots;
    } else {
      return Bad("expected a non-negative decimal number");
    }
  }
  if (!any_digit || dots > 1) return Bad("expected a non-negative decimal number");
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) {
    return Bad("expected a non-negative decimal number");
  }
  return v;
}

Result<bool> ParseBool(std::string_view s) {
  for (const char* yes : {"yes", "true", "up", "1"}) {
    if (EqualsIgnoreCase(s, yes)) return true;
  }
  for (const char* no : {"no", "false", "down", "0"}) {
    if (EqualsIgnoreCase(s, no)) return false;
  }
  return Bad("expected YES or NO");
}

Result<int64_t> ParseSuffixedCount(std::string_view s) {
  constexpr int64_t kMax = INT64_C(1) << 62;
  const std::string_view kSuffixes = "kmgtp";
  int steps = 0;
  if (!s.empty() && !IsDigit(s.back())) {
    size_t pos = kSuffixes.find(ToLowerAscii(s.back()));
    if (pos == std::string_view::npos) return Bad("expected a count with an optional K, M or G");
    steps = static_cast<int>(pos) + 1;
    s.remove_suffix(1);
  }
  Result<int64_t> v = ParseInteger(s, 0, kMax);
  if (!v.ok()) return Bad("expected a count with an optional K, M or G");
  int64_t count = *v;
  for (int i = 0; i < steps; ++i) {
    if (count > kMax / 1024) return Bad("count too large");
    count *= 1024;
  }
  return count;
}

Result<Duration> ParseConfigMinutes(std::string_view s) {
  Result<Duration> secs = ParseTimeSeconds(s);
  if (!secs.ok()) return Bad(Reason(secs.status()));
  if (*secs >= kInfinite) return kInfinite;
  return (*secs + 59) / 60 * 60;
}

Result<std::vector<core::NamedCount>> ParseLicenses(std::string_view s, int64_t min_count) {
  std::vector<core::NamedCount> out;
  for (std::string_view item : Split(s, ',')) {
    BERTH_ASSIGN_OR_RETURN(core::NamedCount lic, ParseLicense(item, min_count));
    bool merged = false;
    for (core::NamedCount& have : out) {
      if (have.name == lic.name) {
        have.count += lic.count;
        merged = true;
      }
    }
    if (!merged) out.push_back(std::move(lic));
  }
  return out;
}

}  // namespace berth::config
