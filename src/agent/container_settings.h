// The node's container settings (docs/containers.md): written by the agent at start into
// STATE/containers.json, read by each supervisor whose job asks for a container.
//
// Thread safety: pure functions and file reads/writes.
#ifndef BERTH_AGENT_CONTAINER_SETTINGS_H_
#define BERTH_AGENT_CONTAINER_SETTINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

struct ContainerSettings {
  std::string runc;                           // the runc binary; "" = this node runs no containers
  std::string runc_root = "/run/berth-runc";  // runc's state folder (--root)
  std::string image_store;                    // the node's image store
  std::string skopeo = "skopeo";
  std::string registry_ca_dir;  // extra CA certificates (*.crt) for registries
  std::vector<std::string> insecure_registries;
  int64_t cache_bytes = 0;  // ImageCacheSize: prune to this after jobs end; 0 = no limit
  friend bool operator==(const ContainerSettings&, const ContainerSettings&) = default;
};

std::string EncodeContainerSettings(const ContainerSettings& s);
Result<ContainerSettings> DecodeContainerSettings(const std::string& text);
// STATE/containers.json.
Status WriteContainerSettings(const std::string& state_dir, const ContainerSettings& s);
Result<ContainerSettings> ReadContainerSettings(const std::string& state_dir);

// The first executable `name` in PATH (or the standard sbin/bin folders); "" when none.
std::string FindExecutable(const std::string& name);

}  // namespace berth::agent

#endif  // BERTH_AGENT_CONTAINER_SETTINGS_H_
