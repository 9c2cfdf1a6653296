// Read-only answers: the jobs, nodes and watch endpoints and the views of squeue and scancel,
// which read the published view and never wait for the state thread; sprio's priorities and
// sshare's fair-share tree (computed on the state thread, which owns the cluster state) and
// `scontrol show config` (from the options, which do not change after start). The accounting
// endpoints are in controller_sacct.cc.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <memory>

#include "api/job_json.h"
#include "common/slices.h"
#include "common/slurm_time.h"
#include "common/strings.h"
#include "controller/controller_internal.h"
#include "controller/json_text.h"
#include "core/model/partition.h"
#include "core/sched/scheduler.h"
#include "core/sched/share_tree.h"
#include "slurm/scancel.h"
#include "slurm/squeue_view.h"

namespace berth::controller {

namespace {

using nlohmann::json;

// A factor's 0..1 value from its weighted contribution.
double Normalized(double weighted, int64_t weight) {
  return weight > 0 ? weighted / static_cast<double>(weight) : 0.0;
}

std::string Seconds(Duration d) {
  return FormatTimeLimit(d);
}

// A job's record with how to run it. The script and the environment can hold secrets: only the
// job's owner and operators see them (as only they may `scontrol write batch_script`).
json JobForCaller(const Caller& who, const JobRecord& r) {
  json v = EncodeJobRecord(r, true);
  const bool owner = who.admin || (who.known && who.uid == r.job.spec->uid);
  if (!owner && v.contains("request")) {
    v["request"].erase("script");
    v["request"].erase("environment");
  }
  // A container's registry credentials (a Pod's imagePullSecrets) are shown to nobody, its
  // variables (some from Secrets) to its owner only.
  if (v.contains("request") && v["request"].contains("container") &&
      v["request"]["container"].is_object()) {
    json& c = v["request"]["container"];
    c.erase("auth_config");
    if (!owner) c.erase("env");
  }
  return v;
}

// Does a record pass GET /v1/jobs's filters?
struct JobFilter {
  std::vector<std::string> users, states, partitions;
  std::vector<core::JobId> ids;
  core::JobId array = 0;
  bool all = false;  // include ended jobs still in the live view

