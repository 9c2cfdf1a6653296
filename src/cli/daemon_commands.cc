// The daemons: `berth controller`, `berth agent`, and `berth up` (both in one process, the
// embedded single-machine cluster), and the internal `berth supervise`.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent_daemon.h"
#include "agent/node_metrics.h"
#include "agent/supervisor.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/demo.h"
#include "cli/group_controller.h"
#include "cli/local_group.h"
#include "cli/option_table.h"
#include "common/strings.h"
#include "common/units.h"
#include "config/cluster_config.h"
#include "config/slurm_site.h"
#include "controller/controller.h"
#include "store/store.h"

namespace berth::cli {
namespace {

// MinJobAge=0 (finished jobs never forgotten): 50 years, within the controller's int seconds.
constexpr int64_t kNever = 50LL * 365 * 86400;

std::atomic<bool> g_stop{false};

void OnSignal(int) {
  g_stop = true;
}

void CatchStopSignals() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

std::string SelfBinary() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "berth";
  buf[n] = '\0';
  return buf;
}

struct DaemonArgs {
  std::string home;
  std::string config_file;
  std::string slurm_conf;  // a Slurm site's slurm.conf (+ the gres.conf beside it)
  std::string socket;
  std::string controller;  // agent: where the controller is
  std::string node_name;
  std::string tcp;
  int gpus = -1;
  std::string gpu_type = "gpu";
  std::string mps_pipe_dir;  // agent: the node's MPS daemon's directories, for MPS shares
  std::string mps_log_dir;
  int node_timeout = 60;
  int history_interval = 10;         // controller: --history-interval SECS
  int web_session_idle = 12 * 3600;  // controller: --web-session-idle SECS
  int cpus = 0;
  int64_t mem_mib = 0;
  std::vector<std::string> operators;  // --operator USER (repeatable, or a comma list)
  std::string k8s_listen;              // --k8s-listen HOST:PORT|off ("": the default)
  std::string tls_cert, tls_key, tls_ca;
  std::string metrics_listen;        // agent: --metrics-listen HOST:PORT
  std::vector<std::string> tls_san;  // controller: --tls-san NAME (repeatable, or a comma list)
  std::string ca_file;               // agent: --ca-file F
  std::string join_token;            // agent: --join-token T or --join-token-file F
  std::string credential_file;       // agent: --credential-file F
  int fence_s = -1;                  // agent: --fence-time SECS
  std::string munge_socket;          // controller: --munge-socket PATH
  // Containers (docs/containers.md).
  bool no_containers = false;                    // agent: --no-containers
  std::string image_store;                       // agent: --image-store DIR
  std::string registry_ca;                       // agent: --registry-ca DIR
  std::vector<std::string> insecure_registries;  // agent: --insecure-registry HOST[:PORT]
  int64_t image_cache_mib = 0;                   // agent: --image-cache-size SIZE
  std::string container_pods = "yes";            // controller: --container-pods yes|no
  std::string store;                             // controller: --store URL
  std::string accounting_store;                  // controller: --accounting-store CONNINFO
  std::string name;           // controller in an HA group: --name (default: the host's name)
  std::string advertise;      // controller in an HA group: --advertise ADDR
  int lease_ttl = 2;          // controller in an HA group: --lease-ttl SECS
  bool ha = false;            // up: --ha, a local HA group (docs/ha.md)
  int etcd_compaction = 300;  // controller in an HA group: --etcd-compaction-interval SECS
  bool demo = false;
  bool help = false;
};

// A whole decimal integer in [lo, hi] into `out`; an error naming the option otherwise.
Status ParseIntArg(const char* option_name, const char* text, int lo, int hi, int& out) {
  int value = 0;
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || ptr == text || value < lo || value > hi) {
    return Status::InvalidArgument(std::string(option_name) + ": expected an integer in [" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                                   text + "'");
  }
  out = value;
  return Status::Ok();
}

LongOption<DaemonArgs> IntOption(const char* name, int DaemonArgs::*field, int lo, int hi) {
  return {name, true, [name, field, lo, hi](DaemonArgs& a, const char* v) {
            return ParseIntArg((std::string("--") + name).c_str(), v, lo, hi, a.*field);
          }};
}

// --operator and --tls-san: repeatable, each a comma list.
LongOption<DaemonArgs> ListOption(const char* name, std::vector<std::string> DaemonArgs::*field) {
  return {name, true, [field](DaemonArgs& a, const char* v) {
            std::vector<std::string>& into = a.*field;
            std::string list = v;
            for (size_t start = 0; start <= list.size();) {
              size_t comma = std::min(list.find(',', start), list.size());
              if (comma > start) into.push_back(list.substr(start, comma - start));
              start = comma + 1;
            }
            return Status::Ok();
          }};
}

