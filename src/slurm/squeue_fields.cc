// squeue's job fields: for each -o letter and -O name, its header and how a job's value reads,
// following Slurm 22.05 src/squeue/print.c (checked against squeue 22.05.8).
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "common/slurm_time.h"
#include "common/strings.h"
#include "common/units.h"
#include "slurm/squeue_view.h"

namespace berth::slurm {
namespace {

struct Ctx {
  const SqueueRow& row;
  const SqueueContext& sc;
  const JobView& j() const { return row.job; }
};

using ValueFn = Cell (*)(const Ctx&);

// One field: its -o letter (0 = none), its -O names (lower case), its header, its value.
struct JobField {
  char letter;
  std::vector<std::string_view> names;
  std::string_view header;
  ValueFn value;
  bool header_cut = true;  // squeue prints a few headers uncut when right-justified
};

Cell Text(std::string s) {
  return Cell{std::move(s), true};
}
Cell Uncut(std::string s) {
  return Cell{std::move(s), false};
}
Cell Num(int64_t n) {
  return Text(std::to_string(n));
}
Cell NullOr(const std::string& s) {
  return Text(s.empty() ? "(null)" : s);
}
Cell NaOr(const std::string& s) {
  return Text(s.empty() ? "N/A" : s);
}
Cell TimeCell(const Ctx& c, Time t) {
  return Text(SqueueTimeText(t, c.sc.time_format));
}

bool IsPending(const JobView& j) {
  return j.state == core::JobState::kPending;
}

std::string RowId(const SqueueRow& r) {
  const JobView& j = r.job;
  if (!r.task_set.empty()) return std::to_string(j.job_id) + "_[" + r.task_set + "]";
  if (j.array_task_id >= 0) {
    return std::to_string(j.array_job_id) + "_" + std::to_string(j.array_task_id);
  }
  return std::to_string(j.job_id);
}

// Why an ended job failed, as slurmctld records it (squeue shows it in parentheses).
std::string EndReason(const JobView& j) {
  if (j.state == core::JobState::kTimeout) return "TimeLimit";
  if (j.exit_signal > 0) {
    const char* name = strsignal(j.exit_signal);
    return "RaisedSignal:" + std::to_string(j.exit_signal) + "(" + (name ? name : "") + ")";
  }
  return "NonZeroExitCode";
}

std::string ReasonText(const Ctx& c) {
  if (!c.row.state_desc.empty()) return c.row.state_desc;
  const JobView& j = c.j();
  if (j.state == core::JobState::kFailed || j.state == core::JobState::kTimeout) {
    return EndReason(j);
  }
  return j.reason;
}

Cell ReasonList(const Ctx& c) {
  const JobView& j = c.j();
  if (IsPending(j) || j.state == core::JobState::kFailed || j.state == core::JobState::kTimeout) {
    return Text("(" + ReasonText(c) + ")");
  }
  return Uncut(j.nodes);
}

// squeue cuts "UNLIMITED" but not a duration (_print_secs is called uncut).
Cell TimeLimit(const Ctx& c) {
  if (c.j().time_limit >= kInfinite) return Text("UNLIMITED");
  return Uncut(FormatElapsed(c.j().time_limit));
}

Cell TimeLeft(const Ctx& c) {
  const JobView& j = c.j();
  if (j.time_limit >= kInfinite) return Text("UNLIMITED");
  return Uncut(FormatElapsed(j.time_limit - j.run_time));
}

Cell EndTime(const Ctx& c) {
  const JobView& j = c.j();
  if (core::HoldsResources(j.state) && j.time_limit >= kInfinite) return Text("NONE");
  return TimeCell(c, j.end_time);
}

Cell MinMemory(const Ctx& c) {
  const JobView& j = c.j();
  int64_t mib = j.min_memory_cpu_mib >= 0 ? j.min_memory_cpu_mib : j.min_memory_node_mib;
  return Text(FormatMemoryMiB(std::max<int64_t>(0, mib)));
}

Cell PriorityFraction(const Ctx& c) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%16.14f",
                static_cast<double>(c.j().priority) / static_cast<double>(0xffffffffu));
  return Text(buf);
}

