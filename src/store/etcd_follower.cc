#include "store/etcd_follower.h"

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
    const bool caught_up = cv_.wait_for(
        l.get(), std::chrono::milliseconds(timeout_ms),
        [&]() REQUIRES(mu_) { return copy_ != nullptr && copy_->revision >= revision; });
    if (!caught_up) return nullptr;
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
      copy_.reset();
      if (stopping_) return;
      // A failed read or watch (etcd unreachable, history compacted): read afresh in a moment.
      cv_.wait_for(l.get(), std::chrono::milliseconds(500),
                   [&]() REQUIRES(mu_) { return stopping_; });
      if (stopping_) return;
    }
    (void)st;
  }
}

Status EtcdFollower::Follow() {
  const std::string key = where_.prefix + "/";
  const std::string end = PrefixEnd(key);
  // The prefix at one revision.
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> reader, EtcdClient::Create(where_));
  auto copy = std::make_shared<EtcdSnapshot>();
  int64_t revision = 0;
  BERTH_RETURN_IF_ERROR(
      RangeAt(*reader, key, end, 1000, 0, false, &revision, [&](std::string k, std::string v) {
        copy->kvs.emplace(std::move(k), std::move(v));
        return Status::Ok();
      }));
  copy->revision = revision;
  // Then every change after it, from the endpoint that answered.
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<net::HttpClient> http,
                         ConnectEtcd(where_, reader->endpoint()));
  {
    MutexLock<Mutex> l(mu_);
    if (stopping_) return Status::Ok();
    copy_ = copy;
    watching_ = http.get();
  }
  cv_.notify_all();
  const nlohmann::json create = {{"create_request",
                                  {{"key", Base64(key)},
                                   {"range_end", Base64(end)},
                                   {"start_revision", std::to_string(revision + 1)}}}};
  Status st = Status::Ok();
  Result<net::ClientResponse> head = http->OpenStream("POST", "/v3/watch", create.dump());
  if (!head.ok()) {
    st = head.status();
  } else if (head->status != 200) {
    st = Status::Unavailable("etcd: the watch was refused (HTTP " + std::to_string(head->status) +
                             ")");
  } else {
    // The gateway writes one JSON message per line.
    std::string pending;
    st = http->ReadStream([&](std::string_view data) {
      pending.append(data);
      size_t nl;
      while ((nl = pending.find('\n')) != std::string::npos) {
        nlohmann::json m = nlohmann::json::parse(pending.substr(0, nl), nullptr, false);
        pending.erase(0, nl + 1);
        if (!m.is_object() || !m.contains("result")) return false;  // an error: read afresh
        const nlohmann::json& r = m["result"];
        if (r.value("canceled", false)) return false;  // compacted past us: read afresh
        MutexLock<Mutex> l(mu_);
        if (copy_ == nullptr) return false;  // taken
        for (const nlohmann::json& e : r.value("events", nlohmann::json::array())) {
          const nlohmann::json& kv = e.value("kv", nlohmann::json::object());
          Result<std::string> k = Unbase64(kv.value("key", ""));
          if (!k.ok()) return false;
          if (e.value("type", "PUT") == "DELETE") {
            copy_->kvs.erase(*k);
          } else {
            Result<std::string> v = Unbase64(kv.value("value", ""));
            if (!v.ok()) return false;
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
  MutexLock<Mutex> l(mu_);
  watching_ = nullptr;
  return st;
}

}  // namespace berth::store
