#include "store/etcd_store.h"

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "common/thread_annotations.h"
#include "store/election.h"
#include "store/etcd_client.h"

namespace berth::store {
namespace {

std::string Padded(uint64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*llu", width, static_cast<unsigned long long>(v));
  return buf;
}

std::string JobValue(const JobRow& row) {
  std::string v = row.active ? "1 " : "0 ";
  v += row.end_time == kNoTime ? std::string("-") : std::to_string(row.end_time);
  v += '\n';
  AppendJoinedRecord(row, &v);  // the run specification inside: rows read back have none apart
  return v;
}

Result<JobRow> ParseJobValue(uint32_t id, const std::string& v) {
  JobRow row;
  row.id = id;
  size_t nl = v.find('\n');
  if (nl == std::string::npos || nl < 3 || (v[0] != '0' && v[0] != '1') || v[1] != ' ') {
    return Status::Internal("etcd: job " + std::to_string(id) + ": malformed entry");
  }
  row.active = v[0] == '1';
  std::string_view end(v.data() + 2, nl - 2);
  if (end != "-") {
    auto [p, ec] = std::from_chars(end.data(), end.data() + end.size(), row.end_time);
    if (ec != std::errc() || p != end.data() + end.size()) {
      return Status::Internal("etcd: job " + std::to_string(id) + ": malformed end time");
    }
  }
  row.record = v.substr(nl + 1);
  return row;
}

// One put (value set) or delete (value unset) of a txn.
struct Op {
  std::string key;
  std::optional<std::string> value;
  size_t Bytes() const { return (key.size() + (value ? value->size() : 0)) * 4 / 3 + 64; }
};

nlohmann::json TxnBody(const std::vector<Op>& ops, size_t from, size_t to,
                       const StoreLocation& where) {
  nlohmann::json success = nlohmann::json::array();
  for (size_t i = from; i < to; ++i) {
    const Op& op = ops[i];
    if (op.value) {
      success.push_back({{"request_put", {{"key", Base64(op.key)}, {"value", Base64(*op.value)}}}});
    } else {
      success.push_back({{"request_delete_range", {{"key", Base64(op.key)}}}});
    }
  }
  // A leader's writes count only while the leader key is the one it created (ADR 0008).
  nlohmann::json compare = nlohmann::json::array();
  if (where.fence_epoch > 0) {
    compare.push_back(CreateRevisionIs(LeaderKey(where), where.fence_epoch));
  }
  return {{"compare", std::move(compare)}, {"success", std::move(success)}};
}

class EtcdStore final : public Store {
 public:
  EtcdStore(StoreLocation where, std::unique_ptr<EtcdClient> writer,
            std::unique_ptr<EtcdClient> reader)
      : where_(std::move(where)), writer_(std::move(writer)) {
    MutexLock<Mutex> l(reader_mu_);
    reader_ = std::move(reader);
    MutexLock<Mutex> s(snapshot_mu_);
    snapshot_ = where_.warm;
  }
  ~EtcdStore() override {
    {
      MutexLock<Mutex> l(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void Start() {
    thread_ = std::thread([this] { Run(); });
  }

  Status Commit(std::vector<Write> writes) override;
  Status ScanJobs(bool active_only, const std::function<void(const JobRow&)>& fn) const override;
  Status ScanFinished(Time from, Time to, uint32_t min_id, size_t limit,
                      const std::function<void(const JobRow&)>& fn) const override;
  Result<std::optional<JobRow>> GetJob(uint32_t id) const override;
  Status ScanNodes(
      const std::function<void(const std::string&, const std::string&)>& fn) const override;
  Result<std::optional<std::string>> GetMeta(const std::string& key) const override;
  Status ScanMeta(
      const std::string& prefix,
      const std::function<void(const std::string&, const std::string&)>& fn) const override;
  StoreStats stats() const override {
    MutexLock<Mutex> l(mu_);
    return stats_;
  }
  std::string Describe() const override {
    std::string e;
    for (const std::string& h : where_.endpoints) e += (e.empty() ? "" : ",") + h;
    return std::string(where_.tls ? "etcds " : "etcd ") + e + " " + where_.prefix;
  }

  // A linearizable read of the prefix: proves a quorum answers.
  Status Probe() const;

 private:
  struct Pending {
    std::vector<Write> writes;
    std::promise<Status> done;
  };

  std::string JobKey(uint32_t id) const { return where_.prefix + "/jobs/" + Padded(id, 10); }
  std::string EndedKey(Time end, uint32_t id) const {
    return where_.prefix + "/ended/" + Padded(static_cast<uint64_t>(std::max<Time>(end, 0)), 20) +
           "/" + Padded(id, 10);
  }
  void Run() EXCLUDES(mu_);
  // The batch as deduplicated operations, in the order of their first write.
  std::vector<Op> Ops(const std::vector<Pending*>& batch) const;
  // Writes ops in txns of at most max_txn_ops operations and max_txn_bytes; counts txns.
  Status Apply(const std::vector<Op>& ops, int64_t* txns);
  // Calls fn for each key and value in [key, range_end), paginated, at one revision; only the
  // first `limit` keys when it is above 0; keys_only: values are not fetched ("" to fn).
  Status Range(const std::string& key, const std::string& range_end,
               const std::function<Status(std::string, std::string)>& fn, size_t limit = 0,
               bool keys_only = false) const;
  // Reads `keys` in txns of get operations; fn for each that exists.
  Status GetMany(const std::vector<std::string>& keys,
                 const std::function<Status(std::string, std::string)>& fn) const;

  // A standby's copy of the keys as of this leader's epoch (StoreLocation::warm): reads are
  // served from it until the first commit.
  std::shared_ptr<const EtcdSnapshot> Snapshot() const {
    MutexLock<Mutex> l(snapshot_mu_);
    return snapshot_;
  }

  const StoreLocation where_;
  mutable Mutex snapshot_mu_;
  std::shared_ptr<const EtcdSnapshot> snapshot_ GUARDED_BY(snapshot_mu_);
  std::unique_ptr<EtcdClient> writer_;  // the writer thread's
  mutable Mutex reader_mu_;
  std::unique_ptr<EtcdClient> reader_ GUARDED_BY(reader_mu_);

  mutable Mutex mu_;
  std::condition_variable cv_;  // waits on mu_.native()
  std::deque<Pending*> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  StoreStats stats_ GUARDED_BY(mu_);
  std::thread thread_;
};

std::vector<Op> EtcdStore::Ops(const std::vector<Pending*>& batch) const {
  std::vector<Op> ops;
  std::map<std::string, size_t> at;  // key -> index in ops: etcd refuses a key twice in a txn
  auto add = [&](std::string key, std::optional<std::string> value) {
    auto [it, fresh] = at.try_emplace(key, ops.size());
    if (fresh) {
      ops.push_back({std::move(key), std::move(value)});
    } else {
      ops[it->second].value = std::move(value);
    }
  };
  for (const Pending* p : batch) {
    for (const Write& w : p->writes) {
      switch (w.kind) {
        case Write::Kind::kPutJob:
          add(JobKey(w.job.id), JobValue(w.job));
          if (!w.job.active) add(EndedKey(w.job.end_time, w.job.id), std::string());
          break;
        case Write::Kind::kDeleteJob:
          add(JobKey(w.job.id), std::nullopt);
          add(EndedKey(w.job.end_time, w.job.id), std::nullopt);
          break;
        case Write::Kind::kPutNode:
          add(where_.prefix + "/nodes/" + w.key, w.value);
          break;
        case Write::Kind::kDeleteNode:
          add(where_.prefix + "/nodes/" + w.key, std::nullopt);
          break;
        case Write::Kind::kPutMeta:
          add(where_.prefix + "/meta/" + w.key, w.value);
          break;
        case Write::Kind::kDeleteMeta:
          add(where_.prefix + "/meta/" + w.key, std::nullopt);
          break;
      }
    }
  }
  return ops;
}

Status EtcdStore::Apply(const std::vector<Op>& ops, int64_t* txns) {
  const size_t max_ops = static_cast<size_t>(std::max(1, where_.max_txn_ops));
  size_t from = 0;
  while (from < ops.size()) {
    size_t to = from;
    size_t bytes = 0;
    while (to < ops.size() && to - from < max_ops &&
           (to == from || bytes + ops[to].Bytes() <= static_cast<size_t>(where_.max_txn_bytes))) {
      bytes += ops[to].Bytes();
      ++to;
    }
    if (bytes > static_cast<size_t>(where_.max_txn_bytes)) {
      return Status::InvalidArgument("etcd: the entry " + ops[from].key + " (" +
                                     std::to_string(bytes) +
                                     " bytes encoded) is larger than a "
                                     "transaction may be");
    }
    BERTH_ASSIGN_OR_RETURN(nlohmann::json answer,
                           writer_->Call("/v3/kv/txn", TxnBody(ops, from, to, where_)));
    ++*txns;
    if (!answer.value("succeeded", false)) {
      if (where_.fence_epoch > 0) {
        return Status::Unavailable(
            "this controller is no longer its group's leader (another took over from epoch " +
            std::to_string(where_.fence_epoch) + "): the change was not saved here");
      }
      return Status::Internal("etcd: a transaction was not applied");
    }
    from = to;
  }
  return Status::Ok();
}

void EtcdStore::Run() {
  while (true) {
    std::vector<Pending*> batch;
    {
      UniqueLock l(mu_);
      cv_.wait(l.get(), [&]() REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
      if (queue_.empty() && stopping_) return;
      batch.assign(queue_.begin(), queue_.end());
      queue_.clear();
    }
    std::vector<Op> ops = Ops(batch);
    int64_t txns = 0;
    Status st = Apply(ops, &txns);
    {
      MutexLock<Mutex> l(mu_);
      if (st.ok()) stats_.rows_written += static_cast<int64_t>(ops.size());
      stats_.commits += txns;
      stats_.batches += static_cast<int64_t>(batch.size());
    }
    for (Pending* p : batch) p->done.set_value(st);
  }
}

Status EtcdStore::Commit(std::vector<Write> writes) {
  if (writes.empty()) return Status::Ok();
  {
    // From the first change on, etcd is read: the copy is the state before it.
    MutexLock<Mutex> l(snapshot_mu_);
    snapshot_.reset();
  }
  Pending p;
  p.writes = std::move(writes);
  std::future<Status> done = p.done.get_future();
  {
    MutexLock<Mutex> l(mu_);
    if (stopping_) return Status::Unavailable("store is closing");
    queue_.push_back(&p);
  }
  cv_.notify_one();
  return done.get();
}

Status EtcdStore::Range(const std::string& key, const std::string& range_end,
                        const std::function<Status(std::string, std::string)>& fn, size_t limit,
                        bool keys_only) const {
  if (std::shared_ptr<const EtcdSnapshot> snap = Snapshot()) {
    size_t seen = 0;
    for (auto it = snap->kvs.lower_bound(key); it != snap->kvs.end() && it->first < range_end;
         ++it) {
      if (limit > 0 && seen++ >= limit) break;
      BERTH_RETURN_IF_ERROR(fn(it->first, keys_only ? std::string() : it->second));
    }
    return Status::Ok();
  }
  MutexLock<Mutex> l(reader_mu_);
  int64_t revision = 0;  // the first page's: the scan is one snapshot
  return RangeAt(*reader_, key, range_end, static_cast<size_t>(kPageKeys), limit, keys_only,
                 &revision, fn);
}

Status EtcdStore::GetMany(const std::vector<std::string>& keys,
                          const std::function<Status(std::string, std::string)>& fn) const {
  if (std::shared_ptr<const EtcdSnapshot> snap = Snapshot()) {
    for (const std::string& k : keys) {
      auto it = snap->kvs.find(k);
      if (it != snap->kvs.end()) BERTH_RETURN_IF_ERROR(fn(it->first, it->second));
    }
    return Status::Ok();
  }
  MutexLock<Mutex> l(reader_mu_);
  const size_t per_txn = static_cast<size_t>(std::max(1, where_.max_txn_ops));
  for (size_t from = 0; from < keys.size(); from += per_txn) {
    nlohmann::json success = nlohmann::json::array();
    for (size_t i = from; i < std::min(keys.size(), from + per_txn); ++i) {
      success.push_back({{"request_range", {{"key", Base64(keys[i])}}}});
    }
    BERTH_ASSIGN_OR_RETURN(nlohmann::json answer,
                           reader_->Call("/v3/kv/txn", {{"success", std::move(success)}}));
    for (const nlohmann::json& r : answer.value("responses", nlohmann::json::array())) {
      auto range = r.find("response_range");
      if (range != r.end()) BERTH_RETURN_IF_ERROR(ForEachKv(*range, fn));
    }
  }
  return Status::Ok();
}

Status EtcdStore::Probe() const {
  MutexLock<Mutex> l(reader_mu_);
  return reader_
      ->Call("/v3/kv/range", {{"key", Base64(where_.prefix + "/")},
                              {"range_end", Base64(PrefixEnd(where_.prefix + "/"))},
                              {"count_only", true}})
      .status();
}

Status EtcdStore::ScanJobs(bool active_only, const std::function<void(const JobRow&)>& fn) const {
  const std::string p = where_.prefix + "/jobs/";
  return Range(p, PrefixEnd(p), [&](std::string key, std::string value) -> Status {
    uint32_t id = 0;
    std::from_chars(key.data() + p.size(), key.data() + key.size(), id);
    BERTH_ASSIGN_OR_RETURN(JobRow row, ParseJobValue(id, value));
    if (!active_only || row.active) fn(row);
    return Status::Ok();
  });
}

Status EtcdStore::ScanFinished(Time from, Time to, uint32_t min_id, size_t limit,
                               const std::function<void(const JobRow&)>& fn) const {
  if (to <= from) return Status::Ok();
  // The index gives the ids, in end time order; each job's own entry decides (a job whose end
  // time was rewritten leaves an index entry that no longer matches: skipped, and with a limit
  // the index is read on until enough match).
  const std::string jp = where_.prefix + "/jobs/";
  const std::string end = EndedKey(to, 0);
  std::string cursor = EndedKey(from, 0);
  std::map<uint32_t, JobRow> rows;
  while (true) {
    const size_t want = limit > 0 ? limit - rows.size() : 0;
    std::set<uint32_t> ids;
    std::string last;
    size_t keys_read = 0;
    BERTH_RETURN_IF_ERROR(Range(
        cursor, end,
        [&](std::string key, std::string) {
          last = key;
          ++keys_read;
          uint32_t id = 0;
          size_t slash = key.rfind('/');
          if (slash != std::string::npos) {
            std::from_chars(key.data() + slash + 1, key.data() + key.size(), id);
          }
          if (id >= min_id && rows.count(id) == 0) ids.insert(id);
          return Status::Ok();
        },
        want, /*keys_only=*/true));
    std::vector<std::string> keys;
    keys.reserve(ids.size());
    for (uint32_t id : ids) keys.push_back(JobKey(id));
    BERTH_RETURN_IF_ERROR(GetMany(keys, [&](std::string key, std::string value) -> Status {
      uint32_t id = 0;
      std::from_chars(key.data() + jp.size(), key.data() + key.size(), id);
      BERTH_ASSIGN_OR_RETURN(JobRow row, ParseJobValue(id, value));
      if (!row.active && row.end_time != kNoTime && row.end_time >= from && row.end_time < to &&
          (limit == 0 || rows.size() < limit)) {
        rows.emplace(id, std::move(row));
      }
      return Status::Ok();
    }));
    if (limit == 0 || rows.size() >= limit || keys_read < want || last.empty()) break;
    cursor = last + '\0';
  }
  for (const auto& [id, row] : rows) fn(row);
  return Status::Ok();
}

Result<std::optional<JobRow>> EtcdStore::GetJob(uint32_t id) const {
  std::optional<JobRow> out;
  BERTH_RETURN_IF_ERROR(GetMany({JobKey(id)}, [&](std::string, std::string value) -> Status {
    BERTH_ASSIGN_OR_RETURN(JobRow row, ParseJobValue(id, value));
    out = std::move(row);
    return Status::Ok();
  }));
  return out;
}

Status EtcdStore::ScanNodes(
    const std::function<void(const std::string&, const std::string&)>& fn) const {
  const std::string p = where_.prefix + "/nodes/";
  return Range(p, PrefixEnd(p), [&](std::string key, std::string value) {
    fn(key.substr(p.size()), value);
    return Status::Ok();
  });
}

Result<std::optional<std::string>> EtcdStore::GetMeta(const std::string& key) const {
  std::optional<std::string> out;
  BERTH_RETURN_IF_ERROR(
      GetMany({where_.prefix + "/meta/" + key}, [&](std::string, std::string value) {
        out = std::move(value);
        return Status::Ok();
      }));
  return out;
}

Status EtcdStore::ScanMeta(
    const std::string& prefix,
    const std::function<void(const std::string&, const std::string&)>& fn) const {
  const std::string p = where_.prefix + "/meta/";
  return Range(p + prefix, PrefixEnd(p + prefix), [&](std::string key, std::string value) {
    fn(key.substr(p.size()), value);
    return Status::Ok();
  });
}

}  // namespace

Result<std::unique_ptr<Store>> OpenEtcdStore(const StoreLocation& where) {
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> writer, EtcdClient::Create(where));
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> reader, EtcdClient::Create(where));
  auto s = std::make_unique<EtcdStore>(where, std::move(writer), std::move(reader));
  BERTH_RETURN_IF_ERROR(s->Probe());
  s->Start();
  return std::unique_ptr<Store>(std::move(s));
}

}  // namespace berth::store
