// core/v1 Namespaces (docs/kubernetes.md): kept by the face, persisted in the store's
// kNamespacesMetaKey with every change. Labels and annotations change; deleting one takes its
// Jobs and Pods with it; the built-in ones may not be deleted.
#include "k8s/face.h"
#include "k8s/objects.h"
#include "k8s/patch.h"
#include "k8s/protobuf.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace http;

// The answer to a namespace command that failed: 503 while stopping, 404 for an unknown
// namespace, 403 (with `forbidden`) for a caller who may not change it; nullopt otherwise.
std::optional<net::HttpResponse> NamespaceFailure(const Status& st, const std::string& name,
                                                  const std::string& forbidden) {
  if (auto stopping = UnavailableResponse(st)) return stopping;
  if (st.code() == StatusCode::kNotFound) {
    return JsonResponse(404, NotFoundStatus("namespaces", name));
  }
  if (st.code() == StatusCode::kPermissionDenied) {
    return JsonResponse(403, ForbiddenStatus("namespaces", name, forbidden));
  }
  return std::nullopt;
}

json NamespaceObject(const std::string& name, const std::string& record_text) {
  json rec = json::parse(record_text);
  return EncodeNamespace(
      name, rec.value("created", int64_t{0}), std::to_string(rec.value("rv", uint64_t{1})),
      rec.value("labels", json::object()), rec.value("annotations", json::object()));
}

// A new namespace's name and record from a create request; the answer when it cannot be made.
std::optional<net::HttpResponse> NamespaceToCreate(const Call& c, std::string* name, json* record) {
  json body = json::parse(c.req.body, nullptr, false);
  if (c.req.Header("content-type").starts_with("application/vnd.kubernetes.protobuf")) {
    Result<json> decoded = DecodeProtobufObjectMeta(c.req.body);  // kubectl create namespace
    if (!decoded.ok()) return BadRequest(decoded.status().message());
    body = std::move(*decoded);
  }
  if (!body.is_object() || !body.contains("metadata") || !body["metadata"].is_object()) {
    return BadRequest("the body must be a Namespace object with metadata");
  }
  const json& meta = body["metadata"];
  *name = meta.value("name", "");
  if (std::string problem = NamespaceNameProblem(*name); !problem.empty()) {
    return JsonResponse(422, InvalidStatus("Namespace", *name, "metadata.name", *name, problem));
  }
  if (body.contains("kind") && body["kind"] != "Namespace") {
    return BadRequest("the body is a " + body["kind"].dump() + ", not a Namespace");
  }
  *record = {{"labels", meta.value("labels", json::object())},
             {"annotations", meta.value("annotations", json::object())},
             {"creator", c.who.name}};
  if (!(*record)["labels"].is_object() || !(*record)["annotations"].is_object()) {
    return JsonResponse(422, InvalidStatus("Namespace", *name, "metadata.labels", "",
                                           "labels and annotations are string maps"));
  }
  return std::nullopt;
}

// A namespace's new labels and annotations from a PATCH or PUT of `object`; the answer when the
// change is refused.
std::optional<net::HttpResponse> NamespaceMetaChange(const Call& c, const json& object,
                                                     json* labels, json* annotations) {
  const std::string& name = c.Name();
  Result<json> changed = c.req.method == "PUT"
                             ? Result<json>(json::parse(c.req.body, nullptr, false))
                             : ApplyPatch(c.req.Header("content-type"), object, c.req.body);
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
        return JsonResponse(422, InvalidStatus("Namespace", name, "metadata.labels", k,
                                               "labels and annotations are strings"));
      }
    }
  }
  return std::nullopt;
}

// Whether `who` may change or delete the namespace of `record_text`: its creator or an operator.
bool MayChange(const User& who, const std::string& record_text) {
  return who.admin || json::parse(record_text).value("creator", "") == who.name;
}

}  // namespace

Objects Face::NamespaceObjects(std::string* rv) {
  Objects out;
  MutexLock l(mu_);
  for (const auto& [name, record] : namespaces_) out[name] = NamespaceObject(name, record);
  *rv = std::to_string(namespaces_rv_);
  return out;
}

std::string Face::NamespacesText() const {
  json items = json::object();
  for (const auto& [n, record] : namespaces_) items[n] = json::parse(record);
  return json{{"rv", namespaces_rv_}, {"items", items}}.dump();
}

net::HttpResponse Face::NamespaceList(const Call& c) {
  return ListOrWatch(c.req, NamespaceShape(), port_,
                     [this](std::string* rv) { return NamespaceObjects(rv); });
}

