#include "sim/scenario.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>
#include <vector>

#include "common/hostlist.h"
#include "common/slurm_time.h"
#include "config/cluster_config.h"
#include "config/job_options.h"
#include "sim/virtual_cluster.h"

namespace berth::sim {
namespace {

using core::JobId;

struct Event {
  Time time = 0;
  int line = 0;
  std::vector<std::string> words;  // the verb first
};

std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\r') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// "90", "90s", "15m", "2h", "1d" -> seconds.
Result<Time> ParseWhen(std::string_view s) {
  int64_t mult = 1;
  if (!s.empty() && std::string_view("smhd").find(s.back()) != std::string_view::npos) {
    mult = s.back() == 's' ? 1 : s.back() == 'm' ? 60 : s.back() == 'h' ? 3600 : 86400;
    s.remove_suffix(1);
  }
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) {
    return Status::InvalidArgument("bad time '" + std::string(s) + "'");
  }
  return v * mult;
}

Result<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) {
    return Status::InvalidArgument("bad number '" + std::string(s) + "'");
  }
  return v;
}

std::string MemText(int64_t mib) {
  if (mib >= 1024 && mib % 1024 == 0) return std::to_string(mib / 1024) + "G";
  return std::to_string(mib) + "M";
}

std::string GpuText(uint64_t mask) {
  std::string out;
  for (int i = 0; i < 64; ++i) {
    if (!(mask >> i & 1)) continue;
    int j = i;
    while (j + 1 < 64 && (mask >> (j + 1) & 1)) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(i);
    if (j > i) out += '-' + std::to_string(j);
    i = j;
  }
  return out;
}

class Runner {
 public:
  explicit Runner(VirtualCluster vc) : vc_(std::move(vc)) {}
  Status Run(std::vector<Event> events);
  std::string log() const { return log_.str(); }

 private:
  Status Apply(const Event& ev, Time t);
  Status Submit(const Event& ev, Time t);
  Status Reserve(const Event& ev, Time t);
  Result<uint32_t> Node(const std::string& name) const;
  Result<JobId> Id(const std::vector<std::string>& words, size_t i) const;
  void LogPass(const core::Plan& plan, const core::ApplyResult& applied);
  std::string AllocText(const core::Allocation& a) const;

  VirtualCluster vc_;
  std::ostringstream log_;
  VirtualCluster::EndFn on_end_ = [this](const core::Job& j) {
    log_ << "  end " << j.id;
    if (j.array_task_id >= 0) log_ << " (" << j.array_job_id << '_' << j.array_task_id << ')';
    log_ << ' ' << core::JobStateName(j.state) << '\n';
  };
};

Status Runner::Run(std::vector<Event> events) {
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.time < b.time; });
  size_t next = 0;
  for (int guard = 0; guard < 1000000; ++guard) {
    Time t = vc_.NextEvent();
    if (next < events.size()) t = std::min(t, events[next].time);
    if (t >= kInfinite) return Status::Ok();
    log_ << "t=" << t << '\n';
    vc_.EndJobsAt(t, on_end_);
    for (const std::string& name : vc_.state().ExpireReservations(t)) {
      const core::ResvInfo* r = vc_.state().FindReservation(name);
      log_ << "  reservation " << name;
      if (r == nullptr) {
        log_ << " ended\n";
      } else {
        log_ << " repeats start=" << r->spec.start << " end=" << r->spec.end << '\n';
      }
    }
    for (; next < events.size() && events[next].time == t; ++next) {
      Status st = Apply(events[next], t);
      if (!st.ok()) return st.WithContext("line " + std::to_string(events[next].line));
    }
    vc_.Schedule(
        t, [this](const core::Plan& p, const core::ApplyResult& a) { LogPass(p, a); }, on_end_);
  }
  return Status::Internal("scenario did not finish");
}