Status ApplyMem(DaemonArgs& a, const char* v) {
  Result<int64_t> mib = ParseMemoryMiB(v);
  if (!mib.ok() || *mib <= 0) {
    return Status::InvalidArgument(std::string("--mem: invalid memory size '") + v +
                                   "' (e.g. 64G, 512000M)");
  }
  a.mem_mib = *mib;
  return Status::Ok();
}

Status ApplyImageCacheSize(DaemonArgs& a, const char* v) {
  Result<int64_t> mib = ParseMemoryMiB(v);
  if (!mib.ok() || *mib < 0) {
    return Status::InvalidArgument(std::string("--image-cache-size: invalid size '") + v +
                                   "' (e.g. 200G)");
  }
  a.image_cache_mib = *mib;
  return Status::Ok();
}

Status ApplyContainerPods(DaemonArgs& a, const char* v) {
  std::string value = v;
  if (value != "yes" && value != "no") {
    return Status::InvalidArgument("--container-pods: expected yes or no, got '" + value + "'");
  }
  a.container_pods = value;
  return Status::Ok();
}

Status ApplyMetricsListen(DaemonArgs& a, const char* v) {
  if (Result<std::pair<std::string, uint16_t>> address = agent::ParseListenAddress(v);
      !address.ok()) {
    return address.status().WithContext("--metrics-listen");
  }
  a.metrics_listen = v;
  return Status::Ok();
}

Status ApplyJoinTokenFile(DaemonArgs& a, const char* v) {
  std::ifstream in(v);
  std::string token;
  if (!(in >> token)) {
    return Status::InvalidArgument(std::string("--join-token-file: cannot read a token from ") + v);
  }
  a.join_token = token;
  return Status::Ok();
}

// The options of `berth controller`, `agent` and `up` (each usage text says which it reads).
const std::vector<LongOption<DaemonArgs>>& DaemonOptions() {
  using A = DaemonArgs;
  static const std::vector<LongOption<A>> kTable = {
      StringOption("home", &A::home),
      StringOption("config", &A::config_file),
      StringOption("slurm-conf", &A::slurm_conf),
      StringOption("socket", &A::socket),
      StringOption("controller", &A::controller),
      StringOption("node-name", &A::node_name),
      StringOption("node", &A::node_name),  // as slurmd -N: the same
      StringOption("listen-tcp", &A::tcp),
      IntOption("gpus", &A::gpus, 0, 1024),
      StringOption("gpu-type", &A::gpu_type),
      StringOption("mps-pipe-dir", &A::mps_pipe_dir),
      StringOption("mps-log-dir", &A::mps_log_dir),
      IntOption("node-timeout", &A::node_timeout, 1, 86400 * 365),
      IntOption("history-interval", &A::history_interval, 1, 60),
      IntOption("web-session-idle", &A::web_session_idle, 60, 86400 * 365),
      FlagOption("demo", &A::demo, true),
      IntOption("cpus", &A::cpus, 1, 1 << 20),
      {"mem", true, ApplyMem},
      ListOption("operator", &A::operators),
      StringOption("k8s-listen", &A::k8s_listen),
      StringOption("tls-cert", &A::tls_cert),
      StringOption("tls-key", &A::tls_key),
      StringOption("tls-ca", &A::tls_ca),
      {"metrics-listen", true, ApplyMetricsListen},
      ListOption("tls-san", &A::tls_san),
      StringOption("ca-file", &A::ca_file),
      StringOption("join-token", &A::join_token),
      {"join-token-file", true, ApplyJoinTokenFile},
      StringOption("credential-file", &A::credential_file),
      IntOption("fence-time", &A::fence_s, 0, 86400),
      StringOption("munge-socket", &A::munge_socket),
      FlagOption("no-containers", &A::no_containers, true),
      StringOption("image-store", &A::image_store),
      StringOption("registry-ca", &A::registry_ca),
      ListOption("insecure-registry", &A::insecure_registries),
      {"image-cache-size", true, ApplyImageCacheSize},
      {"container-pods", true, ApplyContainerPods},
      StringOption("store", &A::store),
      StringOption("accounting-store", &A::accounting_store),
      StringOption("name", &A::name),
      StringOption("advertise", &A::advertise),
      IntOption("lease-ttl", &A::lease_ttl, 1, 300),
      FlagOption("ha", &A::ha, true),
      IntOption("etcd-compaction-interval", &A::etcd_compaction, 0, 86400 * 7),
  };
  return kTable;
}