net::HttpResponse Face::NamespaceCreate(const Call& c) {
  std::string name;
  json record;
  if (auto refused = NamespaceToCreate(c, &name, &record)) return *refused;
  const bool dry_run = Query(c.req, "dryRun") == "All";
  json object;
  Status st = port_.Run([&](StateOps& ops) {
    MutexLock l(mu_);
    if (namespaces_.count(name)) return Status::AlreadyExists(name);
    record["created"] = port_.Now();
    record["rv"] = namespaces_rv_ + 1;
    if (!dry_run) {
      namespaces_rv_ += 1;
      namespaces_[name] = record.dump();
      ops.PutMeta(kNamespacesMetaKey, NamespacesText());
    }
    object = NamespaceObject(name, record.dump());
    return Status::Ok();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kAlreadyExists) {
    return JsonResponse(409, AlreadyExistsStatus("namespaces", name));
  }
  if (!st.ok()) return BadRequest(st.message());
  return ObjectResponse(c.req, NamespaceShape(), object, 201, port_.Now());
}

net::HttpResponse Face::NamespaceGet(const Call& c) {
  const std::string& name = c.Name();
  std::string rv;
  Objects objects = NamespaceObjects(&rv);
  auto it = objects.find(name);
  if (it == objects.end()) return JsonResponse(404, NotFoundStatus("namespaces", name));
  return ObjectResponse(c.req, NamespaceShape(), it->second, 200, port_.Now());
}

net::HttpResponse Face::NamespaceUpdate(const Call& c) {
  // Labels and annotations change (kubectl label/annotate, apply); nothing else does.
  const std::string name = c.Name();
  std::string rv;
  Objects objects = NamespaceObjects(&rv);
  auto it = objects.find(name);
  if (it == objects.end()) return JsonResponse(404, NotFoundStatus("namespaces", name));
  json labels, annotations;
  if (auto refused = NamespaceMetaChange(c, it->second, &labels, &annotations)) return *refused;
  Status st = port_.Run([&](StateOps& ops) {
    MutexLock l(mu_);
    auto ns = namespaces_.find(name);
    if (ns == namespaces_.end()) return Status::NotFound(name);
    if (!MayChange(c.who, ns->second)) {
      return Status::PermissionDenied("only its creator or an operator may change it");
    }
    json rec = json::parse(ns->second);
    rec["labels"] = labels;
    rec["annotations"] = annotations;
    namespaces_rv_ += 1;
    rec["rv"] = namespaces_rv_;
    ns->second = rec.dump();
    ops.PutMeta(kNamespacesMetaKey, NamespacesText());
    return Status::Ok();
  });
  if (auto failed = NamespaceFailure(st, name, st.message())) return *failed;
  Objects after = NamespaceObjects(&rv);
  auto now_it = after.find(name);
  if (now_it == after.end()) return JsonResponse(404, NotFoundStatus("namespaces", name));
  return ObjectResponse(c.req, NamespaceShape(), now_it->second, 200, port_.Now());
}

void Face::DeleteNamespaceContents(const std::string& name, StateOps& ops) {
  const std::string prefix = name + "/";
  for (auto j = jobs_.lower_bound(prefix);
       j != jobs_.end() && j->first.compare(0, prefix.size(), prefix) == 0;) {
    ops.DeleteMeta(kJobMetaPrefix + j->first);
    j = jobs_.erase(j);
    jobs_rv_ += 1;
  }
  for (auto& objects : config_) {  // Secrets and ConfigMaps
    for (auto o = objects.lower_bound(prefix);
         o != objects.end() && o->first.compare(0, prefix.size(), prefix) == 0;) {
      ops.DeleteMeta(
          std::string(InfoOf(o->second->value("kind", "") == "Secret" ? ConfigKind::kSecret
                                                                      : ConfigKind::kConfigMap)
                          .meta_prefix) +
          o->first);
      o = objects.erase(o);
      config_rv_ += 1;
    }
  }
  for (auto pod = pods_.lower_bound(prefix);
       pod != pods_.end() && pod->first.compare(0, prefix.size(), prefix) == 0; ++pod) {
    ops.DeletePod(pod->second);
  }
}

net::HttpResponse Face::NamespaceDelete(const Call& c) {
  const std::string name = c.Name();
  for (const char* builtin : kBuiltinNamespaces) {
    if (name == builtin) {
      return JsonResponse(403,
                          ForbiddenStatus("namespaces", name, "this namespace may not be deleted"));
    }
  }
  json uid;
  Status st = port_.Run([&](StateOps& ops) {
    MutexLock l(mu_);
    auto it = namespaces_.find(name);
    if (it == namespaces_.end()) return Status::NotFound(name);
    if (!MayChange(c.who, it->second)) return Status::PermissionDenied(name);
    uid = NamespaceObject(name, it->second)["metadata"]["uid"];
    namespaces_.erase(it);
    // What lives in it goes with it: its Jobs, and its Pods (their jobs are cancelled).
    DeleteNamespaceContents(name, ops);
    namespaces_rv_ += 1;
    ops.PutMeta(kNamespacesMetaKey, NamespacesText());
    return Status::Ok();
  });
  if (auto failed = NamespaceFailure(st, name,
                                     "User \"" + c.who.name +
                                         "\" cannot delete resource \"namespaces\" in API group "
                                         "\"\" in the namespace \"" +
                                         name + "\": only its creator or an operator may")) {
    return *failed;
  }
  if (!st.ok()) return BadRequest(st.message());
  return JsonResponse(200, SuccessStatus("namespaces", name, uid));
}

}  // namespace berth::k8s