// reserve NAME [start=TIME] (duration=TIME | end=TIME) (nodes=HOSTLIST | nodecnt=N)
//         [users=a,b] [accounts=x,y] [flags=MAINT,...] [partition=P]
Status Runner::Reserve(const Event& ev, Time t) {
  if (ev.words.size() < 2) return Status::InvalidArgument("reserve needs a name");
  core::ResvSpec s;
  s.name = ev.words[1];
  s.start = t;
  Duration duration = -1;
  int32_t count = 0;
  s.end = kNoTime;
  auto names = [](std::string_view v) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t comma = v.find(',', pos);
      if (comma == std::string_view::npos) comma = v.size();
      if (comma > pos) out.emplace_back(v.substr(pos, comma - pos));
      pos = comma + 1;
    }
    return out;
  };
  for (size_t i = 2; i < ev.words.size(); ++i) {
    const std::string& w = ev.words[i];
    size_t eq = w.find('=');
    std::string key = w.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (key == "start") {
      BERTH_ASSIGN_OR_RETURN(s.start, ParseWhen(value));
    } else if (key == "end") {
      BERTH_ASSIGN_OR_RETURN(s.end, ParseWhen(value));
    } else if (key == "duration") {
      BERTH_ASSIGN_OR_RETURN(duration, ParseWhen(value));
    } else if (key == "nodes") {
      BERTH_ASSIGN_OR_RETURN(s.nodes, hostlist::Expand(value));
      s.flags |= core::kResvSpecNodes;
    } else if (key == "nodecnt") {
      BERTH_ASSIGN_OR_RETURN(int64_t n, ParseInt(value));
      count = static_cast<int32_t>(n);
    } else if (key == "users") {
      s.users = names(value);
    } else if (key == "accounts") {
      s.accounts = names(value);
    } else if (key == "flags") {
      BERTH_ASSIGN_OR_RETURN(uint32_t flags, core::ParseResvFlags(value));
      s.flags |= flags;
    } else if (key == "partition") {
      s.partition = value;
    } else {
      return Status::InvalidArgument("unknown reserve key '" + key + "'");
    }
  }
  if (duration >= 0) s.end = s.start + duration;
  if (s.end == kNoTime) return Status::InvalidArgument("reserve needs end= or duration=");
  if (s.users.empty() && s.accounts.empty()) s.users = {"root"};
  Result<std::string> name = vc_.state().AddReservation(std::move(s), count, t);
  if (!name.ok()) {
    log_ << "  reserve rejected: " << name.status().message() << '\n';
    return Status::Ok();
  }
  const core::ResvInfo* r = vc_.state().FindReservation(*name);
  log_ << "  reserve " << *name << " start=" << r->spec.start << " end=" << r->spec.end
       << " nodes=" << hostlist::Compress(r->spec.nodes);
  if (r->spec.flags != 0) log_ << " flags=" << core::ResvFlagsText(r->spec.flags);
  log_ << '\n';
  return Status::Ok();
}

Result<uint32_t> Runner::Node(const std::string& name) const {
  std::optional<uint32_t> n = vc_.state().FindNode(name);
  if (!n) return Status::InvalidArgument("unknown node '" + name + "'");
  return *n;
}

Result<JobId> Runner::Id(const std::vector<std::string>& words, size_t i) const {
  if (i >= words.size()) return Status::InvalidArgument(words[0] + ": missing job id");
  BERTH_ASSIGN_OR_RETURN(int64_t id, ParseInt(words[i]));
  return static_cast<JobId>(id);
}

Status Runner::Submit(const Event& ev, Time t) {
  core::JobSpec spec;
  Duration run = kInfinite;
  int32_t exit_code = 0;
  int64_t count = 1;
  for (size_t i = 1; i < ev.words.size(); ++i) {
    std::string_view w = ev.words[i];
    if (w.substr(0, 2) != "--")
      return Status::InvalidArgument("expected --option, got '" + ev.words[i] + "'");
    w.remove_prefix(2);
    size_t eq = w.find('=');
    std::string_view name = w.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : w.substr(eq + 1);
    if (name == "run") {
      BERTH_ASSIGN_OR_RETURN(run, ParseWhen(value));
    } else if (name == "exit") {
      BERTH_ASSIGN_OR_RETURN(int64_t e, ParseInt(value));
      exit_code = static_cast<int32_t>(e);
    } else if (name == "count") {
      BERTH_ASSIGN_OR_RETURN(count, ParseInt(value));
    } else {
      BERTH_RETURN_IF_ERROR(config::ApplyJobOption(name, value, t, spec));
    }
  }
  for (int64_t k = 0; k < count; ++k) {
    Result<JobId> id = vc_.state().Submit(spec, nullptr, t);
    if (!id.ok()) {
      log_ << "  submit rejected: " << id.status().message() << '\n';
      continue;
    }
    vc_.SetRunTime(*id, run, exit_code);
    log_ << "  submit " << *id << '\n';
  }
  return Status::Ok();
}