Cell ArrayTaskId(const Ctx& c) {
  if (!c.row.task_set.empty()) return Text(c.row.task_set);
  if (c.j().array_task_id >= 0) return Num(c.j().array_task_id);
  return Text("N/A");
}

Cell PendingTime(const Ctx& c) {
  const JobView& j = c.j();
  if (j.submit_time == kNoTime) return Num(0);
  Time until = IsPending(j) || j.start_time == kNoTime ? c.sc.now : j.start_time;
  return Num(std::max<Time>(0, until - j.submit_time));
}

// The raw wait status slurmctld keeps (exit code in the high byte, signal in the low bits).
Cell RawExitCode(const Ctx& c) {
  return Num((int64_t{c.j().exit_code} << 8) | c.j().exit_signal);
}

Cell OutPath(const std::string& p) {
  return NaOr(p);
}

// The fields, in the order of squeue's man page. Letters first where both exist.
const std::vector<JobField>& Fields() {
  static const std::vector<JobField> kFields = {
      {'a', {"account"}, "ACCOUNT", [](const Ctx& c) { return NullOr(c.j().account); }},
      {'A', {"jobid"}, "JOBID", [](const Ctx& c) { return Num(c.j().job_id); }},
      {'b',
       {"gres", "tres-per-node"},
       "TRES_PER_NODE",
       [](const Ctx& c) { return NaOr(c.j().tres_per_node); }},
      {'B',
       {"batchhost"},
       "EXEC_HOST",
       [](const Ctx& c) { return Text(c.j().batch_host.empty() ? "n/a" : c.j().batch_host); }},
      {'c', {"mincpus"}, "MIN_CPUS", [](const Ctx& c) { return Num(c.j().min_cpus_node); }},
      {'C', {"numcpus"}, "CPUS", [](const Ctx& c) { return Num(c.j().num_cpus); }},
      {'d', {"mintmpdisk"}, "MIN_TMP_DISK", [](const Ctx&) { return Text("0"); }},
      {'D', {"numnodes"}, "NODES", [](const Ctx& c) { return Num(c.j().min_nodes); }},
      {'e', {"endtime"}, "END_TIME", EndTime},
      {'E', {"dependency"}, "DEPENDENCY", [](const Ctx& c) { return Text(c.j().dependency); }},
      {'f', {"feature"}, "FEATURES", [](const Ctx& c) { return NullOr(c.j().features); }},
      {'F',
       {"arrayjobid"},
       "ARRAY_JOB_ID",
       [](const Ctx& c) {
         return Num(c.j().array_job_id != 0 ? c.j().array_job_id : c.j().job_id);
       }},
      {'g', {"groupname"}, "GROUP", [](const Ctx& c) { return Text(c.j().group); }},
      {'G', {"groupid"}, "GROUP", [](const Ctx& c) { return Num(c.j().gid); }},
      {'h',
       {"oversubscribe", "shared"},
       "OVER_SUBSCRIBE",
       [](const Ctx& c) { return Text(c.j().oversubscribe); }},
      {'H', {"sockets"}, "SOCKETS_PER_NODE", [](const Ctx&) { return Text("*"); }},
      {'i', {"jobarrayid"}, "JOBID", [](const Ctx& c) { return Text(RowId(c.row)); }},
      {'I', {"cores"}, "CORES_PER_SOCKET", [](const Ctx&) { return Text("*"); }},
      {'j', {"name"}, "NAME", [](const Ctx& c) { return Text(c.j().name); }},
      {'J', {"threads"}, "THREADS_PER_CORE", [](const Ctx&) { return Text("*"); }},
      {'k', {"comment"}, "COMMENT", [](const Ctx& c) { return NullOr(c.j().comment); }},
      {'K', {"arraytaskid"}, "ARRAY_TASK_ID", ArrayTaskId},
      {'l', {"timelimit"}, "TIME_LIMIT", TimeLimit},
      {'L', {"timeleft"}, "TIME_LEFT", TimeLeft},
      {'m', {"minmemory"}, "MIN_MEMORY", MinMemory},
      {'M',
       {"timeused"},
       "TIME",
       [](const Ctx& c) { return Uncut(FormatElapsed(c.j().run_time)); }},
      {'n', {"reqnodes"}, "REQ_NODES", [](const Ctx& c) { return Uncut(c.j().req_nodes); }},
      {'N', {"nodelist"}, "NODELIST", [](const Ctx& c) { return Uncut(c.j().nodes); }, false},
      {'o', {"command"}, "COMMAND", [](const Ctx& c) { return NullOr(c.j().command); }},
      {'O', {"contiguous"}, "CONTIGUOUS", [](const Ctx&) { return Text("0"); }},
      {'p', {"priority"}, "PRIORITY", PriorityFraction},
      {'P', {"partition"}, "PARTITION", [](const Ctx& c) { return Text(c.j().partition); }},
      {'q', {"qos"}, "QOS", [](const Ctx& c) { return NullOr(c.j().qos); }},
      {'Q', {"prioritylong"}, "PRIORITY", [](const Ctx& c) { return Num(c.j().priority); }},
      {'r', {"reason"}, "REASON", [](const Ctx& c) { return Text(ReasonText(c)); }},
      {'R', {"reasonlist"}, "NODELIST(REASON)", ReasonList, false},
      {'s', {"selectjobinfo"}, "", [](const Ctx&) { return Text(""); }},
      {'S',
       {"starttime"},
       "START_TIME",
       [](const Ctx& c) { return TimeCell(c, c.j().start_time); }},
      {'t', {"statecompact"}, "ST", [](const Ctx& c) { return Text(c.j().state_compact); }},
      {'T', {"state"}, "STATE", [](const Ctx& c) { return Text(c.j().state_text); }},
      {'u', {"username"}, "USER", [](const Ctx& c) { return Text(c.j().user); }},
      {'U', {"userid"}, "UID", [](const Ctx& c) { return Num(c.j().uid); }},
      {'v', {"reservation"}, "RESERVATION", [](const Ctx& c) { return NullOr(c.j().reservation); }},
      {'V',
       {"submittime"},
       "SUBMIT_TIME",
       [](const Ctx& c) { return TimeCell(c, c.j().submit_time); }},
      {'w', {"wckey"}, "WCKEY", [](const Ctx&) { return Text("(null)"); }},
      {'W', {"licenses"}, "LICENSES", [](const Ctx& c) { return NullOr(c.j().licenses); }},
      {'x', {}, "EXC_NODES", [](const Ctx& c) { return Uncut(c.j().exc_nodes); }},
      {'X', {"corespec"}, "CORE_SPEC", [](const Ctx&) { return Text("N/A"); }},
      {'y', {"nice"}, "NICE", [](const Ctx& c) { return Num(c.j().nice); }},
      {'Y',
       {"schednodes"},
       "SCHEDNODES",
       [](const Ctx& c) { return Uncut(c.row.sched_nodes.empty() ? "(null)" : c.row.sched_nodes); },
       false},
      {'z', {"sct"}, "S:C:T", [](const Ctx&) { return Text("*:*:*"); }},
      {'Z', {"workdir"}, "WORK_DIR", [](const Ctx& c) { return Text(c.j().work_dir); }},
      // -O only.
      {0,
       {"accruetime"},
       "ACCRUE_TIME",
       [](const Ctx& c) { return TimeCell(c, c.j().eligible_time); }},
      {0, {"admin_comment"}, "ADMIN_COMMENT", [](const Ctx&) { return Text("(null)"); }},
      {0, {"allocnodes"}, "ALLOC_NODES", [](const Ctx& c) { return NullOr(c.j().submit_host); }},
      {0, {"allocsid"}, "ALLOC_SID", [](const Ctx&) { return Text("0"); }},
      {0, {"associd"}, "ASSOC_ID", [](const Ctx&) { return Text("0"); }},
      {0, {"batchflag"}, "BATCH_FLAG", [](const Ctx& c) { return Num(c.j().batch ? 1 : 0); }},
      {0, {"boardspernode"}, "BOARDS_PER_NODE", [](const Ctx&) { return Text("0"); }},
      {0, {"burstbuffer"}, "BURST_BUFFER", [](const Ctx&) { return Text("(null)"); }},
      {0, {"burstbufferstate"}, "BURST_BUFFER_STATE", [](const Ctx&) { return Text("(null)"); }},
      {0, {"cluster"}, "CLUSTER", [](const Ctx& c) { return Text(c.sc.cluster); }},
      {0, {"clusterfeature"}, "CLUSTER_FEATURES", [](const Ctx&) { return Text("(null)"); }},
      {0, {"container"}, "CONTAINER", [](const Ctx&) { return Text("(null)"); }},
      {0,
       {"cpus-per-task", "cpuspertask"},
       "CPUS_PER_TASK",
       [](const Ctx& c) { return Num(c.j().cpus_per_task); }},
      {0,
       {"cpus-per-tres"},
       "CPUS_PER_TRES",
       [](const Ctx& c) { return NaOr(c.j().cpus_per_tres); }},
      {0, {"deadline"}, "DEADLINE", [](const Ctx& c) { return TimeCell(c, c.j().deadline); }},
      {0, {"delayboot"}, "DELAY_BOOT", [](const Ctx&) { return Uncut("0:00"); }},
      {0, {"derivedec"}, "DERIVED_EC", [](const Ctx&) { return Text("0"); }},
      {0,
       {"eligibletime"},
       "ELIGIBLE_TIME",
       [](const Ctx& c) { return TimeCell(c, c.j().eligible_time); }},
      {0, {"exit_code"}, "EXIT_CODE", RawExitCode},
      {0, {"hetjobid", "packjobid"}, "HET_JOB_ID", [](const Ctx&) { return Text("N/A"); }},
      {0,
       {"hetjobidset", "packjobidset"},
       "HET_JOB_ID_SET",
       [](const Ctx&) { return Text("N/A"); }},
      {0,
       {"hetjoboffset", "packjoboffset"},
       "HET_JOB_OFFSET",
       [](const Ctx&) { return Text("N/A"); }},
      {0,
       {"lastschedeval"},
       "LAST_SCHED_EVAL",
       [](const Ctx& c) { return TimeCell(c, c.j().submit_time); }},
      {0, {"maxcpus"}, "MAX_CPUS", [](const Ctx& c) { return Num(c.j().num_cpus); }},
      {0,
       {"maxnodes"},
       "MAX_NODES",
       [](const Ctx& c) { return Num(c.j().max_nodes > 0 ? c.j().max_nodes : c.j().min_nodes); }},
      {0, {"mcslabel"}, "MCSLABEL", [](const Ctx&) { return Text("(null)"); }},
      {0, {"mem-per-tres"}, "MEM_PER_TRES", [](const Ctx& c) { return NaOr(c.j().mem_per_tres); }},
      {0,
       {"mintime"},
       "TIME_MIN",
       [](const Ctx& c) {
         return Text(FormatElapsed(c.j().time_min == kNoTime ? 0 : c.j().time_min));
       }},
      {0, {"network"}, "NETWORK", [](const Ctx&) { return Text("(null)"); }},
      {0, {"ntpercore"}, "NTASKS_PER_CORE", [](const Ctx&) { return Text("N/A"); }},
      {0,
       {"ntpernode"},
       "NTASKS_PER_NODE",
       [](const Ctx& c) { return Num(c.j().ntasks_per_node); }},
      {0, {"ntpersocket"}, "NTASKS_PER_SOCKET", [](const Ctx&) { return Text("N/A"); }},
      {0, {"ntperboard"}, "NTASKS_PER_BOARD", [](const Ctx&) { return Text("0"); }},
      {0, {"numtasks"}, "TASKS", [](const Ctx& c) { return Num(c.j().num_tasks); }},
      {0, {"origin"}, "ORIGIN", [](const Ctx&) { return Text("NA"); }},
      {0, {"originraw"}, "ORIGIN_RAW", [](const Ctx&) { return Text("NA"); }},
      {0, {"pendingtime"}, "PENDING_TIME", PendingTime},
      {0, {"preempttime"}, "PREEMPT_TIME", [](const Ctx&) { return Text("N/A"); }},
      {0, {"prefer"}, "PREFER", [](const Ctx&) { return Text("(null)"); }},
      {0, {"profile"}, "PROFILE", [](const Ctx&) { return Text("NotSet"); }},
      {0, {"reboot"}, "REBOOT", [](const Ctx&) { return Text("0"); }},
      {0, {"reqswitch"}, "REQ_SWITCH", [](const Ctx&) { return Text("0"); }},
      {0, {"requeue"}, "REQUEUE", [](const Ctx& c) { return Num(c.j().requeue ? 1 : 0); }},
      {0, {"resizetime"}, "RESIZE_TIME", [](const Ctx&) { return Uncut("N/A"); }},
      {0, {"restartcnt"}, "RESTART_COUNT", [](const Ctx& c) { return Num(c.j().restarts); }},
      {0, {"sperboard"}, "SOCKETS_PER_BOARD", [](const Ctx&) { return Text("0"); }},
      {0, {"stderr"}, "STDERR", [](const Ctx& c) { return OutPath(c.j().std_err); }},
      {0, {"stdin"}, "STDIN", [](const Ctx& c) { return OutPath(c.j().std_in); }},
      {0, {"stdout"}, "STDOUT", [](const Ctx& c) { return OutPath(c.j().std_out); }},
      {0, {"system_comment"}, "SYSTEM_COMMENT", [](const Ctx&) { return Text("(null)"); }},
      {0,
       {"tres", "tres-alloc"},
       "TRES_ALLOC",
       [](const Ctx& c) {
         return NaOr(c.j().alloc_tres.empty() ? c.j().req_tres : c.j().alloc_tres);
       }},
      {0, {"tres-bind"}, "TRES_BIND", [](const Ctx&) { return Text("N/A"); }},
      {0, {"tres-freq"}, "TRES_FREQ", [](const Ctx&) { return Text("N/A"); }},
      {0, {"tres-per-job"}, "TRES_PER_JOB", [](const Ctx& c) { return NaOr(c.j().tres_per_job); }},
      {0,
       {"tres-per-socket"},
       "TRES_PER_SOCKET",
       [](const Ctx& c) { return NaOr(c.j().tres_per_socket); }},
      {0,
       {"tres-per-task"},
       "TRES_PER_TASK",
       [](const Ctx& c) { return NaOr(c.j().tres_per_task); }},
      {0, {"wait4switch"}, "WAIT4SWITCH", [](const Ctx&) { return Text("0:00"); }},
      {0, {"siblingsactive"}, "ACTIVE_SIBLINGS", [](const Ctx&) { return Text("NA"); }},
      {0, {"siblingsactiveraw"}, "ACTIVE_SIBLINGS_RAW", [](const Ctx&) { return Text("NA"); }},
      {0, {"siblingsviable"}, "VIABLE_SIBLINGS", [](const Ctx&) { return Text("NA"); }},
      {0, {"siblingsviableraw"}, "VIABLE_SIBLINGS_RAW", [](const Ctx&) { return Text("NA"); }},
  };
  return kFields;
}

