// Containers mode: a Pod's container as an image::ContainerSpec (k8s/pod_container.h).
#include "k8s/pod_container.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace berth::k8s::podc {
namespace {

using nlohmann::json;
using namespace fields;

const char* KindName(ConfigKind kind) {
  return kind == ConfigKind::kSecret ? "secret" : "configmap";
}

// A reference to a Secret or ConfigMap of the Pod's namespace: the object, or nullopt with
// `problem` set when it is missing and not optional (and neither when it is optional).
std::optional<ConfigData> Resolve(ConfigKind kind, const std::string& name, bool optional,
                                  const std::string& field, const PodContext& ctx,
                                  std::optional<FieldProblem>* problem) {
  std::optional<ConfigData> data;
  if (ctx.find_config) data = ctx.find_config(kind, name);
  if (!data && !optional) {
    *problem = Invalid(field, name,
                       std::string(KindName(kind)) + " \"" + name + "\" not found in namespace \"" +
                           ctx.ns +
                           "\" (berth reads it when the Pod is created; mark the reference "
                           "optional: true to go without it)");
  }
  return data;
}

// Kubernetes' rule for variable names (1.30+): printable ASCII but '=', not empty.
bool ValidEnvName(const std::string& name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return c >= 0x20 && c < 0x7f && c != '='; });
}

void SetVar(std::vector<std::pair<std::string, std::string>>* env, const std::string& name,
            const std::string& value) {
  for (auto& [k, v] : *env) {
    if (k == name) {
      v = value;
      return;
    }
  }
  env->emplace_back(name, value);
}

// A relative path inside a volume: not empty, not absolute, no ".." component.
bool SafeRelative(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string part =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part == "..") return false;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