Status Runner::Apply(const Event& ev, Time t) {
  const std::string& verb = ev.words[0];
  core::ClusterState& cs = vc_.state();
  auto rest = [&](size_t from) {
    std::string s;
    for (size_t i = from; i < ev.words.size(); ++i) s += (s.empty() ? "" : " ") + ev.words[i];
    return s;
  };
  if (verb == "submit") return Submit(ev, t);
  if (verb == "reserve") return Reserve(ev, t);
  if (verb == "unreserve") {
    if (ev.words.size() < 2) return Status::InvalidArgument("unreserve needs a name");
    BERTH_RETURN_IF_ERROR(cs.DeleteReservation(ev.words[1]));
    log_ << "  unreserve " << ev.words[1] << '\n';
    return Status::Ok();
  }
  if (verb == "schedule") return Status::Ok();
  if (verb == "end") {
    BERTH_ASSIGN_OR_RETURN(JobId id, Id(ev.words, 1));
    core::JobOutcome o;
    o.end_time = t;
    o.state = core::JobState::kCompleted;
    if (ev.words.size() > 2) {
      std::optional<core::JobState> s = core::ParseJobState(ev.words[2]);
      if (!s) return Status::InvalidArgument("unknown job state '" + ev.words[2] + "'");
      o.state = *s;
      o.exit_code = *s == core::JobState::kCompleted ? 0 : 1;
    }
    bool requeue = ev.words.size() > 3 && ev.words[3] == "requeue";
    BERTH_RETURN_IF_ERROR(vc_.EndNow(id, o, requeue, on_end_));
    if (requeue) log_ << "  requeued " << id << " (" << core::JobStateName(o.state) << ")\n";
    return Status::Ok();
  }
  if (verb == "cancel") {
    BERTH_ASSIGN_OR_RETURN(JobId id, Id(ev.words, 1));
    const core::Job* job = cs.FindJob(id);
    if (job && job->state == core::JobState::kPending) {
      BERTH_RETURN_IF_ERROR(cs.CancelPending(id, t));
      log_ << "  cancelled " << id << '\n';
      return Status::Ok();
    }
    core::JobOutcome o;
    o.state = core::JobState::kCancelled;
    o.end_time = t;
    return vc_.EndNow(id, o, false, on_end_);
  }
  if (verb == "hold" || verb == "release" || verb == "nice" || verb == "timelimit") {
    BERTH_ASSIGN_OR_RETURN(JobId id, Id(ev.words, 1));
    if (verb == "hold") {
      bool admin = ev.words.size() > 2 && ev.words[2] == "admin";
      return cs.Hold(id, admin ? core::HoldKind::kAdmin : core::HoldKind::kUser);
    }
    if (verb == "release") return cs.Release(id, t);
    if (ev.words.size() < 3) return Status::InvalidArgument(verb + ": missing value");
    if (verb == "nice") {
      BERTH_ASSIGN_OR_RETURN(int64_t n, ParseInt(ev.words[2]));
      return cs.SetNice(id, static_cast<int32_t>(n));
    }
    BERTH_ASSIGN_OR_RETURN(Duration limit, ParseTimeLimit(ev.words[2]));
    return cs.SetTimeLimit(id, limit);
  }
  if (verb == "drain" || verb == "resume" || verb == "down" || verb == "up") {
    if (ev.words.size() < 2) return Status::InvalidArgument(verb + ": missing node");
    BERTH_ASSIGN_OR_RETURN(std::vector<std::string> names, hostlist::Expand(ev.words[1]));
    for (const std::string& name : names) {
      BERTH_ASSIGN_OR_RETURN(uint32_t n, Node(name));
      if (verb == "drain") BERTH_RETURN_IF_ERROR(cs.SetNodeDrain(n, true, rest(2), t));
      if (verb == "resume") BERTH_RETURN_IF_ERROR(cs.SetNodeDrain(n, false, "", t));
      if (verb == "down")
        BERTH_RETURN_IF_ERROR(cs.SetNodeHealth(n, core::NodeHealth::kDown, rest(2), t));
      if (verb == "up") BERTH_RETURN_IF_ERROR(cs.SetNodeHealth(n, core::NodeHealth::kUp, "", t));
    }
    return Status::Ok();
  }
  if (verb == "partition") {
    if (ev.words.size() < 3) return Status::InvalidArgument("partition: expected NAME STATE");
    std::optional<int16_t> p = cs.FindPartition(ev.words[1]);
    if (!p) return Status::InvalidArgument("unknown partition '" + ev.words[1] + "'");
    static const std::map<std::string, core::PartitionState> kStates = {
        {"UP", core::PartitionState::kUp},
        {"DOWN", core::PartitionState::kDown},
        {"DRAIN", core::PartitionState::kDrain},
        {"INACTIVE", core::PartitionState::kInactive}};
    auto it = kStates.find(ev.words[2]);
    if (it == kStates.end())
      return Status::InvalidArgument("unknown partition state '" + ev.words[2] + "'");
    return cs.SetPartitionState(*p, it->second);
  }
  return Status::InvalidArgument("unknown event '" + verb + "'");
}

