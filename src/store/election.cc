#include "store/election.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "common/thread_annotations.h"
#include "store/etcd_client.h"

namespace berth::store {
namespace {

using Clock = std::chrono::steady_clock;

// A field of an etcd answer, or null when it is missing.
const nlohmann::json& Field(const nlohmann::json& j, const char* name) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(name);
  return it == j.end() ? kNull : *it;
}

// The first kv of a range answer (or of a txn's response_range), if any.
const nlohmann::json* FirstKv(const nlohmann::json& range) {
  const nlohmann::json& kvs = Field(range, "kvs");
  if (!kvs.is_array() || kvs.empty()) return nullptr;
  return &kvs[0];
}

// The leader a range answer of the leader key names (nullopt: none).
Result<std::optional<Leader>> LeaderOf(const nlohmann::json& range) {
  const nlohmann::json* kv = FirstKv(range);
  if (kv == nullptr) return std::optional<Leader>();
  BERTH_ASSIGN_OR_RETURN(std::string text, Unbase64(kv->value("value", "")));
  BERTH_ASSIGN_OR_RETURN(Member m, DecodeMember(text));
  return std::optional<Leader>(Leader{std::move(m), EtcdInt(Field(*kv, "create_revision"))});
}

StoreLocation WithTimeouts(StoreLocation where, int timeout_ms, int retry_ms) {
  where.timeout_ms = std::min(where.timeout_ms, timeout_ms);
  where.retry_ms = std::min(where.retry_ms, retry_ms);
  return where;
}

}  // namespace

std::string EncodeMember(const Member& m) {
  return nlohmann::json{
      {"name", m.name}, {"address", m.address}, {"pid", m.pid}, {"since", m.since}}
      .dump();
}

Result<Member> DecodeMember(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
    return Status::Internal("etcd: a group member's entry that is not one: " + text.substr(0, 80));
  }
  Member m;
  m.name = j["name"].get<std::string>();
  m.address = j.value("address", "");
  m.pid = j.value("pid", int64_t{0});
  m.since = j.value("since", int64_t{0});
  return m;
}

std::string LeaderKey(const StoreLocation& where) {
  return where.prefix + "/leader";
}

Result<std::string> AgreeOnGroupValue(const StoreLocation& where, const std::string& name,
                                      const std::string& offer) {
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> client, EtcdClient::Create(where));
  const std::string key = where.prefix + "/group/" + name;
  nlohmann::json put = nlohmann::json::object();
  put["request_put"] = {{"key", Base64(key)}, {"value", Base64(offer)}};
  nlohmann::json get = nlohmann::json::object();
  get["request_range"] = {{"key", Base64(key)}};
  nlohmann::json txn = nlohmann::json::object();
  txn["compare"] = nlohmann::json::array({CreateRevisionIs(key, 0)});
  txn["success"] = nlohmann::json::array({put});
  txn["failure"] = nlohmann::json::array({get});
  BERTH_ASSIGN_OR_RETURN(nlohmann::json answer, client->Call("/v3/kv/txn", txn));
  if (answer.value("succeeded", false)) return offer;
  std::optional<std::string> value;
  for (const nlohmann::json& r : answer.value("responses", nlohmann::json::array())) {
    auto range = r.find("response_range");
    if (range == r.end()) continue;
    BERTH_RETURN_IF_ERROR(ForEachKv(*range, [&](std::string, std::string v) {
      value = std::move(v);
      return Status::Ok();
    }));
  }
  if (!value) return Status::Internal("etcd: " + key + " neither created nor read");
  return *value;
}

struct Election::Impl {
  StoreLocation where;
  std::string leader_key, member_key;
  int ttl_s = 0;
  Election* owner = nullptr;

  // The campaign's and the readers' client (Campaign, Resign, CurrentLeader, Members).
  mutable Mutex call_mu;
  std::unique_ptr<EtcdClient> calls GUARDED_BY(call_mu);
  // The keep-alive thread's own client: its requests must not wait behind a slow campaign.
  std::unique_ptr<EtcdClient> keepalive;

  Mutex mu;
  std::condition_variable cv;  // on mu.native(): wakes the keep-alive thread to stop
  bool stopping GUARDED_BY(mu) = false;
  int64_t lease GUARDED_BY(mu) = 0;          // 0: none (to be granted again)
  Clock::time_point renewed GUARDED_BY(mu);  // when the last successful keep-alive was sent
  std::thread thread;

