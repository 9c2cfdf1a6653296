#include "agent/container_settings.h"

#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "agent/file_util.h"

namespace berth::agent {

using json = nlohmann::json;

std::string EncodeContainerSettings(const ContainerSettings& s) {
  return json{{"runc", s.runc},
              {"runc_root", s.runc_root},
              {"image_store", s.image_store},
              {"skopeo", s.skopeo},
              {"registry_ca_dir", s.registry_ca_dir},
              {"insecure_registries", s.insecure_registries},
              {"cache_bytes", s.cache_bytes}}
      .dump();
}

Result<ContainerSettings> DecodeContainerSettings(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("containers.json: not a JSON object");
  ContainerSettings s;
  try {
    s.runc = j.value("runc", s.runc);
    s.runc_root = j.value("runc_root", s.runc_root);
    s.image_store = j.value("image_store", s.image_store);
    s.skopeo = j.value("skopeo", s.skopeo);
    s.registry_ca_dir = j.value("registry_ca_dir", s.registry_ca_dir);
    s.insecure_registries = j.value("insecure_registries", s.insecure_registries);
    s.cache_bytes = j.value("cache_bytes", s.cache_bytes);
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("containers.json: ") + e.what());
  }
  return s;
}

Status WriteContainerSettings(const std::string& state_dir, const ContainerSettings& s) {
  return WriteFileAtomic(state_dir + "/containers.json", EncodeContainerSettings(s) + "\n", 0644);
}

Result<ContainerSettings> ReadContainerSettings(const std::string& state_dir) {
  BERTH_ASSIGN_OR_RETURN(std::string text, ReadFile(state_dir + "/containers.json"));
  return DecodeContainerSettings(text);
}

std::string FindExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* env = std::getenv("PATH");
  std::string path = std::string(env != nullptr ? env : "") +
                     ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = std::min(path.find(':', start), path.size());
    std::string dir = path.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace berth::agent
