// scancel's logic as Slurm 22.05 has it (src/scancel/scancel.c and opt.c): ids, filters, the
// order of cancels and the messages and exit codes of failures.
#include "slurm/scancel.h"

#include <getopt.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "api/job_json.h"
#include "common/hostlist.h"
#include "common/strings.h"

namespace berth::slurm {
namespace {

// Slurm's errno values for the failures scancel reports (slurm_errno.h).
constexpr int kAccessDenied = 2002;     // ESLURM_ACCESS_DENIED
constexpr int kInvalidJobId = 2017;     // ESLURM_INVALID_JOB_ID
constexpr int kTransitionState = 2020;  // ESLURM_TRANSITION_STATE_NO_UPDATE
constexpr int kAlreadyDone = 2021;      // ESLURM_ALREADY_DONE

constexpr int kLongHelp = 0x100;
constexpr int kLongUsage = 0x101;
constexpr int kLongMe = 0x102;
constexpr int kLongWckey = 0x103;
constexpr int kLongIgnored = 0x104;  // --ctld, --sibling, --cluster: accepted, no meaning here

std::optional<int64_t> ParseNumber(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// strtol() as Slurm uses it on ids: leading blanks and a '+' are allowed; returns the number
// and what follows it.
std::optional<int64_t> LeadingNumber(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  size_t n = 0;
  while (n < s.size() && n < 10 && s[n] >= '0' && s[n] <= '9') ++n;
  if (n == 0) return std::nullopt;
  std::optional<int64_t> v = ParseNumber(s.substr(0, n));
  s.remove_prefix(n);
  return v;
}

// "1-3,5,7-9:2" inside "12_[...]": the task ids, ascending, no duplicates.
std::optional<std::vector<int32_t>> ParseTaskList(std::string_view text) {
  std::vector<int32_t> tasks;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return std::nullopt;
    int64_t step = 1;
    if (size_t colon = item.find(':'); colon != std::string_view::npos) {
      std::optional<int64_t> s = ParseNumber(item.substr(colon + 1));
      if (!s || *s < 1) return std::nullopt;
      step = *s;
      item = item.substr(0, colon);
    }
    size_t dash = item.find('-');
    std::optional<int64_t> lo = ParseNumber(item.substr(0, dash));
    std::optional<int64_t> hi =
        dash == std::string_view::npos ? lo : ParseNumber(item.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > 4000000) return std::nullopt;
    for (int64_t t = *lo; t <= *hi; t += step) tasks.push_back(static_cast<int32_t>(t));
  }
  if (tasks.empty()) return std::nullopt;
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  return tasks;
}

// A master's pending tasks from JobView::array_pending_tasks ("2-4%2").
std::vector<int32_t> PendingTasks(const JobView& j) {
  std::string_view text = j.array_pending_tasks;
  return ParseTaskList(text.substr(0, text.find('%'))).value_or(std::vector<int32_t>{});
}

bool IsFinished(core::JobState s) {
  return core::IsTerminal(s);
}

// Does the active job `j` answer to the id (_verify_job_ids / _cancel_jobid_by_state)?
bool Matches(const ScancelId& id, const JobView& j) {
  if (id.array_task == ScancelId::kWholeJob) {
    return id.job_id == j.job_id ||
           (id.job_id == j.array_job_id && id.step == ScancelId::kBatchStep);
  }
  if (id.job_id != j.array_job_id) return false;
  if (id.array_task == ScancelId::kAllTasks) return true;
  if (j.array_task_id == id.array_task) return true;
  if (j.array_task_id >= 0 || j.array_pending_tasks.empty()) return false;
  std::vector<int32_t> pending = PendingTasks(j);
  return std::binary_search(pending.begin(), pending.end(), id.array_task);
}

bool Intersects(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const std::string& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  }
  return false;
}

// _filter_job_records: every filter must match.
bool PassesFilters(const ScancelOptions& o, const JobView& j,
                   const std::vector<std::string>& nodes) {
  if (j.state != core::JobState::kPending && j.state != core::JobState::kRunning &&
      j.state != core::JobState::kSuspended) {
    return false;
  }
  if (!o.account.empty() && j.account != o.account) return false;
  if (!o.job_name.empty() && j.name != o.job_name) return false;
  if (!o.partition.empty() && j.partition != o.partition) return false;
  if (!o.qos.empty() && j.qos != o.qos) return false;
  if (!o.reservation.empty() && j.reservation != o.reservation) return false;
  if (o.state && j.state != *o.state) return false;
  if (o.uid && j.uid != *o.uid) return false;
  if (!o.nodelist.empty() && !Intersects(j.node_names, nodes)) return false;
  if (!o.wckey.empty()) return false;  // berth keeps no wckeys: none matches
  return true;
}

std::string FilterSummary(const ScancelOptions& o) {
  std::string s;
  if (!o.account.empty()) s += "account=" + o.account + " ";
  if (!o.job_name.empty()) s += "job_name=" + o.job_name + " ";
  if (!o.nodelist.empty()) s += "nodelist=" + o.nodelist + " ";
  if (!o.partition.empty()) s += "partition=" + o.partition + " ";
  if (!o.qos.empty()) s += "qos=" + o.qos + " ";
  if (!o.reservation.empty()) s += "reservation=" + o.reservation + " ";
  if (o.state) s += "state=" + std::string(core::JobStateName(*o.state)) + " ";
  if (!o.user.empty()) s += "user_name=" + o.user + " ";
  if (!o.wckey.empty()) s += "wckey=" + o.wckey + " ";
  return s;
}

// The ids one selected record stands for (see ScancelTarget). `ids` are the command line's ids
// that name it (empty when none were given: the whole record).
ScancelTarget TargetOf(const JobView& j, const std::vector<const ScancelId*>& ids, bool keep_view) {
  ScancelTarget t{{}, j.display_id, keep_view ? &j : nullptr, j.job_id};
  if (j.array_task_id >= 0 || j.array_pending_tasks.empty()) {
    t.request_ids.push_back(j.array_task_id >= 0 ? j.display_id : std::to_string(j.job_id));
    return t;
  }
  std::vector<int32_t> pending = PendingTasks(j);
  if (pending.empty()) {
    t.request_ids.push_back(std::to_string(j.job_id));
    return t;
  }
  std::vector<int32_t> tasks;
  const bool whole = ids.empty() || std::any_of(ids.begin(), ids.end(), [](const ScancelId* id) {
                       return id->array_task < 0;
                     });
  if (whole) {
    tasks = std::move(pending);
  } else {
    for (const ScancelId* id : ids) tasks.push_back(id->array_task);
    std::sort(tasks.begin(), tasks.end());
    tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
    t.display_id = std::to_string(j.array_job_id) + "_" +
                   (tasks.size() == 1 ? std::to_string(tasks.front())
                                      : "[" + core::FormatArrayTaskIds(tasks) + "]");
  }
  for (int32_t task : tasks) {
    t.request_ids.push_back(std::to_string(j.array_job_id) + "_" + std::to_string(task));
  }
  return t;
}

// One slot of getopt's option table, and what it sets.
const struct option kLongOptions[] = {
    {"account", required_argument, nullptr, 'A'},
    {"batch", no_argument, nullptr, 'b'},
    {"ctld", no_argument, nullptr, kLongIgnored},
    {"full", no_argument, nullptr, 'f'},
    {"help", no_argument, nullptr, kLongHelp},
    {"hurry", no_argument, nullptr, 'H'},
    {"interactive", no_argument, nullptr, 'i'},
    {"cluster", required_argument, nullptr, 'M'},
    {"clusters", required_argument, nullptr, 'M'},
    {"name", required_argument, nullptr, 'n'},
    {"nodelist", required_argument, nullptr, 'w'},
    {"partition", required_argument, nullptr, 'p'},
    {"qos", required_argument, nullptr, 'q'},
    {"quiet", no_argument, nullptr, 'Q'},
    {"reservation", required_argument, nullptr, 'R'},
    {"sibling", required_argument, nullptr, kLongIgnored},
    {"signal", required_argument, nullptr, 's'},
    {"state", required_argument, nullptr, 't'},
    {"usage", no_argument, nullptr, kLongUsage},
    {"user", required_argument, nullptr, 'u'},
    {"me", no_argument, nullptr, kLongMe},
    {"verbose", no_argument, nullptr, 'v'},
    {"version", no_argument, nullptr, 'V'},
    {"wckey", required_argument, nullptr, kLongWckey},
    {nullptr, 0, nullptr, 0},
};
constexpr const char* kShortOptions = "A:bfHiM:n:p:Qq:R:s:t:u:vVw:";

// Applies -s; false when the signal is unknown ("Unknown job signal: X").
bool SetSignal(const std::string& value, ScancelOptions& o) {
  int n = api::SignalNumber(value);
  if (n == 0) return false;
  o.signal_name = value;
  o.signal = n;
  return true;
}

bool SetState(const std::string& value, ScancelOptions& o) {
  std::optional<core::JobState> s = core::ParseJobState(value);
  if (!s) return false;
  o.state = s;
  return true;
}

bool EnvTrue(const std::string& v) {
  return EqualsIgnoreCase(v, "true");
}

// _opt_env(): the SCANCEL_* variables. Returns an error text, or "".
std::string ApplyEnv(const std::vector<std::pair<std::string, std::string>>& env,
                     ScancelOptions& o) {
  for (const auto& [name, value] : env) {
    if (name == "SCANCEL_ACCOUNT") o.account = value;
    if (name == "SCANCEL_BATCH") o.batch = EnvTrue(value);
    if (name == "SCANCEL_FULL") o.full = EnvTrue(value);
    if (name == "SCANCEL_HURRY") o.hurry = EnvTrue(value);
    if (name == "SCANCEL_INTERACTIVE") o.interactive = EnvTrue(value);
    if (name == "SCANCEL_NAME") o.job_name = value;
    if (name == "SCANCEL_PARTITION") o.partition = value;
    if (name == "SCANCEL_QOS") o.qos = value;
    if (name == "SCANCEL_USER") o.user = value;
    if (name == "SCANCEL_VERBOSE") o.verbose = EnvTrue(value) ? 1 : 0;
    if (name == "SCANCEL_WCKEY") o.wckey = value;
    if (name == "SCANCEL_STATE" && !SetState(value, o)) {
      return "Unrecognized SCANCEL_STATE value: " + value + "\n";
    }
  }
  return "";
}

ScancelParse Finish(int code, std::string err, std::string out = "") {
  return StopWith<ScancelParse>(code, std::move(err), std::move(out));
}

const char* const kTryHelp = "Try \"scancel --help\" for more information\n";

// Applies one option; a result when scancel stops there (help, usage, a bad value).
std::optional<ScancelParse> ApplyOption(int c, const std::string& value, ScancelOptions& o) {
  switch (c) {
    case 'A':
      o.account = value;
      return std::nullopt;
    case 'b':
      o.batch = true;
      return std::nullopt;
    case 'f':
      o.full = true;
      return std::nullopt;
    case 'H':
      o.hurry = true;
      return std::nullopt;
    case 'i':
      o.interactive = true;
      return std::nullopt;
    case 'M':
      return std::nullopt;  // one cluster: the one berth runs
    case 'n':
      o.job_name = value;
      return std::nullopt;
    case 'p':
      o.partition = value;
      return std::nullopt;
    case 'Q':
      o.verbose = -1;
      return std::nullopt;
    case 'q':
      o.qos = value;
      return std::nullopt;
    case 'R':
      o.reservation = value;
      return std::nullopt;
    case 's':
      if (!SetSignal(value, o)) return Finish(1, "Unknown job signal: " + value + "\n");
      return std::nullopt;
    case 't':
      if (!SetState(value, o)) {
        return Finish(1, "Invalid job state specified: " + value +
                             "\nValid job states are PENDING, RUNNING, and SUSPENDED\n");
      }
      return std::nullopt;
    case 'u':
      o.user = value;
      return std::nullopt;
    case 'v':
      o.verbose = std::max(o.verbose, 0) + 1;
      return std::nullopt;
    case 'V':
      o.version = true;
      return std::nullopt;
    case 'w':
      o.nodelist = value;
      return std::nullopt;
    case kLongHelp:
      return Finish(0, "", ScancelHelp());
    case kLongUsage:
      return Finish(0, "", ScancelUsage());
    case kLongMe:
      o.me = true;
      return std::nullopt;
    case kLongWckey:
      o.wckey = value;
      return std::nullopt;
    case kLongIgnored:
      return std::nullopt;
    default:
      return Finish(1, kTryHelp);  // a code the table does not give
  }
}

}  // namespace

