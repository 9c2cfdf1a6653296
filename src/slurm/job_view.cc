// JobView: the controller's job JSON turned into what Slurm 22.05's commands show. The rules for
// the request's numbers follow what slurmctld stores for a job at submission (NumNodes, NumCPUs,
// NumTasks, MinCPUsNode, TRES=), checked against the real Slurm on the shared sbatch oracle.
#include "slurm/job_view.h"

#include <grp.h>
#include <pwd.h>
#include <time.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "api/job_json.h"
#include "api/json_scan.h"
#include "common/hostlist.h"
#include "common/slurm_time.h"
#include "common/strings.h"
#include "common/units.h"
#include "core/model/array_spec.h"
#include "core/model/dependency.h"
#include "core/model/job.h"
#include "core/model/reason.h"

namespace berth::slurm {
namespace {

using nlohmann::json;

// Slurm's NO_VAL: what %a and %A print for a job that is not an array task.
constexpr uint32_t kNoVal = 0xfffffffe;

int64_t CeilDiv(int64_t a, int64_t b) {
  return b <= 0 ? a : (a + b - 1) / b;
}

std::string LookUpGroupName(uint32_t gid) {
  struct group gr, *found = nullptr;
  char buf[4096];
  if (getgrgid_r(gid, &gr, buf, sizeof(buf), &found) == 0 && found) return found->gr_name;
  return std::to_string(gid);
}

// A listing names the same few groups thousands of times: each is looked up once per process.
std::string GroupName(uint32_t gid) {
  thread_local std::unordered_map<uint32_t, std::string> known;
  auto it = known.find(gid);
  if (it == known.end()) it = known.emplace(gid, LookUpGroupName(gid)).first;
  return it->second;
}

std::string UserName(uint32_t uid) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found) return found->pw_name;
  return std::to_string(uid);
}

ClusterFacts ReadFacts(const json& record) {
  ClusterFacts f;
  if (!record.contains("slurm") || !record.at("slurm").is_object()) return f;
  const json& s = record.at("slurm");
  auto num = [&](const char* key, int64_t dflt) {
    return s.contains(key) && s.at(key).is_number_integer() ? s.at(key).get<int64_t>() : dflt;
  };
  auto flag = [&](const char* key, bool dflt) {
    return s.contains(key) && s.at(key).is_boolean() ? s.at(key).get<bool>() : dflt;
  };
  f.node_mem_mib = num("node_mem_mib", 0);
  f.node_cpus = num("node_cpus", 0);
  f.def_mem_per_cpu_mib = num("def_mem_per_cpu_mib", 0);
  f.def_mem_per_node_mib = num("def_mem_per_node_mib", 0);
  f.default_time_limit = num("default_time_limit", kInfinite);
  f.gpus_in_tres = flag("gpus_in_tres", true);
  f.accounting = flag("accounting", true);
  f.account_given = flag("account_given", true);
  return f;
}

Time TimeOf(const json& record, const char* key) {
  if (!record.contains(key) || !record.at(key).is_number_integer()) return kNoTime;
  Time t = record.at(key).get<Time>();
  return t <= 0 ? kNoTime : t;
}

// ---- The request's shape, as slurmctld records it at submission.

struct Shape {
  int32_t min_nodes = 1;
  int32_t max_nodes = 0;
  int32_t tasks = 1;
  int32_t cpus_per_task = 1;
  int32_t cpus = 1;
  int32_t min_cpus_node = 1;
  int32_t gpus = 0;  // over the whole job
};

