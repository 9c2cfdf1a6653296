// ClusterState: the one live model of a cluster (nodes, partitions, accounts, QoS, jobs) that
// the scheduler reads and that the controller and the simulator change, through the same
// methods. It is pure data: no I/O, no clock (every method that needs the time takes `now`).
//
// The scheduler (core/sched/schedule.h) reads a const ClusterState and returns a Plan; Apply()
// carries the Plan out. The indices kept here (free-GPU buckets, release times, running
// counters) exist so that a scheduling pass costs little more than the work it does.
//
// Thread safety: none. The controller serialises access; the simulator is single-threaded.
#ifndef BERTH_CORE_STATE_CLUSTER_STATE_H_
#define BERTH_CORE_STATE_CLUSTER_STATE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/bitset.h"
#include "common/id_set.h"
#include "common/small_vector.h"
#include "common/status.h"
#include "common/time.h"
#include "core/config.h"
#include "core/model/cluster_spec.h"
#include "core/model/job.h"
#include "core/model/reservation.h"
#include "core/plan.h"
#include "core/state/shape.h"
#include "core/state/usage.h"

namespace berth::core {

// Running totals held by a user, account or association, for limits.
struct RunCounters {
  int64_t cpus = 0;
  int64_t mem_mib = 0;
  int64_t gpus = 0;
  int64_t nodes = 0;
  int64_t jobs = 0;
  void Add(const RunCounters& o, int sign);
};

struct NodeInfo {
  NodeSpec spec;
  uint32_t index = 0;
  int num_gpus = 0;
  std::vector<std::pair<int16_t, uint64_t>> gpu_types;  // type id -> mask of its devices
  std::vector<int32_t> gres_ids;                        // parallel to spec.gres
  std::vector<int32_t> feature_ids;                     // sorted
  std::vector<int32_t> topo_groups;                     // group id per level, outermost first
  std::vector<int16_t> partitions;
  // Dynamic state.
  NodeHealth health = NodeHealth::kUp;
  bool drain = false;
  std::string reason;
  Time state_since = 0;
  int32_t free_cpus = 0;
  int64_t free_mem_mib = 0;
  uint64_t free_gpus = 0;          // mask of free devices (neither held whole nor shared)
  std::vector<int64_t> free_gres;  // parallel to spec.gres
  std::vector<JobId> jobs;         // jobs holding resources here, ascending
  int64_t sole_user = -1;          // user id when all jobs here are one user's; -1 none; -2 many
  bool user_exclusive = false;     // a --exclusive=user job runs here
  Time idle_since = 0;             // when the last job left
  // Per device, the thousandths that shares hold (see NodeFree::gpu_milli); empty when none.
  std::vector<int32_t> gpu_share_milli;

