// The Kubernetes face's resources (docs/kubernetes.md): core/v1 Namespaces (kept in the store)
// and core/v1 Nodes (berth's nodes, read from the published node view; cordon and uncordon go
// through NodeAction, as `berth drain` does). Lists honour label and field selectors and answer
// Tables when kubectl asks; watches diff successive snapshots and wake on the controller's change
// events.
#include <pwd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <random>

#include "controller/controller_k8s_http.h"
#include "k8s/codec.h"
#include "k8s/jobs.h"
#include "k8s/objects.h"
#include "k8s/patch.h"
#include "k8s/pods.h"
#include "k8s/protobuf.h"
#include "k8s/status.h"

namespace berth::controller {
namespace k8sface {

using nlohmann::json;

std::string Query(const net::HttpRequest& req, const char* key) {
  auto it = req.query.find(key);
  return it == req.query.end() ? "" : it->second;
}

net::HttpResponse BadRequest(const std::string& message) {
  return K8sJsonResponse(400, k8s::StatusBody(400, "BadRequest", message, nullptr));
}

net::HttpResponse MethodNotAllowedHere() {
  return K8sJsonResponse(405, k8s::StatusBody(405, "MethodNotAllowed",
                                              "the server does not allow this method on the "
                                              "requested resource",
                                              nullptr));
}

net::HttpResponse NotFoundPath() {
  return K8sJsonResponse(
      404, k8s::StatusBody(404, "NotFound", "the server could not find the requested resource",
                           json::object()));
}

net::HttpResponse PatchFailure(const Status& st) {
  const bool unsupported = k8s::IsUnsupportedPatchType(st);
  return K8sJsonResponse(
      unsupported ? 415 : 422,
      k8s::StatusBody(unsupported ? 415 : 422, unsupported ? "UnsupportedMediaType" : "Invalid",
                      st.message(), nullptr));
}

const ResourceShape& NamespaceShape() {
  static const ResourceShape kShape{
      "namespaces",  "NamespaceList", "v1", k8s::NamespaceTableColumns(), &k8s::NamespaceTableCells,
      &MetadataField};
  return kShape;
}

const ResourceShape& NodeShape() {
  static const ResourceShape kShape{
      "nodes", "NodeList", "v1", k8s::NodeTableColumns(), &k8s::NodeTableCells, &MetadataField};
  return kShape;
}

const ResourceShape& PodShape() {
  static const ResourceShape kShape{
      "pods", "PodList", "v1", k8s::PodTableColumns(), &k8s::PodTableCells, &k8s::PodField};
  return kShape;
}

const ResourceShape& EventShape() {
  static const ResourceShape kShape{
      "events",        "EventList", "v1", k8s::EventTableColumns(), &k8s::EventTableCells,
      &k8s::EventField};
  return kShape;
}

const ResourceShape& JobShape() {
  static const ResourceShape kShape{
      "jobs", "JobList", "batch/v1", k8s::JobTableColumns(), &k8s::JobTableCells, &k8s::JobField};
  return kShape;
}

std::string SelectedField(const net::HttpRequest& req, const ResourceShape& shape,
                          std::string_view key) {
  std::string value;
  if (Result<Selectors> s = ParseSelectors(req, shape); s.ok()) {
    for (const k8s::Requirement& r : s->fields) {
      if (r.key == key && r.op == k8s::Requirement::Op::kEquals && r.values.size() == 1) {
        value = r.values[0];
      }
    }
  }
  return value;
}

std::optional<std::string> MetadataField(const json& object, const std::string& field) {
  const json& meta = object["metadata"];
  if (field == "metadata.name") return meta.value("name", "");
  if (field == "metadata.namespace") return meta.value("namespace", "");
  return std::nullopt;
}

Result<Selectors> ParseSelectors(const net::HttpRequest& req, const ResourceShape& shape) {
  Selectors s;
  BERTH_ASSIGN_OR_RETURN(s.labels, k8s::ParseLabelSelector(Query(req, "labelSelector")));
  BERTH_ASSIGN_OR_RETURN(s.fields, k8s::ParseFieldSelector(Query(req, "fieldSelector")));
  const json probe = {{"metadata", json::object()}};
  for (const k8s::Requirement& r : s.fields) {
    if (!shape.field(probe, r.key)) {
      return Status::InvalidArgument("field label not supported: " + r.key);
    }
  }
  return s;
}

bool Matches(const Selectors& s, const ResourceShape& shape, const json& object) {
  const json& meta = object["metadata"];
  return k8s::LabelsMatch(s.labels, meta.value("labels", json::object())) &&
         k8s::FieldsMatch(s.fields, [&](const std::string& key) -> std::optional<std::string> {
           return shape.field(object, key);
         });
}

std::optional<net::HttpResponse> Select(const net::HttpRequest& req, const ResourceShape& shape,
                                        Objects* objects) {
  Result<Selectors> s = ParseSelectors(req, shape);
  if (!s.ok()) return BadRequest(s.status().message());
  for (auto it = objects->begin(); it != objects->end();) {
    it = Matches(*s, shape, it->second) ? std::next(it) : objects->erase(it);
  }
  return std::nullopt;
}

json TableOf(const ResourceShape& shape, const std::vector<const json*>& objects,
             const std::string& rv, int64_t now) {
  json rows = json::array();
  for (const json* o : objects) rows.push_back(k8s::TableRow(shape.cells(*o, now), *o));
  return k8s::Table(shape.columns, std::move(rows), rv);
}

net::HttpResponse ListResponse(const net::HttpRequest& req, const ResourceShape& shape,
                               const Objects& objects, const std::string& rv, int64_t now) {
  std::vector<const json*> all;
  for (const auto& [name, o] : objects) all.push_back(&o);
  if (k8s::AcceptsTable(req.Header("accept"))) {
    return K8sJsonResponse(200, TableOf(shape, all, rv, now), std::string(k8s::kTableContentType));
  }
  json items = json::array();
  for (const json* o : all) items.push_back(*o);
  return K8sJsonResponse(200, {{"kind", shape.list_kind},
                               {"apiVersion", shape.api_version},
                               {"metadata", {{"resourceVersion", rv}}},
                               {"items", std::move(items)}});
}

net::HttpResponse ObjectResponse(const net::HttpRequest& req, const ResourceShape& shape,
                                 const json& object, int status, int64_t now) {
  if (k8s::AcceptsTable(req.Header("accept"))) {
    std::string rv = object["metadata"].value("resourceVersion", "");
    return K8sJsonResponse(status, TableOf(shape, {&object}, rv, now),
                           std::string(k8s::kTableContentType));
  }
  return K8sJsonResponse(status, object);
}

namespace {

// What a watch compares to decide that an object changed: everything but the resourceVersion and
// heartbeat times.
std::string Comparable(json object) {
  object["metadata"].erase("resourceVersion");
  if (object.contains("status") && object["status"].contains("conditions")) {
    for (json& c : object["status"]["conditions"]) c.erase("lastHeartbeatTime");
  }
  return object.dump();
}

// An object's metadata.resourceVersion as a number (0 when it has none).
uint64_t ObjectVersion(const json& object) {
  const std::string v = object["metadata"].value("resourceVersion", "");
  uint64_t n = 0;
  std::from_chars(v.data(), v.data() + v.size(), n);
  return n;
}

}  // namespace

net::HttpResponse WatchResponse(const net::HttpRequest& req, const ResourceShape& shape,
                                WatchHub& hub, std::function<Objects(std::string* rv)> snapshot,
                                std::function<int64_t()> now) {
  const std::string from = Query(req, "resourceVersion");
  const bool initial = from.empty() || from == "0";
  // A watch that resumes from a list's resourceVersion must also deliver what changed between
  // that list and its first snapshot: the objects whose own resourceVersion is newer.
  uint64_t resumed_from = 0;
  if (!initial) {
    auto [end, ec] = std::from_chars(from.data(), from.data() + from.size(), resumed_from);
    if (ec != std::errc() || end != from.data() + from.size()) {
      return K8sJsonResponse(
          400,
          k8s::StatusBody(400, "BadRequest", "invalid resourceVersion \"" + from + "\"", nullptr));
    }
  }
  const bool table = k8s::AcceptsTable(req.Header("accept"));
  int64_t timeout_s = 0;
  if (std::string t = Query(req, "timeoutSeconds"); !t.empty()) {
    timeout_s = std::max<int64_t>(1, std::atoll(t.c_str()));
  }
  Result<Selectors> selectors = ParseSelectors(req, shape);
  if (!selectors.ok()) return BadRequest(selectors.status().message());
  net::HttpResponse r;
  r.content_type = table ? std::string(k8s::kTableContentType) : "application/json";
  r.stream = [=, &hub, sel = *selectors](net::ResponseStream& out) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    uint64_t next = hub.Next();
    // key -> (Comparable(), the object as last sent)
    std::map<std::string, std::pair<std::string, json>> seen;
    auto send = [&](const char* type, const json& object) {
      json e = {{"type", type},
                {"object", table ? TableOf(shape, {&object},
                                           object["metadata"].value("resourceVersion", ""), now())
                                 : object}};
      return out.Write(e.dump() + "\n");
    };
    bool first = true;
    while (!out.Closed()) {
      std::string rv;
      Objects objects = snapshot(&rv);
      for (auto it = objects.begin(); it != objects.end();) {
        it = Matches(sel, shape, it->second) ? std::next(it) : objects.erase(it);
      }
      for (const auto& [key, o] : objects) {
        std::string c = Comparable(o);
        auto it = seen.find(key);
        if (it == seen.end()) {
          seen[key] = {c, o};
          if (!first || initial) {
            if (!send("ADDED", o)) return;
          } else if (ObjectVersion(o) > resumed_from && !send("MODIFIED", o)) {
            return;
          }
        } else if (it->second.first != c) {
          it->second = {c, o};
          if (!send("MODIFIED", o)) return;
        }
      }
      for (auto it = seen.begin(); it != seen.end();) {
        if (objects.count(it->first)) {
          ++it;
          continue;
        }
        json gone = it->second.second;
        gone["metadata"]["resourceVersion"] = rv;
        if (!send("DELETED", gone)) return;
        it = seen.erase(it);
      }
      first = false;
      if (timeout_s > 0 && std::chrono::steady_clock::now() >= deadline) return;
      bool lost = false;
      hub.Read(next, 1000, &next, &lost);
    }
  };
  return r;
}

bool IsWatch(const net::HttpRequest& req) {
  return k8s::ParseBool(Query(req, "watch")).value_or(false);
}

net::HttpResponse ListOrWatch(const net::HttpRequest& req, const ResourceShape& shape,
                              WatchHub& hub, std::function<Objects(std::string* rv)> snapshot,
                              std::function<int64_t()> now) {
  if (IsWatch(req)) return WatchResponse(req, shape, hub, std::move(snapshot), std::move(now));
  std::string rv;
  Objects objects = snapshot(&rv);
  if (auto bad = Select(req, shape, &objects)) return *bad;
  return ListResponse(req, shape, objects, rv, now());
}

std::optional<net::HttpResponse> UnavailableResponse(const Status& st) {
  if (st.code() != StatusCode::kUnavailable) return std::nullopt;
  return StatusResponse(k8s::StatusOf(st));
}

net::HttpResponse StatusResponse(const json& status) {
  return K8sJsonResponse(status.value("code", 500), status);
}

std::string ObjectKey(const std::string& ns, const std::string& name) {
  return ns + "/" + name;
}

std::string GenerateNameSuffix() {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string s;
  for (int i = 0; i < 5; ++i) s += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return s;
}

std::string HomeOf(uint32_t uid) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found && found->pw_dir) {
    return found->pw_dir;
  }
  return "/";
}

}  // namespace k8sface

