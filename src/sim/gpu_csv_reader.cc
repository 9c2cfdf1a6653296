// The GPU cluster CSVs: Philly (Sia-derived), Microsoft ITP, Alibaba GPU pods (2023).
// docs/formats/gpu-traces.md says what each column becomes and which rows are dropped.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "common/strings.h"
#include "sim/readers.h"
#include "sim/text_scan.h"

namespace berth::sim::internal {
namespace {

// Where each column that berth reads sits in a row; -1 = absent. Columns are found by name, so
// their order and any extra columns do not matter.
struct Columns {
  size_t count = 0;
  int timestamp = -1;        // Philly
  int cluster = -1;          // Philly
  int submission_time = -1;  // ITP
  int duration = -1;         // Philly, ITP
  int num_gpus = -1;         // "num_gpus" (Philly) or "num_gpu" (ITP, Alibaba)
  int name = -1;             // Alibaba
  int cpu_milli = -1;
  int memory_mib = -1;
  int gpu_milli = -1;
  int gpu_spec = -1;
  int pod_phase = -1;
  int creation_time = -1;
  int deletion_time = -1;
  int scheduled_time = -1;
};

enum class RowOutcome { kKeep, kDrop, kBad };

std::vector<std::string> HeaderNames(std::string_view header_line) {
  CsvSplitter splitter;
  std::string error;
  std::vector<std::string> names;
  if (!splitter.Split(header_line, &error)) return names;
  for (std::string_view f : splitter.fields()) {
    std::string n(f);
    for (char& c : n) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    names.push_back(std::move(n));
  }
  return names;
}

int IndexOf(const std::vector<std::string>& names, std::string_view name) {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

Columns MapColumns(const std::vector<std::string>& names) {
  Columns c;
  c.count = names.size();
  c.timestamp = IndexOf(names, "timestamp");
  c.cluster = IndexOf(names, "cluster");
  c.submission_time = IndexOf(names, "submission_time");
  c.duration = IndexOf(names, "duration");
  c.num_gpus = IndexOf(names, "num_gpus");
  if (c.num_gpus < 0) c.num_gpus = IndexOf(names, "num_gpu");
  c.name = IndexOf(names, "name");
  c.cpu_milli = IndexOf(names, "cpu_milli");
  c.memory_mib = IndexOf(names, "memory_mib");
  c.gpu_milli = IndexOf(names, "gpu_milli");
  c.gpu_spec = IndexOf(names, "gpu_spec");
  c.pod_phase = IndexOf(names, "pod_phase");
  c.creation_time = IndexOf(names, "creation_time");
  c.deletion_time = IndexOf(names, "deletion_time");
  c.scheduled_time = IndexOf(names, "scheduled_time");
  return c;
}

// The first required column the header lacks for `format`, or "" when all are there.
std::string MissingColumn(const Columns& c, TraceFormat format) {
  switch (format) {
    case TraceFormat::kPhilly:
      if (c.timestamp < 0) return "timestamp";
      if (c.duration < 0) return "duration";
      if (c.num_gpus < 0) return "num_gpus";
      return "";
    case TraceFormat::kItp:
      if (c.submission_time < 0) return "submission_time";
      if (c.duration < 0) return "duration";
      if (c.num_gpus < 0) return "num_gpu";
      return "";
    case TraceFormat::kAlibabaPods: {
      if (c.name < 0) return "name";
      if (c.cpu_milli < 0) return "cpu_milli";
      if (c.memory_mib < 0) return "memory_mib";
      if (c.num_gpus < 0) return "num_gpu";
      if (c.gpu_milli < 0) return "gpu_milli";
      // The short form has none of the three times; the full form needs all of them.
      const bool any_time = c.creation_time >= 0 || c.deletion_time >= 0 || c.scheduled_time >= 0;
      if (any_time && c.creation_time < 0) return "creation_time";
      if (any_time && c.deletion_time < 0) return "deletion_time";
      if (any_time && c.scheduled_time < 0) return "scheduled_time";
      return "";
    }
    default:
      return "";
  }
}

// Reads a numeric column, or sets *error and returns false.
bool Number(const std::vector<std::string_view>& fields, int column, std::string_view label,
            int64_t* out, std::string* error) {
  std::optional<int64_t> v = ParseNumber(fields[column]);
  if (!v) {
    *error = std::string(label) + " is not a number in range: " + Quote(fields[column]);
    return false;
  }
  *out = *v;
  return true;
}

bool NonNegative(int64_t value, std::string_view label, std::string* error) {
  if (value >= 0) return true;
  *error = "negative " + std::string(label) + " " + std::to_string(value);
  return false;
}

// Philly: submit holds the absolute time until the earliest stamp is known.
RowOutcome ParsePhillyRow(const std::vector<std::string_view>& f, const Columns& c, TraceJob* job,
                          std::string* error) {
  std::optional<int64_t> stamp = ParseDateTime(f[c.timestamp]);
  if (!stamp) {
    *error =
        "timestamp is not a date and time like '2017-10-09 07:01:55': " + Quote(f[c.timestamp]);
    return RowOutcome::kBad;
  }
  int64_t run = 0, gpus = 0;
  if (!Number(f, c.duration, "duration", &run, error) ||
      !Number(f, c.num_gpus, "num_gpus", &gpus, error)) {
    return RowOutcome::kBad;
  }
  job->submit = *stamp;
  job->run_time = run;
  job->requested = run;
  job->gpus = gpus;
  if (c.cluster >= 0) job->account = std::string(f[c.cluster]);
  return run > 0 && gpus > 0 ? RowOutcome::kKeep : RowOutcome::kDrop;
}

RowOutcome ParseItpRow(const std::vector<std::string_view>& f, const Columns& c, TraceJob* job,
                       std::string* error) {
  int64_t submit = 0, run = 0, gpus = 0;
  if (!Number(f, c.submission_time, "submission_time", &submit, error) ||
      !NonNegative(submit, "submission_time", error) ||
      !Number(f, c.duration, "duration", &run, error) ||
      !Number(f, c.num_gpus, "num_gpu", &gpus, error)) {
    return RowOutcome::kBad;
  }
  job->submit = submit;
  job->run_time = run;
  job->requested = run;
  job->gpus = gpus;
  return run > 0 && gpus > 0 ? RowOutcome::kKeep : RowOutcome::kDrop;
}

// The pod's submit and run time from the three time columns. Every pod is kept (issue 20: the
// fractional pods are the point of these traces): one that never ran (no scheduled_time, the
// "Pending" pods) runs for the time it stayed in the cluster, deletion - creation; one still there
// when the collection ended (no deletion_time) runs for kAlibabaShortFormRunTime; a run time
// under one second (the stamps' resolution) is one second.
RowOutcome AlibabaTimes(const std::vector<std::string_view>& f, const Columns& c, TraceJob* job,
                        std::string* error) {
  if (c.creation_time < 0) {  // the short form: see kAlibabaShortFormRunTime
    job->submit = 0;
    job->run_time = kAlibabaShortFormRunTime;
    job->requested = kAlibabaShortFormRunTime;
    return RowOutcome::kKeep;
  }
  int64_t creation = 0, deletion = 0, scheduled = 0;
  if (!Number(f, c.creation_time, "creation_time", &creation, error) ||
      !NonNegative(creation, "creation_time", error)) {
    return RowOutcome::kBad;
  }
  job->submit = creation;
  if (f[c.deletion_time].empty()) {
    job->run_time = kAlibabaShortFormRunTime;
    job->requested = kAlibabaShortFormRunTime;
    return RowOutcome::kKeep;
  }
  if (!Number(f, c.deletion_time, "deletion_time", &deletion, error)) return RowOutcome::kBad;
  if (f[c.scheduled_time].empty()) {
    scheduled = creation;  // never ran: its time in the cluster
  } else if (!Number(f, c.scheduled_time, "scheduled_time", &scheduled, error)) {
    return RowOutcome::kBad;
  }
  job->run_time = std::max<int64_t>(1, deletion - scheduled);
  job->requested = job->run_time;
  return RowOutcome::kKeep;
}

RowOutcome ParseAlibabaRow(const std::vector<std::string_view>& f, const Columns& c, TraceJob* job,
                           std::string* error) {
  int64_t cpu_milli = 0, mem = 0, gpus = 0, gpu_milli = 0;
  if (!Number(f, c.cpu_milli, "cpu_milli", &cpu_milli, error) ||
      !NonNegative(cpu_milli, "cpu_milli", error) ||
      !Number(f, c.memory_mib, "memory_mib", &mem, error) ||
      !NonNegative(mem, "memory_mib", error) || !Number(f, c.num_gpus, "num_gpu", &gpus, error) ||
      !NonNegative(gpus, "num_gpu", error) ||
      !Number(f, c.gpu_milli, "gpu_milli", &gpu_milli, error) ||
      !NonNegative(gpu_milli, "gpu_milli", error)) {
    return RowOutcome::kBad;
  }
  job->procs = (cpu_milli + 999) / 1000;
  job->mem_mib = mem;
  job->gpus = gpus;
  job->gpu_milli = gpus == 1 ? gpu_milli : 0;
  if (c.gpu_spec >= 0) {
    std::string_view spec = f[c.gpu_spec];
    job->gpu_type = std::string(TrimWhitespace(spec.substr(0, spec.find('|'))));
  }
  if (c.pod_phase >= 0 && f[c.pod_phase] == "Failed") job->exit_code = 1;
  RowOutcome outcome = AlibabaTimes(f, c, job, error);
  if (outcome == RowOutcome::kKeep && job->procs == 0 && job->gpus == 0) {
    return RowOutcome::kDrop;  // asks for nothing: nothing to schedule
  }
  return outcome;
}

RowOutcome ParseRow(TraceFormat format, const std::vector<std::string_view>& f, const Columns& c,
                    TraceJob* job, std::string* error) {
  switch (format) {
    case TraceFormat::kPhilly:
      return ParsePhillyRow(f, c, job, error);
    case TraceFormat::kItp:
      return ParseItpRow(f, c, job, error);
    default:
      return ParseAlibabaRow(f, c, job, error);
  }
}

// Philly stamps are absolute; the trace starts at the earliest one (rows are not sorted).
void RebaseSubmitTimes(int64_t earliest, Trace* trace) {
  if (earliest == std::numeric_limits<int64_t>::max()) return;
  trace->header.unix_start_time = earliest;
  for (TraceJob& job : trace->jobs) job.submit -= earliest;
}

}  // namespace

Result<TraceFormat> DetectCsvFormat(std::string_view header_line, std::string_view name) {
  const std::vector<std::string> names = HeaderNames(header_line);
  const Columns c = MapColumns(names);
  if (c.timestamp >= 0 && c.duration >= 0 && c.num_gpus >= 0) return TraceFormat::kPhilly;
  if (c.submission_time >= 0 && c.duration >= 0 && c.num_gpus >= 0) return TraceFormat::kItp;
  if (c.cpu_milli >= 0 && c.num_gpus >= 0 && c.name >= 0) return TraceFormat::kAlibabaPods;
  const bool node_list = (IndexOf(names, "sn") >= 0 && IndexOf(names, "model") >= 0) ||
                         IndexOf(names, "machineid") >= 0 || IndexOf(names, "number of gpus") >= 0;
  if (node_list) {
    return Status::InvalidArgument(std::string(name) +
                                   ": this is a list of nodes or machines, not a job trace");
  }
  return Status::InvalidArgument(std::string(name) + ": cannot tell the trace format from its " +
                                 "first line " + Quote(header_line) +
                                 " (give --format: swf, philly, itp, alibaba or jsonl)");
}

Status ReadGpuCsv(std::string_view text, std::string_view name, const ReadOptions& options,
                  Trace* trace) {
  LineScanner lines(text);
  std::string_view line;
  while (lines.Next(&line) && TrimWhitespace(line).empty()) {
  }
  if (TrimWhitespace(line).empty()) {
    return Status::InvalidArgument(std::string(name) + ": no header line");
  }
  const Columns columns = MapColumns(HeaderNames(line));
  const std::string missing = MissingColumn(columns, trace->format);
  if (!missing.empty()) {
    return Status::InvalidArgument(std::string(name) + ":" + std::to_string(lines.line_number()) +
                                   ": the header has no column '" + missing + "' (needed by the " +
                                   std::string(TraceFormatName(trace->format)) + " format)");
  }
  BadLineSink bad(name, options.skip_bad, trace);
  CsvSplitter splitter;
  std::string error;
  uint64_t row = 0;
  int64_t earliest = std::numeric_limits<int64_t>::max();
  while (lines.Next(&line)) {
    if (TrimWhitespace(line).empty()) continue;
    ++row;
    if (!splitter.Split(line, &error)) {
      BERTH_RETURN_IF_ERROR(bad.Report(lines.line_number(), error));
      continue;
    }
    if (splitter.fields().size() != columns.count) {
      BERTH_RETURN_IF_ERROR(bad.Report(
          lines.line_number(), "expected " + std::to_string(columns.count) + " fields, found " +
                                   std::to_string(splitter.fields().size())));
      continue;
    }
    TraceJob job;
    job.trace_id = row;
    job.line = lines.line_number();
    RowOutcome outcome = ParseRow(trace->format, splitter.fields(), columns, &job, &error);
    if (outcome == RowOutcome::kBad) {
      BERTH_RETURN_IF_ERROR(bad.Report(lines.line_number(), error));
      continue;
    }
    if (trace->format == TraceFormat::kPhilly) earliest = std::min(earliest, job.submit);
    trace->largest_procs = std::max(trace->largest_procs, job.procs);
    if (outcome == RowOutcome::kDrop) {
      ++trace->dropped;
    } else {
      trace->jobs.push_back(std::move(job));
    }
  }
  if (trace->format == TraceFormat::kPhilly) RebaseSubmitTimes(earliest, trace);
  trace->pool_procs = options.procs;
  return Status::Ok();
}

}  // namespace berth::sim::internal
