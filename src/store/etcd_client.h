// EtcdClient: etcd's v3 API through its JSON gateway (POST /v3/kv/range, /v3/kv/txn, ...) over
// berth's own HTTP client, with the endpoints of a cluster tried in turn (ADR 0007).
//
// Keys and values travel base64-encoded (the gateway's encoding of protobuf bytes); Call takes
// and returns the gateway's JSON as is, and the helpers below build and read it.
//
// Thread safety: none; one EtcdClient per thread (it holds one HttpClient connection).
#ifndef BERTH_STORE_ETCD_CLIENT_H_
#define BERTH_STORE_ETCD_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/store.h"

namespace berth::net {
class HttpClient;
}

namespace berth::store {

std::string Base64(std::string_view in);
// REQUIRES nothing of `in`: characters outside the alphabet make it an INTERNAL error.
Result<std::string> Unbase64(std::string_view in);
// The smallest key greater than every key that starts with `prefix` (etcd's range_end for a
// prefix): the prefix with its last byte below 0xff incremented and what follows dropped.
std::string PrefixEnd(std::string_view prefix);

// Readers of the gateway's answers, where int64s come as strings and missing fields are zeros.
// An integer field (a revision, a lease id, a TTL) of `j`; 0 when missing or malformed.
int64_t EtcdInt(const nlohmann::json& j);
// Calls fn with each key and value (decoded) of a range answer, in order; its error stops.
Status ForEachKv(const nlohmann::json& answer,
                 const std::function<Status(std::string key, std::string value)>& fn);
// A txn compare: `key`'s create_revision equals `revision` (0: the key does not exist). The
// election creates and deletes the leader key with it, and a leader's commits are fenced by it.
nlohmann::json CreateRevisionIs(const std::string& key, int64_t revision);

// A connection to one etcd endpoint of `where` (TLS and client certificate as it says), for a
// caller that streams (a watch).
Result<std::unique_ptr<net::HttpClient>> ConnectEtcd(const StoreLocation& where,
                                                     const std::string& endpoint);

class EtcdClient;
// Calls fn for each key and value in [key, range_end), in pages of `page` keys, at one revision
// (*revision: 0 = the current one, then set to it); only the first `limit` keys when limit > 0;
// keys_only: values are not fetched ("" to fn).
Status RangeAt(EtcdClient& client, const std::string& key, const std::string& range_end,
               size_t page, size_t limit, bool keys_only, int64_t* revision,
               const std::function<Status(std::string, std::string)>& fn);

class EtcdClient {
 public:
  // Checks the TLS files; connects lazily. REQUIRES: where.kind == kEtcd, endpoints not empty.
  static Result<std::unique_ptr<EtcdClient>> Create(const StoreLocation& where);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // POSTs `body` to `path` (e.g. "/v3/kv/txn") and returns the parsed answer. The endpoint last
  // used is tried first; when it cannot be reached, times out, or answers that it has no
  // leader or quorum (HTTP 5xx), the next ones are tried in turn, in rounds until retry_ms
  // has passed (an etcd leader election takes about a second). Errors: UNAVAILABLE (no
  // endpoint answered: the message names each and why), INVALID_ARGUMENT (etcd refused the
  // request: too many operations, too large), INTERNAL (an answer that is not JSON).
  // Callers retry only idempotent requests this way: a put that timed out may still have been
  // applied, and sending it again writes the same value.
  Result<nlohmann::json> Call(const std::string& path, const nlohmann::json& body);

  const std::string& endpoint() const;

 private:
  EtcdClient() = default;
  Result<nlohmann::json> CallOne(const std::string& path, const std::string& body);

  StoreLocation where_;
  size_t current_ = 0;
  std::unique_ptr<net::HttpClient> http_;  // to endpoints[current_]
};

}  // namespace berth::store

#endif  // BERTH_STORE_ETCD_CLIENT_H_