  Result<nlohmann::json> Call(const std::string& path, const nlohmann::json& body) const
      EXCLUDES(call_mu) {
    MutexLock<Mutex> l(call_mu);
    return calls->Call(path, body);
  }

  int64_t Lease() EXCLUDES(mu) {
    MutexLock<Mutex> l(mu);
    return lease;
  }

  // Grants a lease and puts the member key under it.
  Status Grant() EXCLUDES(mu) {
    Result<nlohmann::json> g = Call("/v3/lease/grant", {{"TTL", ttl_s}});
    if (!g.ok()) return g.status();
    int64_t id = EtcdInt(Field(*g, "ID"));
    if (id == 0) return Status::Unavailable("etcd granted no lease: " + g->dump().substr(0, 200));
    {
      MutexLock<Mutex> l(mu);
      lease = id;
      renewed = Clock::now();
    }
    return Call("/v3/kv/put", {{"key", Base64(member_key)},
                               {"value", Base64(EncodeMember(owner->self_))},
                               {"lease", std::to_string(id)}})
        .status();
  }

  void KeepAlive() EXCLUDES(mu) {
    // Renewed often enough that a leader cut from etcd notices (at two thirds of the TTL
    // without a renewal) before its lease can have run out.
    const auto period = std::chrono::milliseconds(std::clamp(ttl_s * 1000 / 4, 100, 500));
    const auto deadline = std::chrono::milliseconds(ttl_s * 2000 / 3);
    while (true) {
      int64_t id = 0;
      {
        UniqueLock l(mu);
        cv.wait_for(l.get(), period, [&]() REQUIRES(mu) { return stopping; });
        if (stopping) return;
        id = lease;
      }
      if (id == 0) continue;  // the campaign grants a new one
      const Clock::time_point sent = Clock::now();
      Result<nlohmann::json> r =
          keepalive->Call("/v3/lease/keepalive", {{"ID", std::to_string(id)}});
      bool gone = false;
      if (r.ok()) {
        gone = EtcdInt(Field(Field(*r, "result"), "TTL")) <= 0;
      }
      // A leader also checks that the key is still its own (an operator may have deleted it).
      const bool leading = owner->Leading();
      if (r.ok() && !gone && leading) {
        Result<nlohmann::json> k = keepalive->Call("/v3/kv/range", {{"key", Base64(leader_key)}});
        if (k.ok()) {
          const nlohmann::json* kv = FirstKv(*k);
          gone = kv == nullptr || EtcdInt(Field(*kv, "create_revision")) != owner->epoch_.load();
        }
      }
      {
        MutexLock<Mutex> l(mu);
        if (lease != id) continue;
        if (r.ok() && !gone) {
          renewed = sent;
          continue;
        }
        if (!gone && Clock::now() - renewed < deadline) continue;
        // The lease is gone, or soon may be: stop leading before another can.
        lease = 0;
      }
      // Asked again after the drop: a campaign that won with this lease meanwhile checks it
      // after setting its term (Campaign), so one of the two ends the term.
      if (owner->Leading()) owner->MarkLost();
    }
  }
};

