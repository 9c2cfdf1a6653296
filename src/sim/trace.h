// Workload traces: what `berth sim` replays. Readers turn each format into TraceJobs; the driver
// (sim/driver.h) turns TraceJobs into berth JobSpecs for the cluster being simulated.
//
// Formats: SWF (Parallel Workloads Archive), the Philly-derived CSV, Microsoft ITP CSV, Alibaba
// GPU pods (2023) CSV, and berth's own JSON Lines (docs/formats/trace-jsonl.md).
#ifndef BERTH_SIM_TRACE_H_
#define BERTH_SIM_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "core/model/job.h"

namespace berth::sim {

enum class TraceFormat { kSwf, kPhilly, kItp, kAlibabaPods, kJsonl };
std::string_view TraceFormatName(TraceFormat f);  // "swf", "philly", "itp", "alibaba", "jsonl"
Result<TraceFormat> ParseTraceFormat(std::string_view name);

struct TraceJob {
  uint64_t trace_id = 0;   // the job's id in the trace (SWF field 1; a row counter for CSVs)
  int64_t line = 0;        // 1-based line in the file, for messages
  Time submit = 0;         // seconds from the trace's start (SWF: field 2 rounded down)
  Duration run_time = 0;   // how long it really runs (before any cut at its time limit)
  Duration requested = 0;  // its time limit / the user's estimate (SWF field 9, else run_time)
  std::string user;        // "" when the trace has none
  std::string account;     // "" when the trace has none
  // A generic request, for formats that do not describe a berth job (all but JSON Lines):
  int64_t procs = 0;      // processors (SWF), or CPU cores (ceil of cpu_milli / 1000)
  int64_t gpus = 0;       // whole GPUs
  int64_t gpu_milli = 0;  // Alibaba: the share of one GPU x 1000 when gpus == 1 (else 0)
  int64_t mem_mib = 0;    // 0 = not given
  std::string gpu_type;   // "" = any
  int32_t exit_code = 0;  // when the trace says the job failed
  // JSON Lines: the full berth job (resources, partitions, QoS, arrays, dependencies...).
  // Dependencies there name trace ids; the driver maps them to berth ids.
  bool has_spec = false;
  core::JobSpec spec;
};

struct TraceHeader {
  int64_t max_procs = 0;        // SWF "; MaxProcs:"
  int64_t max_nodes = 0;        // SWF "; MaxNodes:"
  int64_t unix_start_time = 0;  // SWF "; UnixStartTime:"
};

struct Trace {
  std::string name;  // file name without directories
  TraceFormat format = TraceFormat::kSwf;
  TraceHeader header;
  std::vector<TraceJob> jobs;  // kept jobs, in file order
  int64_t largest_procs = 0;   // SWF: the largest procs over all job lines, dropped ones included
  int64_t pool_procs = 0;      // SWF: P, the single pool's size (see ReadOptions::procs)
  int64_t dropped = 0;         // jobs dropped by the format's rules (SWF: run<=0, procs<=0 or >P)
  int64_t skipped_bad = 0;     // malformed lines skipped with --skip-bad
  std::vector<std::string> bad_lines;  // "file:line: what is wrong", up to 20, with --skip-bad
};

struct ReadOptions {
  std::optional<TraceFormat> format;  // else detected from the header / first line / extension
  bool skip_bad = false;              // count and skip malformed lines instead of failing
  int64_t procs = 0;                  // SWF: P when > 0 (--procs)
};

// The Alibaba pod list's short form (name, cpu_milli, memory_mib, num_gpu, gpu_milli) has no
// times: every pod is submitted at 0 and runs this long (docs/formats/gpu-traces.md).
inline constexpr Duration kAlibabaShortFormRunTime = 3600;

// Reads a trace file. A malformed line fails with "file:line: what is wrong" unless skip_bad.
Result<Trace> ReadTrace(const std::string& path, const ReadOptions& options);
// The same over text in memory (tests); `name` stands in for the file name in messages.
Result<Trace> ParseTrace(std::string_view text, std::string_view name, const ReadOptions& options);

}  // namespace berth::sim

#endif  // BERTH_SIM_TRACE_H_