  bool Match(const JobRecord& r) const {
    const core::Job& j = r.job;
    if (!all && core::IsTerminal(j.state) && states.empty() && ids.empty()) return false;
    if (!users.empty() && std::find(users.begin(), users.end(), j.spec->user) == users.end()) {
      return false;
    }
    if (!states.empty()) {
      bool ok = false;
      for (const std::string& s : states) {
        std::optional<core::JobState> st = core::ParseJobState(s);
        ok = ok || (st && *st == j.state);
      }
      if (!ok) return false;
    }
    if (!partitions.empty()) {
      bool ok = false;
      for (const std::string& p : partitions) {
        ok = ok || j.partition == p ||
             std::find(j.spec->partitions.begin(), j.spec->partitions.end(), p) !=
                 j.spec->partitions.end();
      }
      if (!ok) return false;
    }
    if (!ids.empty() && std::find(ids.begin(), ids.end(), j.id) == ids.end() &&
        std::find(ids.begin(), ids.end(), j.array_job_id) == ids.end()) {
      return false;
    }
    if (array != 0 && j.array_job_id != array) return false;
    return true;
  }
};

// What a record says of its priority, reason and expected start, with the last pass's word on
// a pending job over the record's own. A job submitted held since that pass is reported held at
// once, as squeue does after `sbatch -H`.
struct SchedulerWord {
  int64_t priority = 0;
  bool has_reason = false;  // false: no "reason" and "reason_detail" keys
  core::PendingReason reason = core::PendingReason::kNone;
  const std::string* detail = nullptr;
  Time expected_start = kNoTime;
};

SchedulerWord WordOf(const JobRecord& r, const std::unordered_map<core::JobId, PendingView>& view) {
  static const std::string kHeldUser = "held by its user", kHeldAdmin = "held by an operator";
  SchedulerWord w{r.priority, r.reason != core::PendingReason::kNone, r.reason, &r.reason_detail,
                  r.expected_start};
  if (r.job.state != core::JobState::kPending) return w;
  if (auto it = view.find(r.job.id); it != view.end()) {
    w.has_reason = true;
    w.reason = it->second.reason;
    w.detail = &it->second.detail;
    if (it->second.expected_start != kNoTime) w.expected_start = it->second.expected_start;
    w.priority = it->second.priority;
  } else if (r.job.spec->hold != core::HoldKind::kNone) {
    const bool user = r.job.spec->hold == core::HoldKind::kUser;
    w.has_reason = true;
    w.reason = user ? core::PendingReason::kJobHeldUser : core::PendingReason::kJobHeldAdmin;
    w.detail = user ? &kHeldUser : &kHeldAdmin;
  }
  return w;
}

// Sets the scheduler's word in a record's JSON (EncodeJobRecord's).
void AddPendingView(const JobRecord& r, const std::unordered_map<core::JobId, PendingView>& view,
                    json& v) {
  const SchedulerWord w = WordOf(r, view);
  v["priority"] = w.priority;
  if (w.has_reason) {
    v["reason"] = std::string(core::PendingReasonName(w.reason));
    v["reason_detail"] = *w.detail;
  }
  if (w.expected_start != kNoTime) v["expected_start"] = w.expected_start;
}

// The list form of a record: its cached text, then the scheduler's word, as text; with
// `with_steps`, the steps srun recorded (squeue -s).
void AppendListJson(const JobRecord& r, const std::unordered_map<core::JobId, PendingView>& view,
                    bool with_steps, std::string& out) {
  out += r.ListJsonPrefix();
  if (with_steps && !r.run->steps.empty()) {
    json steps = json::array();
    for (const api::StepRecord& s : r.run->steps) steps.push_back(api::EncodeStepRecord(s));
    out += ",\"steps\":";
    out += steps.dump();
  }
  const SchedulerWord w = WordOf(r, view);
  out += ",\"priority\":";
  out += std::to_string(w.priority);
  if (w.has_reason) {
    out += ",\"reason\":\"";
    out += core::PendingReasonName(w.reason);  // names need no escaping
    out += "\",\"reason_detail\":";
    out += json(*w.detail).dump();
  }
  if (w.expected_start != kNoTime) {
    out += ",\"expected_start\":";
    out += std::to_string(w.expected_start);
  }
  out += '}';
}

}  // namespace

json Controller::Impl::PriorityView() const {
  const core::SchedulerConfig& cfg = scheduler->config();
  const core::PriorityWeights& w = cfg.weights;
  json tres_weights = json::object();
  for (const core::NamedCount& t : w.tres) tres_weights[t.name] = t.count;
  json out = {{"weights",
               {{"age", w.age},
                {"fairshare", w.fairshare},
                {"jobsize", w.job_size},
                {"partition", w.partition},
                {"qos", w.qos},
                {"assoc", 0},
                {"site", 0},
                {"tres", tres_weights}}},
              {"jobs", json::array()}};
  if (cfg.order != core::QueueOrder::kPriority) out["priority_type"] = "priority/basic";
  for (const core::PriorityBreakdown& b : scheduler->Priorities(*cs, Now())) {
    const core::JobEntry* e = cs->FindEntry(b.job);
    if (e == nullptr) continue;
    const core::Job& j = e->job;
    // As sprio: held jobs (priority 0 in Slurm) are not listed.
    if (j.spec->hold != core::HoldKind::kNone) continue;
    json job = {{"id", j.id},
                {"user", j.spec->user},
                {"account", j.spec->account},
                {"partition", cs->partitions()[e->partitions.front()].spec.name},
                {"qos", j.spec->qos},
                {"priority", b.total},
                {"nice", b.nice},
                {"admin_set", b.admin_set},
                {"factors",
                 {{"age", b.age},
                  {"fairshare", b.fairshare},
                  {"jobsize", b.job_size},
                  {"partition", b.partition},
                  {"qos", b.qos},
                  {"assoc", 0},
                  {"site", 0},
                  {"tres", b.tres}}},
                {"normalized",
                 {{"age", Normalized(b.age, w.age)},
                  {"fairshare", Normalized(b.fairshare, w.fairshare)},
                  {"jobsize", Normalized(b.job_size, w.job_size)},
                  {"partition", Normalized(b.partition, w.partition)},
                  {"qos", Normalized(b.qos, w.qos)},
                  {"assoc", 0},
                  {"site", 0}}}};
    if (j.array_job_id != core::kNoJob) {
      job["array_job_id"] = j.array_job_id;
      if (j.array_task_id >= 0) job["array_task_id"] = j.array_task_id;
    }
    out["jobs"].push_back(std::move(job));
  }
  return out;
}

json Controller::Impl::FairshareView() const {
  const core::FairshareConfig& fc = scheduler->config().fairshare;
  const core::FairshareTable t = core::ComputeFairshare(*cs, Now(), fc);
  json rows = json::array();
  for (const core::ShareRow& r : core::ShareTreeRows(*cs, t, fc.algorithm)) {
    json row = {{"id", r.id},
                {"depth", r.depth},
                {"account", r.account},
                {"parent", r.parent},
                {"raw_shares", nullptr},
                {"norm_shares", r.norm_shares},
                {"raw_usage", r.raw_usage},
                {"norm_usage", r.norm_usage},
                {"effective_usage", r.effective_usage},
                {"fairshare", nullptr},
                {"level_fs", r.level_fs}};
    if (!r.user.empty()) row["user"] = r.user;
    if (r.raw_shares >= 0) row["raw_shares"] = r.raw_shares;
    if (r.has_fairshare) row["fairshare"] = r.fairshare;
    if (std::isinf(r.level_fs)) row["level_fs"] = "inf";  // JSON has no infinity
    rows.push_back(std::move(row));
  }
  const bool fair_tree = fc.algorithm == core::FairshareAlgorithm::kFairTree;
  return {{"cluster", opt.config.cluster.name},
          {"algorithm", fair_tree ? "fair_tree" : "classic"},
          {"half_life", fc.half_life},
          {"rows", std::move(rows)}};
}

json Controller::Impl::JobUsageView() const {
  const int64_t now_ms = UsageTable::ClockMs();
  json jobs = json::array();
  for (const UsageTable::JobLatest& j : usage.Latest(now_ms)) {
    jobs.push_back({{"job_id", j.job},
                    {"attempt", j.attempt},
                    {"node", j.node},
                    {"time_ms", j.latest.time_ms},
                    {"cpu_seconds", j.latest.cpu_seconds},
                    {"memory_bytes", j.latest.memory_bytes},
                    {"max_memory_bytes", j.max_memory_bytes}});
  }
  return {{"jobs", std::move(jobs)}};
}

net::HttpResponse Controller::Impl::ConfigView() const {
  const core::SchedulerConfig& s = scheduler->config();
  const core::ClusterSpec& c = opt.config.cluster;
  auto number = [](auto v) { return std::to_string(v); };
  std::string sched_params = "bf_window=" + number(s.backfill_horizon / 60) +
                             ",bf_max_job_test=" + number(s.backfill_max_job_test);
  if (s.reservation_depth == core::SchedulerConfig::kAllJobs) {
    sched_params += ",berth_reservations=all";
  } else {
    sched_params += ",berth_reservations=" + number(s.reservation_depth);
  }
  if (s.placement == core::PlacementPolicy::kSpread) sched_params += ",berth_spread";
  std::string preempt_type = "preempt/none";
  if (s.preempt_type == core::PreemptType::kQos) preempt_type = "preempt/qos";
  if (s.preempt_type == core::PreemptType::kPartitionPriority) {
    preempt_type = "preempt/partition_prio";
  }
  json rows = json::array();
  auto add = [&](const char* key, const std::string& value) { rows.push_back({key, value}); };
  add("ClusterName", c.name);
  add("BerthSchedulerPreset", s.name);
  add("DefMemPerCPU", c.def_mem_per_cpu_mib > 0 ? number(c.def_mem_per_cpu_mib) : "UNLIMITED");
  add("KillWait", number(opt.kill_wait_s) + " sec");
  add("MaxArraySize", number(c.max_array_size));
  add("MinJobAge", number(opt.min_job_age_s) + " sec");
  add("PreemptMode", std::string(core::PreemptModeName(s.preempt_mode)));
  add("PreemptType", preempt_type);
  add("PriorityDecayHalfLife", Seconds(s.fairshare.half_life));
  add("PriorityFavorSmall", s.weights.favor_small ? "Yes" : "No");
  add("PriorityMaxAge", Seconds(s.weights.max_age));
  add("PriorityType",
      s.order == core::QueueOrder::kPriority ? "priority/multifactor" : "priority/basic");
  add("PriorityWeightAge", number(s.weights.age));
  add("PriorityWeightFairShare", number(s.weights.fairshare));
  add("PriorityWeightJobSize", number(s.weights.job_size));
  add("PriorityWeightPartition", number(s.weights.partition));
  add("PriorityWeightQOS", number(s.weights.qos));
  std::string tres;
  for (const core::NamedCount& t : s.weights.tres) {
    tres += (tres.empty() ? "" : ",") + t.name + "=" + number(t.count);
  }
  add("PriorityWeightTRES", tres.empty() ? "(null)" : tres);
  add("SchedulerParameters", sched_params);
  add("SchedulerType", s.backfill ? "sched/backfill" : "sched/builtin");
  add("SelectType", "select/cons_tres");
  add("SlurmctldTimeout", "N/A (berth)");
  add("SlurmdTimeout", number(opt.node_timeout_s) + " sec");
  add("SLURM_VERSION", std::string("berth ") + BERTH_CONTROLLER_VERSION);
  add("TopologyPlugin", s.topology_aware ? "topology/tree" : "topology/none");
  json body = {{"config", std::move(rows)}};
  net::HttpResponse r;
  r.status = 200;
  r.body = body.dump() + "\n";
  return r;
}

net::HttpResponse Controller::Impl::ListJobs(const net::HttpRequest& req, const Caller& who) {
  JobFilter f;
  auto q = [&](const char* k) { return req.query.count(k) ? req.query.at(k) : std::string(); };
  f.users = SplitList(q("user"));
  f.states = SplitList(q("state"));
  f.partitions = SplitList(q("partition"));
  for (const std::string& s : SplitList(q("ids"))) {
    if (std::optional<core::JobId> id = ParseId(s.substr(0, s.find('_')))) f.ids.push_back(*id);
  }
  if (!q("array").empty()) f.array = ParseId(q("array")).value_or(0);
  f.all = q("all") == "1" || q("all") == "true";
  const bool with_exec = q("exec") == "1" || q("exec") == "true";
  const bool with_steps = q("steps") == "1" || q("steps") == "true";
  net::HttpResponse out;
  std::string& body = out.body;
  body = "{\"jobs\":[";
  {
    ReaderLock l(view_mu);
    bool first = true;
    for (const auto& [id, r] : records) {
      if (!f.Match(*r)) continue;
      if (!first) body += ',';
      first = false;
      if (!with_exec) {
        AppendListJson(*r, *pending_view, with_steps, body);
        continue;
      }
      json v = JobForCaller(who, *r);
      AddPendingView(*r, *pending_view, v);
      body += v.dump();
    }
  }
  body += "]}\n";
  return out;
}

Result<CommandLine> CommandLineOf(const json& body, const std::string& program) {
  const std::string what = program + " view: ";
  if (!body.is_object() || !body.contains("args") || !body.at("args").is_array()) {
    return Status::InvalidArgument(what + "\"args\" (an array of strings) is needed");
  }
  CommandLine c{{program}, {}};
  try {
    for (const json& a : body.at("args")) c.args.push_back(a.get<std::string>());
    if (body.contains("env")) {
      for (const auto& [k, v] : body.at("env").items()) c.env[k] = v.get<std::string>();
    }
  } catch (const std::exception&) {
    return Status::InvalidArgument(what + "arguments and variables are strings");
  }
  return c;
}

namespace {

// A record's view as Slurm's commands show it, with the last pass's word on a pending job, into
// `*v` (as slurm::FillJobView).
void FillViewOf(const JobRecord& r, const PendingMap& pending, bool with_exec, Time now,
                uint32_t parts, slurm::JobView* v) {
  slurm::JobRecordFacts f = SlurmFactsOf(r);
  const SchedulerWord w = WordOf(r, pending);
  f.priority = w.priority;
  f.reason = w.has_reason ? std::string(core::PendingReasonName(w.reason)) : "";
  f.expected_start = w.expected_start;
  slurm::FillJobView(f, r.job.spec, with_exec ? r.job.exec.get() : nullptr, now, parts, v);
}

}  // namespace

const std::string& OwnTimeZone() {
  static const std::string tz = [] {
    const char* v = std::getenv("TZ");
    return std::string(v == nullptr ? "" : v);
  }();
  return tz;
}

std::vector<std::shared_ptr<const JobRecord>> Controller::Impl::ActiveRecords(
    bool ended_too, std::shared_ptr<const PendingMap>* pending) const {
  std::vector<std::shared_ptr<const JobRecord>> jobs;
  ReaderLock l(view_mu);
  jobs.reserve(records.size());
  for (const auto& [id, r] : records) {
    if (ended_too || !core::IsTerminal(r->job.state)) jobs.push_back(r);
  }
  *pending = pending_view;
  return jobs;
}

Result<slurm::ScancelOptions> ScancelOptionsOf(const json& body) {
  Result<CommandLine> line = CommandLineOf(body, "scancel");
  if (!line.ok()) return line.status();
  slurm::ScancelParse parsed = slurm::ParseScancelArgs(
      line->args,
      std::vector<std::pair<std::string, std::string>>(line->env.begin(), line->env.end()));
  slurm::ScancelOptions& o = parsed.options;
  if (parsed.done || o.IdsOnly()) {
    return Status::InvalidArgument("scancel: only a filtered scancel selects jobs here");
  }
  if (body.contains("uid") && body.at("uid").is_number_unsigned()) {
    o.uid = body.at("uid").get<uint32_t>();
  }
  return std::move(o);
}

slurm::ScancelSelection Controller::Impl::ScancelTargets(const slurm::ScancelOptions& o) const {
  const Time now = std::time(nullptr);
  std::shared_ptr<const PendingMap> pending;
  const std::vector<std::shared_ptr<const JobRecord>> jobs = ActiveRecords(false, &pending);
  // One view at a time, made again for each record (10,000 views at once were most of a
  // `scancel -u`: their memory's first touch). scancel's filters read none of a view's costly
  // parts (slurm::ViewPart).
  slurm::JobView view;
  return slurm::SelectScancelTargets(o,
                                     [&](const std::function<void(const slurm::JobView&)>& visit) {
                                       for (const std::shared_ptr<const JobRecord>& r : jobs) {
                                         view = slurm::JobView();
                                         FillViewOf(*r, *pending, false, now, 0, &view);
                                         visit(view);
                                       }
                                     });
}

net::HttpResponse Controller::Impl::ScancelView(const json& body) {
  // {"args": scancel's arguments, "env": its SCANCEL_* variables, "uid": -u's or --me's user,
  //  as the caller resolved it}: the jobs its filters select among the active ones, as scancel
  // selects them from GET /v1/jobs (the same views, without run specifications).
  Result<slurm::ScancelOptions> o = ScancelOptionsOf(body);
  if (!o.ok()) return Error(o.status());
  const slurm::ScancelSelection sel = ScancelTargets(*o);
  // {"errors": [...], "exit_code": N, "targets": [{"display_id": D, "ids": [...]}, ...]},
  // written without a tree (a target for each of 10,000 jobs was a fifth of a scancel -u).
  net::HttpResponse out;
  out.status = 200;
  out.body.reserve(64 + sel.targets.size() * 40);
  JsonText w(&out.body);
  w.Open();
  WriteScancelSelection(sel, w);
  w.Key("targets");
  w.OpenArray();
  for (const slurm::ScancelTarget& t : sel.targets) {
    w.Next();
    w.Open();
    w.Key("display_id");
    w.String(t.display_id);
    w.Key("ids");
    w.OpenArray();
    for (const std::string& id : t.request_ids) {
      w.Next();
      w.String(id);
    }
    w.CloseArray();
    w.Close();
  }
  w.CloseArray();
  w.Close();
  out.body += '\n';
  return out;
}

void WriteScancelSelection(const slurm::ScancelSelection& sel, JsonText& w) {
  w.Key("errors");
  w.OpenArray();
  for (const std::string& e : sel.errors) {
    w.Next();
    w.String(e);
  }
  w.CloseArray();
  w.Key("exit_code");
  w.Int(sel.exit_code);
}

net::HttpResponse Controller::Impl::SqueueView(const json& body) {
  // {"args": squeue's arguments, "env": its SQUEUE_* variables, "uid": the caller's (--me),
  //  "now", "time_format": SLURM_TIME_FORMAT, "tz": TZ}: the same options parsed here.
  Result<CommandLine> line = CommandLineOf(body, "squeue");
  if (!line.ok()) return Error(line.status());
  const std::vector<std::string>& args = line->args;
  const auto& env = line->env;
  // Local times (--start's, %V, ...) are made in this process's zone: a caller in another one
  // renders its own lines (from GET /v1/jobs).
  if (body.value("tz", std::string()) != OwnTimeZone()) {
    return Error(Status::FailedPrecondition("squeue view: the caller's time zone is not ours"));
  }
  const slurm::SqueueParse parsed = slurm::ParseSqueueArgs(
      args,
      [&env](std::string_view name) -> std::optional<std::string> {
        auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      body.value("uid", 0u));
  // Shared with the answer's stream, which reads the lines after this function has returned.
  const auto options = std::make_shared<const slurm::SqueueOptions>(std::move(parsed.options));
  const slurm::SqueueOptions& o = *options;
  if (parsed.exit.done || o.json || o.steps) {
    return Error(Status::InvalidArgument("squeue view: only squeue's job lines are made here"));
  }
  slurm::SqueueContext ctx;
  ctx.now = body.value("now", Time{0});
  if (ctx.now <= 0) ctx.now = std::time(nullptr);
  ctx.cluster = opt.config.cluster.name;
  ctx.time_format = body.value("time_format", std::string());
  // The records are taken under the lock, their views made after it (a pass can publish
  // meanwhile). Without -t, no ended job is shown.
  std::shared_ptr<const PendingMap> pending;
  std::vector<std::shared_ptr<const JobRecord>> jobs =
      ActiveRecords(!o.filter.states.empty(), &pending);
  if (o.filter.users_given) {
    // -u/--me: a job that names its user (the name its view shows) and is not one of theirs is
    // dropped before its view is made: a user's squeue on a busy cluster makes their views only.
    std::erase_if(jobs, [&](const std::shared_ptr<const JobRecord>& r) {
      const core::JobSpec& s = *r->job.spec;
      return !s.user.empty() && !slurm::SqueueUserMatches(o.filter, s.user, s.uid);
    });
  }
  if (!o.filter.jobs.empty()) {
    // -j: only the jobs the list names by their own id or their array's (a superset of what
    // slurm::FilterRows keeps), before any view is made: one job's line costs one view.
    std::erase_if(jobs, [&](const std::shared_ptr<const JobRecord>& r) {
      return std::none_of(
          o.filter.jobs.begin(), o.filter.jobs.end(), [&](const slurm::JobIdFilter& f) {
            return f.id == r->job.id ||
                   (r->job.array_job_id != core::kNoJob && f.id == r->job.array_job_id);
          });
    });
  }
  std::map<std::string, int64_t> tiers;
  if (o.per_partition) {
    std::shared_ptr<const json> partitions;
    {
      ReaderLock l(view_mu);
      partitions = partition_view;
    }
    tiers = slurm::PartitionTiersOf(*partitions);
  }
  // Views and lines are made on a few threads, each for a slice of the jobs in order, and put
  // together as if made one after another (at 100,000 jobs they are most of the answer's time).
  const slurm::OutputFormat format = slurm::SqueueFormat(o, nullptr);
  const uint32_t view_parts = slurm::SqueueViewParts(format, o.percent_form);
  const size_t slices = SliceCount(jobs.size(), 8192, 4);
  std::vector<std::unique_ptr<slurm::SqueueTableBuilder>> parts(slices);
  for (std::unique_ptr<slurm::SqueueTableBuilder>& part : parts) {
    part = std::make_unique<slurm::SqueueTableBuilder>(o, format, tiers, ctx);
  }
  ForEachSlice(jobs.size(), slices, [&](size_t k, size_t begin, size_t end) {
    slurm::SqueueTableBuilder& part = *parts[k];
    part.Reserve(end - begin);
    for (size_t i = begin; i < end; ++i) {
      FillViewOf(*jobs[i], *pending, true, ctx.now, view_parts, &part.NewView());
      part.AddNewView();
    }
  });
  jobs.clear();
  std::shared_ptr<slurm::SqueueTableBuilder> table = std::move(parts[0]);
  for (size_t k = 1; k < slices; ++k) table->Append(std::move(*parts[k]));
  net::HttpResponse out;
  out.status = 200;
  out.content_type = "text/plain; charset=utf-8";
  // The lines are sent as they are put in order, a buffer's worth at a time, instead of being
  // joined first: 100,000 lines are 8 MB, and a fresh block of that size was a page fault per
  // page on every squeue (squeue prints them as they come). The stream runs after this function
  // returns: it holds the table and the options the table reads.
  out.stream = [options, table](net::ResponseStream& stream) {
    constexpr size_t kFlushBytes = 64 << 10;
    std::string buffer;
    buffer.reserve(kFlushBytes + 4096);
    bool open = true;
    table->FinishTo([&](std::string_view piece) {
      if (!open) return;  // the caller has gone: nothing more to send
      buffer.append(piece);
      if (buffer.size() >= kFlushBytes) {
        open = stream.Write(buffer);
        buffer.clear();
      }
    });
    if (open && !buffer.empty()) stream.Write(buffer);
  };
  return out;
}

net::HttpResponse Controller::Impl::GetJob(const Caller& who, core::JobId id) {
  std::shared_ptr<const JobRecord> rec;
  std::shared_ptr<const PendingMap> pending;
  {
    ReaderLock l(view_mu);
    auto it = records.find(id);
    if (it != records.end()) rec = it->second;
    pending = pending_view;
  }
  if (rec == nullptr) {
    Result<std::optional<store::JobRow>> row = FinishedRow(id);
    if (row.ok() && row->has_value()) {
      Result<JobRecord> r = DecodeJobRow(**row);
      if (r.ok()) return JsonResponse(200, JobForCaller(who, *r));
    }
    return Error(Status::NotFound("Invalid job id specified: " + std::to_string(id)));
  }
  json v = JobForCaller(who, *rec);
  AddPendingView(*rec, *pending, v);
  return JsonResponse(200, v);
}

Result<std::optional<store::JobRow>> Controller::Impl::FinishedRow(core::JobId id) const {
  BERTH_ASSIGN_OR_RETURN(std::optional<store::JobRow> row, store->GetJob(id));
  if (row.has_value() || archive == nullptr) return row;
  return archive->GetJob(id);
}

net::HttpResponse Controller::Impl::GetArrayTask(const Caller& who, const std::string& text) {
  size_t underscore = text.find('_');
  std::optional<core::JobId> array = ParseId(text.substr(0, underscore));
  int32_t task = -1;
  std::string task_text = text.substr(underscore + 1);
  if (!array || !ParseNumber(task_text, task) || task < 0) {
    return Error(Status::InvalidArgument("Invalid job id specified: " + text));
  }
  ReaderLock l(view_mu);
  const JobRecord* master = nullptr;
  for (auto it = records.lower_bound(*array); it != records.end(); ++it) {
    const core::Job& j = it->second->job;
    if (j.array_job_id != *array) continue;
    if (j.array_task_id == task) {
      json v = JobForCaller(who, *it->second);
      AddPendingView(*it->second, *pending_view, v);
      return JsonResponse(200, v);
    }
    if (j.is_array_master()) master = it->second.get();
  }
  // Still pending inside the array's own record: that record stands for the task.
  if (master != nullptr) {
    const std::vector<int32_t>& ids = master->job.spec->array.task_ids;
    if (std::find(ids.begin(), ids.end(), task) != ids.end()) {
      json v = JobForCaller(who, *master);
      AddPendingView(*master, *pending_view, v);
      return JsonResponse(200, v);
    }
  }
  return Error(Status::NotFound("Invalid job id specified: " + text));
}

json NodeJson(const NodeView& n) {
  json gres = json::object();
  for (const core::NamedCount& g : n.spec.gres) gres[g.name] = g.count;
  std::string topology;  // as the configuration's Topology= writes it: "block1/leaf2"
  for (const std::string& level : n.spec.topology) {
    if (!topology.empty()) topology += '/';
    topology += level;
  }
  return {{"name", n.name},
          {"state", n.state},
          {"reservation_state", n.resv_state},
          {"reason", n.reason},
          {"reason_time", n.reason_time},
          {"reason_user", n.reason_user},
          {"cpus", n.spec.cpus},
          {"alloc_cpus", n.alloc_cpus},
          {"mem_mib", n.spec.mem_mib},
          {"alloc_mem_mib", n.alloc_mem_mib},
          {"gpus", n.spec.gpus},
          {"alloc_gpus", n.alloc_gpus},
          {"gres", gres},
          {"features", n.spec.features},
          {"topology", topology},
          {"partitions", n.partitions},
          {"jobs", n.jobs},
          {"weight", n.spec.weight},
          {"sockets", n.spec.sockets},
          {"cores_per_socket", n.spec.cores_per_socket},
          {"threads_per_core", n.spec.threads_per_core},
          {"last_seen", n.last_seen},
          {"agent_connected", n.agent_connected}};
}

namespace {

// A node's GPUs' measured use (its agent's last report, NVML), beside its GPU list: percent
// utilisation and memory in use per device, null where unmeasured (docs/api.md).
void AddGpuUse(const std::vector<UsageTable::GpuReading>& readings, size_t gpus, json& node) {
  json util = json::array(), memory = json::array();
  for (size_t i = 0; i < gpus; ++i) {
    util.push_back(nullptr);
    memory.push_back(nullptr);
  }
  for (const UsageTable::GpuReading& r : readings) {
    if (r.index < 0 || static_cast<size_t>(r.index) >= gpus) continue;  // the node changed
    util[static_cast<size_t>(r.index)] = r.utilization;
    if (r.memory_used_bytes >= 0) memory[static_cast<size_t>(r.index)] = r.memory_used_bytes;
  }
  node["gpu_utilization"] = std::move(util);
  node["gpu_memory_used_bytes"] = std::move(memory);
}

}  // namespace

net::HttpResponse Controller::Impl::ListNodes(const std::string& only) {
  std::shared_ptr<const std::vector<NodeView>> nodes;
  {
    ReaderLock l(view_mu);
    nodes = node_view;
  }
  const std::map<std::string, std::vector<UsageTable::GpuReading>> gpu_use =
      usage.GpuLatest(UsageTable::ClockMs());
  json out = json::array();
  for (const NodeView& n : *nodes) {
    if (!only.empty() && n.name != only) continue;
    out.push_back(NodeJson(n));
    if (auto it = gpu_use.find(n.name); it != gpu_use.end()) {
      AddGpuUse(it->second, n.spec.gpus.size(), out.back());
    }
  }
  if (!only.empty()) {
    if (out.empty()) return Error(Status::NotFound("Invalid node name specified: " + only));
    return JsonResponse(200, out.front());
  }
  return JsonResponse(200, {{"nodes", out}});
}

net::HttpResponse Controller::Impl::Watch(const net::HttpRequest& req) {
  std::string kinds = req.query.count("kinds") ? req.query.at("kinds") : "";
  net::HttpResponse r;
  r.content_type = "application/x-ndjson";
  // kinds=node... keeps node events, any other value job events (docs/api.md).
  const std::string needle =
      kinds.empty() ? ""
                    : std::string("\"type\":\"") + (kinds.rfind("node", 0) == 0 ? "node" : "job");
  r.stream = [this, needle](net::ResponseStream& out) {
    uint64_t next = watch_hub.Next();
    if (!out.Write("{\"type\":\"hello\"}\n")) return;
    while (!out.Closed()) {
      bool lost = false;
      WatchBatch events = watch_hub.Read(next, 1000, &next, &lost);
      if (lost && !out.Write("{\"type\":\"lost\"}\n")) return;
      if (events.empty()) {
        if (!ready || !out.Write("\n")) return;  // a keep-alive line
        continue;
      }
      std::string chunk;
      for (const std::string& e : events) {
        if (!needle.empty() && e.find(needle) == std::string::npos) continue;
        chunk += e;
        chunk += '\n';
      }
      if (!chunk.empty() && !out.Write(chunk)) return;
    }
  };
  return r;
}

}  // namespace berth::controller
