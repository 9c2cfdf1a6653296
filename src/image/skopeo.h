// Running skopeo (the registry client, docs/adr/0005-containers.md) as a subprocess: argv, no
// shell, bounded in time; and turning its error output into berth's status codes with the
// registry's own words, on one short line.
//
// Thread safety: functions; RunBounded may be called from several threads (posix_spawn).
#ifndef BERTH_IMAGE_SKOPEO_H_
#define BERTH_IMAGE_SKOPEO_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::image {

struct CommandResult {
  int exit_code = 0;  // -1 when killed at the time limit
  bool timed_out = false;
  std::string err;  // stderr, its first 64 KiB
};

// Runs argv[0] (found on PATH) with stdin and stdout on /dev/null, `env_add` ("NAME=value") over
// the environment, killing its process group after timeout_s. An error only when it cannot start.
Result<CommandResult> RunBounded(const std::vector<std::string>& argv, int64_t timeout_s,
                                 const std::vector<std::string>& env_add = {});

// skopeo's "time=... level=fatal msg=\"...\"" as one line: the msg's text, unquoted, at most 300
// characters.
std::string SkopeoMessage(std::string_view err);
// The status for a failed skopeo run (see Store::Ensure for the codes); `what` prefixes the
// message (e.g. "pulling 127.0.0.1:5000/app:1.0").
Status SkopeoStatus(const CommandResult& r, std::string_view what);

}  // namespace berth::image

#endif  // BERTH_IMAGE_SKOPEO_H_
