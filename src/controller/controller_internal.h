// The controller's insides, shared by its .cc files (not part of its interface).
#ifndef BERTH_CONTROLLER_CONTROLLER_INTERNAL_H_
#define BERTH_CONTROLLER_CONTROLLER_INTERNAL_H_

#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "agent/agent_commands.h"
#include "agent/launch.h"
#include "common/thread_annotations.h"
#include "config/accounting_change.h"
#include "controller/agent_link.h"
#include "controller/archiver.h"
#include "controller/auth.h"
#include "controller/controller.h"
#include "controller/controller_metrics.h"
#include "controller/exec_pool.h"
#include "controller/history.h"
#include "controller/hubs.h"
#include "controller/job_record.h"
#include "controller/json_text.h"
#include "controller/k8s_port.h"
#include "controller/power.h"
#include "controller/requests.h"
#include "controller/routes.h"
#include "controller/state_loop.h"
#include "controller/step_io.h"
#include "controller/step_table.h"
#include "controller/stream_rendezvous.h"
#include "controller/txn.h"
#include "controller/usage_table.h"
#include "controller/web_sessions.h"
#include "core/sched/scheduler.h"
#include "core/state/cluster_state.h"
#include "k8s/face.h"
#include "k8s/pods.h"
#include "net/http.h"
#include "slurm/scancel.h"
#include "store/store.h"

