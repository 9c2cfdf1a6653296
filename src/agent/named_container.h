// Named containers (pyxis's --container-name, docs/containers.md): a job's container that later
// steps of the same job on the same node reuse, writes included. Each lives in the agent's state
// folder, apart from the job's and the steps' own folders, as long as the job has a folder on the
// node:
//
//   STATE/named/<job>.<attempt>/<name>.lock   flock: one step sets the container up at a time
//   STATE/named/<job>.<attempt>/<name>/image  the image reference it was made from
//                                      digest the image's digest (held in the store until removed)
//                                      upper/, work/  the overlay's writable layer, kept
//                                      rootfs/  the overlay, mounted by the first step and left
//                                               mounted for the next ones (each runc container
//                                               of a step uses it as its root)
//
// Thread safety: functions of files; the flock orders processes.
#ifndef BERTH_AGENT_NAMED_CONTAINER_H_
#define BERTH_AGENT_NAMED_CONTAINER_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>

#include "common/status.h"

namespace berth::agent {

// STATE/named/<job>.<attempt>/<name>.
std::string NamedContainerDir(const std::string& state_dir, uint32_t job_id, int32_t attempt,
                              const std::string& name);

// An exclusive flock on DIR.lock (creating the folders above DIR), released by the destructor.
class NamedContainerLock {
 public:
  static Result<NamedContainerLock> Take(const std::string& dir);
  NamedContainerLock(NamedContainerLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  NamedContainerLock& operator=(NamedContainerLock&& o) noexcept;
  ~NamedContainerLock();

 private:
  explicit NamedContainerLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Whether `path` is a mount point (its device differs from its parent's).
bool IsMountPoint(const std::string& path);

// Removes the named containers of every job whose attempt has no folder left in `jobs_dir`
// (neither its batch part's "<job>.<attempt>" nor a step's "<job>.<attempt>.<step>"): their root
// is unmounted, `release(digest, holder)` drops their hold on the image, their folders go. Returns
// how many it removed.
int SweepNamedContainers(
    const std::string& state_dir, const std::string& jobs_dir,
    const std::function<void(const std::string&, const std::string&)>& release);

// The name under which a named container holds its image in the store.
std::string NamedContainerHolder(uint32_t job_id, int32_t attempt, const std::string& name);

}  // namespace berth::agent

#endif  // BERTH_AGENT_NAMED_CONTAINER_H_