bool IsVolumeName(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// A Pod volume as berth mounts it (its destination and read-only flag come from each mount).
struct Volume {
  std::string type;  // "emptyDir", "hostPath", "configMap", "secret"
  image::Mount mount;
  int mounts = 0;  // how often the container mounts it
};

// The files of a configMap or secret volume: every key, or `items` (key -> path).
std::optional<FieldProblem> VolumeFiles(const json& src, const std::string& sf, ConfigKind kind,
                                        const PodContext& ctx, image::Mount* m) {
  const std::string name = Str(src, {kind == ConfigKind::kSecret ? "secretName" : "name"});
  const std::string name_field = sf + (kind == ConfigKind::kSecret ? ".secretName" : ".name");
  if (name.empty()) return Required(name_field);
  const bool optional = At(src, {"optional"}) == true;
  const json& items = At(src, {"items"});
  if (!items.is_null() && !items.is_array())
    return Invalid(sf + ".items", Text(items), "must be a list");
  for (size_t i = 0; items.is_array() && i < items.size(); ++i) {
    const std::string itf = sf + ".items[" + std::to_string(i) + "]";
    if (Str(items[i], {"key"}).empty()) return Required(itf + ".key");
    const std::string path = Str(items[i], {"path"});
    if (path.empty()) return Required(itf + ".path");
    if (!SafeRelative(path)) {
      return Invalid(itf + ".path", path, "must be a relative path without '..'");
    }
  }
  if (!ctx.resolve_refs) return std::nullopt;
  std::optional<FieldProblem> problem;
  std::optional<ConfigData> data = Resolve(kind, name, optional, name_field, ctx, &problem);
  if (problem) return problem;
  if (!data) return std::nullopt;  // optional and missing: an empty volume
  if (!items.is_array()) {
    m->files = data->data;
    return std::nullopt;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string key = Str(items[i], {"key"});
    auto it = data->data.find(key);
    if (it == data->data.end()) {
      if (optional) continue;
      return Invalid(sf + ".items[" + std::to_string(i) + "].key", key,
                     "no such key in " + std::string(KindName(kind)) + " \"" + name + "\"");
    }
    m->files[Str(items[i], {"path"})] = it->second;
  }
  return std::nullopt;
}

std::optional<FieldProblem> ReadVolume(const json& v, const std::string& vf, const PodContext& ctx,
                                       Volume* out) {
  std::vector<std::string> sources;
  for (const auto& [key, value] : v.items()) {
    if (key != "name" && !value.is_null()) sources.push_back(key);
  }
  if (sources.size() > 1) {
    return FieldProblem{vf, "Forbidden", "", "may not specify more than 1 volume type"};
  }
  // No source at all: the API server defaults it to an emptyDir.
  out->type = sources.empty() ? "emptyDir" : sources[0];
  const json& src = sources.empty() ? json::object() : v[sources[0]];
  const std::string sf = vf + "." + out->type;
  image::Mount& m = out->mount;
  if (out->type == "emptyDir") {
    const std::string medium = Str(src, {"medium"});
    if (medium.empty()) {
      m.kind = image::Mount::Kind::kEmpty;
    } else if (medium == "Memory") {
      m.kind = image::Mount::Kind::kTmpfs;
      if (const json& size = At(src, {"sizeLimit"}); !size.is_null()) {
        std::optional<double> bytes = ParseQuantity(size);
        if (!bytes || *bytes < 0 || *bytes > 1e18) {
          return Invalid(sf + ".sizeLimit", Text(size), "must be a quantity of bytes (\"64Mi\")");
        }
        m.size_bytes = static_cast<int64_t>(std::ceil(*bytes));
      }
    } else {
      return Unsupported(sf + ".medium", medium,
                         "berth supports \"\" (a folder in the job's folder) and \"Memory\" (a "
                         "tmpfs)");
    }
  } else if (out->type == "hostPath") {
    const std::string path = Str(src, {"path"});
    if (path.empty()) return Required(sf + ".path");
    if (path.front() != '/' || !SafeRelative(path.substr(1).empty() ? "." : path.substr(1))) {
      return Invalid(sf + ".path", path, "must be an absolute path without '..'");
    }
    m.kind = image::Mount::Kind::kBind;
    m.source = path;
  } else if (out->type == "configMap" || out->type == "secret") {
    const ConfigKind kind = out->type == "secret" ? ConfigKind::kSecret : ConfigKind::kConfigMap;
    m.kind = image::Mount::Kind::kFiles;
    m.secret = kind == ConfigKind::kSecret;
    m.read_only = true;
    if (!src.is_object()) return Invalid(sf, Text(src), "must be an object");
    if (auto p = VolumeFiles(src, sf, kind, ctx, &m)) return p;
  } else {
    return Unsupported(vf, out->type,
                       "berth supports emptyDir, hostPath, configMap and secret volumes");
  }
  return std::nullopt;
}

std::optional<FieldProblem> ReadVolumes(const json& spec, const PodContext& ctx,
                                        std::map<std::string, Volume>* out) {
  const json& list = At(spec, {"volumes"});
  if (list.is_null()) return std::nullopt;
  if (!list.is_array()) return Invalid("spec.volumes", Text(list), "must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string vf = "spec.volumes[" + std::to_string(i) + "]";
    const json& v = list[i];
    if (!v.is_object()) return Invalid(vf, Text(v), "must be an object");
    const std::string name = Str(v, {"name"});
    if (name.empty()) return Required(vf + ".name");
    if (!IsVolumeName(name)) {
      return Invalid(vf + ".name", name,
                     "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                     "characters or '-', and must start and end with an alphanumeric character");
    }
    if (out->count(name)) return FieldProblem{vf + ".name", "Duplicate value", name, ""};
    Volume vol;
    if (auto p = ReadVolume(v, vf, ctx, &vol)) return p;
    (*out)[name] = std::move(vol);
  }
  return std::nullopt;
}

std::optional<FieldProblem> ReadMounts(const json& container, const std::string& cf,
                                       std::map<std::string, Volume>* volumes,
                                       std::vector<image::Mount>* out) {
  const json& list = At(container, {"volumeMounts"});
  if (list.is_null()) return std::nullopt;
  if (!list.is_array()) return Invalid(cf + ".volumeMounts", Text(list), "must be a list");
  std::set<std::string> paths;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string mf = cf + ".volumeMounts[" + std::to_string(i) + "]";
    const json& vm = list[i];
    if (!vm.is_object()) return Invalid(mf, Text(vm), "must be an object");
    const std::string name = Str(vm, {"name"});
    if (name.empty()) return Required(mf + ".name");
    const std::string path = Str(vm, {"mountPath"});
    if (path.empty()) return Required(mf + ".mountPath");
    auto vol = volumes->find(name);
    if (vol == volumes->end()) return FieldProblem{mf + ".name", "Not found", name, ""};
    if (path.front() != '/') {
      return Invalid(mf + ".mountPath", path, "berth mounts at absolute paths in the container");
    }
    if (!paths.insert(path).second) return Invalid(mf + ".mountPath", path, "must be unique");
    if (!At(vm, {"subPathExpr"}).is_null()) {
      return Unsupported(mf + ".subPathExpr", Text(At(vm, {"subPathExpr"})),
                         "berth does not expand subPathExpr; use subPath");
    }
    const std::string sub = Str(vm, {"subPath"});
    if (!sub.empty() && !SafeRelative(sub)) {
      return Invalid(mf + ".subPath", sub, "must be a relative path without '..'");
    }
    image::Mount m = vol->second.mount;
    m.destination = path;
    const bool read_only = At(vm, {"readOnly"}) == true;
    switch (m.kind) {
      case image::Mount::Kind::kBind:
        if (!sub.empty()) m.source += (m.source.back() == '/' ? "" : "/") + sub;
        m.read_only = read_only;
        break;
      case image::Mount::Kind::kEmpty:
      case image::Mount::Kind::kTmpfs:
        // A fresh folder (or tmpfs) per mount: one mount of it is the volume, a subPath in it an
        // empty folder as well. Two mounts could not share it.
        if (++vol->second.mounts > 1) {
          return Invalid(mf + ".name", name,
                         "berth mounts an emptyDir volume in one place of the container only");
        }
        m.read_only = read_only;
        break;
      case image::Mount::Kind::kFiles:
        if (!sub.empty()) {
          return Unsupported(mf + ".subPath", sub,
                             "berth mounts configMap and secret volumes as folders (no subPath "
                             "yet): mount the folder, or use items to choose the files");
        }
        m.read_only = true;
        break;
    }
    out->push_back(std::move(m));
  }
  return std::nullopt;
}

// securityContext.runAsUser of the container, else of the pod.
std::optional<FieldProblem> RunAs(const json& pod_spec, const json& container,
                                  const std::string& cf, const PodContext& ctx, bool* root) {
  std::string field = cf + ".securityContext.runAsUser";
  const json* v = &At(container, {"securityContext", "runAsUser"});
  if (v->is_null()) {
    field = "spec.securityContext.runAsUser";
    v = &At(pod_spec, {"securityContext", "runAsUser"});
  }
  if (v->is_null()) return std::nullopt;
  if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > UINT32_MAX) {
    return Invalid(field, Text(*v), "must be a uid between 0 and 4294967295");
  }
  const int64_t uid = v->get<int64_t>();
  if (uid == 0 && ctx.admin) {
    *root = true;
    return std::nullopt;
  }
  if (uid == static_cast<int64_t>(ctx.uid)) return std::nullopt;
  return FieldProblem{field, "Forbidden", "",
                      "berth runs a Pod's container as the user who made it (uid " +
                          std::to_string(ctx.uid) + "): runAsUser " + std::to_string(uid) +
                          " is not allowed" +
                          (uid == 0 ? " (only operators may run containers as root)" : "")};
}

