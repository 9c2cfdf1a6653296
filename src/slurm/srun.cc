// srun's options, step layout, task environment and end-of-step report (Slurm 22.05:
// src/srun/, src/common/slurm_step_layout.c, src/plugins/launch/slurm/launch_slurm.c).
#include "slurm/srun.h"

#include <getopt.h>
#include <sys/wait.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstring>
#include <map>

#include "common/hostlist.h"
#include "common/strings.h"

namespace berth::slurm {
namespace {

// Long-only options. Their values are above any character.
enum LongOption {
  kHelp = 0x100,
  kUsage,
  kMem,
  kMemPerCpu,
  kMemPerGpu,
  kGpusPerNode,
  kGpusPerTask,
  kGres,
  kNtasksPerNode,
  kCpusPerGpu,
  kExclusive,
  kTimeMin,
  kBegin,
  kNice,
  kComment,
  kReservation,
  kExport,
  kPty,
  kX11,
  kIgnored,         // accepted, no effect in berth (binding, MPI plugin, ...)
  kIgnoredWithArg,  // the same, with a value
  kPyxis = 0x200,   // pyxis's options: kPyxis + their index in PyxisOptions()
};

const struct option kLongOptions[] = {
    {"account", required_argument, nullptr, 'A'},
    {"begin", required_argument, nullptr, kBegin},
    {"chdir", required_argument, nullptr, 'D'},
    {"comment", required_argument, nullptr, kComment},
    {"constraint", required_argument, nullptr, 'C'},
    {"cpu-bind", required_argument, nullptr, kIgnoredWithArg},
    {"cpus-per-gpu", required_argument, nullptr, kCpusPerGpu},
    {"cpus-per-task", required_argument, nullptr, 'c'},
    {"dependency", required_argument, nullptr, 'd'},
    {"disable-status", no_argument, nullptr, 'X'},
    {"distribution", required_argument, nullptr, 'm'},
    {"error", required_argument, nullptr, 'e'},
    {"exact", no_argument, nullptr, kIgnored},
    {"exclude", required_argument, nullptr, 'x'},
    {"exclusive", optional_argument, nullptr, kExclusive},
    {"export", required_argument, nullptr, kExport},
    {"gpu-bind", required_argument, nullptr, kIgnoredWithArg},
    {"gpus", required_argument, nullptr, 'G'},
    {"gpus-per-node", required_argument, nullptr, kGpusPerNode},
    {"gpus-per-task", required_argument, nullptr, kGpusPerTask},
    {"gres", required_argument, nullptr, kGres},
    {"help", no_argument, nullptr, kHelp},
    {"hold", no_argument, nullptr, 'H'},
    {"immediate", optional_argument, nullptr, 'I'},
    {"input", required_argument, nullptr, 'i'},
    {"job-name", required_argument, nullptr, 'J'},
    {"kill-on-bad-exit", optional_argument, nullptr, 'K'},
    {"label", no_argument, nullptr, 'l'},
    {"licenses", required_argument, nullptr, 'L'},
    {"mem", required_argument, nullptr, kMem},
    {"mem-per-cpu", required_argument, nullptr, kMemPerCpu},
    {"mem-per-gpu", required_argument, nullptr, kMemPerGpu},
    {"mpi", required_argument, nullptr, kIgnoredWithArg},
    {"nice", optional_argument, nullptr, kNice},
    {"no-kill", optional_argument, nullptr, 'k'},
    {"nodelist", required_argument, nullptr, 'w'},
    {"nodes", required_argument, nullptr, 'N'},
    {"ntasks", required_argument, nullptr, 'n'},
    {"ntasks-per-node", required_argument, nullptr, kNtasksPerNode},
    {"output", required_argument, nullptr, 'o'},
    {"overcommit", no_argument, nullptr, 'O'},
    {"overlap", no_argument, nullptr, kIgnored},
    {"oversubscribe", no_argument, nullptr, 's'},
    {"partition", required_argument, nullptr, 'p'},
    {"pty", no_argument, nullptr, kPty},
    {"qos", required_argument, nullptr, 'q'},
    {"quiet", no_argument, nullptr, 'Q'},
    {"reservation", required_argument, nullptr, kReservation},
    {"time", required_argument, nullptr, 't'},
    {"time-min", required_argument, nullptr, kTimeMin},
    {"unbuffered", no_argument, nullptr, 'u'},
    {"usage", no_argument, nullptr, kUsage},
    {"verbose", no_argument, nullptr, 'v'},
    {"version", no_argument, nullptr, 'V'},
    {"wait", required_argument, nullptr, 'W'},
    {"x11", optional_argument, nullptr, kX11},
    // pyxis's, in PyxisOptions()'s order (checked by a test).
    {"container-image", required_argument, nullptr, kPyxis + 0},
    {"container-mounts", required_argument, nullptr, kPyxis + 1},
    {"container-workdir", required_argument, nullptr, kPyxis + 2},
    {"container-name", required_argument, nullptr, kPyxis + 3},
    {"container-save", required_argument, nullptr, kPyxis + 4},
    {"container-mount-home", no_argument, nullptr, kPyxis + 5},
    {"no-container-mount-home", no_argument, nullptr, kPyxis + 6},
    {"container-remap-root", no_argument, nullptr, kPyxis + 7},
    {"no-container-remap-root", no_argument, nullptr, kPyxis + 8},
    {"container-entrypoint", no_argument, nullptr, kPyxis + 9},
    {"no-container-entrypoint", no_argument, nullptr, kPyxis + 10},
    {"container-entrypoint-log", no_argument, nullptr, kPyxis + 11},
    {"container-writable", no_argument, nullptr, kPyxis + 12},
    {"container-readonly", no_argument, nullptr, kPyxis + 13},
    {"container-env", required_argument, nullptr, kPyxis + 14},
    {nullptr, 0, nullptr, 0},
};
// '+': stop at the first word that is not an option (the command and its own options).
constexpr const char* kShortOptions = "+A:c:C:d:D:e:G:Hi:I::J:k::K::lL:m:n:N:o:Op:q:Qst:uvVw:W:x:X";

const char* const kTryHelp = "Try \"srun --help\" for more information\n";

std::optional<int32_t> PositiveInt(std::string_view s) {
  int32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

SrunParse Finish(int code, std::string err, std::string out = "") {
  return StopWith<SrunParse>(code, std::move(err), std::move(out));
}

// The job option (sbatch's long name) a short or long-only option stands for.
const std::map<int, std::string>& JobOptionNames() {
  static const std::map<int, std::string> kNames = {
      {'A', "account"},
      {'C', "constraint"},
      {'d', "dependency"},
      {'G', "gpus"},
      {'H', "hold"},
      {'L', "licenses"},
      {'p', "partition"},
      {'q', "qos"},
      {'s', "oversubscribe"},
      {'t', "time"},
      {'x', "exclude"},
      {kMem, "mem"},
      {kMemPerCpu, "mem-per-cpu"},
      {kMemPerGpu, "mem-per-gpu"},
      {kGpusPerNode, "gpus-per-node"},
      {kGres, "gres"},
      {kCpusPerGpu, "cpus-per-gpu"},
      {kExclusive, "exclusive"},
      {kTimeMin, "time-min"},
      {kBegin, "begin"},
      {kNice, "nice"},
      {kReservation, "reservation"},
  };
  return kNames;
}

// Applies a step option (also a job option: it shapes the allocation too). Returns an error text
// or "".
std::string ApplyStepOption(int c, const std::string& value, SrunOptions& o) {
  auto count = [&](const char* name, int32_t& field) -> std::string {
    std::optional<int32_t> n = PositiveInt(value);
    if (!n) return std::string("srun: error: Invalid numeric value \"") + value + "\" for " + name;
    field = *n;
    return "";
  };
  switch (c) {
    case 'n':
      o.step_args.insert(o.step_args.end(), {"-n", value});
      o.job_options.emplace_back("ntasks", value);
      return count("--ntasks", o.ntasks);
    case 'c':
      o.step_args.insert(o.step_args.end(), {"-c", value});
      o.job_options.emplace_back("cpus-per-task", value);
      return count("--cpus-per-task", o.cpus_per_task);
    case kGpusPerTask:
      o.step_args.push_back("--gpus-per-task=" + value);
      o.job_options.emplace_back("gpus-per-task", value);
      return count("--gpus-per-task", o.gpus_per_task);
    case kNtasksPerNode:
      o.step_args.push_back("--ntasks-per-node=" + value);
      o.job_options.emplace_back("ntasks-per-node", value);
      return count("--ntasks-per-node", o.ntasks_per_node);
    case 'N': {
      o.step_args.insert(o.step_args.end(), {"-N", value});
      o.job_options.emplace_back("nodes", value);
      size_t dash = value.find('-');
      std::optional<int32_t> lo = PositiveInt(value.substr(0, dash));
      std::optional<int32_t> hi =
          dash == std::string::npos ? lo : PositiveInt(value.substr(dash + 1));
      if (!lo || !hi || *hi < *lo) return "srun: error: invalid node count `" + value + "'";
      o.min_nodes = *lo;
      o.max_nodes = *hi;
      return "";
    }
    case 'w':
      o.step_args.insert(o.step_args.end(), {"-w", value});
      o.job_options.emplace_back("nodelist", value);
      o.nodelist = value;
      return "";
  }
  return "";
}

// A pyxis option (c = kPyxis + its index); returns an error text or "".
std::string ApplyPyxisOption(int c, const char* value, SrunOptions& o) {
  const PyxisOption& p = PyxisOptions()[static_cast<size_t>(c - kPyxis)];
  std::optional<std::string> v;
  if (!p.arg_info.empty()) v = value != nullptr ? value : "";
  Status st = AddPyxisOption(p.name, v, o.pyxis);
  if (!st.ok()) return "srun: error: " + st.message();
  o.container_args.push_back("--" + std::string(p.name) + (v ? "=" + *v : ""));
  return "";
}

// Applies one option; returns an error text or "".
std::string ApplyOption(int c, const std::string& value, SrunOptions& o) {
  if (auto job = JobOptionNames().find(c); job != JobOptionNames().end()) {
    o.job_options.emplace_back(job->second, value);
    return "";
  }
  switch (c) {
    case 'n':
    case 'c':
    case 'N':
    case 'w':
    case kGpusPerTask:
    case kNtasksPerNode:
      return ApplyStepOption(c, value, o);
    case 'l':
      o.label = true;
      o.step_args.push_back("-l");
      return "";
    case 'o':
      o.output = value;
      o.step_args.push_back("--output=" + value);
      return "";
    case 'e':
      o.error = value;
      o.step_args.push_back("--error=" + value);
      return "";
    case 'i':
      o.input = value;
      o.step_args.push_back("--input=" + value);
      return "";
    case 'D':
      o.chdir = value;
      return "";
    case 'J':
      o.job_name = value;
      return "";
    case kExport:
      o.export_env = value;
      return "";
    case kComment:
      o.job_options.emplace_back("comment", value);
      return "";
    case 'O':
      o.overcommit = true;
      o.step_args.push_back("-O");
      return "";
    case 'v':
      ++o.verbose;
      return "";
    case 'Q':
      o.quiet = true;
      return "";
    case 'V':
      o.version = true;
      return "";
    case kPty:
      o.pty = true;
      o.step_args.push_back("--pty");
      return "";
    case kX11:
      return "srun: error: --x11 is not supported by berth";
    case 'm':
      if (value.rfind("block", 0) != 0 && value != "*") {
        return "srun: error: berth lays tasks out by block only (got --distribution=" + value + ")";
      }
      return "";
    default:
      return "";  // -u, -k, -K, -I, -W, -X, binding and MPI options: no effect here
  }
}

std::string Digits(uint64_t n, int width) {
  std::string d = std::to_string(n);
  if (static_cast<int>(d.size()) < width) d.insert(0, width - d.size(), '0');
  return d;
}

std::string Get(const EnvList& env, const std::string& name) {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return "";
}

// "0-2,5" from task ids (srun's ranged task lists).
std::string RangedIds(std::vector<int32_t> ids) {
  std::sort(ids.begin(), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

// strsignal()'s words as srun prints them.
std::string SignalWords(int sig) {
  const char* s = strsignal(sig);
  return s != nullptr ? s : "Signal " + std::to_string(sig);
}

}  // namespace

SrunParse ParseSrunArgs(const std::vector<std::string>& args) {
  SrunParse result;
  SrunOptions& o = result.options;
  std::optional<SrunParse> stop;
  std::optional<std::vector<std::string>> operands =
      RunGetopt(args, kShortOptions, kLongOptions, [&](int c, const char* value) {
        if (c == kHelp) {
          stop = Finish(0, "", SrunHelp());
        } else if (c == kUsage) {
          stop = Finish(0, "", SrunUsage());
        } else if (c >= kPyxis) {
          if (std::string error = ApplyPyxisOption(c, value, o); !error.empty()) {
            stop = Finish(1, error + "\n");
          }
        } else if (std::string error = ApplyOption(c, value ? value : "", o); !error.empty()) {
          stop = Finish(1, error + "\n");
        }
        return !stop;
      });
  if (!operands) return Finish(1, kTryHelp);
  if (stop) return *stop;
  if (o.version) return result;
  o.command = std::move(*operands);
  if (o.command.empty()) return Finish(1, "srun: fatal: No command given to execute.\n");
  if (o.pty && (!o.error.empty() || !o.input.empty() || !o.output.empty())) {
    return Finish(1, "srun: error: --error/--input/--output are incompatible with --pty\n");
  }
  return result;
}

std::string SrunUsage() {
  return "Usage: srun [-N nnodes] [-n ntasks] [-c ncpus] [--gpus-per-task=n] [-l] [-o out]\n"
         "            [-e err] [-p partition] [-t minutes] [--mem=MB] [-G gpus] [-J jobname]\n"
         "            [-w hosts] [-x hosts] [-A account] [-q qos] [-D path] executable [args...]\n";
}

std::string SrunHelp() {
  return "Usage: srun [OPTIONS...] executable [args...]\n"
         "\n"
         "Inside an allocation (SLURM_JOB_ID set) srun runs a job step of the allocation;\n"
         "outside one it creates a job, waits for it and shows its output.\n"
         "\n"
         "Step options:\n"
         "  -n, --ntasks=ntasks         number of tasks\n"
         "  -N, --nodes=N[-M]           number of nodes\n"
         "  -c, --cpus-per-task=ncpus   CPUs per task\n"
         "      --ntasks-per-node=n     tasks per node\n"
         "      --gpus-per-task=n       GPUs per task (CUDA_VISIBLE_DEVICES split per task)\n"
         "  -l, --label                 prefix each output line with its task id\n"
         "  -o, --output=pattern        task output to a file (%j %s %t %n %N %u %x %%)\n"
         "  -e, --error=pattern         task errors to a file\n"
         "  -i, --input=all|none|taskid|pattern  where the tasks' input comes from (default:\n"
         "                              srun's standard input, copied to every task)\n"
         "      --pty                   run task 0 on a pseudo-terminal (an interactive shell)\n"
         "  -w, --nodelist=hosts        the step's nodes\n"
         "  -D, --chdir=path            run the tasks in this directory\n"
         "  -O, --overcommit            allow more tasks than CPUs\n"
         "\n"
         "Allocation options (outside an allocation):\n"
         "  -p, --partition=partition   -t, --time=limit        --mem=size\n"
         "      --mem-per-cpu=size      -G, --gpus=n            --gpus-per-node=n\n"
         "      --gres=list             -A, --account=name      -q, --qos=qos\n"
         "  -C, --constraint=list       -x, --exclude=hosts     --exclusive\n"
         "  -d, --dependency=list       -J, --job-name=name     --begin=time\n"
         "      --export=ALL|NONE|vars  --comment=text          --time-min=limit\n"
         "\n"
         "  -v, --verbose   -Q, --quiet   -V, --version   --help   --usage\n" +
         PyxisHelp();
}

Result<std::vector<int32_t>> ExpandCounts(std::string_view text) {
  std::vector<int32_t> out;
  for (const std::string& item : SplitNonEmpty(text)) {
    size_t paren = item.find("(x");
    std::optional<int32_t> value = PositiveInt(item.substr(0, paren));
    int32_t times = 1;
    if (paren != std::string::npos) {
      if (item.back() != ')')
        return Status::InvalidArgument("bad count list '" + std::string(text) + "'");
      std::optional<int32_t> t = PositiveInt(item.substr(paren + 2, item.size() - paren - 3));
      if (!t) return Status::InvalidArgument("bad count list '" + std::string(text) + "'");
      times = *t;
    }
    if (!value) return Status::InvalidArgument("bad count list '" + std::string(text) + "'");
    out.insert(out.end(), times, *value);
  }
  return out;
}

Result<Allocation> AllocationFromEnv(const EnvList& env) {
  Allocation a;
  std::optional<int32_t> job = PositiveInt(Get(env, "SLURM_JOB_ID"));
  if (!job) job = PositiveInt(Get(env, "SLURM_JOBID"));
  if (!job) return Status::NotFound("not inside an allocation (SLURM_JOB_ID is not set)");
  a.job_id = static_cast<uint32_t>(*job);
  a.job_name = Get(env, "SLURM_JOB_NAME");
  a.user = Get(env, "SLURM_JOB_USER");
  if (std::optional<int32_t> id = PositiveInt(Get(env, "SLURM_ARRAY_JOB_ID"))) {
    a.array_job_id = static_cast<uint32_t>(*id);
    int32_t task = 0;
    std::string t = Get(env, "SLURM_ARRAY_TASK_ID");
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), task);
    if (ec == std::errc() && p == t.data() + t.size()) a.array_task_id = task;
  }
  std::string nodelist = Get(env, "SLURM_JOB_NODELIST");
  if (nodelist.empty()) nodelist = Get(env, "SLURM_NODELIST");
  if (nodelist.empty()) nodelist = Get(env, "SLURMD_NODENAME");
  BERTH_ASSIGN_OR_RETURN(a.nodes, hostlist::Expand(nodelist));
  if (a.nodes.empty()) return Status::InvalidArgument("SLURM_JOB_NODELIST is empty");
  std::string cpus = Get(env, "SLURM_JOB_CPUS_PER_NODE");
  if (cpus.empty()) cpus = Get(env, "SLURM_CPUS_ON_NODE");
  Result<std::vector<int32_t>> per_node = ExpandCounts(cpus.empty() ? "1" : cpus);
  a.cpus = per_node.ok() ? *per_node : std::vector<int32_t>{1};
  a.cpus.resize(a.nodes.size(), a.cpus.back());
  int32_t node_id = 0;
  std::string nid = Get(env, "SLURM_NODEID");
  auto [p, ec] = std::from_chars(nid.data(), nid.data() + nid.size(), node_id);
  if (ec == std::errc() && p == nid.data() + nid.size() && node_id >= 0 &&
      node_id < static_cast<int32_t>(a.nodes.size())) {
    a.this_node = node_id;
  } else {
    // Neither: srun runs on none of the allocation's nodes (salloc's shell on a login host), and
    // every task of its steps starts through the controller.
    auto it = std::find(a.nodes.begin(), a.nodes.end(), Get(env, "SLURMD_NODENAME"));
    a.this_node = it == a.nodes.end() ? -1 : static_cast<int32_t>(it - a.nodes.begin());
  }
  std::string gpus = Get(env, "CUDA_VISIBLE_DEVICES");
  if (gpus.empty()) gpus = Get(env, "SLURM_JOB_GPUS");
  a.gpus = SplitNonEmpty(gpus);
  a.env_ntasks = PositiveInt(Get(env, "SLURM_NTASKS")).value_or(0);
  a.env_nnodes = PositiveInt(Get(env, "SLURM_NNODES")).value_or(0);
  a.env_cpus_per_task = PositiveInt(Get(env, "SRUN_CPUS_PER_TASK")).value_or(0);
  a.start_time = Get(env, "SLURM_JOB_START_TIME");
  return a;
}

std::vector<int32_t> StepLayout::TaskIds(size_t n) const {
  int32_t first = 0;
  for (size_t i = 0; i < n && i < tasks_per_node.size(); ++i) first += tasks_per_node[i];
  std::vector<int32_t> ids;
  for (int32_t k = 0; n < tasks_per_node.size() && k < tasks_per_node[n]; ++k) {
    ids.push_back(first + k);
  }
  return ids;
}

std::string StepLayout::TasksPerNodeText() const {
  std::string out;
  for (size_t i = 0; i < tasks_per_node.size();) {
    size_t j = i;
    while (j < tasks_per_node.size() && tasks_per_node[j] == tasks_per_node[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(tasks_per_node[i]);
    if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

namespace {

// The allocation nodes a step may use: -w's (in allocation order), else all.
Result<std::vector<int32_t>> CandidateNodes(const SrunOptions& opt, const Allocation& alloc,
                                            const std::string& step_error) {
  std::vector<int32_t> nodes;
  if (opt.nodelist.empty()) {
    for (size_t i = 0; i < alloc.nodes.size(); ++i) nodes.push_back(static_cast<int32_t>(i));
    return nodes;
  }
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> wanted, hostlist::Expand(opt.nodelist));
  for (const std::string& w : wanted) {
    auto it = std::find(alloc.nodes.begin(), alloc.nodes.end(), w);
    if (it == alloc.nodes.end()) {
      return Status::InvalidArgument(step_error + "Requested node configuration is not available");
    }
    nodes.push_back(static_cast<int32_t>(it - alloc.nodes.begin()));
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

}  // namespace

Result<StepLayout> PlanStep(const SrunOptions& opt, const Allocation& alloc) {
  const std::string step_error =
      "srun: error: Unable to create step for job " + std::to_string(alloc.job_id) + ": ";
  StepLayout l;
  l.cpus_per_task =
      opt.cpus_per_task > 0 ? opt.cpus_per_task : std::max(1, alloc.env_cpus_per_task);
  BERTH_ASSIGN_OR_RETURN(std::vector<int32_t> candidates, CandidateNodes(opt, alloc, step_error));
  const int32_t available = static_cast<int32_t>(candidates.size());
  // -N, else the allocation's node count (SLURM_NNODES), else as many as the tasks need.
  int32_t nodes = opt.min_nodes > 0 ? opt.min_nodes
                                    : (opt.nodelist.empty() && alloc.env_nnodes > 0
                                           ? std::min(alloc.env_nnodes, available)
                                           : available);
  if (nodes > available) {
    return Status::InvalidArgument(step_error + "Requested node configuration is not available");
  }
  int32_t ntasks = opt.ntasks;
  if (ntasks == 0 && opt.ntasks_per_node > 0) ntasks = opt.ntasks_per_node * nodes;
  if (ntasks == 0) ntasks = opt.min_nodes > 0 ? nodes : std::max(alloc.env_ntasks, nodes);
  if (ntasks < nodes) {
    l.warnings.push_back("srun: Warning: can't run " + std::to_string(ntasks) + " processes on " +
                         std::to_string(nodes) + " nodes, setting nnodes to " +
                         std::to_string(ntasks));
    nodes = ntasks;
  }
  l.ntasks = ntasks;
  std::vector<int32_t> capacity;
  for (int32_t i = 0; i < nodes; ++i) {
    const int32_t index = candidates[i];
    l.node_index.push_back(index);
    l.nodes.push_back(alloc.nodes[index]);
    int32_t cap = alloc.cpus[index] / l.cpus_per_task;
    if (opt.ntasks_per_node > 0) cap = std::min(cap, opt.ntasks_per_node);
    capacity.push_back(opt.overcommit ? ntasks : cap);
  }
  // Slurm's _task_layout_block: one task per node, then one more per node in turn while CPUs
  // are free.
  l.tasks_per_node.assign(nodes, 0);
  int32_t placed = 0;
  while (placed < ntasks) {
    int32_t before = placed;
    for (int32_t i = 0; i < nodes && placed < ntasks; ++i) {
      if (l.tasks_per_node[i] < capacity[i]) {
        ++l.tasks_per_node[i];
        ++placed;
      }
    }
    if (placed == before) {
      return Status::ResourceExhausted(step_error + "More processors requested than permitted");
    }
  }
  return l;
}

EnvList TaskEnvironment(const EnvList& base, const StepLayout& layout, const TaskIdentity& task,
                        uint32_t step_id, const std::vector<std::string>& gpus) {
  EnvList env = base;
  auto set = [&](const std::string& name, const std::string& value) {
    for (auto& [n, v] : env) {
      if (n == name) {
        v = value;
        return;
      }
    }
    env.emplace_back(name, value);
  };
  const std::string nodelist = hostlist::Compress(layout.nodes);
  std::string gtids;
  for (int32_t id : layout.TaskIds(static_cast<size_t>(task.step_node))) {
    gtids += (gtids.empty() ? "" : ",") + std::to_string(id);
  }
  set("SLURM_STEP_ID", std::to_string(step_id));
  set("SLURM_STEPID", std::to_string(step_id));
  set("SLURM_STEP_NUM_TASKS", std::to_string(layout.ntasks));
  set("SLURM_STEP_NUM_NODES", std::to_string(layout.nodes.size()));
  set("SLURM_STEP_NODELIST", nodelist);
  set("SLURM_STEP_TASKS_PER_NODE", layout.TasksPerNodeText());
  set("SLURM_NTASKS", std::to_string(layout.ntasks));
  set("SLURM_NPROCS", std::to_string(layout.ntasks));
  set("SLURM_NNODES", std::to_string(layout.nodes.size()));
  set("SLURM_NODELIST", nodelist);
  set("SLURM_TASKS_PER_NODE", layout.TasksPerNodeText());
  set("SLURM_PROCID", std::to_string(task.global_id));
  set("SLURM_LOCALID", std::to_string(task.local_id));
  set("SLURM_NODEID", std::to_string(task.step_node));
  set("SLURM_GTIDS", gtids);
  set("SLURM_DISTRIBUTION", "block");
  if (layout.cpus_per_task > 1) set("SLURM_CPUS_PER_TASK", std::to_string(layout.cpus_per_task));
  if (!gpus.empty()) {
    std::string list;
    for (const std::string& g : gpus) list += (list.empty() ? "" : ",") + g;
    set("CUDA_VISIBLE_DEVICES", list);
    set("GPU_DEVICE_ORDINAL", list);
    set("SLURM_STEP_GPUS", list);
  }
  // PyTorch's rendezvous (torch.distributed's env:// init): the step's first node is the master;
  // a port from the job id, below Linux's ephemeral range, so that jobs sharing a node differ.
  // Slurm sets none of these; what the user set already wins.
  auto set_default = [&](const std::string& name, const std::string& value) {
    for (const auto& [n, v] : env) {
      if (n == name) return;
    }
    env.emplace_back(name, value);
  };
  uint32_t job_id = 0;
  for (const auto& [n, v] : base) {
    if (n == "SLURM_JOB_ID") std::from_chars(v.data(), v.data() + v.size(), job_id);
  }
  if (!layout.nodes.empty()) set_default("MASTER_ADDR", layout.nodes.front());
  set_default("MASTER_PORT", std::to_string(20000 + job_id % 10000));
  set_default("WORLD_SIZE", std::to_string(layout.ntasks));
  set("RANK", std::to_string(task.global_id));
  set("LOCAL_RANK", std::to_string(task.local_id));
  set("LOCAL_WORLD_SIZE",
      std::to_string(layout.TaskIds(static_cast<size_t>(task.step_node)).size()));
  set("NODE_RANK", std::to_string(task.step_node));
  return env;
}

Result<std::vector<std::string>> TaskGpus(const Allocation& alloc, const SrunOptions& opt,
                                          int32_t local_tasks, int32_t local_id) {
  if (opt.gpus_per_task <= 0) return std::vector<std::string>{};
  const size_t need = static_cast<size_t>(opt.gpus_per_task) * static_cast<size_t>(local_tasks);
  if (need > alloc.gpus.size()) {
    return Status::ResourceExhausted(
        "srun: error: Unable to create step for job " + std::to_string(alloc.job_id) +
        ": Requested node configuration is not available (" + std::to_string(need) +
        " GPUs asked on " + alloc.nodes[alloc.this_node] + ", the allocation has " +
        std::to_string(alloc.gpus.size()) + ")");
  }
  auto first = alloc.gpus.begin() + static_cast<ptrdiff_t>(opt.gpus_per_task) * local_id;
  return std::vector<std::string>(first, first + opt.gpus_per_task);
}

std::string ExpandSrunPattern(const std::string& pattern, const PatternContext& c) {
  if (pattern == "none") return "/dev/null";
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    size_t j = i + 1;
    int width = 0;
    while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') {
      width = std::min(10, width * 10 + (pattern[j] - '0'));
      ++j;
    }
    if (j >= pattern.size()) {
      out += pattern.substr(i);
      break;
    }
    switch (pattern[j]) {
      case '%':
        out += '%';
        break;
      case 'j':
        out += Digits(c.job_id, width);
        break;
      case 'J':
        out += Digits(c.job_id, width) + "." + std::to_string(c.step_id);
        break;
      case 's':
        out += Digits(c.step_id, width);
        break;
      case 't':
        out += Digits(static_cast<uint64_t>(c.task_id), width);
        break;
      case 'n':
        out += Digits(static_cast<uint64_t>(c.node_id), width);
        break;
      case 'N':
        out += c.node_name;
        break;
      case 'u':
        out += c.user;
        break;
      case 'x':
        out += c.job_name;
        break;
      case 'A':
        out += Digits(c.array_job_id != 0 ? c.array_job_id : c.job_id, width);
        break;
      case 'a':
        out += Digits(c.array_task_id >= 0 ? static_cast<uint64_t>(c.array_task_id) : 0xfffffffeULL,
                      width);
        break;
      default:
        out += pattern.substr(i, j - i + 1);
        break;
    }
    i = j;
  }
  return out;
}

bool PatternPerTask(const std::string& pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    size_t j = i + 1;
    while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') ++j;
    if (j < pattern.size() && pattern[j] == 't') return true;
    if (j < pattern.size() && pattern[j] == '%') i = j;
  }
  return false;
}

std::string TaskLabel(int32_t task_id, int32_t ntasks) {
  int width = 1;
  for (int32_t n = std::max(1, ntasks) - 1; n >= 10; n /= 10) ++width;
  std::string id = std::to_string(task_id);
  if (static_cast<int>(id.size()) < width) id.insert(0, width - id.size(), ' ');
  return id + ": ";
}

std::vector<std::string> TaskEndLines(const std::string& node, const std::vector<TaskEnd>& ends) {
  // Outcome text -> task ids, in the order outcomes first appear.
  std::vector<std::pair<std::string, std::vector<int32_t>>> groups;
  for (const TaskEnd& e : ends) {
    std::string what;
    if (WIFEXITED(e.wait_status)) {
      if (WEXITSTATUS(e.wait_status) == 0) continue;
      what = "Exited with exit code " + std::to_string(WEXITSTATUS(e.wait_status));
    } else if (WIFSIGNALED(e.wait_status)) {
      what =
          SignalWords(WTERMSIG(e.wait_status)) + (WCOREDUMP(e.wait_status) ? " (core dumped)" : "");
    } else {
      continue;
    }
    auto g =
        std::find_if(groups.begin(), groups.end(), [&](const auto& p) { return p.first == what; });
    if (g == groups.end()) {
      groups.push_back({what, {e.task_id}});
    } else {
      g->second.push_back(e.task_id);
    }
  }
  std::vector<std::string> lines;
  for (const auto& [what, ids] : groups) {
    lines.push_back("srun: error: " + node + ": " + (ids.size() > 1 ? "tasks " : "task ") +
                    RangedIds(ids) + ": " + what);
  }
  return lines;
}

int SrunExitCode(const std::vector<TaskEnd>& ends) {
  int worst = 0;
  for (const TaskEnd& e : ends) worst = std::max(worst, e.wait_status);
  if (WIFEXITED(worst)) return WEXITSTATUS(worst);
  if (WIFSIGNALED(worst)) return 128 + WTERMSIG(worst);
  return 1;
}

Result<std::optional<image::ContainerSpec>> StepContainer(const SrunOptions& opt,
                                                          const EnvList& env,
                                                          const std::string& cwd, bool new_job) {
  // pyxis places relative mount sources in the step's working directory.
  std::string dir = cwd;
  if (!opt.chdir.empty()) dir = opt.chdir[0] == '/' ? opt.chdir : cwd + "/" + opt.chdir;
  return PyxisContainer(opt.pyxis, dir, env, new_job);
}

std::vector<std::string> InnerSrunArgs(const std::string& berth_binary, const SrunOptions& opt) {
  std::vector<std::string> argv = {berth_binary, "srun"};
  argv.insert(argv.end(), opt.step_args.begin(), opt.step_args.end());
  argv.insert(argv.end(), opt.container_args.begin(), opt.container_args.end());
  argv.push_back("--");
  argv.insert(argv.end(), opt.command.begin(), opt.command.end());
  return argv;
}

}  // namespace berth::slurm
