#include "common/units.h"

#include <array>
#include <cstdint>
#include <cstdio>

namespace berth {
namespace {

Status Invalid(std::string_view text, std::string_view why) {
  return Status::InvalidArgument("invalid memory size '" + std::string(text) +
                                 "': " + std::string(why));
}

// MiB per unit letter M, G or T; -1 for anything else (K divides instead).
int64_t UnitMultiplier(char unit) {
  switch (unit) {
    case 'm':
    case 'M':
      return 1;
    case 'g':
    case 'G':
      return 1024;
    case 't':
    case 'T':
      return INT64_C(1024) * 1024;
    default:
      return -1;
  }
}

}  // namespace

Result<int64_t> ParseMemoryMiB(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) {
    if (!text.empty() && text[0] == '-') return Invalid(text, "negative sizes are not allowed");
    return Invalid(text, "expected a number with an optional unit K, M, G or T");
  }
  int64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    if (value > (INT64_MAX - 9) / 10) return Invalid(text, "size too large");
    value = value * 10 + (text[i] - '0');
  }
  std::string_view unit = text.substr(digits);
  if (unit.size() == 2 && (unit[1] == 'B' || unit[1] == 'b')) unit = unit.substr(0, 1);
  if (unit.empty()) {
    // MiB by default.
  } else if (unit.size() == 1 && (unit[0] == 'k' || unit[0] == 'K')) {
    value = value / 1024 + (value % 1024 != 0 ? 1 : 0);  // round up to whole MiB, as Slurm does
  } else if (unit.size() == 1 && UnitMultiplier(unit[0]) > 0) {
    int64_t mult = UnitMultiplier(unit[0]);
    if (value > kMaxMemoryMiB / mult) return Invalid(text, "size too large");
    value *= mult;
  } else {
    return Invalid(text, "unknown unit '" + std::string(text.substr(digits)) +
                             "' (use K, M, G or T, optionally followed by B)");
  }
  if (value > kMaxMemoryMiB) return Invalid(text, "size too large");
  return value;
}

std::string FormatMemoryMiB(int64_t mib) {
  if (mib < 0) return std::to_string(mib) + "M";
  static constexpr char kUnits[] = "MGTP";
  double num = static_cast<double>(static_cast<float>(mib));  // Slurm passes (float)value
  if (static_cast<int64_t>(num) == 0) return "0";
  size_t unit = 0;
  while (num >= 1024 && static_cast<uint64_t>(num) % 512 == 0) {
    num /= 1024;
    ++unit;
  }
  char suffix = unit < 4 ? kUnits[unit] : '?';
  auto whole = static_cast<uint64_t>(num);
  std::array<char, 64> buf{};
  if (static_cast<double>(whole) == num) {
    std::snprintf(buf.data(), buf.size(), "%llu%c", static_cast<unsigned long long>(whole), suffix);
  } else {
    std::snprintf(buf.data(), buf.size(), "%.2f%c", num, suffix);
  }
  return buf.data();
}

}  // namespace berth