std::string ScancelId::JobText() const {
  std::string s = std::to_string(job_id);
  if (array_task == kAllTasks) return s + "_*";
  if (array_task >= 0) s += "_" + std::to_string(array_task);
  return s;
}

std::string ScancelId::RequestText() const {
  return array_task == kAllTasks ? std::to_string(job_id) : JobText();
}

Result<std::vector<ScancelId>> ParseScancelId(std::string_view text) {
  const Status bad = Status::InvalidArgument("scancel: error: Invalid job id " + std::string(text));
  std::string_view rest = text;
  std::optional<int64_t> job = LeadingNumber(rest);
  if (!job || *job <= 0 || *job > 0xfffffff0LL) return bad;
  ScancelId base;
  base.job_id = static_cast<uint32_t>(*job);
  std::vector<int32_t> tasks;
  if (!rest.empty() && rest.front() == '_') {
    rest.remove_prefix(1);
    if (!rest.empty() && rest.front() == '*') {
      rest.remove_prefix(1);
      tasks.push_back(ScancelId::kAllTasks);
    } else if (!rest.empty() && rest.front() == '[') {
      size_t close = rest.find(']');
      if (close == std::string_view::npos) return bad;
      std::optional<std::vector<int32_t>> list = ParseTaskList(rest.substr(1, close - 1));
      if (!list) return bad;
      tasks = std::move(*list);
      rest.remove_prefix(close + 1);
    } else {
      std::optional<int64_t> task = LeadingNumber(rest);
      if (!task || *task > 4000000) return bad;
      tasks.push_back(static_cast<int32_t>(*task));
    }
  }
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    std::optional<int64_t> step = LeadingNumber(rest);
    if (!step || *step > 0x7ffffff0LL) return bad;
    base.step = static_cast<int32_t>(*step);
  }
  if (!rest.empty()) return bad;
  if (tasks.empty()) return std::vector<ScancelId>{base};
  std::vector<ScancelId> out;
  for (int32_t t : tasks) {
    ScancelId id = base;
    id.array_task = t;
    out.push_back(id);
  }
  return out;
}

