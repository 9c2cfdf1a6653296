// The controller's state thread: runs commands in batches, commits them, schedules, drives the
// agents, and publishes what API threads read.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "api/job_json.h"
#include "common/hostlist.h"
#include "common/slices.h"
#include "controller/controller_internal.h"

namespace berth::controller {
namespace {

// A job record's watch event: its text (JobRecordEventText) made when a watcher first reads it,
// after which the record is let go.
class JobEvent final : public WatchEventText {
 public:
  JobEvent(size_t size, std::shared_ptr<const JobRecord> record)
      : WatchEventText(size), record_(std::move(record)) {}

 private:
  std::string Make() const override {
    std::string text = JobRecordEventText(*record_);
    record_.reset();
    return text;
  }
  mutable std::shared_ptr<const JobRecord> record_;
};

// What Slurm would show of the job that depends on the cluster (JobRecord::slurm): the memory
// of a whole node in the job's partition, the defaults in force, and how accounting is set up.
SlurmFacts ComputeSlurmFacts(const core::ClusterState& cs, const config::ClusterConfig& config,
                             const core::Job& job) {
  SlurmFacts f;
  f.gpus_in_tres = config.slurm_accounting.gpus_in_tres;
  f.accounting = config.slurm_accounting.enabled;
  f.def_mem_per_cpu_mib = cs.spec().def_mem_per_cpu_mib;
  // berth's non-enforcing mode puts a job that names no account in "default" (unless the
  // configuration declares an account of that name).
  const std::vector<core::AccountSpec>& accounts = cs.spec().accounts;
  f.account_given = job.spec->account != "default" ||
                    std::any_of(accounts.begin(), accounts.end(),
                                [](const core::AccountSpec& a) { return a.name == "default"; });
  std::string name = job.partition;
  if (name.empty() && !job.spec->partitions.empty()) name = job.spec->partitions.front();
  std::optional<int16_t> p = cs.FindPartition(name);
  if (!p) return f;
  const core::PartitionInfo& part = cs.partitions()[*p];
  if (part.spec.def_mem_per_cpu_mib > 0) f.def_mem_per_cpu_mib = part.spec.def_mem_per_cpu_mib;
  f.def_mem_per_node_mib = part.spec.def_mem_per_node_mib;
  f.default_time_limit =
      part.spec.default_time != kNoTime ? part.spec.default_time : part.spec.max_time;
  for (const core::NodeClass& cls : cs.node_classes()) {
    if (!cls.nodes.Intersects(part.nodes)) continue;
    f.node_mem_mib = std::max(f.node_mem_mib, cs.node(cls.representative).spec.mem_mib);
    f.node_cpus = std::max<int64_t>(f.node_cpus, cs.node(cls.representative).spec.cpus);
  }
  return f;
}

}  // namespace

std::chrono::steady_clock::time_point Controller::Impl::NextWake() {
  const Time now = Now();
  const bool pass_due = dirty || now >= next_pass || (wake_at != kNoTime && now >= wake_at);
  if (pass_due) return std::max(pass_allowed_at, std::chrono::steady_clock::now());
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
}

Duration Controller::Impl::PreemptGrace(const core::Job& job) const {
  const std::string qos = job.spec->qos.empty() ? "normal" : job.spec->qos;
  if (auto q = opt.config.qos_grace_s.find(qos); q != opt.config.qos_grace_s.end()) {
    return q->second;
  }
  auto p = opt.config.partition_grace_s.find(job.partition);
  return p == opt.config.partition_grace_s.end() ? 0 : p->second;
}

void Controller::Impl::GraceTick() {
  const Time now = Now();
  for (auto it = grace_ends.begin(); it != grace_ends.end();) {
    const core::Job* job = cs->FindJob(it->first);
    if (job == nullptr || !core::HoldsResources(job->state) || !preempting.contains(it->first)) {
      it = grace_ends.erase(it);  // it ended within its grace time
    } else if (now >= it->second) {
      if (const JobRecord* r = OwnRecord(it->first)) SendCancel(*r, 0, {}, true);
      it = grace_ends.erase(it);
    } else {
      ++it;
    }
  }
}

void Controller::Impl::RunBatch(std::deque<Command> batch) {
  Txn t;
  if (Status failed = StoreFailure(); !failed.ok()) {
    // Memory may hold what the store lost: refuse every change, unrun, until a restart reloads
    // the store.
    t.refuse = failed;
    for (Command& c : batch) c(t);
    for (auto& reply : t.replies) reply(failed);
    return;
  }
  for (Command& c : batch) c(t);
  if (!grace_ends.empty()) GraceTick();
  CheckNodes(t);
  PowerTick(t);
  ReservationTick(t);
  HistoryTick(t);
  if (k8s) k8s_port->OnPass(*k8s, t);  // the Job controller
  Commit(t);
  if (!StoreFailure().ok()) return;  // no pass on a state the store may not hold
  Time now = Now();
  bool due = dirty || t.reschedule || now >= next_pass || now >= next_forget ||
             (wake_at != kNoTime && now >= wake_at);
  if (!due || std::chrono::steady_clock::now() < pass_allowed_at) return;
  auto started = std::chrono::steady_clock::now();
  Txn pass;
  SchedulePass(pass);
  metrics.pass_seconds.Observe(std::chrono::steady_clock::now() - started);
  Commit(pass);
  auto ended = std::chrono::steady_clock::now();
  pass_allowed_at = ended + 2 * (ended - started);
}

void Controller::Impl::Commit(Txn& t) {
  for (core::JobId id : t.touched) TouchRecord(id, t);
  t.touched.clear();
  WriteRecordTexts(t);
  if (!t.writes.empty()) {
    Status st = store->Commit(std::move(t.writes));
    if (!st.ok()) {
      // Nothing of this batch is acknowledged: its callers get the error (503 when the store is
      // unreachable), no launch is sent and nothing is published. Memory now holds changes the
      // store may lack, so every later change is refused too, and the daemon exits
      // (StoreFailure); restarting from the store is the one safe way on.
      std::fprintf(stderr, "berth controller: cannot commit to the store (%s): %s\n",
                   store->Describe().c_str(), st.message().c_str());
      st = st.WithContext("the change was not saved: the store failed");
      {
        MutexLock<Mutex> l(store_failure_mu);
        store_failure = st;
      }
      t.launches.clear();
      for (auto& reply : t.replies) reply(st);
      t.replies.clear();
      t.events.clear();
      DropStagedRecords();  // reads show what the store holds
      return;
    }
  }
  PublishStagedRecords();
  for (core::JobId id : t.launches) {
    if (const JobRecord* r = OwnRecord(id)) SendLaunch(*r);
  }
  t.launches.clear();
  if (!steps.empty()) EndStaleSteps();
  for (auto& reply : t.replies) reply(Status::Ok());
  Publish(t);
}

void Controller::Impl::Publish(Txn& t) {
  if (t.nodes_changed) RebuildNodeView(&t.events);
  watch_hub.Publish(std::move(t.events));
}

JobRecord Controller::Impl::BuildRecord(const core::Job& job, const JobRecord* previous) const {
  JobRecord r;
  if (previous != nullptr) r = *previous;
  RefreshRecord(job, r);
  return r;
}

void Controller::Impl::RefreshRecord(const core::Job& job, JobRecord& r) const {
  r.job = job;
  r.slurm = ShareWithLast(ComputeSlurmFacts(*cs, opt.config, job), last_facts);
  r.node_names.clear();
  for (const core::NodeAllocation& a : job.alloc.nodes) r.node_names.push_back(NodeName(a.node));
  if (job.state == core::JobState::kPending) {
    r.cancel_requested = false;
    // Queued again: a later end is its own, and so are its steps. Most refreshed records have
    // none of these to drop, and keep the value they share (no copy of it here).
    if (r.run->HasRunOnlyFacts()) r.run.Mut().DropRunOnlyFacts();
  } else {
    r.reason = core::PendingReason::kNone;
    r.reason_detail.clear();
    r.expected_start = kNoTime;
  }
}

void Controller::Impl::WriteRecord(const std::shared_ptr<JobRecord>& r, bool active, Time end_time,
                                   Txn& t) {
  store::Write& w = t.writes.emplace_back();
  w.kind = store::Write::Kind::kPutJob;
  w.job.id = r->job.id;
  w.job.active = active;
  w.job.end_time = end_time;
  // The run specification apart: the store keeps each distinct one once (store::JobRow::exec).
  if (r->job.exec) w.job.exec = exec_pool.Text(r->job.exec);
  // The state thread is the hub's only publisher, and this batch's events are published in
  // order once it commits: this event's sequence is known now.
  r->event_seq = watch_hub.Next() + t.events.size();
  // The record's text is written at the commit (WriteRecordTexts), its event when a watcher
  // first reads it.
  t.record_texts.push_back({t.writes.size() - 1, t.events.size(), r});
  t.events.emplace_back();
}

void Controller::Impl::WriteRecordTexts(Txn& t) {
  std::vector<RecordText>& texts = t.record_texts;
  std::vector<size_t> event_sizes(texts.size());
  // No tree (a third of a cancel was one); a slice of them on each of a few threads.
  ForEachSlice(texts.size(), SliceCount(texts.size(), 256, 4),
               [&](size_t, size_t begin, size_t end) {
                 for (size_t i = begin; i < end; ++i) {
                   const RecordText& r = texts[i];
                   event_sizes[i] = WriteJobRecordText(*r.record, &t.writes[r.write].job.record);
                 }
               });
  // The events, which live on, are made here: memory that other threads took for what is freed
  // after the commit (the texts) is then not pinned by them.
  for (size_t i = 0; i < texts.size(); ++i) {
    t.events[texts[i].event] =
        std::make_shared<const JobEvent>(event_sizes[i], std::move(texts[i].record));
  }
  texts.clear();
}

void Controller::Impl::TouchRecord(core::JobId id, Txn& t) {
  const core::Job* job = cs->FindJob(id);
  if (job == nullptr) return;  // ended: FinishRecord wrote it
  std::shared_ptr<JobRecord> r = NewRecord(*job);
  WriteRecord(r, /*active=*/true, kNoTime, t);
  PutRecord(id, std::move(r));
}

std::shared_ptr<JobRecord> Controller::Impl::NewRecord(const core::Job& job) {
  // A record staged by this batch that nothing else holds (no reader has seen it, no text is
  // still to be written of it: a submission's, a cancel's) is brought up to date where it is.
  if (auto staged = staged_records.find(job.id);
      staged != staged_records.end() && staged->second && staged->second.use_count() == 1) {
    auto r = std::const_pointer_cast<JobRecord>(staged->second);
    RefreshRecord(job, *r);
    return r;
  }
  return std::make_shared<JobRecord>(BuildRecord(job, OwnRecord(job.id)));
}

void Controller::Impl::FinishRecord(const core::Job& final_job, Txn& t, int64_t cancelled_by) {
  core::JobId id = final_job.id;
  std::shared_ptr<JobRecord> r = NewRecord(final_job);
  r->cancel_requested = false;
  if (cancelled_by >= 0) r->run.Mut().cancelled_by = cancelled_by;
  WriteRecord(r, /*active=*/false, final_job.end_time, t);
  t.touched.erase(id);
  metrics.CountEnd(final_job.state);
  NoteFinished(id, final_job.end_time);
  preempting.erase(id);
  PutRecord(id, std::move(r));
}

void Controller::Impl::SchedulePass(Txn& t) {
  const Time now = Now();
  core::Plan plan = scheduler->Schedule(*cs, now);
  ++passes;
  core::ApplyResult applied = cs->Apply(plan, now);
  for (size_t i = 0; i < plan.starts.size(); ++i) {
    core::JobId id = applied.start_ids[i];
    if (id == core::kNoJob) continue;
    if (id != plan.starts[i].job) t.touched.insert(plan.starts[i].job);  // the array's record
    TouchRecord(id, t);
    const core::Job* started = cs->FindJob(id);
    if (started != nullptr && started->state == core::JobState::kConfiguring) {
      power->JobConfiguring(id);  // its nodes resumed, and it launched once they are up
    } else {
      t.launches.push_back(id);
    }
  }
  for (const core::PlannedPreemption& p : applied.preempt) {
    const JobRecord* victim = OwnRecord(p.victim);
    if (victim == nullptr) continue;
    preempting[p.victim] = p.mode;
    auto r = std::make_shared<JobRecord>(*victim);
    r->cancel_requested = true;
    if (const Duration grace = PreemptGrace(r->job); grace > 0) {
      // Slurm's preemption with a GraceTime: SIGCONT and SIGTERM to the whole job at once (a
      // trainer checkpoints in its handler), the usual end once the grace time is over.
      SendCancel(*r, SIGCONT, {.full = true}, false);
      SendCancel(*r, SIGTERM, {.full = true}, false);
      grace_ends[p.victim] = now + grace;
      r->run.Mut().preempt_end = now + grace;  // its EndTime, as Slurm shows it
    } else {
      SendCancel(*r, 0, {}, true);
    }
    PutRecord(p.victim, std::move(r));
  }
  for (const core::PlannedCancel& c : plan.cancels) {
    const JobRecord* cancelled = OwnRecord(c.job);
    if (cancelled == nullptr) continue;
    core::Job final_job = cancelled->job;
    final_job.state = c.state;
    final_job.end_time = now;
    final_job.outcome.state = c.state;
    final_job.outcome.end_time = now;
    auto r = std::make_shared<JobRecord>(*cancelled);
    r->run.Mut().message = c.why;
    PutRecord(c.job, r);
    FinishRecord(final_job, t);
  }
  auto pending = std::make_shared<std::unordered_map<core::JobId, PendingView>>();
  pending->reserve(plan.pending.size());
  for (const core::PendingInfo& p : plan.pending) {
    (*pending)[p.job] = {p.reason, p.detail, p.expected_start, p.priority};
  }
  staged_pending_view = std::move(pending);  // published with the pass's records
  staged_last_pass = now;
  wake_at = plan.wake_at;
  dirty = false;
  next_pass = now + opt.backfill_interval_s;
  t.nodes_changed = t.nodes_changed || !plan.starts.empty();
  // Forget ended jobs older than MinJobAge (they stay in the store for sacct), and their
  // outcomes: a dependency on a job that old counts as on a job that is gone, as in Slurm.
  bool forgot = false;
  next_forget = kInfinite;
  for (auto it = finished_at.begin(); it != finished_at.end();) {
    if (it->second + opt.min_job_age_s < now) {
      PutRecord(it->first, nullptr);
      it = finished_at.erase(it);
      forgot = true;
    } else {
      next_forget = std::min(next_forget, it->second + opt.min_job_age_s + 1);
      ++it;
    }
  }
  if (forgot || now >= next_outcome_purge) {
    cs->PurgeOutcomes(now - opt.min_job_age_s);
    next_outcome_purge = now + opt.min_job_age_s;
  }
}

void Controller::Impl::CheckNodes(Txn& t) {
  const Time now = Now();
  for (uint32_t i = 0; i < cs->num_nodes(); ++i) {
    const core::NodeInfo& n = cs->node(i);
    // Nodes being powered up, down, or powered down are silent on purpose: PowerTick watches
    // them (ResumeTimeout).
    if (n.health == core::NodeHealth::kPoweredDown || n.health == core::NodeHealth::kPoweringUp ||
        n.health == core::NodeHealth::kPoweringDown) {
      continue;
    }
    if (!agents.Silent(n.spec.name, now, opt.node_timeout_s)) continue;
    if (n.health == core::NodeHealth::kUp) {
      (void)cs->SetNodeHealth(i, core::NodeHealth::kDown, "Not responding", now);
      agents.Disconnect(n.spec.name);
      t.nodes_changed = true;
      dirty = true;
    } else if (agents.Registered(n.spec.name) || n.jobs.empty()) {
      continue;
    }
    // Silent for node_timeout_s (or, after a controller restart, never registered again within
    // that time): the jobs it held are lost.
    FailNodeJobs(i, t);
  }
}

void Controller::Impl::FailNodeJob(core::JobId id, Txn& t) {
  const core::Job* job = cs->FindJob(id);
  if (job == nullptr) return;
  const bool requeue = job->spec->requeue;
  const agent::CommandTarget target{id, job->restart_count};
  std::vector<std::string> nodes;
  for (const core::NodeAllocation& a : job->alloc.nodes) nodes.push_back(NodeName(a.node));
  core::JobOutcome o;
  o.state = core::JobState::kNodeFail;
  o.end_time = Now();
  core::Job final_job;
  if (!cs->EndJob(id, o, requeue, &final_job).ok()) return;
  if (requeue) {
    t.touched.insert(id);
  } else {
    FinishRecord(final_job, t);
  }
  // The attempt stops everywhere, so that a requeued job never runs in two places: the batch
  // step on the first node, the step parts (srun across hosts) on the others. A node that is
  // gone hears of it if it comes back (its registration reconciles in any case).
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i == 0) {
      SendCommand(nodes[i], agent::CancelCommand{target});
    } else {
      SendCommand(nodes[i], agent::EndStepsCommand{target});
    }
  }
}