// The place of the field named `key` in Fields(), -1 if squeue has none.
int FieldIndex(std::string_view key, bool percent_form) {
  const std::vector<JobField>& fields = Fields();
  if (percent_form) {
    if (key.size() != 1) return -1;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].letter != 0 && fields[i].letter == key[0]) return static_cast<int>(i);
    }
    return -1;
  }
  std::string name = ToLower(key);
  // squeue takes any name starting with "numtask" for NumTasks.
  if (name.rfind("numtask", 0) == 0) name = "numtasks";
  for (size_t i = 0; i < fields.size(); ++i) {
    for (std::string_view n : fields[i].names) {
      if (n == name) return static_cast<int>(i);
    }
  }
  return -1;
}

// The costly parts of a job's view (ViewPart) that a field shows.
uint32_t PartsOf(const JobField& f) {
  const std::string_view name = f.names.empty() ? std::string_view() : f.names.front();
  if (name == "gres" || name == "tres" || name.starts_with("tres-per-")) return kViewTres;
  if (name == "workdir" || name == "stderr" || name == "stdin" || name == "stdout") {
    return kViewPaths;
  }
  if (name == "dependency") return kViewDependency;
  if (name == "command") return kViewCommand;
  return 0;
}

const JobField* FindField(std::string_view key, bool percent_form) {
  const int i = FieldIndex(key, percent_form);
  return i < 0 ? nullptr : &Fields()[static_cast<size_t>(i)];
}

}  // namespace