Shape ShapeOf(const core::JobSpec& s) {
  Shape sh;
  sh.cpus_per_task = std::max(1, s.cpus_per_task);
  if (s.min_nodes > 0) {
    sh.min_nodes = s.min_nodes;
    sh.max_nodes = std::max(s.min_nodes, s.max_nodes);
  } else if (s.ntasks > 0 && s.ntasks_per_node > 0) {
    sh.min_nodes = static_cast<int32_t>(CeilDiv(s.ntasks, s.ntasks_per_node));
  }
  if (s.ntasks > 0) {
    sh.tasks = s.ntasks;
  } else if (s.ntasks_per_node > 0) {
    sh.tasks = s.ntasks_per_node * sh.min_nodes;
  } else if (s.ntasks_per_gpu > 0 && s.gpus_per_node > 0) {
    sh.tasks = s.ntasks_per_gpu * s.gpus_per_node * sh.min_nodes;
  } else {
    sh.tasks = sh.min_nodes;  // sbatch: one task per node when -n is not given
  }
  if (s.gpus > 0) {
    sh.gpus = s.gpus;
  } else if (s.gpus_per_node > 0) {
    sh.gpus = s.gpus_per_node * sh.min_nodes;
  } else if (s.gpus_per_task > 0) {
    sh.gpus = s.gpus_per_task * sh.tasks;
  }
  int64_t cpus = int64_t{sh.tasks} * sh.cpus_per_task;
  // sbatch -O asks for one CPU a node (min_cpus = the node count): Slurm 22.05.8 records
  // "-O -N2 -n4 -c8" as NumCPUs=2, TRES=cpu=2, with or without --exclusive.
  if (s.overcommit) cpus = sh.min_nodes;
  if (s.cpus_per_gpu > 0) cpus = std::max<int64_t>(cpus, int64_t{sh.gpus} * s.cpus_per_gpu);
  sh.cpus = static_cast<int32_t>(std::min<int64_t>(cpus, INT32_MAX));
  sh.min_cpus_node =
      s.ntasks_per_node > 0 ? s.ntasks_per_node * sh.cpus_per_task : sh.cpus_per_task;
  if (s.cpus_per_gpu > 0 && s.gpus_per_node > 0) {
    sh.min_cpus_node = std::max(sh.min_cpus_node, s.gpus_per_node * s.cpus_per_gpu);
  }
  return sh;
}

// NumNodes of a job that names no node count: slurmctld's estimate from its tasks, as many on a
// node as the node's CPUs hold and at least one (Slurm 22.05.8 on 256-CPU nodes: -n600 is 3
// nodes, -n3 -c100 is 2, -n3 -c300 is 3, -c300 is 1). Only NumNodes shows it: TRES= keeps
// node=1 and the memory of one node.
int32_t EstimatedNodes(const core::JobSpec& s, const Shape& sh, const ClusterFacts& f) {
  if (s.min_nodes > 0 || s.ntasks_per_node > 0 || f.node_cpus <= 0) return sh.min_nodes;
  const int64_t per_node = std::max<int64_t>(1, f.node_cpus / sh.cpus_per_task);
  const int64_t nodes = CeilDiv(int64_t{sh.tasks}, per_node);
  return static_cast<int32_t>(std::clamp<int64_t>(nodes, sh.min_nodes, INT32_MAX));
}

// Slurm prints memory in TRES strings as convert_num_unit(CONVERT_NUM_UNIT_EXACT) does: a larger
// unit while the value is a whole number of half units (64000M is "62.50G", 65000M stays "M").
std::string TresMem(int64_t mib) {
  return FormatMemoryMiB(mib);
}

std::string TresText(int64_t cpus, int64_t mem_mib, int64_t nodes, int64_t gpus,
                     const std::string& gpu_type, bool gpus_in_tres) {
  std::string t = "cpu=" + std::to_string(cpus);
  if (mem_mib > 0) t += ",mem=" + TresMem(mem_mib);
  t += ",node=" + std::to_string(nodes) + ",billing=" + std::to_string(cpus);
  if (gpus_in_tres && gpus > 0) {
    t += ",gres/gpu=" + std::to_string(gpus);
    if (!gpu_type.empty()) t += ",gres/gpu:" + gpu_type + "=" + std::to_string(gpus);
  }
  return t;
}

// Memory asked for over the whole job (TRES mem=), and the MinMemory* fields.
void SetMemory(const core::JobSpec& s, const Shape& sh, const ClusterFacts& f, JobView& v) {
  if (s.mem_per_cpu_mib > 0) {
    v.min_memory_cpu_mib = s.mem_per_cpu_mib;
    v.req_mem_mib = s.mem_per_cpu_mib * sh.cpus;
  } else if (s.mem_per_node_mib > 0) {
    v.min_memory_node_mib = s.mem_per_node_mib;
    v.req_mem_mib = s.mem_per_node_mib * sh.min_nodes;
  } else if (s.mem_per_gpu_mib > 0) {
    v.min_memory_node_mib = 0;
    v.req_mem_mib = s.mem_per_gpu_mib * sh.gpus;
  } else if (s.mem_per_node_mib < 0 && f.def_mem_per_cpu_mib > 0) {
    v.min_memory_cpu_mib = f.def_mem_per_cpu_mib;
    v.req_mem_mib = f.def_mem_per_cpu_mib * sh.cpus;
  } else if (s.mem_per_node_mib < 0 && f.def_mem_per_node_mib > 0) {
    v.min_memory_node_mib = f.def_mem_per_node_mib;
    v.req_mem_mib = f.def_mem_per_node_mib * sh.min_nodes;
  } else {
    // --mem=0, or nothing and no default: each node's whole memory.
    v.min_memory_node_mib = 0;
    v.req_mem_mib = f.node_mem_mib * sh.min_nodes;
  }
}

