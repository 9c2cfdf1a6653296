// The native JSON job decoder of POST /v1/jobs: the body parsed as the controller parses it,
// then api::DecodeJob. Invariants: DecodeJob never throws (job_json.h) and a job it accepts
// encodes to a fixed point: EncodeJob(DecodeJob(EncodeJob(job))) == EncodeJob(job).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "api/job_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json body = nlohmann::json::parse(data, data + size, nullptr, false);
  if (body.is_discarded()) return 0;
  berth::core::JobSpec spec;
  berth::core::JobExecSpec exec;
  const berth::Status s = berth::api::DecodeJob(body, &spec, &exec);
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  const nlohmann::json encoded = berth::api::EncodeJob(spec, &exec);
  berth::core::JobSpec spec2;
  berth::core::JobExecSpec exec2;
  if (!berth::api::DecodeJob(encoded, &spec2, &exec2).ok()) std::abort();
  if (berth::api::EncodeJob(spec2, &exec2) != encoded || !(exec2 == exec)) std::abort();
  return 0;
}