  bool usable() const { return health == NodeHealth::kUp && !drain; }
  NodeState state() const;
  int free_gpu_count() const { return __builtin_popcountll(free_gpus); }
  // Default memory per CPU on this node: the node's memory divided among its CPUs.
  int64_t mem_per_cpu_share() const { return spec.cpus > 0 ? spec.mem_mib / spec.cpus : 0; }
};

struct PartitionInfo {
  PartitionSpec spec;
  int16_t index = 0;
  Bitset nodes;
  int64_t total_cpus = 0;
  int64_t total_gpus = 0;
  int32_t total_nodes = 0;
  std::vector<int16_t> allow_accounts;  // account ids; empty = all
  std::vector<int16_t> allow_qos;       // qos ids; empty = all
};

struct QosInfo {
  QosSpec spec;
  int16_t index = 0;
  std::vector<int16_t> preempt;  // qos ids this one may preempt
  bool removed = false;          // deleted (sacctmgr): its id stays unused, FindQos skips it
};

struct AccountInfo {
  AccountSpec spec;
  int32_t index = 0;
  int32_t parent = -1;            // -1 for root
  std::vector<int32_t> children;  // account ids
  std::vector<int32_t> assocs;    // association ids of users directly in this account
  DecayedUsage usage;             // this account's subtree
  RunCounters running;            // this account's subtree
  bool implicit = false;          // added on first use (associations not enforced)
  bool removed = false;           // deleted (sacctmgr): out of the tree, FindAccount skips it
};

struct AssocInfo {
  UserSpec spec;
  int32_t index = 0;
  int32_t account = 0;
  int32_t user = 0;
  DecayedUsage usage;
  RunCounters running;
  bool implicit = false;  // added on first use (associations not enforced)
  bool removed = false;   // deleted (sacctmgr): no longer in its account's list
};

// Nodes with the same configuration (CPUs, memory, GPUs, gres, features), as Slurm's config
// records: submit-time checks look at one node per class instead of every node.
struct NodeClass {
  uint32_t representative = 0;
  Bitset nodes;
};

struct TopoGroup {
  std::string name;
  int level = 0;
  Bitset nodes;
};

// What the state keeps per job besides the Job itself.
struct JobEntry {
  Job job;
  int32_t user = 0;
  int32_t assoc = 0;
  int32_t account = 0;
  int16_t qos = 0;
  // In the entry for the one or two partitions nearly every job names: no heap block per job.
  SmallVector<int16_t, 2> partitions;  // in the order the user gave them
  // Parallel to partitions: an id shared by every job whose request is placed identically
  // (same partition, constraint, exclusions and shape), for the scheduler's caches. The shape
  // itself is kept once per id by the state (ClusterState::shape): not in every job.
  SmallVector<int32_t, 2> shape_ids;
  std::vector<uint32_t> nodelist;  // required nodes
  std::vector<uint32_t> exclude;
  bool preempt_requested = false;  // a Plan asked for this running job to be preempted
  PreemptMode preempt_mode = PreemptMode::kOff;
  int32_t partition_index = -1;  // while it holds resources
};

struct ArrayInfo {
  int32_t running = 0;  // tasks holding resources
  int32_t total = 0;
  ArraySpec submitted;  // every task id the array was submitted with (SLURM_ARRAY_TASK_*)
  std::map<int32_t, JobId> tasks;  // started tasks: task index -> job id
};

// An advance reservation as the state keeps it: its spec and its nodes as a set.
struct ResvInfo {
  ResvSpec spec;
  Bitset nodes;
};

// What Apply did, so that the caller can launch and kill processes.
struct ApplyResult {
  std::vector<JobId> started;  // job ids now holding resources (new for tasks)
  // Parallel to plan.starts: the id that started for each (a new id for an array task), or
  // kNoJob when the start was refused or waits for its preemption victims.
  std::vector<JobId> start_ids;
  std::vector<PlannedPreemption> preempt;               // running jobs to stop now
  std::vector<JobId> cancelled;                         // pending jobs ended by the plan
  std::vector<std::pair<JobId, std::string>> rejected;  // starts refused, and why
};

class ClusterState {
 public:
  // Builds the state from a cluster description. Errors name the bad node/partition/account.
  static Result<ClusterState> Create(const ClusterSpec& spec);

  ClusterState(ClusterState&&) = default;
  ClusterState& operator=(ClusterState&&) = default;
  ClusterState(const ClusterState&) = default;  // snapshots for tests and what-if passes

  // Usage accrual settings (half-life, billing weights); the scheduler's FairshareConfig.
  void SetFairshareConfig(const FairshareConfig& cfg) { fairshare_ = cfg; }
  const FairshareConfig& fairshare_config() const { return fairshare_; }