// "gres:gpu:a100:8" (Slurm 22.05 keeps GPU requests as tres_per_* strings).
std::string GpuTres(const std::string& type, int64_t count) {
  return "gres:gpu:" + (type.empty() ? "" : type + ":") + std::to_string(count);
}

// A GPU share as Slurm's MPS gres counts it: percent of one device (100 per GPU).
int64_t MpsPercent(int64_t milli) {
  return (milli + 9) / 10;
}

void SetTresPer(const core::JobSpec& s, JobView& v) {
  std::vector<std::string> per_node;
  if (s.gpus_per_node > 0) per_node.push_back(GpuTres(s.gpu_type, s.gpus_per_node));
  if (s.gpu_milli > 0) {
    per_node.push_back("gres:mps:" + (s.gpu_type.empty() ? "" : s.gpu_type + ":") +
                       std::to_string(MpsPercent(s.gpu_milli)));
  }
  for (const core::NamedCount& g : s.gres) {
    per_node.push_back("gres:" + g.name + ":" + std::to_string(g.count));
  }
  for (const std::string& p : per_node) v.tres_per_node += (v.tres_per_node.empty() ? "" : ",") + p;
  if (s.gpus > 0) v.tres_per_job = GpuTres(s.gpu_type, s.gpus);
  if (s.gpus_per_task > 0) v.tres_per_task = GpuTres(s.gpu_type, s.gpus_per_task);
  if (s.cpus_per_gpu > 0) v.cpus_per_tres = "gres:gpu:" + std::to_string(s.cpus_per_gpu);
  if (s.mem_per_gpu_mib > 0) v.mem_per_tres = "gres:gpu:" + std::to_string(s.mem_per_gpu_mib);
  v.ntasks_per_tres = s.ntasks_per_gpu;
}

std::string LicensesText(const std::vector<core::NamedCount>& licenses) {
  std::string out;
  for (const core::NamedCount& l : licenses) {
    if (!out.empty()) out += ",";
    out += l.name;
    if (l.count != 1) out += ":" + std::to_string(l.count);
  }
  return out;
}

// Slurm's print_mail_type(): the flags in its fixed order; "ALL" is the first six.
std::string MailTypeText(const std::string& given) {
  static const char* const kOrder[] = {"INVALID_DEPEND", "BEGIN",         "END",
                                       "FAIL",           "REQUEUE",       "STAGE_OUT",
                                       "TIME_LIMIT",     "TIME_LIMIT_90", "TIME_LIMIT_80",
                                       "TIME_LIMIT_50",  "ARRAY_TASKS"};
  std::vector<std::string> set;
  std::string upper = ToUpper(given);
  size_t start = 0;
  while (start <= upper.size()) {
    size_t comma = upper.find(',', start);
    if (comma == std::string::npos) comma = upper.size();
    std::string word = upper.substr(start, comma - start);
    if (word == "ALL") {
      for (int i = 0; i < 6; ++i) set.push_back(kOrder[i]);
    } else if (!word.empty() && word != "NONE") {
      set.push_back(word);
    }
    start = comma + 1;
  }
  std::string out;
  for (const char* name : kOrder) {
    if (std::find(set.begin(), set.end(), name) == set.end()) continue;
    out += (out.empty() ? "" : ",") + std::string(name);
  }
  return out;
}