int ParseDaemonArgs(int argc, char** argv, DaemonArgs& a, const char* usage) {
  OptionsOutcome parsed = ParseOptionTable(argc, argv, DaemonOptions(), a);
  switch (parsed.kind) {
    case OptionsOutcome::Kind::kHelp:
      std::fputs(usage, stdout);
      a.help = true;
      return 0;
    case OptionsOutcome::Kind::kBadValue:
      std::fprintf(stderr, "berth: %s\n", parsed.error.message().c_str());
      return 2;
    case OptionsOutcome::Kind::kUnknownOption:
      std::fprintf(stderr, "%s: unrecognized option '%s'\n%s", argv[0], parsed.unknown.c_str(),
                   usage);
      return 2;
    case OptionsOutcome::Kind::kOk:
      break;
  }
  if (!parsed.operands.empty()) {
    std::fprintf(stderr, "%s: unexpected argument '%s'\n%s", argv[0],
                 parsed.operands.front().c_str(), usage);
    return 2;
  }
  if (!a.config_file.empty() && !a.slurm_conf.empty()) {
    std::fprintf(stderr, "%s: give --config or --slurm-conf, not both\n", argv[0]);
    return 2;
  }
  if (a.home.empty()) a.home = BerthHome();
  if (a.socket.empty()) a.socket = a.home + "/controller.sock";
  return 0;
}

// This host's node in `config`, found as slurmd finds its NodeName (NodeHostname, else NodeAddr
// among the host's addresses); "" leaves the agent its host name.
std::string ConfiguredNodeName(const config::ClusterConfig& config) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "";
  std::vector<std::string> addresses;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr) continue;
      char text[INET6_ADDRSTRLEN] = {};
      const int family = i->ifa_addr->sa_family;
      const void* raw =
          family == AF_INET ? static_cast<const void*>(
                                  &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr)
          : family == AF_INET6 ? static_cast<const void*>(
                                     &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr)
                               : nullptr;
      if (raw != nullptr && inet_ntop(family, raw, text, sizeof(text)) != nullptr) {
        addresses.push_back(text);
      }
    }
    freeifaddrs(list);
  }
  return config::NodeNameOfHost(config, host, addresses);
}

Result<controller::ControllerOptions> ControllerOptionsOf(const DaemonArgs& a) {
  controller::ControllerOptions opt;
  opt.state_dir = a.home;
  if (!a.store.empty()) {
    BERTH_ASSIGN_OR_RETURN(opt.store, store::ParseStoreUrl(a.store));
  }
  opt.accounting_store = a.accounting_store;
  opt.socket_path = a.socket;
  opt.container_pods = a.container_pods == "yes";
  opt.tcp_listen = a.tcp;
  opt.node_timeout_s = a.node_timeout;
  opt.history_sample_s = a.history_interval;
  opt.web_session_idle_s = a.web_session_idle;
  opt.operators = a.operators;
  if (!a.k8s_listen.empty()) {
    opt.k8s_listen = a.k8s_listen == "off" ? "" : a.k8s_listen;
    opt.k8s_listen_required = true;
  }
  opt.tls_cert = a.tls_cert;
  opt.tls_key = a.tls_key;
  opt.tls_ca = a.tls_ca;
  opt.tls_san = a.tls_san;
  opt.munge_socket = a.munge_socket;
  const std::string& file = a.slurm_conf.empty() ? a.config_file : a.slurm_conf;
  if (!a.config_file.empty()) {
    BERTH_ASSIGN_OR_RETURN(opt.config, config::ReadClusterConfig(a.config_file));
  } else if (!a.slurm_conf.empty()) {
    BERTH_ASSIGN_OR_RETURN(opt.config, config::ReadSlurmSiteConfig(a.slurm_conf));
  } else if (a.demo) {
    // The demo's autoscaling (docs/autoscaling.md): two powered-down "burst" nodes that berth's
    // local provider starts as agents on this machine when jobs ask for them, and stops again
    // after 5 s idle. This machine's own node joins the default partition as it registers.
    for (const char* line :
         {"ResumeProgram=local SuspendProgram=local SuspendTime=5 "
          "SuspendTimeout=1 ResumeTimeout=60",
          "NodeName=burst[1-2] CPUs=1 RealMemory=512 Features=burst State=CLOUD"}) {
      BERTH_RETURN_IF_ERROR(config::ApplyConfigLine(line, opt.config));
    }
  }
  if (opt.config.kill_wait_s >= 0) opt.kill_wait_s = opt.config.kill_wait_s;
  if (opt.config.min_job_age_s > 0) {
    opt.min_job_age_s = static_cast<int>(std::min<int64_t>(opt.config.min_job_age_s, kNever));
  } else if (opt.config.min_job_age_s == 0) {
    opt.min_job_age_s = kNever;  // MinJobAge=0: finished jobs are never forgotten, as in Slurm
  }
  // What berth does not act on, in one warning.
  if (!opt.config.ignored_keys.empty()) {
    std::string keys;
    for (const std::string& k : opt.config.ignored_keys) keys += (keys.empty() ? "" : ", ") + k;
    std::fprintf(stderr, "berth: warning: %s: ignoring %s\n", file.c_str(), keys.c_str());
  }
  return opt;
}

