// k8s::DecodeProtobufObjectMeta and DecodeProtobufWorkload (Jobs, CronJobs), the readers of the
// protobuf bodies kubectl's typed calls send ("k8s\0" + a runtime.Unknown envelope). Any bytes
// give an object or INVALID_ARGUMENT.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "k8s/protobuf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  berth::Result<nlohmann::json> object = berth::k8s::DecodeProtobufObjectMeta(body);
  if (!object.ok() && object.status().message().empty()) std::abort();
  berth::Result<nlohmann::json> workload = berth::k8s::DecodeProtobufWorkload(body);
  if (!workload.ok() && workload.status().message().empty()) std::abort();
  return 0;
}