// scontrol's _fname_format(): %A %a %j %u %x (with an optional width digit) and %% expanded,
// other patterns (%N, %n, %t, %J, ...) kept; relative paths are put under the work dir.
std::string ExpandPath(const std::string& pattern, const JobView& v) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    if (pattern[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t j = i + 1;
    int width = 0;
    while (j < pattern.size() && IsDigit(pattern[j])) {
      width = width * 10 + (pattern[j] - '0');
      ++j;
    }
    if (j >= pattern.size()) {
      out += pattern.substr(i);
      break;
    }
    width = std::min(width, 10);
    auto pad = [&](uint64_t n) {
      std::string d = std::to_string(n);
      if (static_cast<int>(d.size()) < width) d.insert(0, width - d.size(), '0');
      return d;
    };
    const bool task = v.array_task_id >= 0;
    switch (pattern[j]) {
      case 'A':
        out += pad(task || v.array_job_id != 0 ? v.array_job_id : v.job_id);
        break;
      case 'a':
        out += pad(task ? static_cast<uint32_t>(v.array_task_id) : kNoVal);
        break;
      case 'j':
        out += pad(v.job_id);
        break;
      case 'u':
        out += v.user;
        break;
      case 'x':
        out += v.name;
        break;
      default:
        out += pattern.substr(i, j - i + 1);
        break;
    }
    i = j;
  }
  if (!out.empty() && out[0] == '/') return out;
  return v.work_dir + "/" + out;
}

void SetPaths(const core::JobExecSpec& e, bool paths, JobView& v) {
  v.comment = e.comment;
  v.mail_type = MailTypeText(e.mail_type);
  v.mail_user = e.mail_user.empty() && !v.mail_type.empty() ? v.user : e.mail_user;
  if (!paths) return;
  v.work_dir = e.work_dir;
  if (!v.batch) {
    v.std_in = v.std_out = v.std_err = "";
    return;
  }
  std::string out_pattern = e.stdout_pattern;
  if (out_pattern.empty()) {
    out_pattern = v.array_job_id != 0 ? "slurm-%A_%a.out" : "slurm-%j.out";
  }
  v.std_out = ExpandPath(out_pattern, v);
  v.std_err = ExpandPath(e.stderr_pattern.empty() ? out_pattern : e.stderr_pattern, v);
  v.std_in = e.stdin_path.empty() ? "/dev/null" : ExpandPath(e.stdin_path, v);
}

void SetIdentity(const JobRecordFacts& r, const core::JobSpec& s, JobView& v) {
  v.job_id = r.id;
  v.array_job_id = r.array_job_id;
  v.array_task_id = r.array_task_id;
  if (v.array_job_id == 0 && !s.array.empty()) v.array_job_id = v.job_id;  // the master
  if (v.array_job_id != 0 && v.array_task_id < 0 && !s.array.empty()) {
    v.array_pending_tasks = core::FormatArrayTaskIds(s.array.task_ids, s.array.max_running);
    v.array_max_running = s.array.max_running;
  }
  if (v.array_task_id >= 0) {
    v.display_id = std::to_string(v.array_job_id) + "_" + std::to_string(v.array_task_id);
  } else if (!v.array_pending_tasks.empty()) {
    v.display_id = std::to_string(v.job_id) + "_[" + v.array_pending_tasks + "]";
  } else {
    v.display_id = std::to_string(v.job_id);
  }
  v.name = s.name;
  v.uid = s.uid;
  v.gid = s.gid;
  v.user = s.user.empty() ? UserName(s.uid) : s.user;
  v.group = GroupName(s.gid);
  v.account = r.cluster.account_given ? ToLower(s.account) : "";
  v.qos = r.cluster.accounting ? s.qos : "";
  v.submit_host = r.submit_host;
  v.reservation = s.reservation;
}

void SetState(const JobRecordFacts& r, const core::JobSpec& s, JobView& v) {
  v.state = r.state;
  v.state_text = std::string(core::JobStateName(v.state));
  v.state_compact = std::string(core::JobStateShortName(v.state));
  v.cancelled_by = r.cancelled_by;
  v.held = s.hold != core::HoldKind::kNone;
  v.admin_held = s.hold == core::HoldKind::kAdmin;
  v.priority = v.held ? 0 : r.priority;
  v.nice = s.nice;
  if (v.state == core::JobState::kPending) {
    v.reason = r.reason;
    if (v.reason.empty()) {
      v.reason = v.held ? (v.admin_held ? "JobHeldAdmin" : "JobHeldUser") : "None";
    }
    // Slurm's scheduler sets a job no node could ever hold to priority 0 (held).
    if (v.reason == "BadConstraints") v.priority = 0;
  }
  v.requeue = s.requeue;
  v.restarts = r.restart_count;
  v.exit_code = r.exit_code;
  v.exit_signal = r.term_signal;
  v.message = r.message;
}

Time Known(Time t) {
  return t <= 0 ? kNoTime : t;
}