Result<std::unique_ptr<controller::Controller>> MakeController(const DaemonArgs& a) {
  BERTH_ASSIGN_OR_RETURN(controller::ControllerOptions opt, ControllerOptionsOf(a));
  return controller::Controller::Create(std::move(opt));
}

// The node's container options, in `berth agent --help` and `berth up --help`.
constexpr const char* kContainerOptions =
    R"(  --no-containers      run no container jobs on this node (they fail with the reason)
  --image-store DIR    the node's image cache (default HOME/agent/images)
  --image-cache-size SIZE  prune unused images, least recently used first, above SIZE
                       (e.g. 200G; default: no limit)
  --registry-ca DIR    extra CA certificates (*.crt) for container registries
  --insecure-registry HOST[:PORT]  a registry reached over plain HTTP or without TLS checks
                       (repeatable; registries on loopback always may: docs/containers.md)
)";

constexpr const char* kControllerUsage = R"(Usage: berth controller [options]

Runs the controller: the cluster's state, the scheduler, the REST API on a Unix socket.
  --config FILE        the cluster (docs/formats/cluster-config.md); none: nodes join as their
                       agents register
  --slurm-conf FILE    the cluster from a Slurm site's slurm.conf (and the gres.conf beside
                       it); its nodes are DOWN until their agents register
  --home DIR           state folder (default: $BERTH_HOME or ~/.local/share/berth)
  --socket PATH        the API socket (default: HOME/controller.sock)
  --listen-tcp H:P     also listen on TCP (read-only without authentication)
  --node-timeout SECS  a node silent this long goes DOWN (default 60)
  --operator USER      a user who may act on every job and node, as root may (repeatable, or
                       a comma list; Slurm's operators and admins)
  --k8s-listen H:P     serve the Kubernetes API (HTTPS) there; default 127.0.0.1:6443 (when
                       taken: no Kubernetes API, and berth up says why); an address given
                       and taken is an error; off: none (docs/kubernetes.md)
  --tls-cert F --tls-key F  the site's own serving certificate and key (PEM) instead of the
                       controller's own CA in HOME/pki; --tls-ca F: its CA, for kubeconfigs
  --tls-san NAME       another DNS name or IP address for the serving certificate (repeatable,
                       or a comma list): the address agents and users on other hosts use
  --munge-socket PATH  munged's socket for MUNGE credentials (default: munge's own); they are
                       accepted on HTTPS and --listen-tcp wherever munged answers
  --container-pods yes|no  Pods run in their images (default yes); no: their commands run on
                       the node as processes (docs/containers.md)
  --store URL          where the state is kept: sqlite (default: HOME/state.db), sqlite:PATH,
                       or etcd://HOST:PORT[,HOST:PORT...][/PREFIX] (an etcd v3 cluster, keys
                       under PREFIX, default /berth/default; etcds:// for TLS with
                       ?cacert=F&cert=F&key=F; docs/adr/0007-etcd-store.md). A change the
                       store cannot take is refused (503). SQLite: the controller then exits
                       (status 75) so that a restart reloads the store. etcd: controllers with
                       the same URL form an HA group (docs/ha.md): one leads, the others wait
                       as standbys; a leader that loses etcd serves reads, refuses changes,
                       and rejoins as a standby once etcd answers
  --accounting-store URL  keep finished jobs' records in PostgreSQL: a libpq connection string
                       or URI (postgresql://USER@HOST:PORT/DB?sslmode=verify-full&...). A job
                       moves there from the store once it left the live view (MinJobAge);
                       sacct, seff and berth report read both. While PostgreSQL is down the
                       records wait in the store (docs/ha.md, docs/adr/0009-accounting-archive.md)
  --name NAME          in an HA group: this controller's name (default: the host's name)
  --advertise ADDR     in an HA group: where clients and agents reach this controller, shown
                       to them by the standbys (default: tcp:--listen-tcp, else unix:--socket)
  --lease-ttl SECS     in an HA group: the leader's etcd lease; a leader that dies is replaced
                       within about this long (default 2)
  --etcd-compaction-interval SECS  in an HA group: the leader compacts etcd's history this
                       often, to the revision of the previous time (default 300; 0: never, for
                       an etcd that compacts itself)
  --history-interval SECS  sample the cluster's history (GET /v1/history) this often (1 to
                       60; default 10)
  --web-session-idle SECS  a web console session ends after this long unused (default 43200:
                       12 hours)
