// Helpers of the archive's tests. TestPostgres: a throwaway PostgreSQL cluster (initdb in a
// temporary folder, the server on a free loopback port, trust authentication for the user
// "berth"), stopped (immediate shutdown, waited for) and removed by its destructor whatever the
// test did; the server dies with the test process (PR_SET_PDEATHSIG). PostgreSQL refuses to run as
// root: as root, the cluster is the "postgres" user's (Debian's package makes it).
//
// Thread safety: one owner.
#ifndef BERTH_STORE_PG_TEST_UTIL_H_
#define BERTH_STORE_PG_TEST_UTIL_H_

#include <pwd.h>
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

#include "net/socket_io.h"
#include "store/archive.h"

namespace berth::store {

class TestPostgres {
 public:
  // The folder with PostgreSQL's initdb and postgres ($BERTH_PG_BIN, else PostgresBinDir()), or
  // "" when there is none.
  static std::string BinDir() {
    if (const char* e = std::getenv("BERTH_PG_BIN"); e && *e) return e;
    return PostgresBinDir();
  }

  // Makes and starts a cluster, waiting (up to 30 s) until it answers; nullptr when it could not.
  static std::unique_ptr<TestPostgres> Start() {
    const std::string bin = BinDir();
    if (bin.empty()) return nullptr;
    std::unique_ptr<TestPostgres> pg(new TestPostgres());
    char tmpl[] = "/tmp/berth-pg-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return nullptr;
    pg->dir_ = tmpl;
    pg->bin_ = bin;
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("postgres");
      if (pw == nullptr) return nullptr;
      pg->uid_ = pw->pw_uid;
      pg->gid_ = pw->pw_gid;
      if (chown(tmpl, pg->uid_, pg->gid_) != 0) return nullptr;
    }
    Result<int> port = net::FreeLoopbackPort();
    if (!port.ok()) return nullptr;
    pg->port_ = *port;
    if (pg->Run({bin + "/initdb", "-D", pg->dir_ + "/data", "-U", "berth", "--auth=trust", "-E",
                 "UTF8", "--no-sync", "--no-instructions"},
                /*wait=*/true) != 0) {
      return nullptr;
    }
    if (!pg->Launch()) return nullptr;
    return pg;
  }

  ~TestPostgres() {
    Stop();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string conninfo() const {
    return "postgresql://berth@127.0.0.1:" + std::to_string(port_) + "/postgres";
  }

  // Stops the server at once (immediate shutdown); Restart() brings it back on the same data.
  void Stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGQUIT);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }
  bool Restart() {
    Stop();
    return Launch();
  }

 private:
  TestPostgres() = default;

  // Runs args as the cluster's owner; with wait, returns its exit status, else its pid.
  int Run(std::vector<std::string> args, bool wait) {
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (uid_ != 0 && (setgid(gid_) != 0 || setuid(uid_) != 0)) _exit(126);
      const std::string log = dir_ + "/postgres.log";
      FILE* out = std::freopen(log.c_str(), "a", stdout);
      if (out != nullptr) dup2(fileno(out), STDERR_FILENO);
      std::vector<char*> argv;
      for (std::string& s : args) argv.push_back(s.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    if (!wait) return pid;
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  bool Launch() {
    pid_ = Run({bin_ + "/postgres", "-D", dir_ + "/data", "-p", std::to_string(port_), "-k", dir_,
                "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"},
               /*wait=*/false);
    Result<std::unique_ptr<Archive>> probe = Archive::Open(conninfo(), "probe");
    if (!probe.ok()) return false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if ((*probe)->Count().ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  std::string dir_, bin_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  int port_ = 0;
  pid_t pid_ = -1;
};

// One PostgreSQL for every archive case of a test binary (each test has its own cluster name):
// initdb costs a second or two. nullptr when there is none or it did not start.
inline TestPostgres* SharedPostgres() {
  static std::unique_ptr<TestPostgres> pg = TestPostgres::Start();
  return pg.get();
}

}  // namespace berth::store

#endif  // BERTH_STORE_PG_TEST_UTIL_H_