bool ScancelOptions::HasFilters() const {
  return !account.empty() || !job_name.empty() || !nodelist.empty() || !partition.empty() ||
         !qos.empty() || !reservation.empty() || state.has_value() || !user.empty() || me ||
         !wckey.empty();
}

bool ScancelOptions::IdsOnly() const {
  bool has_steps = std::any_of(
      ids.begin(), ids.end(), [](const ScancelId& id) { return id.step != ScancelId::kBatchStep; });
  return !HasFilters() && !batch && !interactive && signal_name.empty() && !has_steps;
}

std::string ScancelUsage() {
  return "Usage: scancel [-A account] [-b] [-f] [-H] [-i] [--me] [-n name] [-p partition]\n"
         "               [-Q] [-q qos] [-R reservation] [-s signal] [-t state] [-u user]\n"
         "               [-V] [-v] [-w hosts] [--wckey=wckey] [--help] [--usage]\n"
         "               [job_id[_array_id][.step_id] ...]\n";
}

std::string ScancelHelp() {
  return "Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]\n"
         "  -A, --account=account           act only on jobs charging this account\n"
         "  -b, --batch                     signal the batch shell only\n"
         "  -f, --full                      signal the batch shell and all steps\n"
         "  -H, --hurry                     accepted (no burst buffer stage out in berth)\n"
         "  -i, --interactive               confirm each job\n"
         "      --me                        act only on your own jobs\n"
         "  -n, --name=job_name             act only on jobs with this name\n"
         "  -p, --partition=partition       act only on jobs in this partition\n"
         "  -Q, --quiet                     disable warnings\n"
         "  -q, --qos=qos                   act only on jobs with this QOS\n"
         "  -R, --reservation=reservation   act only on jobs with this reservation\n"
         "  -s, --signal=name | integer     signal to send instead of cancelling\n"
         "  -t, --state=states              act only on jobs in this state: PENDING,\n"
         "                                  RUNNING or SUSPENDED\n"
         "  -u, --user=user_name            act only on jobs of this user\n"
         "  -V, --version                   print the version\n"
         "  -v, --verbose                   say what is done\n"
         "  -w, --nodelist=hosts            act only on jobs using these hosts\n"
         "      --wckey=wckey               act only on jobs with this workload key\n"
         "\n"
         "Help options:\n"
         "  --help                          show this help\n"
         "  --usage                         show a short usage\n";
}

