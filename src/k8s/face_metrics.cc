// metrics.k8s.io/v1beta1 (docs/kubernetes.md, "kubectl top"): NodeMetrics and PodMetrics from
// the usage the agents measured (the port's Usage), as metrics-server serves them: get and list,
// per namespace or across all, label and field selectors on the Node's or Pod's own labels and
// metadata. Only what has a measured usage is listed (a pending or ended pod, a node whose agent
// has not reported twice: none); a get of one without is 404, as metrics-server answers it.
#include "k8s/face.h"
#include "k8s/metrics.h"
#include "k8s/objects.h"

namespace berth::k8s {

using nlohmann::json;
using namespace http;

namespace {

const ResourceShape& NodeMetricsShape() {
  static const ResourceShape kShape{"nodes",
                                    "NodeMetricsList",
                                    "metrics.k8s.io/v1beta1",
                                    MetricsTableColumns(),
                                    &NodeMetricsTableCells,
                                    &MetadataField};
  return kShape;
}

const ResourceShape& PodMetricsShape() {
  static const ResourceShape kShape{"pods",
                                    "PodMetricsList",
                                    "metrics.k8s.io/v1beta1",
                                    MetricsTableColumns(),
                                    &PodMetricsTableCells,
                                    &MetadataField};
  return kShape;
}

// metrics-server serves no watch: its storage is not watchable.
net::HttpResponse NoWatch() {
  return JsonResponse(405, StatusBody(405, "MethodNotAllowed",
                                      "the server does not allow this method on the "
                                      "requested resource",
                                      nullptr));
}

net::HttpResponse MetricsNotFound(const std::string& resource, const std::string& name) {
  json details = {{"name", name}, {"group", kMetricsGroup}, {"kind", resource}};
  return JsonResponse(
      404, StatusBody(404, "NotFound", resource + ".metrics.k8s.io \"" + name + "\" not found",
                      details));
}

}  // namespace

Objects Face::NodeMetricsObjects(const std::string& only) {
  const UsageView usage = port_.Usage();
  std::string rv;
  const int64_t now = port_.Now();
  Objects out;
  for (const auto& [name, node] : NodeObjects(&rv, only, "")) {
    auto it = usage.nodes.find(name);
    if (it != usage.nodes.end()) out[name] = EncodeNodeMetrics(node, it->second, now);
  }
  return out;
}

Objects Face::PodMetricsObjects(const std::string& ns, const std::string& only) {
  const UsageView usage = port_.Usage();
  const int64_t now = port_.Now();
  Objects out;
  for (const auto& [key, pod] : PodObjects(ns, only)) {
    auto it = usage.jobs.find(PodJobId(pod));
    if (it != usage.jobs.end()) out[key] = EncodePodMetrics(pod, it->second, now);
  }
  return out;
}

net::HttpResponse Face::MetricsItem(Endpoint e, const Call& c) {
  using E = Endpoint;
  const bool nodes = e == E::kNodeMetricsList || e == E::kNodeMetricsGet;
  const ResourceShape& shape = nodes ? NodeMetricsShape() : PodMetricsShape();
  if (e == E::kNodeMetricsGet || e == E::kPodMetricsGet) {
    Objects found =
        nodes ? NodeMetricsObjects(c.Name()) : PodMetricsObjects(c.Namespace(), c.Name());
    if (found.empty()) {
      return nodes ? MetricsNotFound("nodemetrics", c.Name())
                   : MetricsNotFound("podmetrics", c.Namespace() + "/" + c.Name());
    }
    return ObjectResponse(c.req, shape, found.begin()->second, 200, port_.Now());
  }
  if (IsWatch(c.req)) return NoWatch();
  Objects all = nodes ? NodeMetricsObjects("") : PodMetricsObjects(c.Namespace(), "");
  if (auto bad = Select(c.req, shape, &all)) return *bad;
  return ListResponse(c.req, shape, all, "", port_.Now());
}

}  // namespace berth::k8s