  // ---- Nodes
  size_t num_nodes() const { return nodes_.size(); }
  const NodeInfo& node(uint32_t i) const { return nodes_[i]; }
  std::optional<uint32_t> FindNode(std::string_view name) const;
  // Adds a node (an agent registering that the configuration did not list), in the given
  // partitions (empty = every partition that lists no nodes... or the default one).
  Result<uint32_t> AddNode(const NodeSpec& spec, const std::vector<std::string>& partitions,
                           Time now);
  Status SetNodeHealth(uint32_t node, NodeHealth health, std::string reason, Time now);
  Status SetNodeDrain(uint32_t node, bool drain, std::string reason, Time now);

  // ---- Partitions, QoS, accounts
  const std::vector<PartitionInfo>& partitions() const { return partitions_; }
  std::optional<int16_t> FindPartition(std::string_view name) const;
  int16_t default_partition() const { return default_partition_; }
  Status SetPartitionState(int16_t partition, PartitionState state);
  const std::vector<QosInfo>& qos() const { return qos_; }
  std::optional<int16_t> FindQos(std::string_view name) const;
  const std::vector<AccountInfo>& accounts() const { return accounts_; }
  const std::vector<AssocInfo>& assocs() const { return assocs_; }
  const std::vector<std::string>& users() const { return user_names_; }
  std::optional<int32_t> FindAccount(std::string_view name) const;
  const ClusterSpec& spec() const { return spec_; }
  // Replaces the QoS, accounts and users' associations (sacctmgr's live changes) by these,
  // keeping the ids of those that stay (jobs refer to them); takes effect at the next pass.
  // Refused (kFailedPrecondition, nothing changed) when an entry that goes is used by a job
  // that is pending or holds resources, or named by a partition; kInvalidArgument when the
  // tables are inconsistent (unknown parent or account, a cycle, a name twice). Associations
  // and accounts the state added on first use (associations not enforced) stay.
  Status SetAccounting(const std::vector<QosSpec>& qos, const std::vector<AccountSpec>& accounts,
                       const std::vector<UserSpec>& users);

  // ---- Jobs
  // Validates and queues a job; returns its id. Rejections carry Slurm's messages
  // ("Requested node configuration is not available", "Invalid partition name specified", ...).
  // A held job (spec.hold) is not matched against the nodes, as in Slurm: the scheduler shows
  // one no node could ever hold as BadConstraints once it is released.
  Result<JobId> Submit(JobSpec spec, std::shared_ptr<const JobExecSpec> exec, Time now);
  // The checks Submit makes, without submitting: a batch is checked whole before any of it goes
  // in. (Like Submit, it may add an unknown user's association when associations are not
  // enforced.) The entry it gives goes in as it is with SubmitPrepared, as long as nothing but
  // submissions changed the state in between (a batch's own).
  Result<JobEntry> PrepareSubmit(JobSpec spec);
  Result<JobId> SubmitPrepared(JobEntry entry, std::shared_ptr<const JobExecSpec> exec, Time now);
  // The same with a chosen id (one not in use; later ids continue above the largest).
  Result<JobId> SubmitWithId(JobId id, JobSpec spec, std::shared_ptr<const JobExecSpec> exec,
                             Time now);
  // Puts back a job recorded before a controller restart, as it was: pending, or holding the
  // resources of its allocation (node indices as in this state), with its times kept. Skips
  // the submission checks (the job was accepted once).
  Status Restore(Job job);
  // Puts back the outcome of a job that had ended (dependencies still refer to it).
  void RestoreOutcome(JobId id, JobId array_job_id, int32_t array_task_id,
                      const JobOutcome& outcome);
  JobId next_job_id() const { return next_id_; }
  void set_next_job_id(JobId id) { next_id_ = id; }

  // Carries out a Plan computed from this state (or an earlier version of it): starts jobs
  // whose placement is still free, marks victims for preemption, ends cancelled jobs. A start
  // that no longer fits is refused and reported, never applied in part.
  ApplyResult Apply(const Plan& plan, Time now);