// The registry credentials of one pull Secret ({"server": {auth...}}); nullopt when it is not
// a registry Secret berth can read.
std::optional<json> PullAuths(const ConfigData& secret) {
  if (secret.type == "kubernetes.io/dockerconfigjson") {
    auto it = secret.data.find(".dockerconfigjson");
    if (it == secret.data.end()) return std::nullopt;
    json j = json::parse(it->second, nullptr, false);
    if (!j.is_object() || !j.contains("auths") || !j["auths"].is_object()) return std::nullopt;
    return j["auths"];
  }
  if (secret.type == "kubernetes.io/dockercfg") {
    auto it = secret.data.find(".dockercfg");
    if (it == secret.data.end()) return std::nullopt;
    json j = json::parse(it->second, nullptr, false);
    if (!j.is_object()) return std::nullopt;
    return j;
  }
  return std::nullopt;
}

std::optional<FieldProblem> PullSecrets(const json& pod_spec, const PodContext& ctx,
                                        std::string* auth_config,
                                        std::vector<std::string>* missing) {
  const json& list = At(pod_spec, {"imagePullSecrets"});
  if (list.is_null()) return std::nullopt;
  if (!list.is_array()) return Invalid("spec.imagePullSecrets", Text(list), "must be a list");
  json auths = json::object();
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string name = Str(list[i], {"name"});
    if (name.empty()) return Required("spec.imagePullSecrets[" + std::to_string(i) + "].name");
    if (!ctx.resolve_refs) continue;
    std::optional<ConfigData> secret;
    if (ctx.find_config) secret = ctx.find_config(ConfigKind::kSecret, name);
    std::optional<json> a = secret ? PullAuths(*secret) : std::nullopt;
    if (!a) {
      missing->push_back(name);
      continue;
    }
    for (const auto& [server, cred] : a->items()) {
      if (!auths.contains(server)) auths[server] = cred;  // the first Secret naming it wins
    }
  }
  if (!auths.empty()) *auth_config = json{{"auths", auths}}.dump();
  return std::nullopt;
}

}  // namespace