The HTTPS port (--k8s-listen) also serves berth's own API (/v1) to bearer tokens: users' (berth
token), nodes' credentials, and the join token; agents on other hosts join there
(docs/security.md), and the web console's sessions (berth web).
)";

// The usages with the container options appended: made when asked for, not at every berth start.
const std::string& AgentUsage() {
  static const std::string text = std::string(R"(Usage: berth agent [options]

Runs the node agent: registers this node with the controller and runs its jobs.
  --controller ADDR    unix:/path/controller.sock, or https://host:port for a controller on
                       another host (its --k8s-listen port); default: found like the CLI. A
                       comma list names an HA group's controllers: the agent moves on when
                       one is unreachable or a standby, and refuses a deposed leader's
                       commands (docs/ha.md)
  --ca-file F          with https: the controller's CA certificate (its HOME/pki/ca.crt)
  --join-token T       with https: the cluster's join token (berth token --join), exchanged once
                       for this node's credential; --join-token-file F reads it from F
  --credential-file F  where the node's credential is kept (default HOME/agent/credential)
  --fence-time SECS    kill this node's jobs after SECS without reaching the controller (default:
                       half the controller's node timeout; 0: never)
  --home DIR           state folder (job folders go in HOME/agent/jobs)
  --node-name NAME     this node's name (also --node); default: with --config or
                       --slurm-conf the node whose NodeHostname (else NodeAddr) is this host,
                       as slurmd finds it; else the short host name
  --config F, --slurm-conf F  the cluster's configuration, for the node's name only
  --gpus N --gpu-type T  declare N GPUs of type T when NVML finds none
  --mps-pipe-dir D --mps-log-dir D  the node's CUDA MPS control daemon's directories: MPS
                       shares (--gres=mps:N) get CUDA_MPS_PIPE_DIRECTORY / _LOG_DIRECTORY
  --cpus N --mem SIZE  declare the node's size instead of what is detected
  --metrics-listen H:P serve Prometheus metrics (GET /metrics) on TCP there; port 0 picks a
                       free one (printed); off by default (docs/metrics.md)
)") + kContainerOptions;
  return text;
}

const std::string& UpUsage() {
  static const std::string text = std::string(R"(Usage: berth up [options]

Starts a controller and a local agent in one command (the embedded single-machine cluster), in
the foreground; Ctrl-C stops both (running jobs keep running and are adopted by the next start).
  --demo               also submit a small mixed workload and show the queue draining live
  --config FILE        the cluster (default: this machine, as its agent detects it)
  --slurm-conf FILE    the cluster from a Slurm site's slurm.conf (and the gres.conf beside it);
                       this machine's agent is the node whose NodeHostname (else NodeAddr) is
                       this host, as slurmd finds its name (--node-name NAME says otherwise)
  --home DIR           state (default: $BERTH_HOME or ~/.local/share/berth)
  --gpus N --gpu-type T  declare GPUs when NVML finds none (--demo declares 4 of type "demo")
  --metrics-listen H:P the agent's Prometheus metrics on TCP there (the controller's are GET
                       /metrics on its socket; docs/metrics.md)
  --operator USER      a user who may act on every job and node (repeatable, or a comma list)
  --ha                 an HA group on this machine, for trying it (docs/ha.md): a 3-member
                       etcd, a PostgreSQL for finished jobs' records (the accounting archive)
                       and 3 controllers in HOME/ha (a controller that exits is started again),
                       this machine's agent with all of them; --lease-ttl SECS (default 2) the
                       leader's lease
  --k8s-listen H:P     serve the Kubernetes API (HTTPS) there; default 127.0.0.1:6443 (when
                       taken: no Kubernetes API, and berth up says why); an address given
                       and taken is an error; off: none (docs/kubernetes.md)
  --tls-cert F --tls-key F  the site's own serving certificate and key (PEM) instead of the
                       controller's own CA in HOME/pki; --tls-ca F: its CA, for kubeconfigs
  --container-pods yes|no  Pods run in their images (default yes); no: their commands run on
                       the node as processes (docs/containers.md)
  --history-interval SECS, --web-session-idle SECS  as for berth controller
)") + kContainerOptions;
  return text;
}

