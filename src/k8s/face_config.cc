// core/v1 Secrets and ConfigMaps (docs/kubernetes.md): kept by the face as their object plus a
// private "berth" section (who made it), in the store under kSecretMetaPrefix or
// kConfigMapMetaPrefix + "namespace/name" (k8s/config_objects.h checks them). Anyone may read
// ConfigMaps; a Secret is read (its values, and in lists) only by its creator, its namespace's
// creator and operators, who are also the ones who may change or delete either. Pods read them
// in containers mode (env, envFrom, volumes, imagePullSecrets).
#include "k8s/face.h"
#include "k8s/jobs.h"
#include "k8s/patch.h"
#include "k8s/protobuf.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace http;

// The kind a path names: /api/v1/KIND or /api/v1/namespaces/NS/KIND[/NAME].
ConfigKind KindOf(const Call& c) {
  const std::vector<std::string>& parts = c.match.parts;
  const size_t at = parts.size() >= 5 && parts[2] == "namespaces" ? 4 : 2;
  return at < parts.size() && parts[at] == "secrets" ? ConfigKind::kSecret : ConfigKind::kConfigMap;
}

const ResourceShape& ShapeOf(ConfigKind kind) {
  static const ResourceShape kSecrets{"secrets",         "SecretList", "v1", SecretTableColumns(),
                                      &SecretTableCells, &ConfigField};
  static const ResourceShape kConfigMaps{
      "configmaps",         "ConfigMapList", "v1", ConfigMapTableColumns(),
      &ConfigMapTableCells, &ConfigField};
  return kind == ConfigKind::kSecret ? kSecrets : kConfigMaps;
}

// The object as clients see it: without berth's private section.
json Served(const json& stored) {
  json j = stored;
  j.erase("berth");
  return j;
}

// A request's body as JSON: the protobuf envelope kubectl's typed clients send, or JSON.
std::optional<net::HttpResponse> ReadBody(const Call& c, json* body) {
  if (c.req.Header("content-type").starts_with("application/vnd.kubernetes.protobuf")) {
    Result<json> decoded = DecodeProtobufConfigObject(c.req.body);
    if (!decoded.ok()) return BadRequest(decoded.status().message());
    *body = std::move(*decoded);
    return std::nullopt;
  }
  *body = json::parse(c.req.body, nullptr, false);
  if (body->is_discarded()) return BadRequest("the body is not JSON");
  return std::nullopt;
}

std::string Denied(const Call& c, const char* verb, ConfigKind kind) {
  return "User \"" + c.who.name + "\" cannot " + verb + " resource \"" + InfoOf(kind).plural +
         "\" in API group \"\" in the namespace \"" + c.Namespace() + "\": only its creator, " +
         "the namespace's creator and operators may";
}

// An update's or a delete's failure as the API server answers it; nullopt when it succeeded.
std::optional<net::HttpResponse> ChangeFailure(const Status& st, const Call& c, ConfigKind kind,
                                               const char* verb) {
  if (auto stopping = UnavailableResponse(st)) return stopping;
  const std::string& plural = InfoOf(kind).plural;
  if (st.code() == StatusCode::kNotFound) return StatusResponse(NotFoundStatus(plural, c.Name()));
  if (st.code() == StatusCode::kPermissionDenied) {
    return StatusResponse(ForbiddenStatus(plural, c.Name(), Denied(c, verb, kind)));
  }
  if (!st.ok()) return BadRequest(st.message());
  return std::nullopt;
}

}  // namespace

Status Face::LoadConfigObjects() {
  for (ConfigKind kind : {ConfigKind::kSecret, ConfigKind::kConfigMap}) {
    const std::string prefix = InfoOf(kind).meta_prefix;
    std::map<std::string, std::shared_ptr<const json>> loaded;
    BERTH_RETURN_IF_ERROR(port_.ScanMeta(prefix, [&](const std::string& key, const std::string& v) {
      json j = json::parse(v, nullptr, false);
      if (!j.is_object()) {
        std::fprintf(stderr, "berth controller: warning: unreadable Kubernetes %s %s skipped\n",
                     InfoOf(kind).kind, key.c_str());
        return;
      }
      loaded[key.substr(prefix.size())] = std::make_shared<const json>(std::move(j));
    }));
    MutexLock l(mu_);
    config_[static_cast<int>(kind)] = std::move(loaded);
  }
  MutexLock l(mu_);
  config_rv_ = std::max(config_rv_, port_.WatchNext());
  return Status::Ok();
}

bool Face::MayChangeConfig(const User& who, const json& stored) const {
  if (who.admin) return true;
  if (stored["berth"].value("creator", "") == who.name) return true;
  auto ns = namespaces_.find(stored["metadata"].value("namespace", ""));
  return ns != namespaces_.end() && json::parse(ns->second).value("creator", "") == who.name;
}