Election::Election(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::shared_ptr<std::atomic<bool>> Election::lost_flag() const {
  MutexLock<Mutex> l(term_mu_);
  return lost_;
}

void Election::MarkLost() {
  MutexLock<Mutex> l(term_mu_);
  lost_->store(true);
}

Election::~Election() {
  {
    MutexLock<Mutex> l(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<Election>> Election::Join(const StoreLocation& where, Member self,
                                                 int ttl_s) {
  if (where.kind != StoreLocation::Kind::kEtcd) {
    return Status::InvalidArgument("leader election needs an etcd store");
  }
  if (self.name.empty() || self.name.find('/') != std::string::npos) {
    return Status::InvalidArgument("a group member needs a name without '/'");
  }
  auto impl = std::make_unique<Impl>();
  impl->where = where;
  impl->ttl_s = std::max(ttl_s, 1);
  impl->leader_key = LeaderKey(where);
  impl->member_key = where.prefix + "/members/" + self.name;
  {
    // Campaign rounds and reads give up after a few seconds, so that a stop is heard.
    BERTH_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> c,
                           EtcdClient::Create(WithTimeouts(where, 2000, 3000)));
    MutexLock<Mutex> l(impl->call_mu);
    impl->calls = std::move(c);
  }
  // One round over the endpoints per keep-alive, the whole round within a third of the TTL.
  const int per_endpoint = std::max(
      impl->ttl_s * 1000 / 3 / static_cast<int>(std::max<size_t>(where.endpoints.size(), 1)), 200);
  BERTH_ASSIGN_OR_RETURN(impl->keepalive, EtcdClient::Create(WithTimeouts(where, per_endpoint, 0)));
  std::unique_ptr<Election> e(new Election(std::move(impl)));
  e->impl_->owner = e.get();
  e->ttl_s_ = e->impl_->ttl_s;
  if (self.since == 0) self.since = std::time(nullptr);
  e->self_ = std::move(self);
  BERTH_RETURN_IF_ERROR(e->impl_->Grant());
  e->impl_->thread = std::thread([impl = e->impl_.get()] { impl->KeepAlive(); });
  return e;
}

std::string Election::Role() const {
  if (Leading()) return "leader";
  return epoch() > 0 && !campaigning_.load() ? "deposed" : "standby";
}

Result<int64_t> Election::Campaign(
    const std::atomic<bool>& stop, int poll_ms,
    const std::function<void(const std::optional<Leader>&)>& on_wait) {
  Impl& im = *impl_;
  campaigning_ = true;
  struct Done {
    std::atomic<bool>& flag;
    ~Done() { flag = false; }
  } done{campaigning_};
  while (!stop.load()) {
    int64_t lease = im.Lease();
    if (lease == 0) {
      Status st = im.Grant();
      if (!st.ok()) {
        if (on_wait) on_wait(std::nullopt);
        std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
        continue;
      }
      lease = im.Lease();
    }
    Member as_leader = self_;
    as_leader.since = std::time(nullptr);
    const std::string key = Base64(im.leader_key);
    nlohmann::json txn = {
        {"compare", nlohmann::json::array({CreateRevisionIs(im.leader_key, 0)})},
        {"success", nlohmann::json::array({{{"request_put",
                                             {{"key", key},
                                              {"value", Base64(EncodeMember(as_leader))},
                                              {"lease", std::to_string(lease)}}}}})},
        {"failure", nlohmann::json::array({{{"request_range", {{"key", key}}}}})}};
    Result<nlohmann::json> r = im.Call("/v3/kv/txn", txn);
    if (r.ok() && Field(*r, "succeeded").is_boolean() && Field(*r, "succeeded").get<bool>()) {
      int64_t epoch = EtcdInt(Field(Field(*r, "header"), "revision"));
      {
        MutexLock<Mutex> l(term_mu_);
        lost_ = std::make_shared<std::atomic<bool>>(false);
        epoch_.store(epoch);
      }
      // The keep-alive thread may have given this lease up while the txn was under way (etcd
      // slow, electing its own leader): nothing renews it then, and the key goes with it. The
      // term is lost from its start; the leader steps down and campaigns again.
      if (im.Lease() != lease) MarkLost();
      return epoch;
    }
    if (on_wait) {
      // The txn's failure branch read the key: who leads.
      std::optional<Leader> seen;
      if (r.ok() && Field(*r, "responses").is_array() && !Field(*r, "responses").empty()) {
        Result<std::optional<Leader>> l =
            LeaderOf(Field(Field(*r, "responses")[0], "response_range"));
        if (l.ok()) seen = *l;
      }
      on_wait(seen);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  return Status::Unavailable("stopped before becoming the leader");
}

Status Election::Resign() {
  Impl& im = *impl_;
  const int64_t epoch = epoch_.load();
  const int64_t lease = im.Lease();
  Status st;
  if (epoch > 0) {
    // Deleted only while it is still this member's own.
    const nlohmann::json del = {{"request_delete_range", {{"key", Base64(im.leader_key)}}}};
    st = im.Call("/v3/kv/txn",
                 {{"compare", nlohmann::json::array({CreateRevisionIs(im.leader_key, epoch)})},
                  {"success", nlohmann::json::array({del})}})
             .status();
  }
  if (lease != 0) {
    Status revoked = im.Call("/v3/lease/revoke", {{"ID", std::to_string(lease)}}).status();
    if (st.ok()) st = revoked;
  }
  return st;
}

Result<std::optional<Leader>> Election::CurrentLeader() const {
  Impl& im = *impl_;
  BERTH_ASSIGN_OR_RETURN(nlohmann::json r,
                         im.Call("/v3/kv/range", {{"key", Base64(im.leader_key)}}));
  return LeaderOf(r);
}

Result<std::vector<Member>> Election::Members() const {
  Impl& im = *impl_;
  const std::string prefix = im.where.prefix + "/members/";
  BERTH_ASSIGN_OR_RETURN(
      nlohmann::json r,
      im.Call("/v3/kv/range", {{"key", Base64(prefix)}, {"range_end", Base64(PrefixEnd(prefix))}}));
  std::vector<Member> out;
  BERTH_RETURN_IF_ERROR(ForEachKv(r, [&](std::string, std::string value) -> Status {
    BERTH_ASSIGN_OR_RETURN(Member m, DecodeMember(value));
    out.push_back(std::move(m));
    return Status::Ok();
  }));
  return out;
}

Result<int64_t> Election::Revision() const {
  Impl& im = *impl_;
  BERTH_ASSIGN_OR_RETURN(nlohmann::json r, im.Call("/v3/kv/range", {{"key", Base64(im.leader_key)},
                                                                    {"count_only", true}}));
  const int64_t revision = EtcdInt(Field(Field(r, "header"), "revision"));
  if (revision <= 0) return Status::Internal("etcd: an answer without a revision");
  return revision;
}

Status Election::Compact(int64_t revision) const {
  Result<nlohmann::json> r =
      impl_->Call("/v3/kv/compaction", {{"revision", std::to_string(revision)}});
  if (!r.ok() && r.status().message().find("compacted") != std::string::npos) return Status::Ok();
  return r.status();
}

std::vector<EtcdEndpointHealth> Election::Health() const {
  std::vector<EtcdEndpointHealth> out;
  for (const std::string& endpoint : impl_->where.endpoints) {
    EtcdEndpointHealth h;
    h.endpoint = endpoint;
    StoreLocation one = WithTimeouts(impl_->where, 1000, 0);
    one.endpoints = {endpoint};
    Result<std::unique_ptr<EtcdClient>> c = EtcdClient::Create(one);
    Result<nlohmann::json> r = c.ok()
                                   ? (*c)->Call("/v3/maintenance/status", nlohmann::json::object())
                                   : Result<nlohmann::json>(c.status());
    if (r.ok()) {
      h.ok = true;
      h.version = Field(*r, "version").is_string() ? Field(*r, "version").get<std::string>() : "";
      h.db_size = EtcdInt(Field(*r, "dbSize"));
      // Member ids are uint64 (as strings): compared as they come.
      const nlohmann::json& leader = Field(*r, "leader");
      h.is_leader =
          leader.is_string() && leader != "0" && leader == Field(Field(*r, "header"), "member_id");
    } else {
      h.error = r.status().message();
    }
    out.push_back(std::move(h));
  }
  return out;
}

nlohmann::json GroupStatus(const Election& election, const std::string& store) {
  auto member_json = [](const Member& m) {
    return nlohmann::json{
        {"name", m.name}, {"address", m.address}, {"pid", m.pid}, {"since", m.since}};
  };
  nlohmann::json out = {
      {"mode", "ha"},      {"self", election.self().name},      {"role", election.Role()},
      {"store", store},    {"lease_ttl_s", election.ttl_s()},   {"epoch", 0},
      {"leader", nullptr}, {"members", nlohmann::json::array()}};
  std::string errors;
  Result<std::optional<Leader>> leader = election.CurrentLeader();
  if (!leader.ok()) errors = leader.status().message();
  if (leader.ok() && leader->has_value()) {
    out["epoch"] = (*leader)->epoch;
    out["leader"] = member_json((*leader)->member);
  }
  Result<std::vector<Member>> members = election.Members();
  if (!members.ok()) errors += (errors.empty() ? "" : "; ") + members.status().message();
  if (members.ok()) {
    for (const Member& m : *members) {
      nlohmann::json j = member_json(m);
      j["leader"] = leader.ok() && leader->has_value() && (*leader)->member.name == m.name;
      out["members"].push_back(std::move(j));
    }
  }
  nlohmann::json etcd = nlohmann::json::array();
  for (const EtcdEndpointHealth& h : election.Health()) {
    nlohmann::json j = {{"endpoint", h.endpoint}, {"ok", h.ok}};
    if (h.ok) {
      j["version"] = h.version;
      j["db_size"] = h.db_size;
      j["leader"] = h.is_leader;
    } else {
      j["error"] = h.error;
    }
    etcd.push_back(std::move(j));
  }
  out["etcd"] = std::move(etcd);
  if (!errors.empty()) out["error"] = errors;
  return out;
}

}  // namespace berth::store
