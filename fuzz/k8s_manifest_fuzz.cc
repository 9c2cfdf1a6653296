// Kubernetes manifests as berth's API decodes them (berth reads JSON only; kubectl sends YAML
// manifests as JSON). The body is parsed as the controller parses it; a "kind": "Job" goes
// through k8s::DefaultJob and then, as the controller makes its pods, PodFromTemplate and
// MapPod for index 0; anything else is a Pod for k8s::MapPod. Invariants: no throw, a problem
// names a field, and a Pod that maps gives a job request that api::DecodeJob accepts (the
// controller submits it so).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "api/job_json.h"
#include "k8s/jobs.h"
#include "k8s/pods.h"

namespace {

namespace k8s = berth::k8s;
using nlohmann::json;

void CheckPod(const json& pod) {
  k8s::PodContext ctx;
  ctx.ns = "default";
  ctx.home = "/home/u";
  ctx.log_dir = "/var/log/berth/pods";
  ctx.name_suffix = "abcde";
  ctx.now = 1'700'000'000;
  k8s::PodMapping mapping;
  const std::optional<k8s::FieldProblem> problem = k8s::MapPod(pod, ctx, &mapping);
  if (problem) {
    if (problem->field.empty() && problem->detail.empty()) std::abort();
    return;
  }
  berth::core::JobSpec spec;
  berth::core::JobExecSpec exec;
  if (!berth::api::DecodeJob(mapping.request, &spec, &exec).ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const json body = json::parse(data, data + size, nullptr, false);
  if (body.is_discarded()) return 0;
  if (body.is_object() && body.value("kind", json()) == "Job") {
    json job;
    if (k8s::DefaultJob(body, "default", "uid-1", 1'700'000'000, &job)) return 0;
    const bool indexed = k8s::fields::Str(job, {"spec", "completionMode"}) == "Indexed";
    CheckPod(k8s::PodFromTemplate(job, indexed ? 0 : -1, "job-abcde"));
    return 0;
  }
  CheckPod(body);
  return 0;
}