// Serves until a stop signal or a failed commit; returns the exit status: 75 (EX_TEMPFAIL) when
// a restart must reload the store.
int Serve(controller::Controller& c, const std::string& socket) {
  std::fprintf(stderr, "berth controller: listening on %s\n", socket.c_str());
  Status failure;
  while (!g_stop && (failure = c.StoreFailure()).ok()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!failure.ok()) {
    // Let the replies that carry the error reach their callers first.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  c.Stop();
  if (!failure.ok()) {
    std::fprintf(stderr, "berth controller: exiting: %s\n", failure.message().c_str());
    return 75;  // EX_TEMPFAIL: a restart reloads the store (or joins as a standby)
  }
  return 0;
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "controller";
  return host;
}

// A controller of an HA group (docs/ha.md; group_controller.h).
int GroupControllerMain(const DaemonArgs& a, const store::StoreLocation& where) {
  GroupControllerArgs g;
  g.where = where;
  g.self.name = a.name.empty() ? HostName() : a.name;
  g.self.address =
      !a.advertise.empty() ? a.advertise : (!a.tcp.empty() ? "tcp:" + a.tcp : "unix:" + a.socket);
  g.self.pid = getpid();
  g.lease_ttl_s = a.lease_ttl;
  g.compaction_s = a.etcd_compaction;
  g.socket = a.socket;
  g.tcp = a.tcp;
  return RunGroupController(
      g, [&a] { return ControllerOptionsOf(a); }, g_stop);
}

}  // namespace

int ControllerMain(int argc, char** argv) {
  DaemonArgs a;
  if (int rc = ParseDaemonArgs(argc, argv, a, kControllerUsage); rc != 0 || a.help) return rc;
  if (!a.metrics_listen.empty()) {
    std::fprintf(stderr,
                 "berth controller: --metrics-listen is an agent option; the controller serves "
                 "GET /metrics on its socket (and on --listen-tcp)\n");
    return 2;
  }
  CatchStopSignals();
  mkdir(a.home.c_str(), 0755);
  if (!a.store.empty()) {
    Result<store::StoreLocation> where = store::ParseStoreUrl(a.store);
    if (!where.ok()) return Fail("berth controller", where.status());
    if (where->kind == store::StoreLocation::Kind::kEtcd) return GroupControllerMain(a, *where);
  }
  Result<std::unique_ptr<controller::Controller>> c = MakeController(a);
  if (!c.ok()) return Fail("berth controller", c.status());
  Status st = (*c)->Start();
  if (!st.ok()) return Fail("berth controller", st);
  return Serve(**c, a.socket);
}

void SetContainerOptions(const DaemonArgs& a, agent::AgentOptions& opt) {
  opt.containers = !a.no_containers;
  opt.image_store = a.image_store;
  opt.registry_ca_dir = a.registry_ca;
  opt.insecure_registries = a.insecure_registries;
  opt.image_cache_bytes = a.image_cache_mib * 1024 * 1024;
}

int AgentMain(int argc, char** argv) {
  DaemonArgs a;
  if (int rc = ParseDaemonArgs(argc, argv, a, AgentUsage().c_str()); rc != 0 || a.help) return rc;
  CatchStopSignals();
  agent::AgentOptions opt;
  // One address, or an HA group's (a comma list), each unix:PATH, tcp:H:P or https://H:P.
  std::vector<std::string> given = SplitList(a.controller);
  if (given.empty()) {  // found like the CLI (BERTH_SOCKET may be a list too)
    for (const std::string& path : SplitList(FindSocket())) given.push_back("unix:" + path);
  }
  for (std::string one : given) {
    if (one.starts_with("https://")) {
      one = "tls:" + one.substr(8);
      while (one.ends_with("/")) one.pop_back();
    }
    opt.controller += (opt.controller.empty() ? "" : ",") + one;
  }
  opt.ca_file = a.ca_file;
  opt.join_token = a.join_token;
  opt.credential_file = a.credential_file;
  opt.fence_s = a.fence_s;
  opt.node_name = a.node_name;
  if (opt.node_name.empty() && (!a.config_file.empty() || !a.slurm_conf.empty())) {
    // The configured node this host is (NodeHostname, NodeAddr), as slurmd finds it.
    Result<config::ClusterConfig> cfg = a.config_file.empty()
                                            ? config::ReadSlurmSiteConfig(a.slurm_conf)
                                            : config::ReadClusterConfig(a.config_file);
    if (!cfg.ok()) return Fail("berth agent", cfg.status());
    opt.node_name = ConfiguredNodeName(*cfg);
  }
  opt.state_dir = a.home + "/agent";
  mkdir(a.home.c_str(), 0755);
  opt.berth_binary = SelfBinary();
  opt.cpus = a.cpus;
  opt.mem_mib = a.mem_mib;
  opt.metrics_listen = a.metrics_listen;
  opt.mps_pipe_dir = a.mps_pipe_dir;
  opt.mps_log_dir = a.mps_log_dir;
  SetContainerOptions(a, opt);
  if (a.gpus > 0) {
    opt.declared_gpus = a.gpus;
    opt.declared_gpu_type = a.gpu_type;
  }
  agent::Agent agent(opt);
  Status st = agent.Run(g_stop);
  return st.ok() ? 0 : Fail("berth agent", st);
}