std::optional<FieldProblem> ValueFrom(const json& from, const std::string& field,
                                      const PodContext& ctx, EnvValue* out) {
  const std::string f = field + ".valueFrom";
  if (const json& ref = At(from, {"fieldRef"}); !ref.is_null()) {
    const std::string path = Str(ref, {"fieldPath"});
    if (path == "spec.nodeName") {
      out->node_name = true;
    } else if (path == "status.podIP" || path == "status.hostIP" || path == "status.podIPs" ||
               path == "status.hostIPs") {
      out->value = "127.0.0.1";  // as the Pod's status shows it (the host network, no pod IPs)
    } else if (path == "spec.serviceAccountName") {
      out->value = "default";
    } else {
      return Unsupported(f + ".fieldRef.fieldPath", path,
                         "berth fills metadata.name, metadata.namespace, metadata.labels['K'], "
                         "metadata.annotations['K'], spec.nodeName, spec.serviceAccountName, "
                         "status.podIP and status.hostIP");
    }
    return std::nullopt;
  }
  for (const auto& [key, kind] : {std::pair{"configMapKeyRef", ConfigKind::kConfigMap},
                                  std::pair{"secretKeyRef", ConfigKind::kSecret}}) {
    const json& ref = At(from, {key});
    if (ref.is_null()) continue;
    const std::string rf = f + "." + key;
    const std::string name = Str(ref, {"name"});
    const std::string k = Str(ref, {"key"});
    if (name.empty()) return Required(rf + ".name");
    if (k.empty()) return Required(rf + ".key");
    if (!ctx.resolve_refs) {
      out->value = "";
      return std::nullopt;
    }
    const bool optional = At(ref, {"optional"}) == true;
    std::optional<FieldProblem> problem;
    std::optional<ConfigData> data = Resolve(kind, name, optional, rf + ".name", ctx, &problem);
    if (problem) return problem;
    if (!data) return std::nullopt;  // optional: the variable is not set
    auto it = data->data.find(k);
    if (it == data->data.end()) {
      if (optional) return std::nullopt;
      return Invalid(rf + ".key", k,
                     "couldn't find key " + k + " in " +
                         (kind == ConfigKind::kSecret ? "Secret " : "ConfigMap ") + ctx.ns + "/" +
                         name);
    }
    out->value = it->second;
    return std::nullopt;
  }
  if (const json& ref = At(from, {"resourceFieldRef"}); !ref.is_null()) {
    return Unsupported(f + ".resourceFieldRef", Text(ref), "not supported by berth yet");
  }
  return Required(f, "one of fieldRef, configMapKeyRef or secretKeyRef");
}

