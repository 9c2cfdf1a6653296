// The format readers behind ParseTrace (sim/trace.h). Internal to src/sim.
//
// Each reader fills a Trace whose name and format the caller has set, from the whole text of the
// file. Malformed lines go through a BadLineSink (sim/text_scan.h): a non-OK Status stops the
// read with "name:line: what is wrong"; with ReadOptions::skip_bad they are counted instead.
#ifndef BERTH_SIM_READERS_H_
#define BERTH_SIM_READERS_H_

#include <string_view>

#include "common/status.h"
#include "sim/trace.h"

namespace berth::sim::internal {

// Standard Workload Format (docs/formats/swf.md).
[[nodiscard]] Status ReadSwf(std::string_view text, std::string_view name,
                             const ReadOptions& options, Trace* trace);

// The GPU cluster CSVs (docs/formats/gpu-traces.md). REQUIRES: trace->format is kPhilly, kItp
// or kAlibabaPods.
[[nodiscard]] Status ReadGpuCsv(std::string_view text, std::string_view name,
                                const ReadOptions& options, Trace* trace);

// berth's JSON Lines (docs/formats/trace-jsonl.md).
[[nodiscard]] Status ReadJsonl(std::string_view text, std::string_view name,
                               const ReadOptions& options, Trace* trace);

// Which GPU CSV a header line names, judged by its column names. Files that are clearly not job
// traces (node and machine lists) get a message that says so.
Result<TraceFormat> DetectCsvFormat(std::string_view header_line, std::string_view name);

}  // namespace berth::sim::internal

#endif  // BERTH_SIM_READERS_H_
