// Standard Workload Format: see docs/formats/swf.md for the rules this file implements.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "common/strings.h"
#include "sim/readers.h"
#include "sim/text_scan.h"

namespace berth::sim::internal {
namespace {

constexpr size_t kSwfFields = 18;

constexpr std::array<std::string_view, kSwfFields> kFieldNames = {
    "job id",           "submit time",   "wait time",       "run time",       "allocated procs",
    "average CPU time", "used memory",   "requested procs", "requested time", "requested memory",
    "status",           "user id",       "group id",        "executable id",  "queue",
    "partition",        "preceding job", "think time"};

// The fields of one job line that berth uses, before the pool size P is known. Kept small
// because a million-line trace holds a million of these at once.
struct SwfRecord {
  uint64_t id = 0;
  int64_t line = 0;
  int64_t submit = 0;
  int64_t run = 0;
  int64_t requested = 0;
  int64_t procs = 0;
  int64_t user = 0;
  int64_t group = 0;
  bool failed = false;
};

bool IsFieldSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// Header lines look like "; MaxProcs: 240". Unknown keys and values that are not numbers are
// notes for humans and are ignored.
void ParseHeaderLine(std::string_view line, TraceHeader* header) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  std::string_view key = TrimWhitespace(line.substr(0, colon));
  std::string_view value = TrimWhitespace(line.substr(colon + 1));
  value = value.substr(0, std::min(value.size(), value.find_first_of(" \t")));
  int64_t* target = nullptr;
  if (key == "MaxProcs") target = &header->max_procs;
  if (key == "MaxNodes") target = &header->max_nodes;
  if (key == "UnixStartTime") target = &header->unix_start_time;
  if (target == nullptr) return;
  if (std::optional<int64_t> v = ParseInteger(value)) *target = *v;
}

// Parses one job line into *record, or returns false with the reason in *error. Fields after
// the 18th (extended SWF: node lists, queue names, resource strings) are ignored.
bool ParseJobLine(std::string_view line, SwfRecord* record, std::string* error) {
  std::array<std::string_view, kSwfFields> tokens;
  size_t count = 0;
  size_t i = 0;
  while (count < kSwfFields) {
    while (i < line.size() && IsFieldSpace(line[i])) ++i;
    if (i == line.size()) break;
    size_t start = i;
    while (i < line.size() && !IsFieldSpace(line[i])) ++i;
    tokens[count++] = line.substr(start, i - start);
  }
  if (count < kSwfFields) {
    *error = "expected 18 fields, found " + std::to_string(count);
    return false;
  }
  std::array<int64_t, kSwfFields> v{};
  for (size_t k = 0; k < kSwfFields; ++k) {
    std::optional<int64_t> n = ParseNumber(tokens[k]);
    if (!n) {
      *error = "field " + std::to_string(k + 1) + " (" + std::string(kFieldNames[k]) +
               ") is not a number in range: " + Quote(tokens[k]);
      return false;
    }
    v[k] = *n;
  }
  if (v[0] < 0) {
    *error = "negative job id " + std::to_string(v[0]);
    return false;
  }
  if (v[1] < 0) {
    *error = "negative submit time " + std::to_string(v[1]);
    return false;
  }
  record->id = static_cast<uint64_t>(v[0]);
  record->submit = v[1];
  record->run = v[3];
  record->procs = v[4] > 0 ? v[4] : v[7];
  record->requested = v[8] > 0 ? v[8] : v[3];
  record->failed = v[10] == 0;
  record->user = v[11];
  record->group = v[12];
  return true;
}

// P: --procs, else the header's MaxProcs, else its MaxNodes, else the largest job.
int64_t PoolProcs(const ReadOptions& options, const TraceHeader& header, int64_t largest) {
  if (options.procs > 0) return options.procs;
  if (header.max_procs > 0) return header.max_procs;
  if (header.max_nodes > 0) return header.max_nodes;
  return largest;
}

void FillTraceJob(const SwfRecord& r, TraceJob* job) {
  job->trace_id = r.id;
  job->line = r.line;
  job->submit = r.submit;
  job->run_time = r.run;
  job->requested = r.requested;
  job->procs = r.procs;
  if (r.user > 0) job->user = "u" + std::to_string(r.user);
  if (r.group > 0) job->account = "g" + std::to_string(r.group);
  job->exit_code = r.failed ? 1 : 0;
}

}  // namespace

Status ReadSwf(std::string_view text, std::string_view name, const ReadOptions& options,
               Trace* trace) {
  BadLineSink bad(name, options.skip_bad, trace);
  std::vector<SwfRecord> records;
  records.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  std::string error;
  int64_t largest = 0;
  LineScanner lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    line = TrimWhitespace(line);
    if (line.empty()) continue;
    if (line.front() == ';') {
      ParseHeaderLine(line.substr(1), &trace->header);
      continue;
    }
    SwfRecord record;
    if (!ParseJobLine(line, &record, &error)) {
      BERTH_RETURN_IF_ERROR(bad.Report(lines.line_number(), error));
      continue;
    }
    record.line = lines.line_number();
    largest = std::max(largest, record.procs);
    records.push_back(record);
  }

  const int64_t pool = PoolProcs(options, trace->header, largest);
  trace->largest_procs = largest;
  trace->pool_procs = pool;
  size_t kept = 0;
  for (const SwfRecord& r : records) {
    if (r.run > 0 && r.procs > 0 && r.procs <= pool) ++kept;
  }
  trace->jobs.reserve(kept);
  for (const SwfRecord& r : records) {
    if (r.run > 0 && r.procs > 0 && r.procs <= pool) {
      FillTraceJob(r, &trace->jobs.emplace_back());  // in place: a TraceJob is ~800 bytes
    } else {
      ++trace->dropped;
    }
  }
  return Status::Ok();
}

}  // namespace berth::sim::internal
