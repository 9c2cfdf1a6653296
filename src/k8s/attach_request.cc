// pods/attach's request: see attach_request.h.
#include "k8s/attach_request.h"

namespace berth::k8s {

using nlohmann::json;

Result<json> AttachRequest(const json& pod, const AttachQuery& query) {
  if (!query.stdin && !query.stdout && !query.stderr) {
    return Status::InvalidArgument("you must specify at least 1 of stdin, stdout, stderr");
  }
  json container = json::object();
  if (const json* spec = pod.contains("spec") ? &pod["spec"] : nullptr;
      spec != nullptr && spec->contains("containers") && (*spec)["containers"].is_array() &&
      !(*spec)["containers"].empty() && (*spec)["containers"][0].is_object()) {
    container = (*spec)["containers"][0];
  }
  auto flag = [&](const char* key) {
    auto it = container.find(key);
    return it != container.end() && it->is_boolean() && it->get<bool>();
  };
  const bool has_stdin = flag("stdin");
  const bool tty = flag("tty") && has_stdin;
  return json{{"kind", "attach"},
              {"stdin", query.stdin && has_stdin},
              {"stdout", query.stdout || tty},
              {"stderr", query.stderr && !tty},
              {"tty", tty}};
}

}  // namespace berth::k8s