std::string SqueueTimeText(Time t) {
  const char* fmt = std::getenv("SLURM_TIME_FORMAT");
  return SqueueTimeText(t, fmt == nullptr ? std::string() : std::string(fmt));
}

std::string SqueueTimeText(Time t, const std::string& time_format) {
  if (t == kNoTime || t <= 0) return "N/A";
  const char* fmt =
      time_format.find('%') == std::string::npos ? "%Y-%m-%dT%H:%M:%S" : time_format.c_str();
  time_t tt = static_cast<time_t>(t);
  struct tm tm_local;
  if (localtime_r(&tt, &tm_local) == nullptr) return "N/A";
  char buf[256];
  if (strftime(buf, sizeof(buf), fmt, &tm_local) == 0) return "N/A";
  return buf;
}

bool IsJobLetter(std::string_view key) {
  return FindField(key, true) != nullptr;
}

bool IsJobFieldName(std::string_view name) {
  return FindField(name, false) != nullptr;
}

Cell JobFieldHeader(const FormatField& f, bool percent_form) {
  const JobField* field = FindField(f.key, percent_form);
  if (field == nullptr) return Cell{};
  return Cell{std::string(field->header), field->header_cut};
}

Cell JobFieldValue(const FormatField& f, bool percent_form, const SqueueRow& row,
                   const SqueueContext& ctx) {
  const JobField* field = FindField(f.key, percent_form);
  if (field == nullptr) return Cell{};
  return field->value(Ctx{row, ctx});
}

