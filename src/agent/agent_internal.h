// Agent::Impl, the agent daemon's state, shared by its two halves:
//   agent_daemon.cc   the loops: credential and registration, the command long-poll, the
//                     reporter (ended attempts, steps, heartbeats), fencing, GET /metrics
//   agent_actions.cc  what the agent does with a controller command (agent_commands.h):
//                     launches on worker threads, cancels, signals, time limits, job steps
//
// Threads: Agent::Run's thread polls for commands and hands them to Handle(); the reporter
// thread reports and keeps the fence; launch workers start supervisors; the metrics server's
// threads read. What they share is atomic, guarded by a mutex (annotated: the clang build
// checks it, scripts/check-thread-safety), or written before the threads start (options, node).
#ifndef BERTH_AGENT_AGENT_INTERNAL_H_
#define BERTH_AGENT_AGENT_INTERNAL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "agent/agent_commands.h"
#include "agent/agent_daemon.h"
#include "agent/container_settings.h"
#include "agent/controller_choice.h"
#include "agent/node_info.h"
#include "agent/node_metrics.h"
#include "agent/nvml.h"
#include "agent/pod_stream.h"
#include "agent/supervisor.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "image/store.h"
#include "net/http.h"

namespace berth::agent {

struct Agent::Impl {
  using json = nlohmann::json;
  using JobKey = std::pair<uint32_t, int32_t>;  // (job id, attempt)

  // "berth agent: " and fmt with `a` for its %s, on stderr.
  static void Log(const char* fmt, const std::string& a);
  static int64_t SteadyMs();

  AgentOptions opt;
  std::string jobs_dir;
  std::string node;
  DetectedNode detected;
  std::atomic<int> heartbeat_s{5};  // written by Register, read by the reporter
  std::atomic<bool> registered{false};
  // Run's loops: the registration is due (at start, or when the controller forgot this node);
  // the agent stops (asked to, or refused by the controller).
  std::atomic<bool> need_register{true};
  std::atomic<bool> loop_done{false};
  // Talking to the controller: for a tls: address, the bearer credential of this node.
  net::ClientOptions client_options;
  Mutex credential_mu;
  std::string credential GUARDED_BY(credential_mu);
  // Fencing: the last time the controller answered (or was plainly not running: see
  // NoteFailure), in SteadyMs(); the fence time the controller asked for; whether the jobs were
  // fenced off since the last answer.
  std::atomic<int64_t> last_contact_ms{0};
  std::atomic<int> fence_s{0};
  std::atomic<bool> fenced{false};
  // For GET /metrics (--metrics-listen).
  std::atomic<uint64_t> jobs_started{0};
  std::atomic<uint64_t> jobs_ended{0};
  std::unique_ptr<Nvml> nvml;  // when NVML found GPUs: their use, for /metrics and the reports
  // The node's container settings (STATE/containers.json, written by Prepare, and again by
  // Register when the controller's ImageCacheSize applies) and its image cache, whose list goes
  // to the controller with the registration and with a report whenever it changed.
  ContainerSettings containers;               // Run's thread only, once Prepare made it
  std::unique_ptr<image::Store> image_store;  // set by Prepare; its reads are safe from any thread
  Mutex images_mu;
  std::string images_sent GUARDED_BY(images_mu);  // the list the controller has

  // Launches run on a few worker threads: starting a supervisor takes milliseconds (a process
  // that sets up cgroups and the user's environment), and jobs should not start one by one.
  Mutex launch_mu;
  std::condition_variable launch_cv;  // waits on launch_mu.native() (UniqueLock::get())
  std::deque<std::variant<LaunchCommand, StepCommand>> launches GUARDED_BY(launch_mu);
  // Launches queued or under way, by (job, attempt), and what came for them meanwhile: applied
  // once the supervisor exists (a launch starts by clearing the job's folder).
  struct AfterLaunch {
    bool cancel = false;
    int64_t time_limit = 0;  // a new limit (scontrol update TimeLimit); 0 = none
  };
  std::map<JobKey, AfterLaunch> launching GUARDED_BY(launch_mu);
  // Steps being started, and whether their job ended meanwhile (end them once started).
  std::map<StepDirKey, bool> step_launching GUARDED_BY(launch_mu);
  bool launch_stop GUARDED_BY(launch_mu) = false;
  std::vector<std::thread> launchers;  // Run's thread only
  // Forks the supervisors (supervisor.h); null: each is exec'd. Made by Prepare, gone with the
  // launchers.
  std::unique_ptr<SupervisorSpawner> spawner;
  // Pod streams (kubectl exec), each on a thread of its own; stopped when Run returns.
  PodStreams streams;

  // ---- folders (agent_daemon.cc)
  // The folders of job attempts (the batch step), and of job steps' parts on this node (both in
  // jobs_dir: supervisor.h StepDirKey).
  std::vector<std::string> JobDirs() const { return Split().first; }
  std::vector<std::string> StepDirs() const { return Split().second; }
  std::pair<std::vector<std::string>, std::vector<std::string>> Split() const;
  std::string FolderOf(uint32_t job_id, int32_t attempt) const;
  std::string StepFolder(const StepDirKey& k) const { return jobs_dir + "/" + k.Name(); }