bool Face::MayReadConfig(ConfigKind kind, const User& who, const json& stored) const {
  return kind == ConfigKind::kConfigMap || MayChangeConfig(who, stored);
}

Objects Face::ConfigObjects(ConfigKind kind, const std::string& ns, const User& who,
                            std::string* rv) {
  Objects out;
  MutexLock l(mu_);
  *rv = std::to_string(config_rv_);
  for (const auto& [key, stored] : config_[static_cast<int>(kind)]) {
    if (!ns.empty() && key.compare(0, ns.size() + 1, ns + "/") != 0) continue;
    if (MayReadConfig(kind, who, *stored)) out[key] = Served(*stored);
  }
  return out;
}

net::HttpResponse Face::ConfigList(const Call& c) {
  const ConfigKind kind = KindOf(c);
  const std::string ns = c.Namespace();
  const User who = c.who;
  return ListOrWatch(c.req, ShapeOf(kind), port_, [this, kind, ns, who](std::string* rv) {
    return ConfigObjects(kind, ns, who, rv);
  });
}

net::HttpResponse Face::ConfigCreate(const Call& c) {
  const ConfigKind kind = KindOf(c);
  const ConfigKindInfo& info = InfoOf(kind);
  const std::string& ns = c.Namespace();
  json body;
  if (auto bad = ReadBody(c, &body)) return *bad;
  if (body.is_object() && body.contains("metadata") && body["metadata"].is_object() &&
      body["metadata"].contains("namespace") && body["metadata"]["namespace"] != ns &&
      body["metadata"]["namespace"] != "") {
    return BadRequest(
        "the namespace of the provided object does not match the namespace sent on the "
        "request");
  }
  {
    MutexLock l(mu_);
    if (!namespaces_.count(ns)) return StatusResponse(NotFoundStatus("namespaces", ns));
  }
  if (ns == kSlurmNamespace) {
    return StatusResponse(ForbiddenStatus(
        info.plural, "", "the namespace \"slurm\" shows Slurm jobs; use another one"));
  }
  json object;
  if (auto problem = NormalizeConfigObject(kind, body, ns, GenerateNameSuffix(), port_.Now(),
                                           nullptr, &object)) {
    std::string name = body.is_object() && body.contains("metadata") && body["metadata"].is_object()
                           ? body["metadata"].value("name", "")
                           : "";
    return StatusResponse(InvalidStatusOf(info.kind, name, *problem));
  }
  const std::string name = object["metadata"]["name"];
  const std::string key = ObjectKey(ns, name);
  const bool dry_run = Query(c.req, "dryRun") == "All";
  Status st = port_.Run([&](StateOps& ops) {
    MutexLock l(mu_);
    auto& objects = config_[static_cast<int>(kind)];
    if (objects.count(key)) return Status::AlreadyExists(key);
    object["metadata"]["resourceVersion"] = std::to_string(config_rv_ + 1);
    if (dry_run) return Status::Ok();
    config_rv_ += 1;
    json stored = object;
    stored["berth"] = {{"creator", c.who.name}, {"creator_uid", c.who.uid}};
    ops.PutMeta(info.meta_prefix + key, stored.dump());
    objects[key] = std::make_shared<const json>(std::move(stored));
    return Status::Ok();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kAlreadyExists) {
    return StatusResponse(AlreadyExistsStatus(info.plural, name));
  }
  if (!st.ok()) return BadRequest(st.message());
  return ObjectResponse(c.req, ShapeOf(kind), object, 201, port_.Now());
}

net::HttpResponse Face::ConfigGet(const Call& c) {
  const ConfigKind kind = KindOf(c);
  json served;
  {
    MutexLock l(mu_);
    auto& objects = config_[static_cast<int>(kind)];
    auto it = objects.find(ObjectKey(c.Namespace(), c.Name()));
    if (it == objects.end()) {
      return StatusResponse(NotFoundStatus(InfoOf(kind).plural, c.Name()));
    }
    if (!MayReadConfig(kind, c.who, *it->second)) {
      return StatusResponse(ForbiddenStatus(InfoOf(kind).plural, c.Name(), Denied(c, "get", kind)));
    }
    served = Served(*it->second);
  }
  return ObjectResponse(c.req, ShapeOf(kind), served, 200, port_.Now());
}

net::HttpResponse Face::ConfigUpdate(const Call& c) {
  const ConfigKind kind = KindOf(c);
  const ConfigKindInfo& info = InfoOf(kind);
  const std::string& name = c.Name();
  const std::string key = ObjectKey(c.Namespace(), name);
  const bool apply = c.req.Header("content-type").starts_with("application/apply-patch");
  std::optional<json> current;
  {
    MutexLock l(mu_);
    auto& objects = config_[static_cast<int>(kind)];
    if (auto it = objects.find(key); it != objects.end()) {
      if (!MayChangeConfig(c.who, *it->second)) {
        return StatusResponse(ForbiddenStatus(info.plural, name, Denied(c, "update", kind)));
      }
      current = Served(*it->second);
    }
  }
  if (!current && c.req.method == "PATCH" && apply) return ConfigCreate(c);  // server-side apply
  if (!current) return StatusResponse(NotFoundStatus(info.plural, name));
  json want;
  if (c.req.method == "PUT") {
    if (auto bad = ReadBody(c, &want)) return *bad;
    const std::string rv = want.is_object() && want["metadata"].is_object()
                               ? want["metadata"].value("resourceVersion", "")
                               : "";
    if (!rv.empty() && rv != (*current)["metadata"].value("resourceVersion", "")) {
      return StatusResponse(StatusBody(
          409, "Conflict",
          std::string("Operation cannot be fulfilled on ") + info.plural + " \"" + name +
              "\": the object has been modified; please apply your changes to the latest "
              "version and try again",
          {{"name", name}, {"kind", info.plural}}));
    }
  } else {
    Result<json> changed = ApplyPatch(c.req.Header("content-type"), *current, c.req.body);
    if (!changed.ok()) return PatchFailure(changed.status());
    want = std::move(*changed);
  }
  if (want.is_object() && want["metadata"].is_object() &&
      want["metadata"].value("name", name) != name) {
    return BadRequest("the name of the object (" + want["metadata"].value("name", "") +
                      ") does not match the name on the URL (" + name + ")");
  }
  if (want.is_object() && want["metadata"].is_object()) want["metadata"]["name"] = name;
  json next;
  if (auto problem =
          NormalizeConfigObject(kind, want, c.Namespace(), "", port_.Now(), &*current, &next)) {
    return StatusResponse(InvalidStatusOf(info.kind, name, *problem));
  }
  Status st = port_.Run([&](StateOps& ops) {
    MutexLock l(mu_);
    auto& objects = config_[static_cast<int>(kind)];
    auto it = objects.find(key);
    if (it == objects.end()) return Status::NotFound(key);
    if (!MayChangeConfig(c.who, *it->second)) return Status::PermissionDenied(key);
    config_rv_ += 1;
    next["metadata"]["resourceVersion"] = std::to_string(config_rv_);
    json stored = next;
    stored["berth"] = (*it->second)["berth"];
    ops.PutMeta(info.meta_prefix + key, stored.dump());
    it->second = std::make_shared<const json>(std::move(stored));
    return Status::Ok();
  });
  if (auto failed = ChangeFailure(st, c, kind, "update")) return *failed;
  return ObjectResponse(c.req, ShapeOf(kind), next, 200, port_.Now());
}

net::HttpResponse Face::ConfigDelete(const Call& c) {
  const ConfigKind kind = KindOf(c);
  const ConfigKindInfo& info = InfoOf(kind);
  const std::string& name = c.Name();
  const std::string key = ObjectKey(c.Namespace(), name);
  std::string uid;
  Status st = port_.Run([&](StateOps& ops) {
    MutexLock l(mu_);
    auto& objects = config_[static_cast<int>(kind)];
    auto it = objects.find(key);
    if (it == objects.end()) return Status::NotFound(key);
    if (!MayChangeConfig(c.who, *it->second)) return Status::PermissionDenied(key);
    uid = (*it->second)["metadata"].value("uid", "");
    objects.erase(it);
    config_rv_ += 1;
    ops.DeleteMeta(info.meta_prefix + key);
    return Status::Ok();
  });
  if (auto failed = ChangeFailure(st, c, kind, "delete")) return *failed;
  return JsonResponse(200, SuccessStatus(info.plural, name, uid));
}

ConfigLookup Face::ConfigLookupFor(const std::string& ns, const User& who) {
  return [this, ns, who](ConfigKind kind, const std::string& name) -> std::optional<ConfigData> {
    MutexLock l(mu_);
    const auto& objects = config_[static_cast<int>(kind)];
    auto it = objects.find(ObjectKey(ns, name));
    if (it == objects.end() || !MayReadConfig(kind, who, *it->second)) return std::nullopt;
    return DecodeConfigData(kind, *it->second);
  };
}

void Face::AddPullSecretEvent(uint32_t id, const PodMapping& m, int64_t now) {
  const std::string ns = m.meta.value("namespace", "");
  std::string names;
  for (const std::string& s : m.missing_pull_secrets) names += (names.empty() ? "" : ", ") + s;
  const json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"namespace", ns}, {"name", m.name}, {"uid", PodUid(id, ns, m.name)}}}};
  events_.push_back(std::make_shared<const json>(
      MakeEvent(pod, "Warning", "FailedToRetrieveImagePullSecret",
                "Unable to retrieve some image pull secrets (" + names +
                    "); attempting to pull the image may not succeed.",
                now, 1, "kubelet")));
  if (events_.size() > kMaxEvents) events_.pop_front();
}

}  // namespace berth::k8s