std::string RenderSqueueHeader(const OutputFormat& format, bool percent_form) {
  return RenderLine(format, [&](const FormatField& f) { return JobFieldHeader(f, percent_form); }) +
         '\n';
}

uint32_t SqueueViewParts(const OutputFormat& format, bool percent_form) {
  uint32_t parts = 0;
  for (const FormatField& f : format.fields) {
    if (const JobField* field = FindField(f.key, percent_form)) parts |= PartsOf(*field);
  }
  return parts;
}

SqueueLineRenderer::SqueueLineRenderer(const OutputFormat& format, bool percent_form)
    : format_(&format) {
  fields_.reserve(format.fields.size());
  for (const FormatField& f : format.fields) {
    fields_.push_back(f.key.empty() ? -1 : FieldIndex(f.key, percent_form));
  }
}

void SqueueLineRenderer::Append(const SqueueRow& row, const SqueueContext& ctx,
                                std::string& out) const {
  const std::vector<JobField>& table = Fields();
  out += format_->prefix;
  for (size_t i = 0; i < fields_.size(); ++i) {
    const FormatField& f = format_->fields[i];
    if (fields_[i] < 0) {
      AppendField(out, {}, f.width, f.right);
    } else {
      const Cell c = table[static_cast<size_t>(fields_[i])].value(Ctx{row, ctx});
      AppendField(out, c.text, f.width, f.right, c.cut);
    }
    out += f.suffix;
  }
  out += '\n';
}

std::string RenderSqueueLine(const OutputFormat& format, bool percent_form, const SqueueRow& row,
                             const SqueueContext& ctx) {
  std::string line;
  SqueueLineRenderer(format, percent_form).Append(row, ctx, line);
  return line;
}

std::string RenderSqueue(const OutputFormat& format, bool percent_form,
                         const std::vector<SqueueRow>& rows, bool no_header,
                         const SqueueContext& ctx) {
  std::string out;
  if (!no_header) out += RenderSqueueHeader(format, percent_form);
  const SqueueLineRenderer line(format, percent_form);
  for (const SqueueRow& row : rows) line.Append(row, ctx, out);
  return out;
}

}  // namespace berth::slurm