ScancelParse ParseScancelArgs(const std::vector<std::string>& args,
                              const std::vector<std::pair<std::string, std::string>>& env) {
  ScancelParse result;
  ScancelOptions& o = result.options;
  if (std::string e = ApplyEnv(env, o); !e.empty()) return Finish(1, e);
  std::optional<ScancelParse> stop;
  std::optional<std::vector<std::string>> operands =
      RunGetopt(args, kShortOptions, kLongOptions, [&](int c, const char* value) {
        stop = ApplyOption(c, value ? value : "", o);
        return !stop;
      });
  if (!operands) return Finish(1, kTryHelp);  // getopt has printed what was wrong
  if (stop) return *stop;
  if (o.version) return result;
  for (const std::string& word : *operands) {
    Result<std::vector<ScancelId>> ids = ParseScancelId(word);
    if (!ids.ok()) return Finish(1, ids.status().message() + "\n");
    o.ids.insert(o.ids.end(), ids->begin(), ids->end());
  }
  if (o.ids.empty() && !o.HasFilters() && !o.interactive) {
    return Finish(1, "scancel: error: No job identification provided\n");
  }
  return result;
}

namespace {

// The selection of both forms. keep_views: the views walked outlive the targets, which point to
// them.
ScancelSelection Select(const ScancelOptions& opt, const ScancelJobWalk& for_each_job,
                        bool keep_views) {
  ScancelSelection sel;
  // _verify_job_ids: each id must name an active job; a step's ("12.0") is checked by the
  // controller, which knows the steps srun reported.
  std::vector<bool> id_found(opt.ids.size(), false);
  if (!opt.ids.empty()) {
    for_each_job([&](const JobView& j) {
      if (IsFinished(j.state)) return;
      for (size_t k = 0; k < opt.ids.size(); ++k) {
        if (!id_found[k] && Matches(opt.ids[k], j)) id_found[k] = true;
      }
    });
  }
  for (size_t k = 0; k < opt.ids.size(); ++k) {
    if (id_found[k]) continue;
    sel.exit_code = 1;
    if (opt.verbose < 0) continue;
    const ScancelId& id = opt.ids[k];
    if (id.step == ScancelId::kBatchStep) {
      sel.errors.push_back("scancel: error: Kill job error on job id " + id.JobText() +
                           ": Invalid job id specified");
    } else {
      sel.errors.push_back("scancel: error: Kill job error on job step id " + id.JobText() + "." +
                           std::to_string(id.step) + ": Invalid job id specified");
    }
  }
  std::vector<std::string> filter_nodes;
  if (!opt.nodelist.empty()) {
    Result<std::vector<std::string>> n = hostlist::Expand(opt.nodelist);
    if (n.ok()) filter_nodes = std::move(*n);
  }
  int matches = 0;
  std::vector<ScancelTarget> pending, others;
  for_each_job([&](const JobView& j) {
    if (IsFinished(j.state)) return;
    if (opt.HasFilters() && !PassesFilters(opt, j, filter_nodes)) return;
    ++matches;
    std::vector<const ScancelId*> naming;
    std::vector<ScancelTarget>& list = j.state == core::JobState::kPending ? pending : others;
    bool whole = opt.ids.empty();
    for (size_t k = 0; k < opt.ids.size(); ++k) {
      if (!id_found[k] || !Matches(opt.ids[k], j)) continue;
      if (opt.ids[k].step == ScancelId::kBatchStep) {
        naming.push_back(&opt.ids[k]);
        whole = true;
        continue;
      }
      // A step of this job: a target of its own ("12.0", "12_3.0").
      const std::string base = j.array_task_id >= 0 ? j.display_id : std::to_string(j.job_id);
      const std::string text = base + "." + std::to_string(opt.ids[k].step);
      list.push_back(ScancelTarget{{text}, text, keep_views ? &j : nullptr, j.job_id});
    }
    if (whole) list.push_back(TargetOf(j, naming, keep_views));
  });
  if (matches == 0 && opt.verbose > 0 && opt.HasFilters()) {
    sel.errors.push_back("scancel: error: No active jobs match ALL job filters, including: " +
                         FilterSummary(opt));
  }
  // Slurm follows slurmctld's job list; berth sorts by job id, so that output is stable.
  auto by_id = [](const ScancelTarget& a, const ScancelTarget& b) { return a.job_id < b.job_id; };
  std::stable_sort(pending.begin(), pending.end(), by_id);
  std::stable_sort(others.begin(), others.end(), by_id);
  sel.targets = std::move(pending);
  sel.targets.insert(sel.targets.end(), std::make_move_iterator(others.begin()),
                     std::make_move_iterator(others.end()));
  return sel;
}

}  // namespace

