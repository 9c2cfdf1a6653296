#include "cli/local_group.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/container_settings.h"
#include "cli/local_postgres.h"
#include "net/http.h"
#include "net/socket_io.h"

namespace berth::cli {
namespace {

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// GET `path` at `address` answers `status`.
bool Answers(const std::string& address, const std::string& path, int status) {
  Result<std::unique_ptr<net::HttpClient>> c = net::HttpClient::Connect(address, 1000);
  if (!c.ok()) return false;
  Result<net::ClientResponse> r = (*c)->Request("GET", path);
  return r.ok() && r->status == status;
}

bool WaitFor(const std::function<bool()>& cond, int timeout_ms) {
  const int64_t end = SteadyMs() + timeout_ms;
  while (SteadyMs() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cond();
}

}  // namespace

Result<std::unique_ptr<LocalGroup>> LocalGroup::Start(const LocalGroupOptions& options) {
  std::unique_ptr<LocalGroup> g(new LocalGroup());
  g->opt_ = options;
  if (g->opt_.etcd_binary.empty()) g->opt_.etcd_binary = agent::FindExecutable("etcd");
  if (g->opt_.etcd_binary.empty()) {
    return Status::FailedPrecondition(
        "berth up --ha needs etcd (Debian: apt-get install etcd-server), and none is on PATH");
  }
  g->dir_ = g->opt_.home + "/ha";
  mkdir(g->dir_.c_str(), 0700);
  BERTH_RETURN_IF_ERROR(g->StartEtcd());
  BERTH_ASSIGN_OR_RETURN(const std::string accounting, g->StartPostgres());
  // The controllers agree on one token secret and CA through etcd (group_controller.cc), so
  // that users' tokens, nodes' credentials and kubeconfigs work with whichever leads.
  for (int i = 0; i < g->opt_.controllers; ++i) {
    Child c;
    c.name = "ctl-" + std::to_string(i + 1);
    const std::string home = g->dir_ + "/" + c.name;
    mkdir(home.c_str(), 0755);
    c.argv = {g->opt_.berth_binary,
              "controller",
              "--home",
              home,
              "--socket",
              home + "/controller.sock",
              "--store",
              g->store_url_,
              "--name",
              c.name,
              "--lease-ttl",
              std::to_string(g->opt_.lease_ttl_s),
              "--accounting-store",
              accounting};
    c.argv.insert(c.argv.end(), g->opt_.controller_args.begin(), g->opt_.controller_args.end());
    c.log = home + "/controller.log";
    BERTH_RETURN_IF_ERROR(g->Spawn(c));
    g->controllers_.push_back(std::move(c));
  }
  for (const Child& c : g->controllers_) {
    const std::string sock = "unix:" + g->dir_ + "/" + c.name + "/controller.sock";
    if (!WaitFor([&] { return Answers(sock, "/healthz", 200); }, 60000)) {
      return Status::Unavailable("controller " + c.name + " did not start: see " + c.log);
    }
  }
  const bool led = WaitFor(
      [&] {
        for (const Child& c : g->controllers_) {
          if (Answers("unix:" + g->dir_ + "/" + c.name + "/controller.sock", "/readyz", 200)) {
            return true;
          }
        }
        return false;
      },
      60000);
  if (!led) return Status::Unavailable("no controller became the leader: see " + g->dir_);
  return g;
}

LocalGroup::~LocalGroup() {
  Stop();
}

Status LocalGroup::StartEtcd() {
  const std::string etcd_dir = dir_ + "/etcd";
  mkdir(etcd_dir.c_str(), 0700);
  // The members' ports: kept from the first start (the data holds the peer addresses).
  std::vector<std::pair<int, int>> ports;
  {
    std::ifstream in(etcd_dir + "/ports");
    std::string name;
    int client = 0, peer = 0;
    while (in >> name >> client >> peer) ports.emplace_back(client, peer);
  }
  if (ports.size() != static_cast<size_t>(opt_.etcd_members)) {
    ports.clear();
    std::ostringstream out;
    for (int i = 0; i < opt_.etcd_members; ++i) {
      BERTH_ASSIGN_OR_RETURN(int client, net::FreeLoopbackPort());
      BERTH_ASSIGN_OR_RETURN(int peer, net::FreeLoopbackPort());
      ports.emplace_back(client, peer);
      out << "m" << i << " " << client << " " << peer << "\n";
    }
    std::ofstream f(etcd_dir + "/ports", std::ios::trunc);
    f << out.str();
    if (!f) return Status::Internal("cannot write " + etcd_dir + "/ports");
  }
  std::string initial, endpoints;
  for (int i = 0; i < opt_.etcd_members; ++i) {
    initial += (i ? "," : "") + std::string("m") + std::to_string(i) +
               "=http://127.0.0.1:" + std::to_string(ports[i].second);
    endpoints += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(ports[i].first);
  }
  store_url_ = "etcd://" + endpoints + "/berth/local";
  for (int i = 0; i < opt_.etcd_members; ++i) {
    Child c;
    c.name = "m" + std::to_string(i);
    const std::string client = "http://127.0.0.1:" + std::to_string(ports[i].first);
    const std::string peer = "http://127.0.0.1:" + std::to_string(ports[i].second);
    c.argv = {opt_.etcd_binary, "--name=" + c.name, "--data-dir=" + etcd_dir + "/" + c.name,
              "--listen-client-urls=" + client, "--advertise-client-urls=" + client,
              "--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
              "--initial-cluster=" + initial, "--initial-cluster-state=new",
              // A member cut off and back must not unseat etcd's leader (docs/ha.md).
              "--pre-vote=true",
              // Old revisions go after an hour (ADR 0007: etcd keeps every one otherwise).
              "--auto-compaction-mode=periodic", "--auto-compaction-retention=1h"};
    c.log = etcd_dir + "/" + c.name + ".log";
    BERTH_RETURN_IF_ERROR(Spawn(c));
    etcd_.push_back(std::move(c));
  }
  for (int i = 0; i < opt_.etcd_members; ++i) {
    const std::string address = "tcp:127.0.0.1:" + std::to_string(ports[i].first);
    if (!WaitFor([&] { return Answers(address, "/health", 200); }, 30000)) {
      return Status::Unavailable("etcd member " + etcd_[i].name + " did not start: see " +
                                 etcd_[i].log);
    }
  }
  return Status::Ok();
}

Result<std::string> LocalGroup::StartPostgres() {
  BERTH_ASSIGN_OR_RETURN(LocalPostgres pg, PrepareLocalPostgres(dir_));
  Child c;
  c.name = "postgres";
  c.argv = pg.argv;
  c.uid = pg.uid;
  c.gid = pg.gid;
  c.stop_signal = SIGINT;
  c.log = pg.dir + "/postgres.log";
  BERTH_RETURN_IF_ERROR(Spawn(c));
  postgres_.push_back(std::move(c));
  // Accepting on its port; the archive's first connection waits out the rest of its start.
  const std::string address = "127.0.0.1";
  const bool up = WaitFor(
      [&] {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(pg.port));
        inet_pton(AF_INET, address.c_str(), &a.sin_addr);
        const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
        close(fd);
        return ok;
      },
      30000);
  if (!up) return Status::Unavailable("PostgreSQL did not start: see " + postgres_[0].log);
  return pg.conninfo;
}

Status LocalGroup::Spawn(Child& c) {
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Status::Internal("fork failed");
  if (pid == 0) {
    // Gone with `berth up`, however it ends.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    int log = open(c.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (c.uid != getuid()) {
      if (log >= 0 && fchown(log, c.uid, c.gid) != 0) _exit(126);
      if (setgid(c.gid) != 0 || setuid(c.uid) != 0) _exit(126);
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // a change of user cleared it
      if (getppid() != parent) _exit(1);
    }
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    std::vector<char*> argv;
    for (std::string& s : c.argv) argv.push_back(s.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  c.pid = pid;
  c.exited_ms = -1;
  return Status::Ok();
}

std::string LocalGroup::Sockets() const {
  std::string out;
  for (const Child& c : controllers_) {
    out += (out.empty() ? "" : ",") + dir_ + "/" + c.name + "/controller.sock";
  }
  return out;
}

std::string LocalGroup::AgentAddresses() const {
  std::string out;
  for (const Child& c : controllers_) {
    out +=
        (out.empty() ? "" : ",") + std::string("unix:") + dir_ + "/" + c.name + "/controller.sock";
  }
  return out;
}

int LocalGroup::Supervise() {
  int restarted = 0;
  for (std::vector<Child>* group : {&etcd_, &postgres_, &controllers_}) {
    for (Child& c : *group) {
      if (c.pid > 0 && c.exited_ms < 0) {
        int status = 0;
        if (waitpid(c.pid, &status, WNOHANG) == c.pid) c.exited_ms = SteadyMs();
      }
      if (c.exited_ms >= 0 && SteadyMs() - c.exited_ms >= 1000) {
        if (Spawn(c).ok()) ++restarted;
      }
    }
  }
  return restarted;
}

void LocalGroup::StopChild(Child& c, int grace_ms) {
  if (c.pid <= 0 || c.exited_ms >= 0) return;
  kill(c.pid, c.stop_signal);
  const int64_t end = SteadyMs() + grace_ms;
  int status = 0;
  while (waitpid(c.pid, &status, WNOHANG) == 0) {
    if (SteadyMs() > end) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  c.pid = -1;
}

void LocalGroup::Stop() {
  for (Child& c : controllers_) {
    if (c.pid > 0 && c.exited_ms < 0) kill(c.pid, SIGTERM);
  }
  for (Child& c : controllers_) StopChild(c, 15000);
  for (Child& c : postgres_) StopChild(c, 10000);
  for (Child& c : etcd_) StopChild(c, 10000);
  controllers_.clear();
  postgres_.clear();
  etcd_.clear();
}

}  // namespace berth::cli