void Controller::Impl::FailNodeJobs(uint32_t node, Txn& t) {
  const std::vector<core::JobId> lost = cs->node(node).jobs;
  for (core::JobId id : lost) FailNodeJob(id, t);
  t.nodes_changed = true;
  dirty = true;
}

namespace {

// What a watcher of nodes sees change: state, reason, what is allocated, the agent's link.
bool NodeViewChanged(const NodeView& a, const NodeView& b) {
  return a.state != b.state || a.resv_state != b.resv_state || a.reason != b.reason ||
         a.alloc_cpus != b.alloc_cpus || a.alloc_mem_mib != b.alloc_mem_mib ||
         a.alloc_gpus != b.alloc_gpus || a.agent_connected != b.agent_connected;
}

nlohmann::json NodeEvent(const NodeView& v) {
  return {{"type", "node"}, {"node", NodeJson(v)}};
}

}  // namespace

void Controller::Impl::RebuildNodeView(std::vector<WatchEvent>* events) {
  auto nodes = std::make_shared<std::vector<NodeView>>();
  nodes->reserve(cs->num_nodes());
  const Time resv_now = Now();
  for (uint32_t i = 0; i < cs->num_nodes(); ++i) {
    const core::NodeInfo& n = cs->node(i);
    NodeView v;
    v.name = n.spec.name;
    v.spec = n.spec;
    v.state = std::string(core::NodeStateLongName(n.state()));
    v.resv_state = NodeResvState(i, resv_now);
    v.reason = n.reason;
    if (!n.reason.empty()) {
      v.reason_time = n.state_since;
      auto admin = node_admin.find(n.spec.name);
      v.reason_user = admin != node_admin.end() && admin->is_object()
                          ? admin->value("user", own_user)
                          : own_user;
    }
    v.alloc_cpus = n.spec.cpus - n.free_cpus;
    v.alloc_mem_mib = n.spec.mem_mib - n.free_mem_mib;
    v.alloc_gpus = n.num_gpus - n.free_gpu_count();
    for (int16_t p : n.partitions) v.partitions.push_back(cs->partitions()[p].spec.name);
    v.jobs = n.jobs;
    if (std::optional<AgentSession> a = agents.Find(n.spec.name)) {
      v.last_seen = a->last_seen;
      v.agent_connected = a->registered;
    }
    v.event_seq = watch_hub.Next() - 1;  // as loaded, when no event follows below
    nodes->push_back(std::move(v));
  }
  auto parts = std::make_shared<nlohmann::json>(nlohmann::json::array());
  for (const core::PartitionInfo& p : cs->partitions()) {
    std::vector<std::string> names;
    const core::ClusterState& state = *cs;
    p.nodes.ForEach([&](size_t i) {
      names.push_back(state.node(static_cast<uint32_t>(i)).spec.name);
      return true;
    });
    parts->push_back({{"name", p.spec.name},
                      {"default", p.index == cs->default_partition()},
                      {"state", std::string(core::PartitionStateName(p.spec.state))},
                      {"nodes", hostlist::Compress(names)},
                      {"total_nodes", p.total_nodes},
                      {"total_cpus", p.total_cpus},
                      {"total_gpus", p.total_gpus},
                      {"max_time", p.spec.max_time >= kInfinite ? -1 : p.spec.max_time},
                      {"default_time", p.spec.default_time},
                      {"max_nodes", p.spec.max_nodes},
                      {"priority_tier", p.spec.priority_tier}});
  }
  if (events != nullptr) {
    // Nodes only come (never go), in index order: compare with the view being replaced.
    std::shared_ptr<const std::vector<NodeView>> published;
    {
      ReaderLock l(view_mu);
      published = node_view;
    }
    const std::vector<NodeView>* before = published.get();
    for (size_t i = 0; i < nodes->size(); ++i) {
      const NodeView& now = (*nodes)[i];
      if (before == nullptr || i >= before->size() || (*before)[i].name != now.name ||
          NodeViewChanged((*before)[i], now)) {
        (*nodes)[i].event_seq = watch_hub.Next() + events->size();
        events->push_back(MakeWatchEvent(NodeEvent(now).dump()));
      } else {
        (*nodes)[i].event_seq = (*before)[i].event_seq;
      }
    }
  }
  MutexLock<SharedMutex> l(view_mu);
  node_view = std::move(nodes);
  partition_view = std::move(parts);
}

}  // namespace berth::controller
