// config::ParseClusterConfig, berth's reader of slurm.conf-style cluster files (NodeName=,
// PartitionName=, QOS=, SchedulerParameters=, ... with continuations and comments). Any text
// gives a config or an error naming a line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/cluster_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  berth::Result<berth::config::ClusterConfig> config =
      berth::config::ParseClusterConfig(text, "fuzz.conf");
  if (!config.ok() && config.status().message().empty()) std::abort();
  return 0;
}