ScancelSelection SelectScancelTargets(const ScancelOptions& opt, const std::vector<JobView>& jobs) {
  return Select(
      opt,
      [&](const std::function<void(const JobView&)>& visit) {
        for (const JobView& j : jobs) visit(j);
      },
      /*keep_views=*/true);
}

ScancelSelection SelectScancelTargets(const ScancelOptions& opt,
                                      const ScancelJobWalk& for_each_job) {
  return Select(opt, for_each_job, /*keep_views=*/false);
}

int RequestSignal(const ScancelOptions& opt) {
  const bool plain_kill = opt.signal == 9 && !opt.batch && !opt.full;
  return opt.signal_name.empty() || plain_kill ? 0 : opt.signal;
}

std::vector<ScancelTarget> IdTargets(const ScancelOptions& opt) {
  std::vector<ScancelTarget> out;
  for (const ScancelId& id : opt.ids) out.push_back({{id.RequestText()}, id.JobText(), nullptr});
  return out;
}

std::string VerboseLine(const ScancelOptions& opt, const std::string& display_id) {
  if (display_id.find('.') != std::string::npos) {
    if (opt.IsKill()) return "scancel: Terminating step " + display_id;
    return "scancel: Signal " + std::to_string(opt.signal) + " to step " + display_id;
  }
  std::string kind = opt.full ? "full " : (opt.batch ? "batch " : "");
  if (opt.signal_name.empty()) return "scancel: Terminating " + kind + "job " + display_id;
  return "scancel: Signal " + std::to_string(opt.signal) + " to " + kind + "job " + display_id;
}

