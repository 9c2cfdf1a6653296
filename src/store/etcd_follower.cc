#include "store/etcd_follower.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

#include "net/http.h"
#include "store/etcd_client.h"
#include "store/etcd_store.h"

namespace berth::store {

std::unique_ptr<EtcdFollower> EtcdFollower::Start(const StoreLocation& where) {
  std::unique_ptr<EtcdFollower> f(new EtcdFollower(where));
  f->thread_ = std::thread([p = f.get()] { p->Run(); });
  return f;
}

EtcdFollower::~EtcdFollower() {
  Stop();
}

void EtcdFollower::Stop() {
  {
    MutexLock<Mutex> l(mu_);
    stopping_ = true;
    if (watching_ != nullptr) watching_->Abort();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int64_t EtcdFollower::revision() const {
  MutexLock<Mutex> l(mu_);
  return copy_ ? copy_->revision : 0;
}

std::shared_ptr<const EtcdSnapshot> EtcdFollower::TakeAt(int64_t revision, int timeout_ms) {
  std::shared_ptr<EtcdSnapshot> taken;
  {
    UniqueLock l(mu_);
    auto caught_up = [&]()
                         REQUIRES(mu_) { return copy_ != nullptr && copy_->revision >= revision; };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    if (!cv_.wait_for(l.get(), std::chrono::milliseconds(std::min(timeout_ms, kNudgeMs)),
                      caught_up)) {
      if (watching_ != nullptr) watching_->Abort();  // resumed from the next endpoint
      if (!cv_.wait_until(l.get(), deadline, caught_up)) return nullptr;
    }
    taken = std::move(copy_);
  }
  Stop();
  return taken;
}

void EtcdFollower::Run() {
  while (true) {
    Status st = Follow();
    {
      UniqueLock l(mu_);
      if (!resume_) copy_.reset();
      if (stopping_) return;
      // A watch that failed: again from the next endpoint at once; a failed connection or
      // read, or a copy to read again (etcd unreachable, history compacted): in a moment.
      cv_.wait_for(l.get(), std::chrono::milliseconds(resume_ && watched_ ? 20 : 500),
                   [&]() REQUIRES(mu_) { return stopping_; });
      if (stopping_) return;
    }
    (void)st;
  }
}

Status EtcdFollower::Follow() {
  const std::string key = where_.prefix + "/";
  const std::string end = PrefixEnd(key);
  std::shared_ptr<EtcdSnapshot> copy;
  std::string endpoint;
  {
    MutexLock<Mutex> l(mu_);
    if (resume_ && copy_ != nullptr && !where_.endpoints.empty()) {
      copy = copy_;
      endpoint = where_.endpoints[next_endpoint_ % where_.endpoints.size()];
    }
    resume_ = false;
  }
  if (copy == nullptr) {
    // The prefix at one revision.
    BERTH_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> reader, EtcdClient::Create(where_));
    copy = std::make_shared<EtcdSnapshot>();
    int64_t revision = 0;
    BERTH_RETURN_IF_ERROR(
        RangeAt(*reader, key, end, 1000, 0, false, &revision, [&](std::string k, std::string v) {
          copy->kvs.emplace(std::move(k), std::move(v));
          return Status::Ok();
        }));
    copy->revision = revision;
    endpoint = reader->endpoint();  // then every change after it, from the endpoint that answered
  }
  // Whatever happens to this watch, a next one is from the endpoint after this one.
  auto moved_on = [&](bool copy_whole, bool watched) {
    MutexLock<Mutex> l(mu_);
    watched_ = watched;
    for (size_t i = 0; i < where_.endpoints.size(); ++i) {
      if (where_.endpoints[i] == endpoint) next_endpoint_ = i + 1;
    }
    resume_ = copy_whole && copy_ == copy;
    watching_ = nullptr;
  };
  Result<std::unique_ptr<net::HttpClient>> http = ConnectEtcd(where_, endpoint);
  if (!http.ok()) {
    {
      MutexLock<Mutex> l(mu_);
      if (copy_ == nullptr && !stopping_) copy_ = copy;  // kept for the next endpoint
    }
    moved_on(true, false);
    return http.status();
  }
  int64_t from = 0;
  {
    MutexLock<Mutex> l(mu_);
    if (stopping_) return Status::Ok();
    copy_ = copy;
    from = copy->revision + 1;
    watching_ = http->get();
  }
  cv_.notify_all();
  const nlohmann::json create = {{"create_request",
                                  {{"key", Base64(key)},
                                   {"range_end", Base64(end)},
                                   {"start_revision", std::to_string(from)}}}};
  Status st = Status::Ok();
  bool whole = true;  // false: the copy missed or could not apply something
  bool opened = false;
  std::string pending;
  Result<net::ClientResponse> head = (*http)->OpenStream("POST", "/v3/watch", create.dump());
  if (!head.ok()) {
    st = head.status();
  } else if (head->status != 200) {
    st = Status::Unavailable("etcd: the watch was refused (HTTP " + std::to_string(head->status) +
                             ")");
  } else {
    opened = true;
    // The gateway writes one JSON message per line.
    st = (*http)->ReadStream([&](std::string_view data) {
      pending.append(data);
      size_t nl;
      while ((nl = pending.find('\n')) != std::string::npos) {
        nlohmann::json m = nlohmann::json::parse(pending.substr(0, nl), nullptr, false);
        pending.erase(0, nl + 1);
        // An error, or compacted past us: read afresh.
        if (!m.is_object() || !m.contains("result") || m["result"].value("canceled", false)) {
          whole = false;
          return false;
        }
        const nlohmann::json& r = m["result"];
        MutexLock<Mutex> l(mu_);
        if (copy_ == nullptr) return false;  // taken
        for (const nlohmann::json& e : r.value("events", nlohmann::json::array())) {
          const nlohmann::json& kv = e.value("kv", nlohmann::json::object());
          Result<std::string> k = Unbase64(kv.value("key", ""));
          if (!k.ok()) {
            whole = false;
            return false;
          }
          if (e.value("type", "PUT") == "DELETE") {
            copy_->kvs.erase(*k);
          } else {
            Result<std::string> v = Unbase64(kv.value("value", ""));
            if (!v.ok()) {
              whole = false;
              return false;
            }
            copy_->kvs[*k] = std::move(*v);
          }
          copy_->revision = std::max(copy_->revision, EtcdInt(kv["mod_revision"]));
        }
        // Only the events say how far the copy is: a response's header may be at a later
        // revision than the events it carries (a watch catching up sends them in batches).
        cv_.notify_all();
      }
      return true;
    });
    if (st.ok()) st = Status::Unavailable("etcd: the watch ended");
  }
  moved_on(whole, opened);
  return st;
}

}  // namespace berth::store
