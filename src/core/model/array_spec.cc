// Follows Slurm 22.05 slurmctld (job_mgr.c: _valid_array_inx, _parse_array_tok) for parsing and
// scontrol's ArrayTaskId=: a long enough arithmetic series in the step form "500-16500:1000",
// other sets as bit_fmt() writes them ("0,4,8,12"; the oracle shows "--array=0,8,16" so).
#include "core/model/array_spec.h"

#include <algorithm>

#include "common/strings.h"

namespace berth::core {
namespace {

std::string Quote(std::string_view s) {
  return "'" + std::string(s) + "'";
}

Status BadToken(std::string_view tok, std::string_view text, std::string_view why) {
  return Status::InvalidArgument("bad array range " + Quote(tok) + " in " + Quote(text) + ": " +
                                 std::string(why));
}

// Reads a decimal number at *pos. Digits only: Slurm's strtol also takes blanks and signs.
Result<int64_t> ReadNumber(std::string_view tok, size_t* pos, std::string_view text) {
  size_t start = *pos;
  while (*pos < tok.size() && IsDigit(tok[*pos])) ++*pos;
  if (*pos == start) return BadToken(tok, text, "expected a number");
  if (*pos - start > 10) return BadToken(tok, text, "number too large");
  int64_t v = 0;
  for (size_t i = start; i < *pos; ++i) v = v * 10 + (tok[i] - '0');
  return v;
}

void SkipCloseBracket(std::string_view tok, size_t* pos) {
  if (*pos < tok.size() && tok[*pos] == ']') ++*pos;
}

// One comma-separated part: "N", "A-B" or "A-B:S", optionally wrapped in '[' ']' as Slurm
// allows. Sets the task ids in `bits`, growing it to the largest id (ids are below `max`, the
// MaxArraySize): sized so, a short array costs little whatever the MaxArraySize.
Status ParseToken(std::string_view tok, std::string_view text, int64_t max,
                  std::vector<bool>* bits) {
  size_t pos = tok[0] == '[' ? 1 : 0;
  BERTH_ASSIGN_OR_RETURN(int64_t first, ReadNumber(tok, &pos, text));
  SkipCloseBracket(tok, &pos);
  int64_t last = first;
  int64_t step = 1;
  if (pos < tok.size() && tok[pos] == '-') {
    ++pos;
    BERTH_ASSIGN_OR_RETURN(last, ReadNumber(tok, &pos, text));
    SkipCloseBracket(tok, &pos);
    if (pos < tok.size() && tok[pos] == ':') {
      ++pos;
      BERTH_ASSIGN_OR_RETURN(step, ReadNumber(tok, &pos, text));
      SkipCloseBracket(tok, &pos);
      if (step <= 0 || step >= max) {
        return BadToken(tok, text, "the step must be between 1 and " + std::to_string(max - 1));
      }
    }
    if (last < first) return BadToken(tok, text, "the end is before the start");
  }
  if (pos != tok.size()) {
    return BadToken(tok, text,
                    "unexpected " + Quote(tok.substr(pos)) + "; expected N, A-B or A-B:STEP");
  }
  if (last >= max) {
    return BadToken(tok, text,
                    "task id " + std::to_string(last) + " is not below MaxArraySize (" +
                        std::to_string(max) + ")");
  }
  if (bits->size() <= static_cast<size_t>(last)) bits->resize(static_cast<size_t>(last) + 1);
  for (int64_t i = first; i <= last; i += step) (*bits)[static_cast<size_t>(i)] = true;
  return Status::Ok();
}

// The "%N" throttle. Slurm reads it with atoi() and ignores values below 1; berth also treats
// "%0" as "no limit" but rejects anything that is not a number.
Result<int32_t> ParseThrottle(std::string_view digits, std::string_view text) {
  bool ok =
      !digits.empty() && digits.size() <= 9 && std::all_of(digits.begin(), digits.end(), IsDigit);
  if (!ok) {
    return Status::InvalidArgument("bad array throttle " + Quote("%" + std::string(digits)) +
                                   " in " + Quote(text) + ": expected %N with N a number");
  }
  int32_t v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

// "first-last:step" when the ids are one arithmetic series of at least six ids, spanning more
// than 10, with a step above 1: the step form scontrol prints (Slurm 22.05.8 shows
// --array=500-17000:1000 as "500-16500:1000", 1-21:4 as "1-21:4"; 1-20:4 (five ids) as
// "1,5,9,13,17" and 1-11:2 (span 10) as "1,3,5,7,9,11"). "" otherwise.
std::string SteppedRange(const std::vector<int32_t>& ids) {
  if (ids.size() < 6 || ids.back() - ids.front() <= 10) return "";
  const int32_t step = ids[1] - ids[0];
  if (step < 2) return "";
  for (size_t i = 2; i < ids.size(); ++i) {
    if (ids[i] - ids[i - 1] != step) return "";
  }
  return std::to_string(ids.front()) + "-" + std::to_string(ids.back()) + ":" +
         std::to_string(step);
}

}  // namespace

Result<ArraySpec> ParseArraySpec(std::string_view text, int32_t max_array_size) {
  ArraySpec spec;
  if (text.empty()) return spec;
  if (max_array_size <= 0 || max_array_size > kSlurmMaxArraySize) {
    return Status::InvalidArgument("job array " + Quote(text) + " cannot be used: MaxArraySize=" +
                                   std::to_string(max_array_size) + " (must be 1 to " +
                                   std::to_string(kSlurmMaxArraySize) + ")");
  }
  size_t percent = text.find('%');
  std::string_view body = text.substr(0, percent);
  if (percent != std::string_view::npos) {
    BERTH_ASSIGN_OR_RETURN(spec.max_running, ParseThrottle(text.substr(percent + 1), text));
  }
  std::vector<bool> bits;
  bool any_token = false;
  size_t start = 0;
  while (start <= body.size()) {
    size_t comma = body.find(',', start);
    std::string_view tok = body.substr(start, comma - start);
    if (!tok.empty()) {  // like strtok(), empty parts between commas are skipped
      BERTH_RETURN_IF_ERROR(ParseToken(tok, text, max_array_size, &bits));
      any_token = true;
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (!any_token) {
    return Status::InvalidArgument("no array task ids in " + Quote(text));
  }
  for (size_t i = 0; i < bits.size(); ++i) {
    if (bits[i]) spec.task_ids.push_back(static_cast<int32_t>(i));
  }
  return spec;
}

std::string FormatArrayTaskIds(const std::vector<int32_t>& task_ids, int32_t max_running) {
  std::vector<int32_t> ids;
  for (int32_t id : task_ids) {
    if (id >= 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out = SteppedRange(ids);
  for (size_t i = 0; i < ids.size() && out.find(':') == std::string::npos;) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (i > 0) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  if (max_running > 0) out += "%" + std::to_string(max_running);
  return out;
}

}  // namespace berth::core
