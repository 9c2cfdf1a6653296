// core/v1 Nodes (docs/kubernetes.md): berth's nodes, read from the controller's published node
// view through the port. Cordon and uncordon (spec.unschedulable) go through the port's node
// action, as `berth drain` and `berth resume` do; nothing else about a Node changes.
#include "k8s/face.h"
#include "k8s/objects.h"
#include "k8s/patch.h"

namespace berth::k8s {

using nlohmann::json;
using namespace http;

Objects Face::NodeObjects(std::string* rv, const std::string& only,
                          const std::string& state_override) {
  // Read before the view: every node event it counts is in the view (the view is replaced
  // before its events are published).
  *rv = std::to_string(port_.WatchNext());
  std::vector<NodeFacts> nodes = port_.Nodes();
  const int64_t now = port_.Now();
  Objects out;
  for (NodeFacts& f : nodes) {
    if (!only.empty() && f.name != only) continue;
    if (!state_override.empty()) f.state = state_override;
    f.berth_version = opt_.version;
    {
      MutexLock l(mu_);
      f.created = node_first_seen_.emplace(f.name, now).first->second;
    }
    out[f.name] = EncodeNode(f);
  }
  return out;
}

net::HttpResponse Face::NodeList(const Call& c) {
  return ListOrWatch(c.req, NodeShape(), port_,
                     [this](std::string* rv) { return NodeObjects(rv, "", ""); });
}

net::HttpResponse Face::NodeGet(const Call& c) {
  const std::string& name = c.Name();
  std::string rv;
  Objects objects = NodeObjects(&rv, name, "");
  if (objects.empty()) return JsonResponse(404, NotFoundStatus("nodes", name));
  if (c.req.method != "GET" && c.req.method != "HEAD") return MethodNotAllowedHere();
  return ObjectResponse(c.req, NodeShape(), objects.begin()->second, 200, port_.Now());
}

net::HttpResponse Face::NodePatch(const Call& c) {
  const std::string name = c.Name();
  std::string rv;
  Objects objects = NodeObjects(&rv, name, "");
  if (objects.empty()) return JsonResponse(404, NotFoundStatus("nodes", name));
  Result<std::optional<bool>> want =
      UnschedulableFromPatch(c.req.Header("content-type"), c.req.body);
  if (!want.ok()) {
    const std::string msg = want.status().message();  // a copy: status() is a temporary
    return JsonResponse(422, StatusBody(422, "Invalid", "Node \"" + name + "\" is invalid: " + msg,
                                        {{"name", name}, {"kind", "Node"}}));
  }
  const bool now_unschedulable = objects.begin()->second["spec"].value("unschedulable", false);
  if (!want->has_value() || **want == now_unschedulable) {
    return ObjectResponse(c.req, NodeShape(), objects.begin()->second, 200, port_.Now());
  }
  const std::string action = **want ? "drain" : "resume";
  const std::string reason = "cordoned through the Kubernetes API by " + c.who.name;
  std::string state;
  Status st = port_.Run([&](StateOps& ops) {
    Result<std::string> after = ops.NodeAction(c.who, name, action, reason);
    if (after.ok()) state = *after;
    return after.status();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kPermissionDenied) {
    return JsonResponse(403, ForbiddenStatus("nodes", name,
                                             "User \"" + c.who.name +
                                                 "\" cannot patch resource \"nodes\" in API "
                                                 "group \"\" at the cluster scope: " +
                                                 st.message()));
  }
  if (st.code() == StatusCode::kNotFound) return JsonResponse(404, NotFoundStatus("nodes", name));
  if (!st.ok()) return BadRequest(st.message());
  AwaitNodeState(name, state);
  objects = NodeObjects(&rv, name, state);
  return ObjectResponse(c.req, NodeShape(), objects.begin()->second, 200, port_.Now());
}

void Face::AwaitNodeState(const std::string& name, const std::string& state) {
  // The reply comes once the change is durable, a moment before the state thread publishes the
  // new node view: wait (briefly) for it, so that a `get` right after a cordon sees the cordon.
  uint64_t next = port_.WatchNext();
  for (int i = 0; i < 20; ++i) {
    std::string unused;
    Objects now_objects = NodeObjects(&unused, name, "");
    if (now_objects.empty() ||
        now_objects.begin()->second["metadata"]["labels"].value("berth.io/state", "") == state) {
      return;
    }
    next = port_.WatchWait(next, 100);
  }
}

}  // namespace berth::k8s
