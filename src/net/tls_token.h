// Bearer tokens for the TLS API, with no daemon: a token names who holds it and carries an
// HMAC-SHA256 of that under a secret only the controller reads. Three kinds:
//   "berth.<uid>.<64 hex digits>"        a user (`berth token`, kubeconfigs)
//   "berth-node.<node>.<64 hex digits>"  one node's agent (its credential, given when it joins)
//   "berth-join.<64 hex digits>"         the cluster's join token: may only ask for a node
//   credential
// Each kind MACs its own message ("berth-token-v1:", "berth-node-v1:", "berth-join-v1"), so no
// token of one kind is valid as another. Changing (deleting) the secret file revokes them all.
//
// Thread safety: a TokenSigner is immutable; Issue and Verify may run concurrently.
#ifndef BERTH_NET_TLS_TOKEN_H_
#define BERTH_NET_TLS_TOKEN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

namespace berth::net {

class TokenSigner {
 public:
  // Reads the secret at `path`, or makes one (32 random bytes, hex, mode 0600) when the file is
  // missing. A secret file readable by others than its owner is refused (FAILED_PRECONDITION).
  static Result<TokenSigner> LoadOrCreate(const std::string& path);
  // REQUIRES: secret is not empty.
  explicit TokenSigner(std::string secret) : secret_(std::move(secret)) {}

  std::string Issue(uint32_t uid) const;
  // The uid a token names when its MAC is right (compared in constant time); nullopt for
  // anything else.
  std::optional<uint32_t> Verify(std::string_view token) const;

  // A node's credential. REQUIRES: ValidNodeName(node).
  std::string IssueNode(std::string_view node) const;
  // The node a credential names when its MAC is right; nullopt otherwise.
  std::optional<std::string> VerifyNode(std::string_view token) const;
  // The cluster's join token, and whether `token` is it.
  std::string IssueJoin() const;
  bool VerifyJoin(std::string_view token) const;

  // A running job attempt's step token: it may only start and watch steps of that attempt
  // (srun on the job's first node, docs/security.md). Bound to the attempt, so a requeued job's
  // old token starts nothing in its new run.
  std::string IssueJob(uint32_t job_id, int32_t attempt) const;
  // The job and attempt a step token names when its MAC is right; nullopt otherwise.
  std::optional<std::pair<uint32_t, int32_t>> VerifyJob(std::string_view token) const;

  // Node names a credential may carry: 1 to 63 of [A-Za-z0-9._-], not starting with '.' or '-'.
  static bool ValidNodeName(std::string_view node);

 private:
  std::string Mac(std::string_view message) const;
  bool MacMatches(std::string_view message, std::string_view mac) const;
  std::string secret_;
};

}  // namespace berth::net

#endif  // BERTH_NET_TLS_TOKEN_H_