namespace berth::controller {

// Why a web console session may not ask for a token, a kubeconfig or a sign-in code: they
// would outlive it (docs/security.md).
inline constexpr std::string_view kWebSessionMintsNothing =
    "a web session may not issue credentials: run berth token or berth web as the user";

// 401 UNAUTHENTICATED with WWW-Authenticate: Bearer, for a request that names nobody.
net::HttpResponse Unauthorized(const std::string& message);

// controller_http.cc: a JSON answer; an error as its HTTP status and berth's error body
// (api/errors.h).
net::HttpResponse JsonResponse(int status, const nlohmann::json& body);
net::HttpResponse Error(const Status& st);

// A whole string as a number of type T (no sign for unsigned types, no blanks).
template <typename T>
bool ParseNumber(const std::string& s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// controller_queries.cc: a command's line as a view request (POST /v1/views/...) names it:
// {"args": [...], "env": {NAME: VALUE}}, the program's name first.
struct CommandLine {
  std::vector<std::string> args;
  std::map<std::string, std::string, std::less<>> env;
};
Result<CommandLine> CommandLineOf(const nlohmann::json& body, const std::string& program);
// A filtered scancel's options from {"args", "env", "uid"} (CommandLineOf's, and -u's or --me's
// user as the caller resolved it); InvalidArgument for a line that selects nothing here (ids
// only, --help).
Result<slurm::ScancelOptions> ScancelOptionsOf(const nlohmann::json& body);
// "errors": [...], "exit_code": N of a scancel selection, as keys of the object being written.
void WriteScancelSelection(const slurm::ScancelSelection& sel, JsonText& w);

// The time zone this process shows local times in: its TZ, or "" for the system's. A view
// request from a caller in another zone is refused (FAILED_PRECONDITION): it makes its own.
const std::string& OwnTimeZone();

// A /v1 request as its handler sees it: the request, who asks, the route table's match (path
// segments and parameters) and the parsed body ({} when empty).
struct ApiCall {
  const net::HttpRequest& req;
  const Caller& who;
  const RouteMatch& match;
  const nlohmann::json& body;
};

// A read-only picture of the cluster for API threads, replaced as a whole by the state thread.
struct NodeView {
  std::string name;
  core::NodeSpec spec;
  std::string state;       // sinfo's long name
  std::string resv_state;  // "MAINT" or "RESERVED" while an active reservation holds it
  std::string reason;
  Time reason_time = kNoTime;  // when the reason was set (sinfo -R's TIMESTAMP)
  std::string reason_user;     // who set it: the operator, or the controller's own user
  int32_t alloc_cpus = 0;
  int64_t alloc_mem_mib = 0;
  int alloc_gpus = 0;
  std::vector<std::string> partitions;
  std::vector<uint32_t> jobs;
  Time last_seen = kNoTime;
  bool agent_connected = false;
  uint64_t event_seq = 0;  // the watch hub's sequence of its last event (see JobRecord)
};

// A node as GET /v1/nodes/NAME and the watch stream's node events show it.
nlohmann::json NodeJson(const NodeView& n);

struct PendingView {
  core::PendingReason reason = core::PendingReason::kNone;
  std::string detail;
  Time expected_start = kNoTime;
  int64_t priority = 0;
};
using PendingMap = std::unordered_map<core::JobId, PendingView>;

struct Controller::Impl {
  ControllerOptions opt;
  std::unique_ptr<store::Store> store;
  // The accounting archive (--accounting-store: finished jobs in PostgreSQL) and the thread that
  // moves them there; null without one.
  std::unique_ptr<store::Archive> archive;
  std::unique_ptr<Archiver> archiver;
  // A finished job's record from the store, else from the archive.
  Result<std::optional<store::JobRow>> FinishedRow(core::JobId id) const;
  // The first failed commit's error (Controller::StoreFailure); set by the state thread.
  mutable Mutex store_failure_mu;
  Status store_failure GUARDED_BY(store_failure_mu);
  Status StoreFailure() const {
    MutexLock<Mutex> l(store_failure_mu);
    return store_failure;
  }
  std::optional<core::ClusterState> cs GUARDED_BY(state_thread);
  std::unique_ptr<core::Scheduler> scheduler;
  uint32_t own_uid = 0;
  std::string own_user;  // the controller's own user (Slurm's SlurmUser), named in node reasons

  // The state thread's role: it holds it while it runs a batch or a pass (RunBatch and NextWake
  // assert it; so do Create and Start, which run before it starts and after it stopped), and
  // functions that must run there REQUIRE it.
  ThreadRole state_thread;

  // What API threads read. The state thread is the only writer: it changes these under a
  // unique lock held only for the swap (PublishStagedRecords, ...), and reads them without one
  // (OwnRecord: it cannot race with itself).
  mutable SharedMutex view_mu;
  using RecordMap = std::map<core::JobId, std::shared_ptr<const JobRecord>>;
  RecordMap records GUARDED_BY(view_mu);  // active + recently ended
  std::shared_ptr<const PendingMap> pending_view GUARDED_BY(view_mu);
  std::shared_ptr<const std::vector<NodeView>> node_view GUARDED_BY(view_mu);
  std::shared_ptr<const nlohmann::json> partition_view GUARDED_BY(view_mu);
  Time last_pass GUARDED_BY(view_mu) = kNoTime;
  // Each node's image cache as its agent last reported it (GET /v1/images, `berth images list
  // --nodes`): node -> the agent's "images" array. Not durable: agents send it when they register.
  std::map<std::string, nlohmann::json> node_images GUARDED_BY(view_mu);
  void PutNodeImages(const std::string& node, const nlohmann::json& images) EXCLUDES(view_mu) {
    MutexLock<SharedMutex> l(view_mu);
    node_images[node] = images;
  }
  // The state thread's records: the published ones with the changes of the batch under way
  // staged over them. A change is staged (PutRecord) and published only once the store holds
  // it (PublishStagedRecords, after the commit; a failed commit drops it), so that no read shows
  // a state the store may lose (docs/architecture.md, "The controller"). The state thread reads the
  // published map without a lock: it is its only writer.
  const JobRecord* OwnRecord(core::JobId id) const REQUIRES(state_thread) {
    const std::shared_ptr<const JobRecord>* r = FindOwnRecord(id);
    return r == nullptr ? nullptr : r->get();
  }
  std::shared_ptr<const JobRecord> OwnRecordPtr(core::JobId id) const REQUIRES(state_thread) {
    const std::shared_ptr<const JobRecord>* r = FindOwnRecord(id);
    return r == nullptr ? nullptr : *r;
  }
  // Where job `id`'s record is held (the staged change, else the published one); null: none.
  const std::shared_ptr<const JobRecord>* FindOwnRecord(core::JobId id) const
      REQUIRES(state_thread) NO_THREAD_SAFETY_ANALYSIS {
    if (auto s = staged_records.find(id); s != staged_records.end()) return &s->second;
    auto it = records.find(id);
    return it == records.end() ? nullptr : &it->second;
  }
  // Calls f(id, record) for each of the state thread's records once, in no set order.
  template <typename F>
  void ForEachOwnRecord(F&& f) const REQUIRES(state_thread) NO_THREAD_SAFETY_ANALYSIS {
    for (const auto& [id, r] : records) {
      if (!staged_records.contains(id)) f(id, *r);
    }
    for (const auto& [id, r] : staged_records) {
      if (r) f(id, *r);
    }
  }
  // Stages `r` as job `id`'s record (null: drops it), published by the next successful commit.
  // Records are made mutable (std::make_shared<JobRecord>): NewRecord may update a staged one in
  // place while the staged map is its only holder.
  void PutRecord(core::JobId id, std::shared_ptr<const JobRecord> r) REQUIRES(state_thread) {
    staged_records[id] = std::move(r);
  }
  // Publishes a record the store holds already (recovery): nothing staged for it.
  void PutCommittedRecord(core::JobId id, std::shared_ptr<const JobRecord> r) REQUIRES(state_thread)
      EXCLUDES(view_mu) {
    MutexLock<SharedMutex> l(view_mu);
    records[id] = std::move(r);
  }
  // Publishes the staged records (the store holds what they show) and the last pass's word on
  // the pending jobs, all under one lock.
  void PublishStagedRecords() REQUIRES(state_thread) EXCLUDES(view_mu) {
    if (staged_records.empty() && staged_pending_view == nullptr) return;
    {
      MutexLock<SharedMutex> l(view_mu);
      if (staged_pending_view != nullptr) {
        pending_view = std::move(staged_pending_view);
        last_pass = staged_last_pass;
      }
      for (auto& [id, r] : staged_records) {
        if (r) {
          records[id] = std::move(r);
        } else {
          records.erase(id);
        }
      }
    }
    DropStagedRecords();
  }
  // Drops what the staged records and pass say (a commit failed: reads show what the store
  // holds).
  void DropStagedRecords() REQUIRES(state_thread) {
    staged_records.clear();
    staged_pending_view = nullptr;
  }
  // Changes not yet published, by job (nullptr: the record is dropped).
  std::unordered_map<core::JobId, std::shared_ptr<const JobRecord>> staged_records
      GUARDED_BY(state_thread);
  std::shared_ptr<const PendingMap> staged_pending_view GUARDED_BY(state_thread);
  Time staged_last_pass GUARDED_BY(state_thread) = kNoTime;

  // State thread only.
  // The Slurm facts RefreshRecord made last, shared by the records after it with the same.
  mutable CopyOnWrite<SlurmFacts> last_facts GUARDED_BY(state_thread);
  ExecPool exec_pool GUARDED_BY(state_thread);  // jobs with equal run specifications share one
  std::map<core::JobId, Time> finished_at GUARDED_BY(state_thread);  // records go after min_job_age
  // When the first of finished_at is due to be forgotten: a pass runs then (kInfinite: none).
  Time next_forget GUARDED_BY(state_thread) = kInfinite;
  void NoteFinished(core::JobId id, Time end) REQUIRES(state_thread) {
    finished_at[id] = end;
    next_forget = std::min(next_forget, end + opt.min_job_age_s + 1);
  }
  Time next_outcome_purge GUARDED_BY(state_thread) = 0;  // restored outcomes go at the first pass
  std::map<core::JobId, core::PreemptMode> preempting GUARDED_BY(state_thread);  // victims stopping
  // Victims in their preemption grace time (GraceTime): when each is ended.
  std::map<core::JobId, Time> grace_ends GUARDED_BY(state_thread);
  // The grace time a job picked for preemption gets: its QoS's GraceTime, else its partition's.
  Duration PreemptGrace(const core::Job& job) const REQUIRES(state_thread);
  // Ends the victims whose grace time is over (every batch).
  void GraceTick() REQUIRES(state_thread);
  // What operators set on nodes (drain, down), kept in the store's "node_admin" meta key so that
  // a restart, or an agent registering again, does not undo it: name -> {drain, down, reason}.
  nlohmann::json node_admin GUARDED_BY(state_thread) = nlohmann::json::object();
  // The reservations active at the last tick (node states follow them).
  std::vector<std::string> active_reservations GUARDED_BY(state_thread);

  // The command queue and the state thread (state_loop.h); Post and Call forward to it.
  StateLoop loop;
  Time next_pass GUARDED_BY(state_thread) = 0;      // wall-clock time of the next periodic pass
  Time wake_at GUARDED_BY(state_thread) = kNoTime;  // from the last plan
  bool dirty GUARDED_BY(state_thread) = true;
  // Passes triggered by events are spaced so that they take at most a third of the state
  // thread's time: the next may start 2 x (the last one's duration) after it ended.
  std::chrono::steady_clock::time_point pass_allowed_at GUARDED_BY(state_thread);

  AgentHub agent_hub;
  AgentLink agents GUARDED_BY(state_thread){&agent_hub};  // sessions and commands
  WatchHub watch_hub;
  std::unique_ptr<net::HttpServer> server;
  std::unique_ptr<net::HttpServer> tcp_server;
  std::atomic<int64_t> passes{0};
  std::atomic<bool> ready{false};
  MetricsCounters metrics;  // GET /metrics (controller_metrics.h)

  // Power saving and autoscaling (power.h), made by Create.
  std::unique_ptr<PowerSaver> power;

  // controller.cc: the state the store holds, at start-up. Recover runs the parts: the nodes
  // agents added at run time (before the jobs, which may run on them; every node down until
  // its agent registers), the jobs (active ones restored, recently ended ones kept for the
  // views), and what operators set on nodes.
  Status Recover() REQUIRES(state_thread);
  Status RecoverNodes(Time now) REQUIRES(state_thread);
  Status RecoverJobs(Time now) REQUIRES(state_thread);
  void RecoverNodeAdmin(Time now) REQUIRES(state_thread);
  // The state loop's entry points (any thread) and small look-ups.
  // Queues a command for the state thread; false when stopping.
  bool Post(Command c) { return loop.Post(std::move(c)); }
  // Runs `c` on the state thread all-or-nothing (a failing command leaves the batch's
  // transaction as it found it) and waits for its reply, which comes once the batch it ran in is
  // durable.
  Reply Call(std::function<void(Txn&, Reply* out)> c) { return loop.Call(std::move(c)); }
  std::shared_ptr<const JobRecord> FindRecord(core::JobId id) const;
  std::string NodeName(uint32_t index) const REQUIRES(state_thread);
  Time Now() const;

  // controller.cc: power saving's wiring. StartPower: before the state thread starts (the jobs
  // restored waiting for their nodes); StopPower: after it stopped. PowerTick (state thread):
  // the component's round after each batch, its effects applied to the records, the agents'
  // sessions and the transaction.
  Status StartPower() REQUIRES(state_thread);
  void StopPower() {
    if (power) power->Stop();
  }
  void PowerTick(Txn& t) REQUIRES(state_thread);

  // controller_state.cc (state thread only)
  // The state loop's hooks: when to run an empty batch, and running one.
  std::chrono::steady_clock::time_point NextWake() REQUIRES(state_thread);
  void RunBatch(std::deque<Command> batch) REQUIRES(state_thread);
  void SchedulePass(Txn& t) REQUIRES(state_thread);
  void CheckNodes(Txn& t) REQUIRES(state_thread);
  // A node is lost (silent past the node timeout, or set down by an operator): its jobs end
  // NODE_FAIL, requeued where their spec allows (as Slurm does), and every node of each job is
  // told to stop its part (FailNodeJob).
  void FailNodeJobs(uint32_t node, Txn& t) REQUIRES(state_thread);
  // Ends one job NODE_FAIL (requeued when its spec allows): its first node is told to cancel the
  // attempt, its other nodes to end the attempt's step parts.
  void FailNodeJob(core::JobId id, Txn& t) REQUIRES(state_thread);
  void Publish(Txn& t) REQUIRES(state_thread);
  void Commit(Txn& t) REQUIRES(state_thread);
  // Publishes a new node and partition view; with `events`, appends a watch event for every
  // node whose state, reason, allocation or agent link changed.
  void RebuildNodeView(std::vector<WatchEvent>* events = nullptr) REQUIRES(state_thread);
  void TouchRecord(core::JobId id, Txn& t) REQUIRES(state_thread);
  // Adds the record's store row (its text, its run specification apart) and its watch event to
  // the transaction.
  void WriteRecord(const std::shared_ptr<JobRecord>& r, bool active, Time end_time, Txn& t)
      REQUIRES(state_thread);
  // Writes the texts WriteRecord left to the commit.
  void WriteRecordTexts(Txn& t) REQUIRES(state_thread);
  // `cancelled_by`: the uid whose cancel ends it (else the record's own is kept).
  void FinishRecord(const core::Job& final_job, Txn& t, int64_t cancelled_by = -1)
      REQUIRES(state_thread);
  JobRecord BuildRecord(const core::Job& job, const JobRecord* previous) const
      REQUIRES(state_thread);
  // Brings record `r` to `job` as BuildRecord does.
  void RefreshRecord(const core::Job& job, JobRecord& r) const REQUIRES(state_thread);
  // The job's record brought to `job` (BuildRecord over its current one), to be written and
  // staged.
  std::shared_ptr<JobRecord> NewRecord(const core::Job& job) REQUIRES(state_thread);
  // controller_steps.cc: job steps on the other nodes of a job (srun across hosts). Changed by
  // the state thread only; API threads read it (srun polls a step's state).
  StepTable steps;
  UsageTable usage;  // what agents measured of their nodes and jobs (kubectl top)
  net::HttpResponse StepRoute(const net::HttpRequest& req, const Caller& who,
                              const std::vector<std::string>& parts, const nlohmann::json& body);
  Result<nlohmann::json> StartStep(const Caller& who, core::JobId id, const nlohmann::json& body)
      REQUIRES(state_thread);
  Result<nlohmann::json> StepStatus(const Caller& who, core::JobId id, uint32_t step);
  Status SignalStep(const Caller& who, core::JobId id, uint32_t step, int signal)
      REQUIRES(state_thread);
  // GET .../steps/{STEP|batch}/io: srun's input, output and terminal between the srun that
  // launches a step and the one that runs its tasks on a node, met in `step_io` (step_io.h).
  net::HttpResponse StepIoRoute(const net::HttpRequest& req, const Caller& who, core::JobId id,
                                const std::string& step);
  StepIoRendezvous step_io;
  // srun's record of a step (POST .../steps/N/record): kept in the job's record for sacct.
  Status RecordStep(const Caller& who, core::JobId id, const api::StepRecord& step, Txn& t)
      REQUIRES(state_thread);
  // A node's report of a step it ran (a status event, or its registration): kept while the job
  // attempt runs; for any other, the node is told to end and forget that job's steps.
  void NoteStep(const std::string& node, const nlohmann::json& report) REQUIRES(state_thread);
  // Steps of jobs that no longer run: their nodes are told to end them (in Commit).
  void EndStaleSteps() REQUIRES(state_thread);

  // controller_agents.cc (state thread only): the agents' registrations and reports, and what
  // the controller tells them.
  Result<nlohmann::json> RegisterAgent(const Caller& who, const nlohmann::json& body, Txn& t)
      REQUIRES(state_thread);
  // RegisterAgent's parts: a node the configuration lacks (allow_dynamic_nodes), stored; what
  // the node runs against what the controller believes runs there; the node's step parts (known
  // again, or sent again).
  Result<uint32_t> AddAgentNode(const std::string& name, const nlohmann::json& node, Txn& t)
      REQUIRES(state_thread);
  // `dropped`: what the registration dropped from the node's queue unacknowledged.
  void ReconcileAgentJobs(const std::string& name, uint32_t index, const nlohmann::json& jobs,
                          const std::vector<agent::AgentCommand>& dropped, Txn& t)
      REQUIRES(state_thread);
  void ReconcileAgentSteps(const std::string& name, const nlohmann::json& steps)
      REQUIRES(state_thread);
  // A job the registering agent runs (or is sent again) whose cancel was asked: asked again.
  void ResendCancel(const std::string& node, core::JobId id, int32_t attempt)
      REQUIRES(state_thread);
  // A job the registering agent reports running: its current time limit (the agent sets it
  // from the job's start, so sending it again changes nothing when it did not change), and the
  // signals for this attempt that the registration dropped unacknowledged, sent again.
  void ResendToRunningJob(const std::string& node, const core::Job& job,
                          const std::vector<agent::AgentCommand>& dropped) REQUIRES(state_thread);
  // How long an agent may go without reaching the controller before it stops its jobs (fencing):
  // half the node timeout, so that they are dead well before the controller calls the node down
  // and requeues them elsewhere (docs/security.md).
  int FenceSeconds() const { return AgentLink::FenceSeconds(opt.node_timeout_s); }
  void NoteContainer(const nlohmann::json& e, Txn& t) REQUIRES(state_thread);
  Status AgentStatus(const Caller& who, const std::string& node, const nlohmann::json& body, Txn& t)
      REQUIRES(state_thread);
  // A job's launch on node `node_index` of its allocation (the batch step on the first node, a
  // job step's part on the others), with the job's step token when this controller signs tokens.
  agent::LaunchSpec LaunchSpecFor(const JobRecord& r, size_t node_index) const
      REQUIRES(state_thread);
  void SendLaunch(const JobRecord& r) REQUIRES(state_thread);
  // Queues `command` for the node's agent (delivered when it next polls).
  void SendCommand(const std::string& node, const agent::AgentCommand& command)
      REQUIRES(state_thread);
  void SendCancel(const JobRecord& r, int signal, agent::SignalScope scope, bool cancel)
      REQUIRES(state_thread);
  void EndOnNode(core::JobId id, const agent::JobResult& result, Txn& t) REQUIRES(state_thread);

  // controller_jobs.cc (state thread only): the commands, fed typed requests (requests.h)
  // decoded on the API thread.
  Result<std::vector<core::JobId>> SubmitJobs(SubmitRequest request, Txn& t) REQUIRES(state_thread);
  // The same from a job's JSON (the Kubernetes face's Pods): DecodeSubmit, then SubmitJobs.
  Result<std::vector<core::JobId>> SubmitJobs(const Caller& who, const nlohmann::json& body, Txn& t)
      REQUIRES(state_thread);
  Status CancelJob(const Caller& who, core::JobId id, int signal, agent::SignalScope scope, Txn& t)
      REQUIRES(state_thread);
  // scancel JOB.STEP: `signal` (0: SIGKILL, and the step is CANCELLED by the caller) to that
  // step's tasks on every node it has; the job goes on.
  Status CancelStep(const Caller& who, core::JobId id, uint32_t step, int signal, Txn& t)
      REQUIRES(state_thread);
  Status HoldJob(const Caller& who, core::JobId id, bool hold, bool admin_hold, Txn& t)
      REQUIRES(state_thread);
  Status RequeueJob(const Caller& who, core::JobId id, Txn& t) REQUIRES(state_thread);
  // Each field is checked against the job before any is applied.
  Status UpdateJob(const Caller& who, core::JobId id, const JobUpdate& update, Txn& t)
      REQUIRES(state_thread);
  // "12" or an array task "12_4" (split off its array while pending) -> the job's id.
  Result<core::JobId> ResolveJobId(const Caller& who, const std::string& text, Txn& t)
      REQUIRES(state_thread);
  // POST /v1/jobs/cancel: many cancels (or signals) in one command; a result per id in
  // "results": [{"id": ID} or {"code": N, "error": E, "id": ID}, ...], written as a key of the
  // object `w` is in (only the failures when failures_only).
  void CancelMany(const Caller& who, const CancelManyRequest& request, bool failures_only,
                  JsonText& w, Txn& t) REQUIRES(state_thread);
  // POST /v1/jobs?test_only=1: where and when the job would start; nothing is kept.
  Result<nlohmann::json> TestSubmit(JobSubmission job) REQUIRES(state_thread);
  // The same from a job's JSON (the Kubernetes face's dry runs).
  Result<nlohmann::json> TestSubmit(const Caller& who, const nlohmann::json& body)
      REQUIRES(state_thread);
  Status NodeAction(const Caller& who, const std::string& name, const std::string& action,
                    const std::string& reason, Txn& t) REQUIRES(state_thread);

  // controller_accounting.cc: accounts, users' associations and QoS as sacctmgr keeps them
  // (accounting_store.h): the tables in force, and how the configuration file differed from the
  // store at start (reported, not applied: the store wins).
  config::AccountingTables accounting GUARDED_BY(state_thread);
  // What the store holds: `accounting`, unless the store's tables could not be applied at start.
  config::AccountingTables accounting_in_store GUARDED_BY(state_thread);
  std::vector<std::string> accounting_differences GUARDED_BY(state_thread);
  // At start, before the jobs come back: seeds the store from the file (first start), else
  // loads it into the cluster state and logs each difference from the file.
  Status RecoverAccounting() REQUIRES(state_thread);
  // GET /v1/associations and POST /v1/associations (docs/api.md).
  nlohmann::json AssociationsView() const REQUIRES(state_thread);
  Result<nlohmann::json> ChangeAccounting(const config::AccountingChange& change, bool dry_run,
                                          Txn& t) REQUIRES(state_thread);
  net::HttpResponse AssociationsChangeRoute(const ApiCall& c);

  // Who is asking, and what each credential may do (auth.h).
  Auth auth;

  // controller_http.cc
  // Route() with a net under it: a value of the wrong JSON type is the caller's error (400),
  // anything else a JSON 500; neither ends the connection or the server.
  // Serve: the Unix socket (SO_PEERCRED) and plain TCP (nobody); ServeAs: a caller known some
  // other way (the TLS listener's bearer tokens).
  net::HttpResponse Serve(const net::HttpRequest& req);
  net::HttpResponse ServeAs(const net::HttpRequest& req, const Caller& who);
  // The route table's word on the request (routes.h), then the route's handler.
  net::HttpResponse Route(const net::HttpRequest& req, const Caller& who);
  using ApiHandler = net::HttpResponse (*)(Impl& im, const ApiCall& c);
  struct ApiBinding {
    Endpoint endpoint;
    ApiHandler handler;
  };
  static const ApiBinding kApiHandlers[];  // one per Endpoint
  // One of the above, as a JobActionRequest asks.
  Status ApplyJobAction(const Caller& who, core::JobId id, const JobActionRequest& r, Txn& t)
      REQUIRES(state_thread);
  // Runs `c` on the state thread (Call): its error, or its body with `ok_status`.
  net::HttpResponse CallResponse(std::function<void(Txn&, Reply*)> c, int ok_status);
  // The /v1 handlers that decode a request and run a command.
  net::HttpResponse SubmitRoute(const ApiCall& c);
  net::HttpResponse CancelManyRoute(const ApiCall& c);
  // POST /v1/jobs/cancel with {"scancel": {...}}: what a filtered scancel selects, cancelled.
  net::HttpResponse CancelSelectedRoute(const ApiCall& c);
  net::HttpResponse JobActionRoute(const ApiCall& c);
  // controller_resv.cc: /v1/reservations (list, create, update, delete), the store records
  // ("resv/NAME"), the per-batch tick and recovery.
  net::HttpResponse ReservationsRoute(const ApiCall& c);
  Result<nlohmann::json> ChangeReservation(const Caller& who, const std::string& method,
                                           const std::string& name, const nlohmann::json& body,
                                           Txn& t) REQUIRES(state_thread);
  nlohmann::json ReservationJson(const core::ResvInfo& r, Time now) const REQUIRES(state_thread);
  nlohmann::json ReservationsView(const std::string& only) const REQUIRES(state_thread);
  // Writes reservation `name` (or its removal, when it is gone) and asks for a pass.
  void WriteReservation(const std::string& name, Txn& t) REQUIRES(state_thread);
  // Moves repeating reservations on, forgets ended ones, and notices which are active now.
  void ReservationTick(Txn& t) REQUIRES(state_thread);
  void RecoverReservations() REQUIRES(state_thread);
  std::string NodeResvState(uint32_t node, Time now) const REQUIRES(state_thread);
  net::HttpResponse NodeActionRoute(const ApiCall& c);
  // GET /v1/agents/NODE/commands: the node's commands after ?after=SEQ, waiting up to ?wait_ms.
  net::HttpResponse AgentCommands(const ApiCall& c);
  // controller_streams.cc: GET /v1/agents/{node}/streams/{id}, the agent's side of a pod stream
  // (ADR 0006), upgraded to a WebSocket and handed to the face waiting in `streams`.
  net::HttpResponse AgentStreamRoute(const ApiCall& c);

  // controller_auth.cc: POST /v1/agents/join and POST /v1/tokens (docs/security.md); the route
  // table has checked who may ask.
  Result<nlohmann::json> JoinNode(const JoinRequest& request, const std::string& remote);
  Result<nlohmann::json> IssueToken(const Caller& who, const TokenRequest& request);

  // controller_queries.cc: read-only endpoints.
  // ?exec=1: with how each job runs (script and environment only for their owners).
  net::HttpResponse ListJobs(const net::HttpRequest& req, const Caller& who);
  net::HttpResponse SqueueView(const nlohmann::json& body);
  net::HttpResponse ScancelView(const nlohmann::json& body);
  // The jobs a filtered scancel selects among the active records (ScancelView's and the
  // selected cancel's).
  slurm::ScancelSelection ScancelTargets(const slurm::ScancelOptions& o) const;
  // The active records and the last pass's pending view, taken under the view lock.
  std::vector<std::shared_ptr<const JobRecord>> ActiveRecords(
      bool ended_too, std::shared_ptr<const PendingMap>* pending) const;
  // A job's record; how to run it (script, environment) only for its owner and operators.
  net::HttpResponse GetJob(const Caller& who, core::JobId id);
  net::HttpResponse GetArrayTask(const Caller& who, const std::string& text);  // "12_4"
  net::HttpResponse ListNodes(const std::string& only);
  net::HttpResponse Watch(const net::HttpRequest& req);
  // controller_sacct.cc: GET /v1/accounting/jobs (every record of the window) and POST
  // /v1/views/sacct (sacct's report, selected and made here).
  net::HttpResponse Accounting(const net::HttpRequest& req);
  net::HttpResponse SacctView(const nlohmann::json& body);
  // The finished jobs that ended in [from, to) (the store's, then the archive's that the store
  // no longer has) and the active ones, each once; rows of ids below `lowest_id` are skipped
  // before they are decoded.
  Status ForEachAccountingRecord(Time from, Time to, core::JobId lowest_id,
                                 const std::function<void(const JobRecord&)>& fn);
  // controller_reports.cc: `berth report usage` and `advice` (and seff's suggestions for one
  // job) computed here from the accounting records, for the web console (docs/api.md).
  net::HttpResponse UsageReportRoute(const ApiCall& c);
  net::HttpResponse AdviceReportRoute(const ApiCall& c);
  net::HttpResponse ConfigView() const;
  // GET /v1/priorities: sprio's view.
  nlohmann::json PriorityView() const REQUIRES(state_thread);
  // GET /v1/fairshare: sshare's tree, with the scheduler's fair-share settings as of now.
  nlohmann::json FairshareView() const REQUIRES(state_thread);
  // GET /v1/usage/jobs: the agents' latest measurements of running jobs (any thread).
  nlohmann::json JobUsageView() const;

  // The Kubernetes face (src/k8s, docs/kubernetes.md) on its own TLS server, and its port over
  // this Impl (k8s_port.h: the face reaches the controller only through it). Set by StartK8s
  // before the state thread starts; the face is destroyed before its port.
  StreamRendezvous streams;  // pod streams meeting their agents (thread-safe)
  std::unique_ptr<K8sPort> k8s_port;
  std::unique_ptr<k8s::Face> k8s;
  // k8s_port.cc: makes the face and starts it (the PKI and token secret on the first start; the
  // namespaces and Jobs from the store; the TLS server). REQUIRES: the state thread has not
  // started (the face reads the store).
  Status StartK8s();
  void StopK8s();
  // GET /v1/kubeconfig (Unix socket): a kubeconfig for the calling user.
  net::HttpResponse Kubeconfig(const Caller& who) const;

  // controller_web.cc: the web console's sign-in on the HTTPS port (web_sessions.h).
  // ServeHttps: a request on the HTTPS port for berth's API (/v1, /metrics, /ui/login,
  // /ui/logout), named by its bearer token or MUNGE credential, else by a session cookie.
  WebSessions web_sessions;
  net::HttpResponse ServeHttps(const net::HttpRequest& req);
  net::HttpResponse WebLogin(const net::HttpRequest& req);
  net::HttpResponse WebLogout(const net::HttpRequest& req);
  net::HttpResponse WebCodeRoute(const ApiCall& c);  // POST /v1/web/codes
  std::vector<std::string> OwnOrigins() const;       // the origins a cookie's changes may come from
  // The user a web session's cookie names on a read (GET or HEAD) without an Authorization
  // header: the console's reads on the Kubernetes face (a job's output is its Pod's log, its
  // manifest the Pod). nullopt without a live session; changes there take a bearer token.
  std::optional<Caller> WebSessionReader(const net::HttpRequest& req);

  // controller_history.cc: the cluster's series (history.h, GET /v1/history), sampled after
  // a batch every opt.history_sample_s and flushed to the store every few samples and at Stop.
  History history GUARDED_BY(state_thread);
  // A copy for GET /v1/history, published after each sample (reads never wait for the state
  // thread).
  std::shared_ptr<const History> history_view GUARDED_BY(view_mu);
  void PublishHistory() REQUIRES(state_thread) EXCLUDES(view_mu);
  Time next_history_sample GUARDED_BY(state_thread) = 0;
  int history_unflushed GUARDED_BY(state_thread) = 0;
  HistorySample HistorySampleNow() const REQUIRES(state_thread);
  void HistoryTick(Txn& t) REQUIRES(state_thread);
  void FlushHistory() REQUIRES(state_thread);
  void RecoverHistory() REQUIRES(state_thread);
  net::HttpResponse HistoryRoute(const ApiCall& c);
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_CONTROLLER_INTERNAL_H_