  // A job holding resources ended (its processes are gone): frees them, records the outcome,
  // accrues fair-share usage. With `requeue` the job goes back to the queue (restart count + 1)
  // instead of ending. REQUIRES: the job holds resources.
  // When the job ended (was not requeued) and `final_record` is given, the job's last record is
  // moved there (for the caller's accounting).
  Status EndJob(JobId id, const JobOutcome& outcome, bool requeue, Job* final_record = nullptr);
  // Cancels a pending job (running ones are killed by their node, then EndJob). For an array
  // master, cancels its tasks not yet started.
  Status CancelPending(JobId id, Time now);
  // Gives task `task` of array `array_job_id` a record of its own and returns its id: the task's
  // record when it has one already (started, or split before); else, while the task is still
  // pending inside the array's master record, a new pending record split off the master, as
  // Slurm does when one task is cancelled, held or changed (`scancel 123_4`). The last task
  // left takes the master's own id.
  Result<JobId> SplitArrayTask(JobId array_job_id, int32_t task);
  Status Hold(JobId id, HoldKind kind);
  Status Release(JobId id, Time now);
  Status SetTimeLimit(JobId id, Duration limit);
  Status SetNice(JobId id, int32_t nice);
  // Replaces how a job runs (what only people read of it once it started: its comment).
  Status ReplaceExec(JobId id, std::shared_ptr<const JobExecSpec> exec);
  // Replaces a pending job's request (scontrol update: node count, QoS, account, constraint,
  // ...) after the submission checks; on an error nothing changes.
  Status UpdatePendingSpec(JobId id, JobSpec spec);
  // Moves a pending job to other partitions ("a,b"), with the submission checks.
  Status SetPartitions(JobId id, const std::string& partitions);

  const Job* FindJob(JobId id) const;
  const JobEntry* FindEntry(JobId id) const;
  // The outcome of a job that ended (kept after its record is gone).
  const JobOutcome* FindOutcome(JobId id) const;
  const IdSet& pending_ids() const { return pending_; }
  // Calls f(const JobEntry&) for every pending job, in id order: one walk of the jobs beside
  // the pending ids (both in id order) while the jobs are not many more than the pending ones,
  // a look-up per id otherwise (a pass over a long queue looked up each job in the tree).
  template <typename F>
  void ForEachPendingEntry(F&& f) const {
    if (jobs_.size() <= 4 * pending_.size()) {
      auto it = jobs_.begin();
      for (JobId id : pending_) {
        while (it->first < id) ++it;
        f(it->second);
      }
    } else {
      for (JobId id : pending_) f(jobs_.find(id)->second);
    }
  }
  // Whether pending_ids(), in id order, is also in submission order (submit time, then id), as
  // an fcfs queue is: true while every job got a higher id than every job submitted before it
  // (it stops being true for good when an array task is split off with its array's submit
  // time, or a job is restored out of order).
  bool pending_in_submit_order() const { return ids_follow_submit_; }
  const std::set<JobId>& running_ids() const { return running_; }
  // Running jobs by estimated end (start + time limit), then id.
  const std::set<std::pair<Time, JobId>>& releases() const { return releases_; }
  // What one job holding resources on a node holds there, and until its estimated end.
  struct NodeHold {
    JobId job = kNoJob;
    Time end = 0;  // start + time limit, as in releases()
    int32_t user = -1;
    bool exclusive_user = false;  // --exclusive=user
    NodeAllocation alloc;
  };
  // The jobs holding resources on node n (those of NodeInfo::jobs), in no particular order:
  // backfill's view of a node's future (PassState::FreeAt) without a lookup per job.
  const std::vector<NodeHold>& holds_on(uint32_t n) const { return holds_[n]; }
  const std::map<JobId, JobEntry>& jobs() const { return jobs_; }
  const ArrayInfo* FindArray(JobId array_job_id) const;
  // Forgets ended jobs' outcomes older than `before` (the controller's MinJobAge).
  void PurgeOutcomes(Time before);