void SetTimes(const JobRecordFacts& r, const core::JobSpec& s, Time now, JobView& v) {
  v.submit_time = Known(r.submit_time);
  v.eligible_time = v.held ? kNoTime : Known(r.eligible_time);
  v.begin_time = s.begin_time;
  v.deadline = s.deadline;
  v.expected_start = Known(r.expected_start);
  const Time start = Known(r.start_time);
  const Time end = Known(r.end_time);
  Duration limit = s.time_limit != kNoTime ? s.time_limit : r.cluster.default_time_limit;
  if (r.time_limit > 0) limit = r.time_limit;
  v.time_limit = limit;
  v.time_min = s.time_min;
  if (v.state == core::JobState::kPending || start == kNoTime) {
    v.start_time = v.expected_start;
    v.end_time = kNoTime;
    v.run_time = 0;
    return;
  }
  v.start_time = start;
  if (core::IsTerminal(v.state) && end != kNoTime) {
    v.end_time = end;
  } else {
    v.end_time = limit >= kInfinite ? kNoTime : start + limit;
    // Preempted with a GraceTime: it ends when the grace does (Slurm moves EndTime there).
    const Time preempt_end = Known(r.preempt_end);
    if (preempt_end != kNoTime && (v.end_time == kNoTime || preempt_end < v.end_time)) {
      v.end_time = preempt_end;
    }
  }
  Time stop = core::IsTerminal(v.state) && end != kNoTime ? end : now;
  v.run_time = std::max<Duration>(0, stop - start);
}

// Once the job holds (or held) an allocation, the allocation is what Slurm shows.
void SetAllocation(const JobRecordFacts& r, const std::string& gpu_type, bool tres, JobView& v) {
  if (r.nodes.empty()) return;
  int64_t cpus = 0, mem = 0, gpus = 0, milli = 0;
  v.node_names.reserve(r.nodes.size());
  for (const JobRecordFacts::Node& n : r.nodes) {
    v.node_names.push_back(n.name);
    cpus += n.cpus;
    mem += n.mem_mib;
    gpus += n.gpus;
    milli += n.gpu_milli;
  }
  v.nodes = hostlist::CompressSorted(v.node_names);
  v.batch_host = v.node_names.front();
  v.min_nodes = static_cast<int32_t>(v.node_names.size());
  v.max_nodes = 0;
  v.num_cpus = static_cast<int32_t>(cpus);
  if (!tres) return;
  v.alloc_tres = TresText(cpus, mem, v.min_nodes, gpus, gpu_type, r.cluster.gpus_in_tres);
  if (milli > 0) v.alloc_tres += ",gres/mps=" + std::to_string(MpsPercent(milli));
}

// The record's fields from its JSON (docs/formats/api.md).
Status FactsFromJson(const json& r, JobRecordFacts& f) {
  if (!r.is_object() || !r.contains("id") || !r.at("id").is_number_integer() ||
      !r.contains("state") || !r.at("state").is_string() || !r.contains("request")) {
    return Status::InvalidArgument("a job record needs \"id\", \"state\" and \"request\"");
  }
  f.id = r.at("id").get<uint32_t>();
  f.array_job_id = r.value("array_job_id", 0u);
  f.array_task_id = r.value("array_task_id", -1);
  f.state =
      core::ParseJobState(r.at("state").get<std::string>()).value_or(core::JobState::kPending);
  f.cancelled_by = r.value("cancelled_by", int64_t{-1});
  f.priority = r.value("priority", int64_t{0});
  f.reason = r.value("reason", std::string());
  f.restart_count = r.value("restart_count", 0);
  f.exit_code = r.value("exit_code", 0);
  f.term_signal = r.value("term_signal", 0);
  f.message = r.value("message", "");
  f.submit_time = TimeOf(r, "submit_time");
  f.eligible_time = TimeOf(r, "eligible_time");
  f.expected_start = TimeOf(r, "expected_start");
  f.start_time = TimeOf(r, "start_time");
  f.end_time = TimeOf(r, "end_time");
  f.preempt_end = TimeOf(r, "preempt_end_time");
  if (r.contains("time_limit") && r.at("time_limit").is_number_integer()) {
    f.time_limit = r.at("time_limit").get<Duration>();
  }
  f.submit_host = r.value("submit_host", "");
  f.partition = r.value("partition", std::string());
  if (r.contains("allocation") && r.at("allocation").contains("nodes")) {
    for (const json& n : r.at("allocation").at("nodes")) {
      JobRecordFacts::Node node;
      node.name = n.value("node", "");
      node.cpus = n.value("cpus", 0);
      node.mem_mib = n.value("mem_mib", int64_t{0});
      if (n.contains("gpus") && n.at("gpus").is_array()) {
        node.gpus = static_cast<int64_t>(n.at("gpus").size());
      }
      if (n.contains("gpu_shares") && n.at("gpu_shares").is_array()) {
        for (const json& g : n.at("gpu_shares")) node.gpu_milli += g.value("milli", int64_t{0});
      }
      f.nodes.push_back(std::move(node));
    }
  }
  if (r.contains("usage") && r.at("usage").is_object()) {
    const json& u = r.at("usage");
    f.cpu_seconds = u.value("cpu_seconds", 0.0);
    f.max_rss_mib = u.value("max_rss_mib", int64_t{0});
    f.gpu_utilization = u.value("gpu_utilization", -1.0);
  }
  f.cluster = ReadFacts(r);
  return Status::Ok();
}

