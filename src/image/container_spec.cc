#include "image/container_spec.h"

#include <nlohmann/json.hpp>

namespace berth::image {
namespace {

using json = nlohmann::json;

Status Bad(const std::string& key, const std::string& what) {
  return Status::InvalidArgument("container." + key + ": " + what);
}

Status ReadString(const json& j, const char* key, std::string* out) {
  if (!j.contains(key)) return Status::Ok();
  if (!j[key].is_string()) return Bad(key, "must be a string");
  *out = j[key].get<std::string>();
  return Status::Ok();
}

Status ReadBool(const json& j, const char* key, bool* out) {
  if (!j.contains(key)) return Status::Ok();
  if (!j[key].is_boolean()) return Bad(key, "must be true or false");
  *out = j[key].get<bool>();
  return Status::Ok();
}

Status ReadStrings(const json& j, const std::string& key, std::vector<std::string>* out) {
  if (!j.is_array()) return Bad(key, "must be a list of strings");
  for (const json& a : j) {
    if (!a.is_string()) return Bad(key, "must be a list of strings");
    out->push_back(a.get<std::string>());
  }
  return Status::Ok();
}

constexpr std::pair<Mount::Kind, std::string_view> kKinds[] = {
    {Mount::Kind::kBind, "bind"},
    {Mount::Kind::kTmpfs, "tmpfs"},
    {Mount::Kind::kEmpty, "empty"},
    {Mount::Kind::kFiles, "files"},
};

std::string_view KindName(Mount::Kind k) {
  for (const auto& [kind, name] : kKinds) {
    if (kind == k) return name;
  }
  return "bind";
}

// A relative path that stays inside its folder: no "..", no leading "/", not empty.
bool IsInsidePath(std::string_view p) {
  if (p.empty() || p.front() == '/') return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    std::string_view part = p.substr(start, end - start);
    if (part == ".." || part.empty()) return false;
    start = end + 1;
  }
  return true;
}

Status ReadMount(const json& m, const std::string& key, Mount* out) {
  if (!m.is_object()) return Bad(key, "must be an object");
  std::string kind = "bind";
  BERTH_RETURN_IF_ERROR(ReadString(m, "kind", &kind));
  bool known = false;
  for (const auto& [k, name] : kKinds) {
    if (name == kind) {
      out->kind = k;
      known = true;
    }
  }
  if (!known) return Bad(key + ".kind", "expected bind, tmpfs, empty or files, got '" + kind + "'");
  BERTH_RETURN_IF_ERROR(ReadString(m, "source", &out->source));
  BERTH_RETURN_IF_ERROR(ReadString(m, "destination", &out->destination));
  BERTH_RETURN_IF_ERROR(ReadBool(m, "read_only", &out->read_only));
  BERTH_RETURN_IF_ERROR(ReadBool(m, "secret", &out->secret));
  if (out->destination.empty() || out->destination.front() != '/') {
    return Bad(key + ".destination", "must be an absolute path, got '" + out->destination + "'");
  }
  if (out->kind == Mount::Kind::kBind && (out->source.empty() || out->source.front() != '/')) {
    return Bad(key + ".source", "must be an absolute host path, got '" + out->source + "'");
  }
  if (m.contains("size_bytes")) {
    if (!m["size_bytes"].is_number_integer() || m["size_bytes"].get<int64_t>() < 0) {
      return Bad(key + ".size_bytes", "must be a whole number of bytes");
    }
    out->size_bytes = m["size_bytes"].get<int64_t>();
  }
  if (m.contains("files")) {
    if (!m["files"].is_object()) return Bad(key + ".files", "must be an object of texts");
    for (const auto& [name, content] : m["files"].items()) {
      if (!content.is_string()) return Bad(key + ".files." + name, "must be a string");
      if (!IsInsidePath(name)) {
        return Bad(key + ".files", "'" + name + "' is not a relative path inside the volume");
      }
      out->files[name] = content.get<std::string>();
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view PullPolicyName(PullPolicy p) {
  switch (p) {
    case PullPolicy::kAlways:
      return "Always";
    case PullPolicy::kIfNotPresent:
      return "IfNotPresent";
    case PullPolicy::kNever:
      return "Never";
    case PullPolicy::kDefault:
      break;
  }
  return "";
}

json EncodeContainerSpec(const ContainerSpec& s) {
  json j = {{"image", s.image}};
  if (s.pull_policy != PullPolicy::kDefault) j["pull_policy"] = PullPolicyName(s.pull_policy);
  if (s.entry == EntryMode::kKubernetes) j["entry"] = "kubernetes";
  if (s.command) j["command"] = *s.command;
  if (s.args) j["args"] = *s.args;
  if (!s.env.empty()) {
    json env = json::array();
    for (const auto& [k, v] : s.env) env.push_back({k, v});
    j["env"] = env;
  }
  if (!s.work_dir.empty()) j["work_dir"] = s.work_dir;
  if (!s.mounts.empty()) {
    json mounts = json::array();
    for (const Mount& m : s.mounts) {
      json o = {{"destination", m.destination}};
      if (m.kind != Mount::Kind::kBind) o["kind"] = KindName(m.kind);
      if (!m.source.empty()) o["source"] = m.source;
      if (m.read_only) o["read_only"] = true;
      if (m.size_bytes > 0) o["size_bytes"] = m.size_bytes;
      if (!m.files.empty()) o["files"] = m.files;
      if (m.secret) o["secret"] = true;
      mounts.push_back(std::move(o));
    }
    j["mounts"] = mounts;
  }
  if (!s.mount_home) j["mount_home"] = false;
  if (s.remap_root) j["remap_root"] = true;
  if (!s.writable) j["writable"] = false;
  if (s.run_as_root) j["run_as_root"] = true;
  if (!s.name.empty()) j["name"] = s.name;
  if (!s.auth_config.empty()) j["auth_config"] = s.auth_config;
  if (!s.node_name_env.empty()) j["node_name_env"] = s.node_name_env;
  return j;
}

Result<ContainerSpec> DecodeContainerSpec(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("container: must be an object");
  static constexpr std::string_view kKeys[] = {
      "image",    "pull_policy", "entry",  "command",     "args",
      "env",      "work_dir",    "mounts", "mount_home",  "remap_root",
      "writable", "run_as_root", "name",   "auth_config", "node_name_env"};
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (std::string_view k : kKeys) known = known || k == key;
    if (!known) return Bad(key, "unknown key");
  }
  ContainerSpec s;
  BERTH_RETURN_IF_ERROR(ReadString(j, "image", &s.image));
  BERTH_RETURN_IF_ERROR(ReadString(j, "name", &s.name));
  // A Slurm step may name a container that an earlier step of its job made (pyxis's
  // --container-name alone): the node finds its image.
  if (s.image.empty() && s.name.empty()) return Bad("image", "required");
  std::string policy;
  BERTH_RETURN_IF_ERROR(ReadString(j, "pull_policy", &policy));
  if (policy == "Always") {
    s.pull_policy = PullPolicy::kAlways;
  } else if (policy == "IfNotPresent") {
    s.pull_policy = PullPolicy::kIfNotPresent;
  } else if (policy == "Never") {
    s.pull_policy = PullPolicy::kNever;
  } else if (!policy.empty()) {
    return Bad("pull_policy", "expected Always, IfNotPresent or Never, got '" + policy + "'");
  }
  std::string entry;
  BERTH_RETURN_IF_ERROR(ReadString(j, "entry", &entry));
  if (entry == "kubernetes") {
    s.entry = EntryMode::kKubernetes;
  } else if (!entry.empty() && entry != "job") {
    return Bad("entry", "expected job or kubernetes, got '" + entry + "'");
  }
  for (const char* key : {"command", "args"}) {
    if (!j.contains(key)) continue;
    std::vector<std::string> list;
    BERTH_RETURN_IF_ERROR(ReadStrings(j[key], key, &list));
    (std::string_view(key) == "command" ? s.command : s.args) = std::move(list);
  }
  if (j.contains("env")) {
    const json& env = j["env"];
    if (!env.is_array()) return Bad("env", "must be a list of [name, value] pairs");
    for (const json& p : env) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string() ||
          p[0].get<std::string>().empty()) {
        return Bad("env", "must be a list of [name, value] pairs");
      }
      s.env.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    }
  }
  BERTH_RETURN_IF_ERROR(ReadString(j, "work_dir", &s.work_dir));
  if (!s.work_dir.empty() && s.work_dir.front() != '/') {
    return Bad("work_dir", "must be an absolute path, got '" + s.work_dir + "'");
  }
  if (j.contains("mounts")) {
    if (!j["mounts"].is_array()) return Bad("mounts", "must be a list");
    for (size_t i = 0; i < j["mounts"].size(); ++i) {
      Mount m;
      BERTH_RETURN_IF_ERROR(ReadMount(j["mounts"][i], "mounts[" + std::to_string(i) + "]", &m));
      s.mounts.push_back(std::move(m));
    }
  }
  BERTH_RETURN_IF_ERROR(ReadBool(j, "mount_home", &s.mount_home));
  BERTH_RETURN_IF_ERROR(ReadBool(j, "remap_root", &s.remap_root));
  BERTH_RETURN_IF_ERROR(ReadBool(j, "writable", &s.writable));
  BERTH_RETURN_IF_ERROR(ReadBool(j, "run_as_root", &s.run_as_root));
  BERTH_RETURN_IF_ERROR(ReadString(j, "auth_config", &s.auth_config));
  if (j.contains("node_name_env")) {
    BERTH_RETURN_IF_ERROR(ReadStrings(j["node_name_env"], "node_name_env", &s.node_name_env));
  }
  return s;
}

}  // namespace berth::image