std::string Runner::AllocText(const core::Allocation& a) const {
  std::string out;
  for (const core::NodeAllocation& n : a.nodes) {
    out += ' ' + vc_.state().node(n.node).spec.name + "[cpus=" + std::to_string(n.cpus) +
           " mem=" + MemText(n.mem_mib);
    if (n.gpu_mask) out += " gpus=" + GpuText(n.gpu_mask);
    for (const core::GpuShare& g : n.gpu_shares) {
      out += " share=" + std::to_string(g.device) + ':' + std::to_string(g.milli);
    }
    if (n.tasks > 1) out += " tasks=" + std::to_string(n.tasks);
    for (const core::NamedCount& g : n.gres) out += ' ' + g.name + '=' + std::to_string(g.count);
    out += ']';
  }
  for (const core::NamedCount& l : a.licenses)
    out += " license=" + l.name + ':' + std::to_string(l.count);
  return out;
}

void Runner::LogPass(const core::Plan& plan, const core::ApplyResult& applied) {
  for (const core::PlannedPreemption& p : plan.preemptions) {
    log_ << "  preempt " << p.victim << " for " << p.for_job << ' ' << core::PreemptModeName(p.mode)
         << '\n';
  }
  for (size_t i = 0; i < plan.starts.size(); ++i) {
    const core::PlannedStart& s = plan.starts[i];
    log_ << "  start " << s.job;
    if (s.array_task >= 0) log_ << '_' << s.array_task;
    if (applied.start_ids[i] != core::kNoJob && applied.start_ids[i] != s.job) {
      log_ << " as " << applied.start_ids[i];
    }
    log_ << " part=" << s.partition << " limit=" << FormatTimeLimit(s.time_limit)
         << AllocText(s.alloc);
    if (!s.after_preempting.empty()) log_ << " (after preemption)";
    log_ << '\n';
  }
  for (const core::PlannedCancel& c : plan.cancels) {
    log_ << "  cancel " << c.job << ' ' << core::JobStateName(c.state) << ": " << c.why << '\n';
  }
  for (const auto& [id, why] : applied.rejected)
    log_ << "  refused start " << id << ": " << why << '\n';
  for (const core::PendingInfo& p : plan.pending) {
    log_ << "  pending " << p.job << ' ' << core::PendingReasonName(p.reason);
    if (p.expected_start != kNoTime) log_ << " expect=" << p.expected_start;
    if (!p.detail.empty()) log_ << " (" << p.detail << ')';
    log_ << '\n';
  }
}

}  // namespace

Result<std::string> RunScenario(std::string_view text, std::string_view name) {
  config::ClusterConfig cfg;
  std::vector<Event> events;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    std::string where = std::string(name) + ":" + std::to_string(line_no);
    std::vector<std::string> words = Split(line.substr(0, line.find('#')));
    if (words.empty()) continue;
    if (words[0] != "at") {
      if (!events.empty()) {
        return Status::InvalidArgument(where + ": configuration after the first event");
      }
      Status st = config::ApplyConfigLine(line, cfg);
      if (!st.ok()) return st.WithContext(where);
      continue;
    }
    if (words.size() < 3) return Status::InvalidArgument(where + ": expected 'at TIME EVENT ...'");
    Result<Time> t = ParseWhen(words[1]);
    if (!t.ok()) return t.status().WithContext(where);
    Event ev;
    ev.time = *t;
    ev.line = line_no;
    ev.words.assign(words.begin() + 2, words.end());
    events.push_back(std::move(ev));
  }
  Result<VirtualCluster> vc = VirtualCluster::Create(cfg.cluster, cfg.scheduler);
  if (!vc.ok()) return vc.status().WithContext(std::string(name));
  Runner runner(std::move(*vc));
  Status st = runner.Run(std::move(events));
  if (!st.ok()) return st.WithContext(std::string(name));
  return runner.log();
}

}  // namespace berth::sim