std::optional<FieldProblem> EnvFrom(const json& container, const std::string& cf,
                                    const PodContext& ctx,
                                    std::vector<std::pair<std::string, std::string>>* env) {
  const json& list = At(container, {"envFrom"});
  if (list.is_null()) return std::nullopt;
  if (!list.is_array()) return Invalid(cf + ".envFrom", Text(list), "must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string ef = cf + ".envFrom[" + std::to_string(i) + "]";
    const json& e = list[i];
    const std::string prefix = Str(e, {"prefix"});
    bool found = false;
    for (const auto& [key, kind] : {std::pair{"configMapRef", ConfigKind::kConfigMap},
                                    std::pair{"secretRef", ConfigKind::kSecret}}) {
      const json& ref = At(e, {key});
      if (ref.is_null()) continue;
      found = true;
      const std::string name = Str(ref, {"name"});
      const std::string rf = ef + "." + key + ".name";
      if (name.empty()) return Required(rf);
      if (!ctx.resolve_refs) continue;
      std::optional<FieldProblem> problem;
      std::optional<ConfigData> data =
          Resolve(kind, name, At(ref, {"optional"}) == true, rf, ctx, &problem);
      if (problem) return problem;
      if (!data) continue;
      for (const auto& [k, v] : data->data) {
        if (ValidEnvName(prefix + k)) SetVar(env, prefix + k, v);
      }
    }
    if (!found) return Required(ef, "one of configMapRef or secretRef");
  }
  return std::nullopt;
}

std::optional<FieldProblem> FillSpec(const json& pod_spec, const json& container,
                                     const std::string& cf, const PodContext& ctx,
                                     image::ContainerSpec* spec,
                                     std::vector<std::string>* missing_pull_secrets) {
  spec->image = Str(container, {"image"});
  spec->entry = image::EntryMode::kKubernetes;
  if (const json& pp = At(container, {"imagePullPolicy"}); !pp.is_null()) {
    const std::string p = Text(pp);
    if (p == "Always") {
      spec->pull_policy = image::PullPolicy::kAlways;
    } else if (p == "IfNotPresent") {
      spec->pull_policy = image::PullPolicy::kIfNotPresent;
    } else if (p == "Never") {
      spec->pull_policy = image::PullPolicy::kNever;
    } else {
      return Unsupported(cf + ".imagePullPolicy", p,
                         "supported values: \"Always\", \"IfNotPresent\", \"Never\"");
    }
  }
  spec->work_dir = Str(container, {"workingDir"});
  if (!spec->work_dir.empty() && spec->work_dir.front() != '/') {
    return Invalid(cf + ".workingDir", spec->work_dir, "must be an absolute path in the container");
  }
  if (auto p = RunAs(pod_spec, container, cf, ctx, &spec->run_as_root)) return p;
  // As on a Kubernetes node: a writable root unless readOnlyRootFilesystem, and only the
  // volumes the Pod declares (not the user's home, which pyxis would bind).
  spec->writable = At(container, {"securityContext", "readOnlyRootFilesystem"}) != true;
  spec->mount_home = false;
  std::map<std::string, Volume> volumes;
  if (auto p = ReadVolumes(pod_spec, ctx, &volumes)) return p;
  if (auto p = ReadMounts(container, cf, &volumes, &spec->mounts)) return p;
  return PullSecrets(pod_spec, ctx, &spec->auth_config, missing_pull_secrets);
}

std::string DefaultPullPolicy(const std::string& image) {
  if (image.find('@') != std::string::npos) return "IfNotPresent";
  const size_t slash = image.rfind('/');
  const size_t colon = image.rfind(':');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) return "Always";
  return image.substr(colon + 1) == "latest" ? "Always" : "IfNotPresent";
}

}  // namespace berth::k8s::podc
