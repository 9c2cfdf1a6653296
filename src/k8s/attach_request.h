// pods/attach (docs/adr/0006-pod-streams.md): what the agent is asked to serve for a kubectl
// attach to a Pod, from the Pod's container (its stdin and tty fields) and the request's query
// (stdin, stdout, stderr, tty). Pure; used by face_stream.cc.
#ifndef BERTH_K8S_ATTACH_REQUEST_H_
#define BERTH_K8S_ATTACH_REQUEST_H_

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace berth::k8s {

struct AttachQuery {
  bool stdin = false, stdout = false, stderr = false, tty = false;
};

// The stream request {"kind": "attach", "stdin", "stdout", "stderr", "tty"} (the protocol is
// added by the caller). As the kubelet: stdin only when the container has stdin: true (else it
// is not read), a terminal when the container has one (whatever the client asked: kubectl turns
// -t on and off to match). The same for a pod in a container image. INVALID_ARGUMENT (a 400's
// message) for a request with no stream.
Result<nlohmann::json> AttachRequest(const nlohmann::json& pod, const AttachQuery& query);

}  // namespace berth::k8s

#endif  // BERTH_K8S_ATTACH_REQUEST_H_