// "%u-%u" when a maximum is set (even when equal), as scontrol's _sprint_range.
std::string Range(int64_t lo, int64_t hi) {
  return hi > 0 ? std::to_string(lo) + "-" + std::to_string(hi) : std::to_string(lo);
}

}  // namespace

Result<JobView> JobViewFromJson(const json& record, Time now) {
  try {
    JobRecordFacts facts;
    BERTH_RETURN_IF_ERROR(FactsFromJson(record, facts));
    core::JobSpec s;
    core::JobExecSpec e;
    BERTH_RETURN_IF_ERROR(api::DecodeJob(record.at("request"), &s, &e));
    return JobViewOf(facts, s, &e, now);
  } catch (const std::exception& ex) {
    return Status::InvalidArgument(std::string("bad job record: ") + ex.what());
  }
}

JobView JobViewOf(const JobRecordFacts& r, const core::JobSpec& s, const core::JobExecSpec* exec,
                  Time now, uint32_t parts) {
  JobView v;
  FillJobView(r, s, exec, now, parts, &v);
  return v;
}

void FillJobView(const JobRecordFacts& r, const core::JobSpec& s, const core::JobExecSpec* exec,
                 Time now, uint32_t parts, JobView* out) {
  static const core::JobExecSpec kNone;
  const core::JobExecSpec& e = exec != nullptr ? *exec : kNone;
  JobView& v = *out;
  SetIdentity(r, s, v);
  SetState(r, s, v);
  if ((parts & kViewDependency) != 0)
    v.dependency = core::FormatDependencyForScontrol(s.dependency);
  v.batch = !e.script.empty() || e.argv.empty();
  if ((parts & kViewCommand) != 0) {
    v.command = e.command;
    if (v.command.empty() && !e.argv.empty()) {
      for (const std::string& a : e.argv) v.command += (v.command.empty() ? "" : " ") + a;
    }
  }
  SetTimes(r, s, now, v);
  const Shape sh = ShapeOf(s);
  v.min_nodes = EstimatedNodes(s, sh, r.cluster);
  v.max_nodes = sh.max_nodes;
  v.num_tasks = sh.tasks;
  v.cpus_per_task = sh.cpus_per_task;
  v.num_cpus = sh.cpus;
  v.min_cpus_node = sh.min_cpus_node;
  v.ntasks_per_node = s.ntasks_per_node;
  v.ntasks_per_socket = s.ntasks_per_socket;
  v.ntasks_per_core = s.ntasks_per_core;
  v.gpus = sh.gpus;
  v.gpu_milli = int64_t{s.gpu_milli} * sh.min_nodes;
  SetMemory(s, sh, r.cluster, v);
  const bool tres = (parts & kViewTres) != 0;
  if (tres) {
    v.req_tres =
        TresText(sh.cpus, v.req_mem_mib, sh.min_nodes, sh.gpus, s.gpu_type, r.cluster.gpus_in_tres);
    if (s.gpu_milli > 0) {
      v.req_tres += ",gres/mps=" + std::to_string(MpsPercent(int64_t{s.gpu_milli} * sh.min_nodes));
    }
    SetTresPer(s, v);
  }
  v.features = s.constraint.text();
  v.licenses = LicensesText(s.licenses);
  if (s.exclusive == core::ExclusiveMode::kNode) {
    v.oversubscribe = "NO";
  } else if (s.exclusive == core::ExclusiveMode::kUser) {
    v.oversubscribe = "USER";
  } else if (s.oversubscribe) {
    v.oversubscribe = "YES";
  }
  if (!s.nodelist.empty()) v.req_nodes = hostlist::CompressUnique(s.nodelist);
  if (!s.exclude.empty()) v.exc_nodes = hostlist::CompressUnique(s.exclude);
  v.partition = r.partition;
  if (v.state == core::JobState::kPending || v.partition.empty()) {
    std::string joined;
    for (const std::string& p : s.partitions) {
      if (!joined.empty()) joined += ',';
      joined += p;
    }
    if (!joined.empty()) v.partition = std::move(joined);
  }
  SetPaths(e, (parts & kViewPaths) != 0, v);
  SetAllocation(r, s.gpu_type, tres, v);
  v.cpu_seconds = r.cpu_seconds;
  v.max_rss_mib = r.max_rss_mib;
  v.gpu_utilization = r.gpu_utilization;
  v.cpu_time = v.run_time * v.num_cpus;
}

