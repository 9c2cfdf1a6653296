// NVIDIA pyxis's options (the SPANK plugin that runs Slurm tasks in containers), as berth's
// sbatch and srun take them, and the container they ask for (image::ContainerSpec, EntryMode
// kJob: the batch script or the step's command runs in the image, its ENTRYPOINT does not):
//   --container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH    kept as given (the node parses it)
//   --container-mounts=SRC:DST[:FLAGS][,SRC:DST...]         FLAGS joined by '+': ro, rw, and the
//       propagation and bind flags pyxis passes to mount (private, rprivate, ..., accepted and
//       ignored); SRC an absolute or relative ('.'-first) path, relative to the work dir, or
//       "tmpfs"; DST absolute or relative to the container's root; SRC alone mounts it at the
//       same path
//   --container-workdir=PATH (absolute), --container-name=NAME[:auto],
//   --container-env=NAME[,NAME...] (the values of these variables in the submitting
//   environment), --[no-]container-mount-home, --[no-]container-remap-root,
//   --container-writable / --container-readonly, --no-container-entrypoint,
//   --container-entrypoint-log (ignored).
// Refused as berth does not do them: --container-save, --container-entrypoint, "umount" mounts
// and --container-name's create/exec/no_exec flags.
//
// pyxis's rules for repeats: a value option given twice with different values is an error
// ("pyxis: --container-image specified multiple times"), and so are both forms of a flag;
// --container-mounts and --container-env add up. Unlike pyxis, which ignores the other options
// (with an error line) when neither --container-image nor --container-name is set and then runs
// the task on the host, berth refuses them: a job must not run bare by a typo.
//
// Thread safety: all functions are pure.
#ifndef BERTH_SLURM_PYXIS_H_
#define BERTH_SLURM_PYXIS_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "image/container_spec.h"

namespace berth::slurm {

struct PyxisOption {
  std::string_view name;      // the long name, without "--"
  std::string_view arg_info;  // the value's form in the help; "" for a flag
  std::string_view usage;     // the help text; "" = not listed (refused, or no effect)
};

// pyxis's options, in pyxis's order (Slurm appends a plugin's options to its own table).
std::span<const PyxisOption> PyxisOptions();
const PyxisOption* FindPyxisOption(std::string_view name);

// One --container-mounts entry as given, before it is placed (PyxisContainer).
struct PyxisMount {
  std::string source;  // as given: a path, or "tmpfs"
  std::string target;  // as given
  bool read_only = false;
  friend bool operator==(const PyxisMount&, const PyxisMount&) = default;
};

// What the options said; -1 = a flag not given.
struct PyxisRequest {
  std::string image;
  std::vector<PyxisMount> mounts;
  std::string workdir;
  std::string name;
  std::vector<std::string> env_names;
  int mount_home = -1;
  int remap_root = -1;
  int writable = -1;
  std::vector<std::string> given;  // "--container-mounts", ... in the order first given
};

// Takes one occurrence of a pyxis option (`name` without "--"; `value` as given, none for a
// flag). InvalidArgument with pyxis's message ("pyxis: --container-mounts: invalid format:
// /tmp:") when it is bad; the caller puts "sbatch: error: " before it.
Status AddPyxisOption(std::string_view name, const std::optional<std::string>& value,
                      PyxisRequest& r);

// The container `r` asks for; nullopt when it asks for none. `work_dir` places relative mount
// sources; `env` (the submitting environment) gives --container-env's values (a name it does not
// set is left out, as pyxis does). `new_job`: the container is a new job's (sbatch, srun outside
// an allocation), where --container-name alone names nothing yet; a step's may name one that an
// earlier step or the batch script created (its image is then ""; the node looks it up).
Result<std::optional<image::ContainerSpec>> PyxisContainer(
    const PyxisRequest& r, const std::string& work_dir,
    const std::vector<std::pair<std::string, std::string>>& env, bool new_job);

// The help section Slurm prints for a SPANK plugin's options: "\nOptions provided by
// plugins:\n" and each listed option at 6 columns, its text at 30, wrapped at 80.
std::string PyxisHelp();

}  // namespace berth::slurm

#endif  // BERTH_SLURM_PYXIS_H_