  // ---- the controller, the credential, the fence (controller_link.cc)
  bool Tls() const { return opt.controller.starts_with("tls:"); }
  // The controllers to try (opt.controller's comma list: an HA group's members) and the one in
  // use (controller_choice.h; made by the constructor, never null), and the highest leader epoch
  // heard (docs/ha.md): a controller's answer with a lower one is a deposed leader's, and its
  // commands are refused.
  std::unique_ptr<ControllerChoice> choice;
  EpochFence epochs;
  // Moves on to the next controller of the list (the one in use is a standby, or deposed).
  void NextController();
  // A 503 from a standby or a deposed leader (header X-Berth-Leader): it did nothing, and it does
  // not count as contact for the fence (another member may be calling this node down).
  static bool IsStandbyAnswer(const net::ClientResponse& r);
  // A 503 from a standby: moves on, to the leader it names where it can, and returns true.
  bool MovedOnFromStandby(const net::ClientResponse& r);
  // Checks an answer's leader epoch: false (and moves on) for a deposed leader's.
  bool FromCurrentLeader(const json& reply);
  Result<std::unique_ptr<net::HttpClient>> Connect(int timeout_ms, const std::string& bearer);
  Result<std::unique_ptr<net::HttpClient>> Connect(int timeout_ms) EXCLUDES(credential_mu);
  void NoteContact();
  void NoteFailure(const Status& st);
  static bool Refused(const Status& st);
  std::string CredentialPath() const;
  Status EnsureCredential() EXCLUDES(credential_mu);
  Status ForgetCredential() EXCLUDES(credential_mu);
  void CheckFence();

  // ---- registration and reports (agent_daemon.cc)
  std::optional<JobResult> ResultOf(const std::string& dir) const;
  std::optional<JobResult> StepResultOf(const std::string& dir) const;
  json NodeJson() const;
  json ImagesJson() const;  // the image cache's summary, for GET /v1/images
  json LocalJobs() EXCLUDES(launch_mu);
  json LocalSteps() EXCLUDES(launch_mu);
  // `standby`, when given, is set when a standby answered (the group is there, electing).
  Status Register(net::HttpClient& c, bool* standby = nullptr) EXCLUDES(launch_mu);
  std::vector<std::pair<std::string, json>> StepEvents() EXCLUDES(launch_mu);
  Status Report(net::HttpClient& c) EXCLUDES(launch_mu);

  // ---- Run's steps (agent_daemon.cc)
  // The command loop's connection, the last command seen, the back-off before trying again.
  struct Poll {
    std::unique_ptr<net::HttpClient> client;
    uint64_t after = 0;
    int backoff_ms = 100;
    // Drops the connection and sleeps, longer each time (up to 5 s); after a standby's answer
    // (a failover under way) a fifth of a second, so that the new leader is found at once.
    void BackOff(bool standby = false);
  };
  // Folders, the controller's TLS options, the node, the launch workers. Errors: see Run.
  Status Prepare();
  // The reporter thread's loop until `stop` or `loop_done`.
  void ReportLoop(const std::atomic<bool>& stop);
  bool AnyEnded() const;  // an attempt or a step part ended and waits to be reported
  // The command loop until `stop`; an error when the controller refuses the agent.
  Status CommandLoop(const std::atomic<bool>& stop);
  // A credential, a connection and a registration: true when there to poll; false when it
  // backed off (try again); an error ends the agent.
  Result<bool> ReadyToPoll(Poll& p);
  Result<bool> RegisterIfNeeded(Poll& p);
  // One long poll for commands, each handed to Handle(). An error ends the agent.
  Status PollCommands(Poll& p);

  // ---- GET /metrics (agent_daemon.cc)
  AgentMetricsInput MetricsInput() const;
  // Each NVML-found device's utilisation and memory now (none without NVML).
  std::vector<GpuSample> GpuSamples() const;
  // The "usage" event of a status report: the node's and each running job's CPU time and
  // memory (metrics.k8s.io); nullopt when /proc cannot be read.
  std::optional<nlohmann::json> UsageEvent() const;
  net::HttpResponse ServeMetrics(const net::HttpRequest& req) const;
  Result<std::unique_ptr<net::HttpServer>> StartMetrics();

  // ---- controller commands (agent_actions.cc)
  // A command from the controller (agent_commands.h); one this build cannot read is logged.
  void Handle(const json& text);
  void Do(LaunchCommand& c) EXCLUDES(launch_mu);
  void Do(const CancelCommand& c) EXCLUDES(launch_mu);
  void Do(const SignalCommand& c);
  void Do(const TimeLimitCommand& c) EXCLUDES(launch_mu);
  void Do(StepCommand& c) EXCLUDES(launch_mu);
  void Do(const EndStepsCommand& c) EXCLUDES(launch_mu);
  void Do(const StepSignalCommand& c);
  void Do(const StreamCommand& c);
  void Do(const NoopCommand&) {}
  // ---- pod streams (agent_streams.cc): the stream's thread connects back to the controller
  // and serves the request there.
  void ServeStream(const StreamCommand& c, const std::atomic<bool>& stopping);
  std::set<StepDirKey> StartingSteps() EXCLUDES(launch_mu);
  // Folders of launches that never got as far as a supervisor: see agent_actions.cc.
  void RemoveUnstarted();
  void StartLaunchers(int n);
  void StopLaunchers() EXCLUDES(launch_mu);
  void LaunchWorker() EXCLUDES(launch_mu);
  void Launch(LaunchCommand cmd);
  void AddControllerEnv(const std::string& job_token, LaunchSpec& spec) const;
  // What only this node knows about the job's GPUs: MIG instances' UUIDs, the MPS directories.
  void AddGpuFacts(LaunchSpec& spec) const;
  void LaunchStep(const StepDirKey& k, LaunchSpec spec);
  void EndSteps(uint32_t job_id, int32_t attempt);
};

}  // namespace berth::agent

#endif  // BERTH_AGENT_AGENT_INTERNAL_H_