Result<std::vector<JobView>> JobViewsFromList(std::string_view list, Time now, int* skipped) {
  if (skipped != nullptr) *skipped = 0;
  std::vector<JobView> views;
  // Views are large: counted first, so that the vector is allocated once and never moved.
  BERTH_ASSIGN_OR_RETURN(size_t count, api::CountArrayItems(list, "jobs"));
  views.reserve(count);
  // An element that is not JSON comes as a discarded value, which no job decodes from.
  BERTH_RETURN_IF_ERROR(api::ForEachArrayValue(list, "jobs", [&](const json& record) {
    Result<JobView> v = JobViewFromJson(record, now);
    if (v.ok()) {
      views.push_back(std::move(v).value());
    } else if (skipped != nullptr) {
      ++*skipped;
    }
  }));
  return views;
}

std::string SlurmTimeText(Time t) {
  if (t == kNoTime || t <= 0) return "Unknown";
  time_t tt = static_cast<time_t>(t);
  struct tm tm_local;
  if (localtime_r(&tt, &tm_local) == nullptr) return "Unknown";
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm_local);
  return buf;
}

std::string ExitCodeText(const JobView& v) {
  return std::to_string(v.exit_code) + ":" + std::to_string(v.exit_signal);
}

std::string DisplayJobId(const json& record) {
  std::string id = std::to_string(record.at("id").get<uint32_t>());
  int task = record.value("array_task_id", -1);
  if (task >= 0)
    return std::to_string(record.value("array_job_id", 0u)) + "_" + std::to_string(task);
  const json* array = nullptr;
  if (record.contains("request") && record.at("request").contains("array")) {
    array = &record.at("request").at("array");
  }
  if (array == nullptr || !array->is_string() || array->get<std::string>().empty()) return id;
  std::string left = array->get<std::string>();
  Result<core::ArraySpec> spec = core::ParseArraySpec(left, core::kSlurmMaxArraySize);
  if (spec.ok()) left = core::FormatArrayTaskIds(spec->task_ids, spec->max_running);
  return id + "_[" + left + "]";
}

std::string ArrayTaskIdText(const JobView& v) {
  if (v.array_task_id >= 0) return std::to_string(v.array_task_id);
  return v.array_pending_tasks;
}

std::string OrNull(const std::string& s) {
  return s.empty() ? "(null)" : s;
}

