#include "agent/output_path.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "common/strings.h"

namespace berth::agent {

namespace {

// Slurm's NO_VAL, which it prints for %a outside job arrays.
constexpr uint32_t kNoVal = 0xfffffffe;
constexpr int kMaxWidth = 10;

std::string Padded(uint64_t value, int width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*llu", width, static_cast<unsigned long long>(value));
  return buf;
}

// The expansion of letter `c` with zero-padding `width`; false for an unknown letter.
bool ExpandField(char c, int width, const OutputPatternFields& f, std::string* out) {
  bool array = f.array_task_id >= 0;
  switch (c) {
    case 'j':
    case 'J':
      *out += Padded(f.job_id, width);
      return true;
    case 'A':
      *out += Padded(array ? f.array_job_id : f.job_id, width);
      return true;
    case 'a':
      *out += Padded(array ? static_cast<uint32_t>(f.array_task_id) : kNoVal, width);
      return true;
    case 'n':
      *out += Padded(static_cast<uint32_t>(f.node_index), width);
      return true;
    case 't':
      *out += Padded(0, width);
      return true;
    case 's':
      *out += "batch";
      return true;
    case 'x':
      *out += f.job_name;
      return true;
    case 'u':
      *out += f.user;
      return true;
    case 'N':
      *out += f.node_name;
      return true;
    default:
      return false;
  }
}

std::string RemoveBackslashes(std::string_view pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\') {
      out += pattern[i];
    } else if (i + 1 < pattern.size() && pattern[i + 1] == '\\') {
      out += '\\';
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string ExpandOutputPattern(std::string_view pattern, const OutputPatternFields& fields) {
  if (pattern.find('\\') != std::string_view::npos) return RemoveBackslashes(pattern);
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i++];
      continue;
    }
    if (pattern[i + 1] == '%') {
      out += '%';
      i += 2;
      continue;
    }
    size_t j = i + 1;
    int width = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) {
      width = std::min(kMaxWidth * 10, width * 10 + (pattern[j] - '0'));
      ++j;
    }
    width = std::min(width, kMaxWidth);
    if (j >= pattern.size()) {  // "%52" at the end: Slurm keeps only the last digit
      out += pattern[j - 1];
      break;
    }
    if (!ExpandField(pattern[j], width, fields, &out)) {
      // Unknown: Slurm keeps "%c", or with a width the last digit and the letter.
      out += j > i + 1 ? pattern.substr(j - 1, 2) : pattern.substr(i, 2);
    }
    i = j + 1;
  }
  return out;
}

std::string OutputPath(std::string_view pattern, std::string_view default_pattern,
                       const OutputPatternFields& fields, std::string_view work_dir) {
  if (pattern.empty()) pattern = default_pattern;
  if (AllDigits(pattern)) {
    // A task number: the batch step is task 0.
    if (pattern.find_first_not_of('0') != std::string_view::npos) return "/dev/null";
  }
  std::string name = ExpandOutputPattern(pattern, fields);
  if (!name.empty() && name.front() == '/') return name;
  std::string path(work_dir);
  if (path.empty() || path.back() != '/') path += '/';
  return path + name;
}

std::string_view DefaultStdoutPattern(bool array_task) {
  return array_task ? "slurm-%A_%a.out" : "slurm-%j.out";
}

}  // namespace berth::agent