namespace {

using nlohmann::json;
using namespace k8sface;

json NamespaceObject(const std::string& name, const std::string& record_text) {
  json rec = json::parse(record_text);
  return k8s::EncodeNamespace(
      name, rec.value("created", int64_t{0}), std::to_string(rec.value("rv", uint64_t{1})),
      rec.value("labels", json::object()), rec.value("annotations", json::object()));
}

// The namespaces and their resourceVersion.
Objects NamespaceObjects(K8sFace& face, std::string* rv) {
  Objects out;
  std::lock_guard<std::mutex> l(face.mu);
  for (const auto& [name, record] : face.namespaces) out[name] = NamespaceObject(name, record);
  *rv = std::to_string(face.namespaces_rv);
  return out;
}

// The store's write of every namespace. REQUIRES: face.mu held.
store::Write NamespacesWrite(const K8sFace& face) {
  json items = json::object();
  for (const auto& [n, record] : face.namespaces) items[n] = json::parse(record);
  return {store::Write::Kind::kPutMeta,
          {},
          kNamespacesMetaKey,
          json{{"rv", face.namespaces_rv}, {"items", items}}.dump()};
}

// A new namespace's name and record from a create request; the answer when it cannot be made.
std::optional<net::HttpResponse> NamespaceToCreate(const K8sCall& c, std::string* name,
                                                   json* record) {
  json body = json::parse(c.req.body, nullptr, false);
  if (c.req.Header("content-type").starts_with("application/vnd.kubernetes.protobuf")) {
    Result<json> decoded = k8s::DecodeProtobufObjectMeta(c.req.body);  // kubectl create namespace
    if (!decoded.ok()) return BadRequest(decoded.status().message());
    body = std::move(*decoded);
  }
  if (!body.is_object() || !body.contains("metadata") || !body["metadata"].is_object()) {
    return BadRequest("the body must be a Namespace object with metadata");
  }
  const json& meta = body["metadata"];
  *name = meta.value("name", "");
  if (std::string problem = k8s::NamespaceNameProblem(*name); !problem.empty()) {
    return K8sJsonResponse(422,
                           k8s::InvalidStatus("Namespace", *name, "metadata.name", *name, problem));
  }
  if (body.contains("kind") && body["kind"] != "Namespace") {
    return BadRequest("the body is a " + body["kind"].dump() + ", not a Namespace");
  }
  *record = {{"labels", meta.value("labels", json::object())},
             {"annotations", meta.value("annotations", json::object())},
             {"creator", c.who.user}};
  if (!(*record)["labels"].is_object() || !(*record)["annotations"].is_object()) {
    return K8sJsonResponse(422, k8s::InvalidStatus("Namespace", *name, "metadata.labels", "",
                                                   "labels and annotations are string maps"));
  }
  return std::nullopt;
}

// A namespace's new labels and annotations from a PATCH or PUT of `object`; the answer when the
// change is refused.
std::optional<net::HttpResponse> NamespaceMetaChange(const K8sCall& c, const json& object,
                                                     json* labels, json* annotations) {
  const std::string& name = c.Name();
  Result<json> changed = c.req.method == "PUT"
                             ? Result<json>(json::parse(c.req.body, nullptr, false))
                             : k8s::ApplyPatch(c.req.Header("content-type"), object, c.req.body);
  if (!changed.ok()) return PatchFailure(changed.status());
  if (!changed->is_object() || !(*changed)["metadata"].is_object()) {
    return BadRequest("the body is not a Namespace");
  }
  *labels = (*changed)["metadata"].value("labels", json::object());
  *annotations = (*changed)["metadata"].value("annotations", json::object());
  labels->erase("kubernetes.io/metadata.name");  // berth's own
  annotations->erase("berth.io/created-unix");
  for (const json* m : {labels, annotations}) {
    for (const auto& [k, v] : m->items()) {
      if (!v.is_string()) {
        return K8sJsonResponse(422, k8s::InvalidStatus("Namespace", name, "metadata.labels", k,
                                                       "labels and annotations are strings"));
      }
    }
  }
  return std::nullopt;
}

}  // namespace

