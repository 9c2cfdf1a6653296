// Small file helpers for the agent and the supervisor: whole-file reads, atomic replacement (the
// way every state file in a job folder is written, so that a reader never sees half a file), and
// the plain write(2) that cgroup control files need (one write, errors reported as they come).
//
// Thread safety: all functions are safe to call from any thread; they share no state.
#ifndef BERTH_AGENT_FILE_UTIL_H_
#define BERTH_AGENT_FILE_UTIL_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::agent {

// The whole content of `path`. kNotFound when it does not exist.
Result<std::string> ReadFile(const std::string& path);

enum class Sync { kNo, kYes };

// Writes `data` to path.tmp and renames it over `path`, so that readers see the old or the new
// content, never a part. The file gets `mode` (not masked by the umask). Sync::kYes also flushes
// it to disk first, for what must survive a power loss; files that only describe processes on
// this machine (pids, the launch spec) need not: a power loss ends those processes too.
Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode = 0644,
                       Sync sync = Sync::kNo);

// Opens an existing file write-only and writes `data` in one write(2), as cgroup control files
// require. The error names the file and the errno text.
Status WriteControlFile(const std::string& path, std::string_view data);

// "strerror(errno)" of the given errno, thread-safe.
std::string ErrnoText(int err);

// A Status for a failed system call: "<what>: <errno text>". EACCES/EPERM give
// kPermissionDenied, ENOENT kNotFound, anything else kInternal.
Status ErrnoStatus(std::string_view what, int err);

}  // namespace berth::agent

#endif  // BERTH_AGENT_FILE_UTIL_H_
