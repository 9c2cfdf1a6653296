// The GPU cluster CSV readers (sim::ParseTrace of a ".csv": the format detected from the
// header line, then the Philly, ITP or Alibaba reader). Invariant: a trace that reads
// strictly reads the same with --skip-bad, with nothing skipped.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sim/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sim = berth::sim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sim::ReadOptions options;
  berth::Result<sim::Trace> strict = sim::ParseTrace(text, "fuzz.csv", options);
  options.skip_bad = true;
  berth::Result<sim::Trace> lenient = sim::ParseTrace(text, "fuzz.csv", options);
  if (strict.ok() &&
      (!lenient.ok() || lenient->skipped_bad != 0 || lenient->jobs.size() != strict->jobs.size())) {
    std::abort();
  }
  return 0;
}