net::HttpResponse Controller::Impl::K8sNamespaceList(const K8sCall& c) {
  std::shared_ptr<K8sFace> face = k8s;
  return ListOrWatch(
      c.req, NamespaceShape(), watch_hub,
      [face](std::string* rv) { return NamespaceObjects(*face, rv); }, [this] { return Now(); });
}

net::HttpResponse Controller::Impl::K8sNamespaceCreate(const K8sCall& c) {
  std::shared_ptr<K8sFace> face = k8s;
  std::string name;
  json record;
  if (auto refused = NamespaceToCreate(c, &name, &record)) return *refused;
  const bool dry_run = Query(c.req, "dryRun") == "All";
  Reply r = Call([this, face, name, record, dry_run](Txn& t, Reply* out) mutable {
    state_thread.AssertHeld();  // a command: on the state thread
    std::lock_guard<std::mutex> l(face->mu);
    if (face->namespaces.count(name)) {
      out->body = {{"code", 409}, {"status", k8s::AlreadyExistsStatus("namespaces", name)}};
      return;
    }
    record["created"] = Now();
    record["rv"] = face->namespaces_rv + 1;
    if (!dry_run) {
      face->namespaces_rv += 1;
      face->namespaces[name] = record.dump();
      t.writes.push_back(NamespacesWrite(*face));
    }
    out->body = {{"code", 201}, {"object", NamespaceObject(name, record.dump())}};
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (!r.status.ok()) return BadRequest(r.status.message());
  if (r.body["code"] != 201) return K8sJsonResponse(r.body["code"], r.body["status"]);
  return ObjectResponse(c.req, NamespaceShape(), r.body["object"], 201, Now());
}

net::HttpResponse Controller::Impl::K8sNamespaceGet(const K8sCall& c) {
  const std::string& name = c.Name();
  std::string rv;
  Objects objects = NamespaceObjects(*k8s, &rv);
  auto it = objects.find(name);
  if (it == objects.end()) return K8sJsonResponse(404, k8s::NotFoundStatus("namespaces", name));
  return ObjectResponse(c.req, NamespaceShape(), it->second, 200, Now());
}

net::HttpResponse Controller::Impl::K8sNamespaceUpdate(const K8sCall& c) {
  // Labels and annotations change (kubectl label/annotate, apply); nothing else does.
  std::shared_ptr<K8sFace> face = k8s;
  const std::string name = c.Name();
  const Caller who = c.who;
  std::string rv;
  Objects objects = NamespaceObjects(*face, &rv);
  auto it = objects.find(name);
  if (it == objects.end()) return K8sJsonResponse(404, k8s::NotFoundStatus("namespaces", name));
  json labels, annotations;
  if (auto refused = NamespaceMetaChange(c, it->second, &labels, &annotations)) return *refused;
  Reply r = Call([this, face, name, labels, annotations, who](Txn& t, Reply* out) {
    state_thread.AssertHeld();  // a command: on the state thread
    std::lock_guard<std::mutex> l(face->mu);
    auto ns = face->namespaces.find(name);
    if (ns == face->namespaces.end()) {
      out->status = Status::NotFound(name);
      return;
    }
    json rec = json::parse(ns->second);
    if (!who.admin && rec.value("creator", "") != who.user) {
      out->status = Status::PermissionDenied("only its creator or an operator may change it");
      return;
    }
    rec["labels"] = labels;
    rec["annotations"] = annotations;
    face->namespaces_rv += 1;
    rec["rv"] = face->namespaces_rv;
    ns->second = rec.dump();
    t.writes.push_back(NamespacesWrite(*face));
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (r.status.code() == StatusCode::kNotFound) {
    return K8sJsonResponse(404, k8s::NotFoundStatus("namespaces", name));
  }
  if (r.status.code() == StatusCode::kPermissionDenied) {
    return K8sJsonResponse(403, k8s::ForbiddenStatus("namespaces", name, r.status.message()));
  }
  Objects after = NamespaceObjects(*face, &rv);
  auto now_it = after.find(name);
  if (now_it == after.end()) return K8sJsonResponse(404, k8s::NotFoundStatus("namespaces", name));
  return ObjectResponse(c.req, NamespaceShape(), now_it->second, 200, Now());
}

net::HttpResponse Controller::Impl::K8sNamespaceDelete(const K8sCall& c) {
  std::shared_ptr<K8sFace> face = k8s;
  const std::string name = c.Name();
  const Caller who = c.who;
  for (const char* builtin : kBuiltinNamespaces) {
    if (name == builtin) {
      return K8sJsonResponse(
          403, k8s::ForbiddenStatus("namespaces", name, "this namespace may not be deleted"));
    }
  }
  Reply r = Call([this, face, name, who](Txn& t, Reply* out) {
    state_thread.AssertHeld();  // a command: on the state thread
    std::lock_guard<std::mutex> l(face->mu);
    auto it = face->namespaces.find(name);
    if (it == face->namespaces.end()) {
      out->body = {{"code", 404}, {"status", k8s::NotFoundStatus("namespaces", name)}};
      return;
    }
    json rec = json::parse(it->second);
    if (!who.admin && rec.value("creator", "") != who.user) {
      out->body = {{"code", 403},
                   {"status", k8s::ForbiddenStatus(
                                  "namespaces", name,
                                  "User \"" + who.user +
                                      "\" cannot delete resource \"namespaces\" in API group \"\" "
                                      "in the namespace \"" +
                                      name + "\": only its creator or an operator may")}};
      return;
    }
    json object = NamespaceObject(name, it->second);
    face->namespaces.erase(it);
    // What lives in it goes with it: its Jobs, and its Pods (their jobs are cancelled).
    const std::string prefix = name + "/";
    for (auto j = face->jobs.lower_bound(prefix);
         j != face->jobs.end() && j->first.compare(0, prefix.size(), prefix) == 0;) {
      t.writes.push_back({store::Write::Kind::kDeleteMeta, {}, kJobMetaPrefix + j->first, ""});
      j = face->jobs.erase(j);
      face->jobs_rv += 1;
    }
    for (auto pod = face->pods.lower_bound(prefix);
         pod != face->pods.end() && pod->first.compare(0, prefix.size(), prefix) == 0; ++pod) {
      K8sDeletePod(pod->second, t);
    }
    face->namespaces_rv += 1;
    t.writes.push_back(NamespacesWrite(*face));
    out->body = {{"code", 200},
                 {"status", k8s::SuccessStatus("namespaces", name, object["metadata"]["uid"])}};
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (!r.status.ok()) return BadRequest(r.status.message());
  return K8sJsonResponse(r.body["code"], r.body["status"]);
}

std::map<std::string, json> Controller::Impl::K8sNodeObjects(std::string* rv,
                                                             const std::string& only,
                                                             const std::string& state_override) {
  // Read before the view: every node event it counts is in the view (the view is replaced
  // before its events are published).
  *rv = std::to_string(watch_hub.Next());
  std::shared_ptr<const std::vector<NodeView>> nodes;
  {
    ReaderLock l(view_mu);
    nodes = node_view;
  }
  const int64_t now = Now();
  Objects out;
  for (const NodeView& n : *nodes) {
    if (!only.empty() && n.name != only) continue;
    k8s::NodeFacts f;
    f.name = n.name;
    f.cpus = n.spec.cpus;
    f.mem_mib = n.spec.mem_mib;
    f.gpus = n.spec.gpus;
    f.features = n.spec.features;
    f.partitions = n.partitions;
    f.state = state_override.empty() ? n.state : state_override;
    f.reason = n.reason;
    f.agent_connected = n.agent_connected;
    f.last_seen = n.last_seen == kNoTime ? 0 : n.last_seen;
    f.state_since = n.reason_time == kNoTime ? 0 : n.reason_time;
    f.berth_version = BERTH_CONTROLLER_VERSION;
    f.resource_version = std::to_string(n.event_seq + 1);
    {
      std::lock_guard<std::mutex> l(k8s->mu);
      f.created = k8s->node_first_seen.emplace(n.name, now).first->second;
    }
    out[n.name] = k8s::EncodeNode(f);
  }
  return out;
}

net::HttpResponse Controller::Impl::K8sNodeList(const K8sCall& c) {
  if (IsWatch(c.req)) {
    return WatchResponse(
        c.req, NodeShape(), watch_hub,
        [this](std::string* rv) { return K8sNodeObjects(rv, "", ""); }, [this] { return Now(); });
  }
  std::string rv;
  Objects objects = K8sNodeObjects(&rv, "", "");
  if (auto bad = Select(c.req, NodeShape(), &objects)) return *bad;
  return ListResponse(c.req, NodeShape(), objects, rv, Now());
}

net::HttpResponse Controller::Impl::K8sNodeGet(const K8sCall& c) {
  const std::string& name = c.Name();
  std::string rv;
  Objects objects = K8sNodeObjects(&rv, name, "");
  if (objects.empty()) return K8sJsonResponse(404, k8s::NotFoundStatus("nodes", name));
  if (c.req.method != "GET" && c.req.method != "HEAD") return MethodNotAllowedHere();
  return ObjectResponse(c.req, NodeShape(), objects.begin()->second, 200, Now());
}

net::HttpResponse Controller::Impl::K8sNodePatch(const K8sCall& c) {
  const std::string name = c.Name();
  const Caller who = c.who;
  std::string rv;
  Objects objects = K8sNodeObjects(&rv, name, "");
  if (objects.empty()) return K8sJsonResponse(404, k8s::NotFoundStatus("nodes", name));
  Result<std::optional<bool>> want =
      k8s::UnschedulableFromPatch(c.req.Header("content-type"), c.req.body);
  if (!want.ok()) {
    const std::string& msg = want.status().message();
    return K8sJsonResponse(
        422, k8s::StatusBody(422, "Invalid", "Node \"" + name + "\" is invalid: " + msg,
                             {{"name", name}, {"kind", "Node"}}));
  }
  const bool now_unschedulable = objects.begin()->second["spec"].value("unschedulable", false);
  if (!want->has_value() || **want == now_unschedulable) {
    return ObjectResponse(c.req, NodeShape(), objects.begin()->second, 200, Now());
  }
  const std::string action = **want ? "drain" : "resume";
  const std::string reason = "cordoned through the Kubernetes API by " + who.user;
  Reply r = Call([this, who, name, action, reason](Txn& t, Reply* out) {
    state_thread.AssertHeld();  // a command: on the state thread
    out->status = NodeAction(who, name, action, reason, t);
    std::optional<uint32_t> index = cs->FindNode(name);
    if (out->status.ok() && index) {
      out->body = {{"state", std::string(core::NodeStateLongName(cs->node(*index).state()))}};
    }
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (r.status.code() == StatusCode::kPermissionDenied) {
    return K8sJsonResponse(
        403, k8s::ForbiddenStatus("nodes", name,
                                  "User \"" + who.user +
                                      "\" cannot patch resource \"nodes\" in API group \"\" at "
                                      "the cluster scope: " +
                                      r.status.message()));
  }
  if (r.status.code() == StatusCode::kNotFound) {
    return K8sJsonResponse(404, k8s::NotFoundStatus("nodes", name));
  }
  if (!r.status.ok()) return BadRequest(r.status.message());
  // The reply comes once the change is durable, a moment before the state thread publishes the
  // new node view: wait (briefly) for it, so that a `get` right after a cordon sees the cordon.
  const std::string state = r.body.value("state", "");
  uint64_t next = watch_hub.Next();
  for (int i = 0; i < 20; ++i) {
    std::string unused;
    Objects now_objects = K8sNodeObjects(&unused, name, "");
    if (now_objects.empty() ||
        now_objects.begin()->second["metadata"]["labels"].value("berth.io/state", "") == state) {
      break;
    }
    bool lost = false;
    watch_hub.Read(next, 100, &next, &lost);
  }
  objects = K8sNodeObjects(&rv, name, state);
  return ObjectResponse(c.req, NodeShape(), objects.begin()->second, 200, Now());
}

}  // namespace berth::controller