std::vector<std::pair<std::string, std::string>> ScontrolJobFields(const JobView& v, bool details) {
  std::vector<std::pair<std::string, std::string>> f;
  auto add = [&](std::string key, std::string value) {
    f.emplace_back(std::move(key), std::move(value));
  };
  add("JobId", std::to_string(v.job_id));
  if (v.array_job_id != 0) {
    add("ArrayJobId", std::to_string(v.array_job_id));
    add("ArrayTaskId", ArrayTaskIdText(v));
    if (v.array_max_running > 0) add("ArrayTaskThrottle", std::to_string(v.array_max_running));
  }
  add("JobName", v.name);
  add("UserId", v.user + "(" + std::to_string(v.uid) + ")");
  add("GroupId", v.group + "(" + std::to_string(v.gid) + ")");
  add("MCS_label", "N/A");
  add("Priority", std::to_string(v.priority));
  add("Nice", std::to_string(v.nice));
  add("Account", OrNull(v.account));
  add("QOS", OrNull(v.qos));
  add("JobState", v.state_text);
  // scontrol replaces white space in the reason ("ReqNodeNotAvail,_Reserved_for_maintenance").
  std::string reason = v.reason;
  std::replace(reason.begin(), reason.end(), ' ', '_');
  add("Reason", reason);
  add("Dependency", v.dependency);
  add("Requeue", v.requeue ? "1" : "0");
  add("Restarts", std::to_string(v.restarts));
  add("BatchFlag", v.batch ? "1" : "0");
  add("Reboot", "0");
  add("ExitCode", ExitCodeText(v));
  if (details) add("DerivedExitCode", "0:0");
  add("RunTime", FormatTimeLimit(v.run_time));
  add("TimeLimit", FormatTimeLimit(v.time_limit));
  add("TimeMin", v.time_min == kNoTime ? "N/A" : FormatTimeLimit(v.time_min));
  add("SubmitTime", SlurmTimeText(v.submit_time));
  add("EligibleTime", SlurmTimeText(v.eligible_time));
  add("AccrueTime", SlurmTimeText(v.eligible_time));
  add("StartTime", SlurmTimeText(v.start_time));
  add("EndTime", SlurmTimeText(v.end_time));
  add("Deadline", v.deadline == kNoTime ? "N/A" : SlurmTimeText(v.deadline));
  add("SuspendTime", "None");
  add("SecsPreSuspend", "0");
  add("LastSchedEval", SlurmTimeText(v.submit_time));
  add("Scheduler", "Main");
  add("Partition", v.partition);
  add("AllocNode:Sid", OrNull(v.submit_host) + ":0");
  add("ReqNodeList", OrNull(v.req_nodes));
  add("ExcNodeList", OrNull(v.exc_nodes));
  add("NodeList", v.nodes);
  if (!v.batch_host.empty()) add("BatchHost", v.batch_host);
  add("NumNodes", Range(v.min_nodes, v.max_nodes));
  add("NumCPUs", std::to_string(v.num_cpus));
  add("NumTasks", std::to_string(v.num_tasks));
  add("CPUs/Task", std::to_string(v.cpus_per_task));
  add("ReqB:S:C:T", "0:0:*:*");
  add("TRES", v.alloc_tres.empty() ? v.req_tres : v.alloc_tres);
  add("Socks/Node", "*");
  auto given = [](int32_t n) { return n > 0 ? std::to_string(n) : std::string("*"); };
  add("NtasksPerN:B:S:C", std::to_string(v.ntasks_per_node) + ":0:" + given(v.ntasks_per_socket) +
                              ":" + given(v.ntasks_per_core));
  add("CoreSpec", "*");
  add("MinCPUsNode", std::to_string(v.min_cpus_node));
  if (v.min_memory_cpu_mib >= 0) {
    add("MinMemoryCPU", FormatMemoryMiB(v.min_memory_cpu_mib));
  } else {
    add("MinMemoryNode", FormatMemoryMiB(std::max<int64_t>(0, v.min_memory_node_mib)));
  }
  add("MinTmpDiskNode", "0");
  add("Features", OrNull(v.features));
  add("DelayBoot", "00:00:00");
  if (!v.reservation.empty()) add("Reservation", v.reservation);
  add("OverSubscribe", v.oversubscribe);
  add("Contiguous", "0");
  add("Licenses", OrNull(v.licenses));
  add("Network", "(null)");
  add("Command", OrNull(v.command));
  add("WorkDir", v.work_dir);
  if (!v.comment.empty()) add("Comment", v.comment);
  if (v.batch) {
    add("StdErr", v.std_err);
    add("StdIn", v.std_in);
    add("StdOut", v.std_out);
  }
  add("Power", "");
  if (!v.cpus_per_tres.empty()) add("CpusPerTres", v.cpus_per_tres);
  if (!v.mem_per_tres.empty()) add("MemPerTres", v.mem_per_tres);
  if (!v.tres_per_job.empty()) add("TresPerJob", v.tres_per_job);
  if (!v.tres_per_node.empty()) add("TresPerNode", v.tres_per_node);
  if (!v.tres_per_socket.empty()) add("TresPerSocket", v.tres_per_socket);
  if (!v.tres_per_task.empty()) add("TresPerTask", v.tres_per_task);
  if (!v.mail_type.empty() && !v.mail_user.empty()) {
    add("MailUser", v.mail_user);
    add("MailType", v.mail_type);
  }
  if (v.ntasks_per_tres > 0) add("NtasksPerTRES", std::to_string(v.ntasks_per_tres));
  return f;
}

}  // namespace berth::slurm