std::string ConfirmPrompt(const ScancelTarget& t) {
  std::string name = t.job != nullptr ? t.job->name : "";
  std::string partition = t.job != nullptr ? t.job->partition : "";
  const bool step = t.display_id.find('.') != std::string::npos;
  return std::string(step ? "Cancel step_id=" : "Cancel job_id=") + t.display_id + " name=" + name +
         " partition=" + partition + " [y/n]? ";
}

SlurmError SlurmErrorOf(const CancelFailure& f) {
  auto has = [&](const char* word) { return ToLower(f.message).find(word) != std::string::npos; };
  if (f.http_status == 404) return {kInvalidJobId, "Invalid job id specified"};
  if (f.http_status == 403) return {kAccessDenied, "Access/permission denied"};
  if (f.http_status == 409 && (has("finished") || has("completed") || has("already"))) {
    return {kAlreadyDone, "Job/step already completing or completed"};
  }
  if (f.http_status == 409 && has("pending")) {
    // slurmctld's job_signal() refuses a signal to a job that has not started this way.
    return {kTransitionState, "Job can not be altered now, try again later"};
  }
  return {1, f.message.empty() ? "Unexpected error" : f.message};
}

FailureReport ReportFailure(const ScancelOptions& opt, const std::string& display_id,
                            const CancelFailure& failure) {
  SlurmError e = SlurmErrorOf(failure);
  if (display_id.find('.') != std::string::npos) {
    // _cancel_step_id: only a step that already ended goes unsaid (and, for a KILL, uncounted).
    FailureReport r;
    if (opt.verbose > 0 || e.number != kAlreadyDone) {
      r.line = "scancel: error: Kill job error on job step id " + display_id + ": " + e.text;
    }
    r.exit_code = e.number == kAlreadyDone && opt.IsKill() ? 0 : e.number;
    return r;
  }
  const bool ignorable = e.number == kAlreadyDone || e.number == kInvalidJobId;
  FailureReport r;
  if (opt.verbose > 0 || !ignorable) {
    r.line = "scancel: error: Kill job error on job id " + display_id + ": " + e.text;
  }
  r.exit_code = ignorable && opt.IsKill() ? 0 : e.number;
  return r;
}

int ExitStatusOf(int rc) {
  return rc & 0xff;
}

}  // namespace berth::slurm