namespace {

// The local agent of `berth up`, its controller at `controller` (one address or a list).
agent::AgentOptions UpAgentOptions(const DaemonArgs& a, const std::string& controller,
                                   const std::string& node_name) {
  agent::AgentOptions opt;
  opt.controller = controller;
  opt.node_name = node_name;
  opt.state_dir = a.home + "/agent";
  opt.berth_binary = SelfBinary();
  int gpus = a.gpus >= 0 ? a.gpus : (a.demo ? 4 : 0);
  opt.declared_gpus = gpus;
  opt.declared_gpu_type = a.gpus >= 0 ? a.gpu_type : (a.demo ? "demo" : a.gpu_type);
  opt.metrics_listen = a.metrics_listen;
  opt.mps_pipe_dir = a.mps_pipe_dir;
  opt.mps_log_dir = a.mps_log_dir;
  SetContainerOptions(a, opt);
  return opt;
}

// `berth up --ha`: a local etcd and a group of controllers (LocalGroup), this machine's agent
// with all of them, the demo if asked; Ctrl-C stops everything.
int UpGroup(const DaemonArgs& a) {
  LocalGroupOptions g;
  g.home = a.home;
  g.berth_binary = SelfBinary();
  g.lease_ttl_s = a.lease_ttl;
  auto pass = [&g](const char* option, const std::string& value) {
    if (value.empty()) return;
    g.controller_args.push_back(option);
    g.controller_args.push_back(value);
  };
  pass("--config", a.config_file);
  pass("--slurm-conf", a.slurm_conf);
  pass("--container-pods", a.container_pods);
  pass("--node-timeout", std::to_string(a.node_timeout));
  pass("--history-interval", std::to_string(a.history_interval));
  pass("--k8s-listen", a.k8s_listen);
  for (const std::string& op : a.operators) pass("--operator", op);
  if (a.demo) g.controller_args.push_back("--demo");  // the demo's burst nodes (autoscaling)
  std::string node_name = a.node_name;
  if (node_name.empty() && (!a.config_file.empty() || !a.slurm_conf.empty())) {
    Result<config::ClusterConfig> cfg = a.config_file.empty()
                                            ? config::ReadSlurmSiteConfig(a.slurm_conf)
                                            : config::ReadClusterConfig(a.config_file);
    if (!cfg.ok()) return Fail("berth up", cfg.status());
    node_name = ConfiguredNodeName(*cfg);
  }
  std::printf("berth up --ha: starting etcd, PostgreSQL and the controllers in %s/ha ...\n",
              a.home.c_str());
  std::fflush(stdout);
  Result<std::unique_ptr<LocalGroup>> group = LocalGroup::Start(g);
  if (!group.ok()) return Fail("berth up", group.status());
  agent::AgentOptions opt = UpAgentOptions(a, (*group)->AgentAddresses(), node_name);
  std::atomic<bool> agent_stop{false};
  std::thread agent_thread([&] {
    agent::Agent agent(opt);
    Status s = agent.Run(agent_stop);
    if (!s.ok()) std::fprintf(stderr, "berth up: agent: %s\n", s.message().c_str());
  });
  // The group's supervisor: a controller that exits (a deposed leader) comes back as a standby.
  std::atomic<bool> supervise_stop{false};
  std::thread supervisor([&] {
    while (!supervise_stop) {
      (*group)->Supervise();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::printf(
      "berth is up as an HA group: %d controllers on a %d-member etcd (%s), finished jobs' "
      "records in PostgreSQL, state in %s/ha\n",
      g.controllers, g.etcd_members, (*group)->StoreUrl().c_str(), a.home.c_str());
  std::printf("Use it with:  export BERTH_SOCKET=%s\n", (*group)->Sockets().c_str());
  std::printf(
      "Then:         %s status   (the group: kill -9 the leader's pid and watch another take "
      "over)\n",
      SelfBinary().c_str());
  std::printf("              %s submit --wrap 'hostname'   |   Ctrl-C stops berth\n",
              SelfBinary().c_str());
  std::fflush(stdout);
  int rc = 0;
  if (a.demo) {
    rc = RunDemo((*group)->AgentAddresses(), a.home, g_stop);
  } else {
    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  agent_stop = true;
  agent_thread.join();
  supervise_stop = true;
  supervisor.join();
  (*group)->Stop();
  return rc;
}

}  // namespace

int UpMain(int argc, char** argv) {
  DaemonArgs a;
  if (int rc = ParseDaemonArgs(argc, argv, a, UpUsage().c_str()); rc != 0 || a.help) return rc;
  CatchStopSignals();
  if (mkdir(a.home.c_str(), 0755) != 0 && errno != EEXIST) {
    return Fail("berth up", Status::InvalidArgument("cannot create " + a.home));
  }
  if (a.ha) return UpGroup(a);
  Result<std::unique_ptr<controller::Controller>> c = MakeController(a);
  if (!c.ok()) return Fail("berth up", c.status());
  Status st = (*c)->Start();
  if (!st.ok()) return Fail("berth up", st);
  if (getuid() == 0) {  // let every local user's CLI find it
    mkdir("/run/berth", 0755);
    unlink("/run/berth/controller.sock");
    if (symlink(a.socket.c_str(), "/run/berth/controller.sock") != 0) {
      std::fprintf(stderr, "berth up: note: cannot link /run/berth/controller.sock\n");
    }
  }
  agent::AgentOptions opt = UpAgentOptions(
      a, "unix:" + a.socket,
      a.node_name.empty() ? ConfiguredNodeName((*c)->options().config) : a.node_name);
  std::atomic<bool> agent_stop{false};
  std::thread agent_thread([&] {
    agent::Agent agent(opt);
    Status s = agent.Run(agent_stop);
    if (!s.ok()) std::fprintf(stderr, "berth up: agent: %s\n", s.message().c_str());
  });
  std::printf("berth is up: controller on %s, state in %s\n", a.socket.c_str(), a.home.c_str());
  std::printf("Submit with:  %s submit --wrap 'hostname'   (or sbatch-style options)\n",
              SelfBinary().c_str());
  std::printf("Watch with:   %s jobs   |   %s nodes   |   Ctrl-C stops berth\n",
              SelfBinary().c_str(), SelfBinary().c_str());
  std::ifstream url_file(a.home + "/kubernetes-api.url");  // docs/kubernetes.md
  std::string k8s_url;
  if (std::getline(url_file, k8s_url) && !k8s_url.empty()) {
    std::printf("Kubernetes:   %s (%s kubeconfig > ~/.kube/config; kubectl get nodes)\n",
                k8s_url.c_str(), SelfBinary().c_str());
    // docs/web.md: the console shares the port; a token from `berth token` signs in.
    std::printf("Web console:  %s/ui/ (sign in with a token from %s token)\n", k8s_url.c_str(),
                SelfBinary().c_str());
  } else if (std::string why = (*c)->KubernetesNotServed(); !why.empty()) {
    // The default address was taken: one line says that this face is off, and why.
    std::printf("Kubernetes:   off: %s (--k8s-listen HOST:PORT serves it elsewhere)\n",
                why.c_str());
  }
  std::fflush(stdout);
  int rc = 0;
  if (a.demo) {
    rc = RunDemo("unix:" + a.socket, a.home, g_stop);
  } else {
    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  agent_stop = true;
  agent_thread.join();
  (*c)->Stop();
  // The machine-wide link goes with this cluster (unless another berth up has taken it since).
  char target[4096] = {};
  ssize_t n = readlink("/run/berth/controller.sock", target, sizeof(target) - 1);
  if (n > 0 && std::string(target, static_cast<size_t>(n)) == a.socket) {
    unlink("/run/berth/controller.sock");
  }
  return rc;
}

int SuperviseMain(int argc, char** argv) {
  return agent::SuperviseMain(argc, argv);
}

int SuperviseServerMain(int argc, char** argv) {
  return agent::SuperviseServerMain(argc, argv);
}

}  // namespace berth::cli
