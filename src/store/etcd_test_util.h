// Helpers of the store's tests. TestEtcd: a one-member etcd on free loopback ports for tests, in a
// temporary data folder, stopped (SIGKILL, waited for) and removed by its destructor, whatever
// the test did; killed by the kernel when the test process dies first (PR_SET_PDEATHSIG).
//
// Thread safety: one owner.
#ifndef BERTH_STORE_ETCD_TEST_UTIL_H_
#define BERTH_STORE_ETCD_TEST_UTIL_H_

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "net/http.h"
#include "net/socket_io.h"
#include "store/store.h"

namespace berth::store {

class TestEtcd {
 public:
  // The etcd binary ($BERTH_ETCD, else etcd on PATH), or "" when there is none.
  static std::string Binary() {
    if (const char* e = std::getenv("BERTH_ETCD"); e && *e) return e;
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (size_t start = 0; start <= dirs.size();) {
      size_t colon = std::min(dirs.find(':', start), dirs.size());
      std::string candidate = dirs.substr(start, colon - start) + "/etcd";
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
      start = colon + 1;
    }
    return "";
  }

  // Starts etcd and waits (up to 15 s) until it answers; nullptr when it did not.
  static std::unique_ptr<TestEtcd> Start() {
    std::string bin = Binary();
    if (bin.empty()) return nullptr;
    std::unique_ptr<TestEtcd> e(new TestEtcd());
    char tmpl[] = "/tmp/berth-etcd-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return nullptr;
    e->dir_ = tmpl;
    // A port found free can be taken by another test's etcd before this one binds it: this one
    // then exits at once (Launch sees it), and it is tried again on other ports.
    for (int attempt = 0; attempt < 3; ++attempt) {
      Result<int> client = net::FreeLoopbackPort(), peer = net::FreeLoopbackPort();
      if (!client.ok() || !peer.ok()) return nullptr;
      e->client_port_ = *client;
      e->peer_port_ = *peer;
      if (e->Launch(bin)) return e;
      if (e->pid_ > 0) return nullptr;  // it runs but never answered
      std::filesystem::remove_all(e->dir_ + "/data");
    }
    return nullptr;
  }

  ~TestEtcd() {
    Kill();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string endpoint() const { return "127.0.0.1:" + std::to_string(client_port_); }

  // Stops it at once (kill -9); Restart() brings it back on the same data and ports.
  void Kill() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }
  bool Restart() {
    Kill();
    return Launch(Binary());
  }
  // Stops it answering (SIGSTOP), as a member stalled on its disk; Resume() lets it go on.
  void Pause() {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
  }
  void Resume() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
  }

 private:
  TestEtcd() = default;

  bool Launch(const std::string& bin) {
    const std::string client = "http://127.0.0.1:" + std::to_string(client_port_);
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
    std::vector<std::string> args = {bin,
                                     "--name=t",
                                     "--data-dir=" + dir_ + "/data",
                                     "--listen-client-urls=" + client,
                                     "--advertise-client-urls=" + client,
                                     "--listen-peer-urls=" + peer,
                                     "--initial-advertise-peer-urls=" + peer,
                                     "--initial-cluster=t=" + peer,
                                     "--logger=zap",
                                     "--log-outputs=" + dir_ + "/etcd.log"};
    pid_ = fork();
    if (pid_ == 0) {
      // A test that crashes takes its etcd with it.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::vector<char*> argv;
      for (std::string& s : args) argv.push_back(s.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    // The answer counts only as this etcd's: while it runs, and once it has made its write-ahead
    // log (etcd binds its ports before it makes its data folder), since another test's etcd on a
    // port taken in between would answer too, and this one would have exited.
    auto exited = [&] {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
      pid_ = -1;
      return true;
    };
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      if (exited()) return false;
      auto c = net::HttpClient::Connect("tcp:" + endpoint(), 1000);
      if (c.ok() && std::filesystem::exists(dir_ + "/data/member/wal")) {
        auto r = (*c)->Request("GET", "/health");
        if (r.ok() && r->status == 200 && r->body.find("true") != std::string::npos) {
          return !exited();
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  std::string dir_;
  int client_port_ = 0, peer_port_ = 0;
  pid_t pid_ = -1;
};

// A metadata put, as the store's tests write them.
inline Write PutMeta(std::string key, std::string value) {
  Write w;
  w.kind = Write::Kind::kPutMeta;
  w.key = std::move(key);
  w.value = std::move(value);
  return w;
}

// One etcd for every etcd case of a test binary (each test has its own key prefix): starting
// one costs about a second. nullptr when there is no etcd or it did not start.
inline TestEtcd* SharedEtcd() {
  static std::unique_ptr<TestEtcd> etcd = TestEtcd::Start();
  return etcd.get();
}

}  // namespace berth::store

#endif  // BERTH_STORE_ETCD_TEST_UTIL_H_