  // ---- Advance reservations (core/model/reservation.h; docs/scheduling.md)
  // Adds a reservation after Slurm's checks, with Slurm's messages: a name not in use (an empty
  // name becomes USER_N or ACCOUNT_N), users or accounts, start < end, known nodes, accounts and
  // partition; its nodes must not be in another reservation at an overlapping time, and (unless
  // IGNORE_JOBS) no running job may still hold them at the start ("Requested nodes are busy").
  // With no nodes named, picks the first `node_count` nodes (of spec.partition, else any) that
  // are schedulable and free in that sense. Returns the name. On an error nothing changes.
  Result<std::string> AddReservation(ResvSpec spec, int32_t node_count, Time now);
  // Replaces reservation spec.name (the same checks, against the others). `node_count` > 0 with
  // no nodes named picks nodes again.
  Status UpdateReservation(ResvSpec spec, int32_t node_count, Time now);
  Status DeleteReservation(std::string_view name);
  const ResvInfo* FindReservation(std::string_view name) const;
  const std::map<std::string, ResvInfo>& reservations() const { return reservations_; }
  // Moves repeating reservations whose occurrence ended by `now` to their next one and removes
  // the other ended reservations. Returns the names it changed or removed.
  std::vector<std::string> ExpireReservations(Time now);
  // Puts back a reservation recorded before a restart, without the checks.
  Status RestoreReservation(ResvSpec spec);

  // ---- Power saving (docs/autoscaling.md)
  // With power saving on, nodes that are powered down or powering up (and not drained) take
  // jobs: a job placed on one waits CONFIGURING until all its nodes are up, and Apply marks a
  // powered-down node it chose as powering up (the controller then resumes it). Off by default:
  // such nodes are then not usable.
  void SetPowerSaving(bool on);
  bool power_saving() const { return power_saving_; }
  // Whether jobs may be placed on the node now: up and not drained, or, with power saving,
  // powered down or powering up and not drained.
  bool Schedulable(const NodeInfo& n) const;
  // The schedulable nodes that are powered down: using one costs a boot. Empty without power
  // saving.
  const Bitset& asleep_nodes() const { return asleep_; }
  // A CONFIGURING job whose nodes are all up runs: its start time, and so its time limit,
  // counts from `now` (as Slurm counts from the end of the boot).
  Status FinishConfiguring(JobId id, Time now);

  // ---- Indices for the scheduler
  // Schedulable nodes (see Schedulable).
  const Bitset& usable_nodes() const { return usable_; }
  const Bitset& cpu_free_nodes() const { return cpu_free_; }
  // Free CPUs summed over the usable nodes: a bound on what any placement now can take.
  int64_t usable_free_cpus() const { return usable_free_cpus_; }
  // Usable nodes with exactly k free GPUs, k = 0..max_gpus_per_node().
  const std::vector<Bitset>& gpu_buckets() const { return gpu_buckets_; }
  int max_gpus_per_node() const { return static_cast<int>(gpu_buckets_.size()) - 1; }
  // Nodes grouped by weight, lightest first.
  const std::vector<std::pair<int32_t, Bitset>>& weight_classes() const { return weights_; }
  const std::vector<TopoGroup>& topo_groups() const { return topo_groups_; }
  const std::vector<NodeClass>& node_classes() const { return classes_; }
  int topo_depth() const { return topo_depth_; }
  // Changes whenever nodes are added (so that caches of node sets know to rebuild).
  uint64_t config_generation() const { return config_generation_; }
  // Changes whenever a node's health or drain flag changes (or nodes are added).
  uint64_t node_state_generation() const { return node_state_generation_; }
  std::optional<int32_t> FindFeature(std::string_view name) const;
  std::optional<int16_t> FindGpuType(std::string_view name) const;
  const std::string& gpu_type_name(int16_t id) const { return gpu_type_names_[id]; }
  const std::string& gres_name(int32_t id) const { return gres_names_[id]; }
  std::optional<int32_t> FindGres(std::string_view name) const;
  int64_t license_total(std::string_view name) const;
  int64_t license_used(std::string_view name) const;
  const RunCounters* QosUserCounters(int16_t qos, int32_t user) const;
  const RunCounters* QosAccountCounters(int16_t qos, int32_t account) const;
  // Running jobs per (user, name), for singleton dependencies.
  int32_t RunningWithName(int32_t user, const std::string& name) const;
  // How many running jobs asked for --exclusive=user (node sharing then depends on the user).
  int32_t user_exclusive_running() const { return user_exclusive_running_; }
  // Totals over all usable nodes (for the job-size factor).
  int64_t total_cpus() const { return total_cpus_; }
  // The most CPUs / GPUs any one node has.
  int32_t max_node_cpus() const { return max_node_cpus_; }
  int32_t total_nodes() const { return static_cast<int32_t>(nodes_.size()); }

