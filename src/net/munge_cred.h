// MUNGE credentials (https://dun.github.io/munge/), as Slurm sites use them: where `munged` runs,
// a client proves its uid with a fresh credential from `munge -n`, and the controller learns the
// uid from `unmunge`. berth runs the munge package's own programs rather than linking libmunge:
// one fork per credential, no build dependency, and the exact checks munged makes (the key, the
// time-to-live, replays).
//
// Thread safety: the functions are thread-safe (each runs its own child process).
#ifndef BERTH_NET_MUNGE_CRED_H_
#define BERTH_NET_MUNGE_CRED_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::net {

struct MungeIdentity {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// A new credential with no payload ("MUNGE:...:"), from `munge -n` (with -S socket when given).
// UNAVAILABLE when munge is missing or munged does not answer (the message says which).
Result<std::string> MungeEncode(const std::string& socket = "");

// Who a credential names, from `unmunge`. PERMISSION_DENIED for a credential munged refuses
// (expired, replayed, another key, malformed: the message is unmunge's), UNAVAILABLE when
// unmunge is missing or munged does not answer.
Result<MungeIdentity> MungeDecode(const std::string& credential, const std::string& socket = "");

// The UID and GID of `unmunge -N -k UID,GID`'s output ("UID:  1000\nGID:  1000\n").
Result<MungeIdentity> ParseUnmungeOutput(std::string_view text);

}  // namespace berth::net

#endif  // BERTH_NET_MUNGE_CRED_H_
