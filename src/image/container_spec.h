// What a job asks of its container: the image it runs in and how (docs/containers.md). Both faces
// fill it in (the Kubernetes face from a Pod's container, the Slurm face from pyxis's
// --container-* options); it travels with the job request as its "container" object, is kept
// with the job, and reaches the node inside the LaunchSpec, where the supervisor pulls the image
// and runs the job's process in it with runc.
//
// Thread safety: values; the codec functions are pure.
#ifndef BERTH_IMAGE_CONTAINER_SPEC_H_
#define BERTH_IMAGE_CONTAINER_SPEC_H_

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace berth::image {

enum class PullPolicy { kDefault, kAlways, kIfNotPresent, kNever };
std::string_view PullPolicyName(PullPolicy p);  // "", "Always", "IfNotPresent", "Never"

// One mount in the container.
//   kBind:   `source` is a host path (hostPath volumes, --container-mounts), opened as the job's
//            user (a path the user cannot read is refused).
//   kTmpfs:  a fresh tmpfs (emptyDir with medium: Memory); size_bytes 0 = no size limit but the
//            job's memory limit (tmpfs pages are charged to the job's cgroup).
//   kEmpty:  a fresh folder in the job's folder, owned by the job's user (emptyDir).
//   kFiles:  files given in the spec (configMap and secret volumes): `files` maps a relative path
//            to its content; written by the supervisor into the job's folder, mode 0444 (0400
//            when `secret`), then bound read-only.
struct Mount {
  enum class Kind { kBind, kTmpfs, kEmpty, kFiles };
  Kind kind = Kind::kBind;
  std::string source;       // kBind: the host path
  std::string destination;  // an absolute path in the container
  bool read_only = false;
  int64_t size_bytes = 0;                    // kTmpfs
  std::map<std::string, std::string> files;  // kFiles
  bool secret = false;                       // kFiles: 0400 instead of 0444
  friend bool operator==(const Mount&, const Mount&) = default;
};

// How the job's process is chosen.
//   kJob:        the job's own script or argv runs in the container (Slurm: the batch script,
//                an srun step's command), the image's ENTRYPOINT and CMD are not used (as pyxis).
//   kKubernetes: Kubernetes' rule over the image's ENTRYPOINT and CMD: `command` replaces the
//                ENTRYPOINT (and drops the CMD), `args` replaces the CMD; both nullopt = the
//                image's own. The job's argv is then empty.
enum class EntryMode { kJob, kKubernetes };

struct ContainerSpec {
  // The image: a reference as Docker writes it ("busybox", "nvcr.io/nvidia/pytorch:24.05-py3",
  // "reg:5000/team/app@sha256:..."), with pyxis's "[USER@][REGISTRY#]IMAGE[:TAG]" and a
  // "docker://" prefix also read; or a local OCI archive (.tar) or layout folder (an absolute
  // path), imported on the node. "" only with `name`, in a Slurm step's container: the
  // container of that name that the job already has (the job's own always has an image).
  std::string image;
  PullPolicy pull_policy = PullPolicy::kDefault;
  EntryMode entry = EntryMode::kJob;
  std::optional<std::vector<std::string>> command;  // kKubernetes only
  std::optional<std::vector<std::string>> args;     // kKubernetes only
  // Variables set in the container over the image's Env (the job's own environment comes on top
  // of both, see docs/containers.md).
  std::vector<std::pair<std::string, std::string>> env;
  std::string work_dir;  // "" = the image's WorkingDir, else "/"
  std::vector<Mount> mounts;
  bool mount_home = true;    // bind the user's home (pyxis's default)
  bool remap_root = false;   // the user appears as uid 0 inside (a user namespace)
  bool writable = true;      // a writable overlay upper (else a read-only root)
  bool run_as_root = false;  // an operator's job that asked to run as root in the container
  std::string name;          // --container-name: later steps of the job reuse its root
  // Registry credentials for this image, as a Docker config.json ({"auths": {...}}): from a
  // Pod's imagePullSecrets. Empty: the user's own files on the node, else anonymous. A secret:
  // kept as the job's environment is (never shown in listings).
  std::string auth_config;
  // The Pod's fields that Kubernetes fills on the node (env fieldRef spec.nodeName ...): names of
  // variables to set to the node's name at launch.
  std::vector<std::string> node_name_env;

  friend bool operator==(const ContainerSpec&, const ContainerSpec&) = default;
};

// The "container" object of a job request (docs/formats/job-json.md) and of a LaunchSpec.
nlohmann::json EncodeContainerSpec(const ContainerSpec& spec);
// Errors name the key: "container.mounts[1].destination: must be an absolute path".
Result<ContainerSpec> DecodeContainerSpec(const nlohmann::json& j);

}  // namespace berth::image

#endif  // BERTH_IMAGE_CONTAINER_SPEC_H_