  // Computes the shape of `spec` in partition `p` (public for tests and tools).
  Result<JobShape> ComputeShape(const JobSpec& spec, const PartitionInfo& p) const;
  // How many distinct placement requests (shape ids) exist.
  int32_t num_shape_ids() const { return static_cast<int32_t>(shape_ids_.size()); }
  // The shape of a job's partition slot `slot` (what ComputeShape made of its request there),
  // kept once for every job with the same shape id.
  const JobShape& shape(const JobEntry& e, size_t slot) const { return shapes_[e.shape_ids[slot]]; }
  // Fair-share billing of an allocation per second.
  double Billing(const Allocation& alloc) const;

 private:
  ClusterState() = default;
  Status AddAccountTree(const ClusterSpec& spec);
  Status CheckAccounting(const std::vector<QosSpec>& qos, const std::vector<AccountSpec>& accounts,
                         const std::vector<UserSpec>& users) const;
  void ApplyQosTable(const std::vector<QosSpec>& qos);
  void ApplyAccountTable(const std::vector<AccountSpec>& accounts);
  void ApplyUserTable(const std::vector<UserSpec>& users);
  void MoveAccount(int32_t account, int32_t parent);
  Status AddPartitions(const ClusterSpec& spec);
  Result<uint32_t> AddNodeInternal(const NodeSpec& spec, Time now);
  Result<int32_t> ResolveAssoc(const std::string& user, const std::string& account);
  int32_t InternUser(const std::string& user);
  int32_t InternFeature(const std::string& name);
  int16_t InternGpuType(const std::string& name);
  int32_t InternGres(const std::string& name);
  // Resolves a job's association, QoS, partitions, shapes and node names; with `validate`,
  // also runs the submission checks.
  Result<JobEntry> PrepareEntry(JobSpec spec, bool validate);
  // The id of a placement class (ShapeKeyText's), given on first sight.
  int32_t ShapeId(int16_t partition, const std::string& constraint, const JobShape& shape,
                  const std::vector<uint32_t>& exclude);
  // Records a job id given now (a submission, a restore, an array task split off).
  void NoteNewId(JobId id, Time submit);
  // Ok when `id` may be given to a new job.
  Status IdFree(JobId id) const;
  // Queues a prepared submission under `id` (free).
  JobId Insert(JobId id, JobEntry e, std::shared_ptr<const JobExecSpec> exec, Time now);
  Status ValidateFeasible(const JobEntry& entry, const SmallVector<JobShape, 2>& shapes) const;
  // Whether some node (of any partition) has the features `c` asks for.
  bool AnyNodeMatches(const Constraint& c) const;
  // Could the job run in partition slot `slot` on the configured nodes (all of them having
  // `alternative`, when not empty)?
  bool FeasibleIn(const JobEntry& entry, size_t slot, const JobShape& shape,
                  std::string_view alternative) const;
  bool NodeHasFeature(const NodeInfo& node, std::string_view feature) const;
  void UpdateNodeIndex(uint32_t node);
  void Allocate(JobEntry& entry, const PlannedStart& start, Time now);
  void Release(JobEntry& entry, Time now);
  void ChangeCounters(const JobEntry& entry, int sign);
  Status CheckStartStillFits(const JobEntry& entry, const PlannedStart& s) const;
  JobEntry& MaterialiseArrayTask(JobEntry& master, int32_t task);
  void RecordOutcome(JobEntry& entry, const JobOutcome& outcome, Job* final_record = nullptr);
  void RecomputeSoleUser(NodeInfo& n);
  // A running job's start or time limit changed: its holds_ end with it.
  void SetHoldEnds(const Job& job);
  Result<ResvInfo> CheckReservation(ResvSpec spec, int32_t node_count, Time now) const;

  ClusterSpec spec_;
  FairshareConfig fairshare_;
  std::vector<NodeInfo> nodes_;
  std::unordered_map<std::string, uint32_t> node_by_name_;
  std::vector<PartitionInfo> partitions_;
  int16_t default_partition_ = 0;
  std::vector<QosInfo> qos_;
  std::vector<AccountInfo> accounts_;
  std::vector<AssocInfo> assocs_;
  std::vector<std::string> user_names_;
  std::unordered_map<std::string, int32_t> user_by_name_;
  std::vector<int32_t> default_assoc_of_user_;  // -1 when none
  std::vector<std::string> feature_names_;
  std::vector<std::string> gpu_type_names_;
  std::vector<std::string> gres_names_;
  std::vector<TopoGroup> topo_groups_;
  std::vector<NodeClass> classes_;
  int topo_depth_ = 0;
  uint64_t config_generation_ = 0;
  uint64_t node_state_generation_ = 0;
  int32_t user_exclusive_running_ = 0;
  std::map<std::string, int64_t> license_used_;

  bool power_saving_ = false;
  Bitset usable_;
  Bitset asleep_;
  Bitset cpu_free_;
  std::vector<int32_t> indexed_free_cpus_;    // by node: its share of usable_free_cpus_
  std::vector<std::vector<NodeHold>> holds_;  // by node (holds_on)
  int64_t usable_free_cpus_ = 0;
  std::vector<Bitset> gpu_buckets_;
  std::vector<std::pair<int32_t, Bitset>> weights_;
  int64_t total_cpus_ = 0;
  int32_t max_node_cpus_ = 0;

  JobId next_id_ = 1;
  std::map<JobId, JobEntry> jobs_;  // pending and holding resources
  IdSet pending_;                   // compact: a pending job costs about a bit here
  // pending_in_submit_order(): the highest id given so far and its submit time.
  bool ids_follow_submit_ = true;
  JobId last_new_id_ = 0;
  Time last_new_submit_ = kNoTime;
  std::set<JobId> running_;
  std::set<std::pair<Time, JobId>> releases_;
  std::unordered_map<JobId, JobOutcome> outcomes_;
  std::unordered_map<JobId, ArrayInfo> arrays_;
  std::unordered_map<uint64_t, RunCounters> qos_user_;     // (qos << 32) | user
  std::unordered_map<uint64_t, RunCounters> qos_account_;  // (qos << 32) | account
  std::map<std::pair<int32_t, std::string>, int32_t> running_names_;
  std::unordered_map<std::string, int32_t> shape_ids_;
  std::deque<JobShape> shapes_;  // by shape id (a deque: references stay put as it grows)
  // The inputs of the shape id given last: jobs submitted or restored together mostly share
  // one, and its key text need not be made again.
  struct LastShape {
    int16_t partition = -1;
    std::string constraint;
    JobShape shape;
    std::vector<uint32_t> exclude;
    int32_t id = -1;
  };
  LastShape last_shape_;
  std::map<std::string, ResvInfo> reservations_;
  int32_t next_resv_number_ = 1;
};

}  // namespace berth::core

#endif  // BERTH_CORE_STATE_CLUSTER_STATE_H_
