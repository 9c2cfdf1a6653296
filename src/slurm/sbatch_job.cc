// sbatch's passes over its options (Slurm 22.05 src/sbatch/sbatch.c main, opt.c) and the job
// they make.
#include "slurm/sbatch_job.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "common/strings.h"
#include "common/units.h"
#include "config/job_options.h"
#include "config/value_text.h"
#include "slurm/pyxis.h"
#include "slurm/sbatch_values.h"

namespace berth::slurm {
namespace {

enum class Source : uint8_t { kScript, kEnvironment, kCommandLine };

struct Setting {
  OptionArg option;
  Source source;
};

// Every option occurrence in the order Slurm applies them: directives, environment, command line.
// The last occurrence of an option is its value.
class Settings {
 public:
  void Add(OptionArg o, Source s) { list_.push_back({std::move(o), s}); }

  const Setting* Last(std::string_view name) const {
    for (auto it = list_.rbegin(); it != list_.rend(); ++it) {
      if (it->option.name == name) return &*it;
    }
    return nullptr;
  }
  bool Has(std::string_view name) const { return Last(name) != nullptr; }
  std::string Value(std::string_view name) const {
    const Setting* s = Last(name);
    return s != nullptr ? s->option.value.value_or("") : "";
  }
  const std::vector<Setting>& All() const { return list_; }
  void Drop(std::string_view name) {
    std::erase_if(list_, [&](const Setting& s) { return s.option.name == name; });
  }

  // The last occurrence of each option, in the order of those last occurrences, so that of two
  // options that set the same thing (--exclusive, --oversubscribe) the later one wins.
  std::vector<const Setting*> Final() const {
    std::vector<const Setting*> out;
    std::set<std::string_view> seen;
    for (auto it = list_.rbegin(); it != list_.rend(); ++it) {
      if (seen.insert(it->option.name).second) out.push_back(&*it);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

 private:
  std::vector<Setting> list_;
};

SbatchFailure Error(const SbatchInputs& in, std::string_view message, int exit_code = 1) {
  return {in.prog + ": error: " + std::string(message) + "\n", exit_code};
}

SbatchFailure Fatal(const SbatchInputs& in, std::string_view message) {
  return {in.prog + ": fatal: " + std::string(message) + "\n", 1};
}

SbatchFailure GetoptFailure(const SbatchInputs& in, const std::string& error) {
  return {error + "\nTry \"" + in.prog + " --help\" for more information\n", 255};
}

constexpr std::string_view kHelpText =
    R"(Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]

Parallel run options:
  -a, --array=indexes         job array index values
  -A, --account=name          charge job to specified account
  -b, --begin=time            defer job until HH:MM MM/DD/YY
  -c, --cpus-per-task=ncpus   number of cpus required per task
      --comment=name          arbitrary comment
  -d, --dependency=type:jobid[:time] defer job until condition on jobid is satisfied
      --deadline=time         remove the job if no ending possible before
                              this deadline (start > (deadline - time[-min]))
  -D, --chdir=directory       set working directory for batch script
  -e, --error=err             file for batch script's standard error
      --export[=names]        specify environment variables to export
      --export-file=file|fd   specify environment variables file or file
                              descriptor to export
      --get-user-env          load environment from local cluster
  -H, --hold                  submit job in held state
  -i, --input=in              file for batch script's standard input
  -J, --job-name=jobname      name of job
      --kill-on-invalid-dep=<yes|no> terminate job if invalid dependency
  -L, --licenses=names        required license, comma separated
  -M, --clusters=names        Comma separated list of clusters to issue
                              commands to.  Default is current cluster.
      --mail-type=type        notify on state change: BEGIN, END, FAIL or ALL
      --mail-user=user        who to send email notification for job state
                              changes
  -n, --ntasks=ntasks         number of tasks to run
      --nice[=value]          decrease scheduling priority by value
      --no-requeue            if set, do not permit the job to be requeued
      --ntasks-per-node=n     number of tasks to invoke on each node
  -N, --nodes=N               number of nodes on which to run (N = min[-max])
      --open-mode={append|truncate} output file open mode
  -o, --output=out            file for batch script's standard output
      --parsable              outputs only the jobid and cluster name (if present),
                              separated by semicolon, only on successful submission.
  -p, --partition=partition   partition requested
      --priority=value        set the priority of the job to value
  -q, --qos=qos               quality of service
      --requeue               if set, permit the job to be requeued
  -s, --oversubscribe         over subscribe resources with other jobs
      --signal=[R:|B:]num[@time] send signal when time limit within time seconds
  -t, --time=minutes          time limit
      --time-min=minutes      minimum time limit (if distinct)
  -W, --wait                  wait for completion of submitted job
      --wrap[=command string] wrap command string in a sh script and submit

Constraint options:
  -C, --constraint=list       specify a list of constraints
      --mem=MB                minimum amount of real memory
  -w, --nodelist=hosts...     request a specific list of hosts
  -x, --exclude=hosts...      exclude a specific list of hosts

Consumable resources related options:
      --exclusive[=user]      allocate nodes in exclusive mode when
                              cpu consumable resource is enabled
      --mem-per-cpu=MB        maximum amount of real memory per allocated
                              cpu required by the job.
                              --mem >= --mem-per-cpu if --mem is specified.

GPU scheduling options:
      --cpus-per-gpu=n        number of CPUs required per allocated GPU
  -G, --gpus=n                count of GPUs required for the job
      --gpu-bind=...          task to gpu binding options
      --gpus-per-node=n       number of GPUs required per allocated node
      --gpus-per-task=n       number of GPUs required per spawned task
      --gres=list             required generic resources
      --mem-per-gpu=n         real memory required per allocated GPU
      --ntasks-per-gpu=n      number of tasks to invoke for each GPU

Help options:
  -h, --help                  show this help message
      --usage                 display brief usage message

Other options:
  -V, --version               output version information and exit
)";

constexpr std::string_view kUsageText =
    R"(Usage: sbatch [-N nnodes] [-n ntasks]
              [-c ncpus] [-r n] [-p partition] [--hold] [--parsable] [-t minutes]
              [-D path] [--no-kill] [--overcommit]
              [--input file] [--output file] [--error file]
              [--time-min=minutes] [--licenses=names] [--clusters=cluster_names]
              [--chdir=directory] [--oversubscibe] [-m dist] [-J jobname]
              [--verbose] [--gid=group] [--uid=user]
              [--contiguous] [--mincpus=n] [--mem=MB] [--tmp=MB] [-C list]
              [--account=name] [--dependency=type:jobid[+time]] [--comment=name]
              [--mail-type=type] [--mail-user=user] [--nice[=value]] [--wait]
              [--requeue] [--no-requeue] [--ntasks-per-node=n] [--propagate]
              [--nodefile=file] [--nodelist=hosts] [--exclude=hosts]
              [--network=type] [--mem-per-cpu=MB] [--qos=qos]
              [--mem-bind=...] [--reservation=name] [--mcs-label=mcs]
              [--cpu-freq=min[-max[:gov]]] [--power=flags] [--gres-flags=opts]
              [--switches=max-switches{@max-time-to-wait}] [--reboot]
              [--core-spec=cores] [--thread-spec=threads]
              [--bb=burst_buffer_spec] [--bbf=burst_buffer_file]
              [--array=index_values] [--profile=...] [--ignore-pbs] [--spread-job]
              [--export[=names]] [--delay-boot=mins] [--use-min-nodes]
              [--cpus-per-gpu=n] [--gpus=n] [--gpu-bind=...] [--gpu-freq=...]
              [--gpus-per-node=n] [--gpus-per-socket=n] [--gpus-per-task=n]
              [--mem-per-gpu=MB] [--tres-per-task=list]
              executable [args...]
)";

// Options Slurm accepts that berth checks and then has no use for.
constexpr std::string_view kIgnored[] = {
    "acctg-freq",
    "batch",
    "bb",
    "bbf",
    "cluster-constraint",
    "container",
    "context",
    "contiguous",
    "core-spec",
    "cores-per-socket",
    "cpu-freq",
    "delay-boot",
    "distribution",
    "extra-node-info",
    "gpu-freq",
    "gpus-per-socket",
    "gres-flags",
    "hint",
    "ignore-pbs",
    "mcs-label",
    "mem-bind",
    "mincpus",
    "network",
    "no-kill",
    "ntasks-per-tres",
    "power",
    "prefer",
    "profile",
    "propagate",
    "reboot",
    "sockets-per-node",
    "spread-job",
    "switches",
    "thread-spec",
    "threads-per-core",
    "tmp",
    "use-min-nodes",
    "wait-all-nodes",
    "wckey",
};

// The job's variables sbatch sets from its request; inherited values of these are dropped.
constexpr std::string_view kRequestVariables[] = {
    "SLURM_NTASKS",          "SLURM_NPROCS",
    "SLURM_CPUS_PER_TASK",   "SLURM_NTASKS_PER_NODE",
    "SLURM_NTASKS_PER_GPU",  "SLURM_NTASKS_PER_SOCKET",
    "SLURM_NTASKS_PER_CORE", "SLURM_GPUS",
    "SLURM_GPUS_PER_NODE",   "SLURM_GPUS_PER_TASK",
    "SLURM_GPUS_PER_SOCKET", "SLURM_CPUS_PER_GPU",
    "SLURM_MEM_PER_NODE",    "SLURM_MEM_PER_CPU",
    "SLURM_MEM_PER_GPU",     "SLURM_JOB_DEPENDENCY",
    "SLURM_OPEN_MODE",       "SLURM_EXPORT_ENV",
    "SLURM_GET_USER_ENV",    "SLURM_DISTRIBUTION",
    "SLURM_OVERCOMMIT",      "SLURM_THREADS_PER_CORE",
    "SLURM_PROFILE",         "SLURM_GPU_BIND",
    "SLURM_GPU_FREQ",        "SLURM_CONTAINER",
    "SLURM_SUBMIT_DIR",      "SLURM_SUBMIT_HOST",
    "SLURM_PRIO_PROCESS",
};

bool IsIgnored(std::string_view name) {
  return std::find(std::begin(kIgnored), std::end(kIgnored), name) != std::end(kIgnored);
}

// A pyxis option's value alone (pyxis checks each as Slurm hands it over); how the occurrences
// go together is ApplyContainer's.
std::optional<SbatchFailure> CheckPyxisValue(const SbatchInputs& in, const OptionArg& o) {
  if (FindPyxisOption(o.name) == nullptr) return std::nullopt;
  PyxisRequest alone;
  Status st = AddPyxisOption(o.name, o.value, alone);
  if (st.ok()) return std::nullopt;
  return Error(in, st.message(), 255);
}

// Reads one source's options into `out` in order, checking each value; the getopt error (and
// for directives a stray word) comes after the options before it, as in Slurm.
std::optional<SbatchFailure> TakeOptions(const SbatchInputs& in, std::vector<OptionArg> options,
                                         Source source, Settings& out) {
  ValueContext ctx{in.prog, in.now, in.zone};
  for (OptionArg& o : options) {
    if (o.name == "help" || o.name == "usage" || o.name == "version" || o.name == "wrap") {
      continue;  // acted on from the command line only
    }
    if (auto f = CheckSbatchValue(o, ctx)) return f;
    if (auto f = CheckPyxisValue(in, o)) return f;
    out.Add(std::move(o), source);
  }
  return std::nullopt;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Slurm's rule for --mem, --mem-per-cpu and --mem-per-gpu: one of them from the command line or
// the script (which count alike) wins over the environment; two from either is an error.
std::optional<SbatchFailure> ResolveMemory(const SbatchInputs& in, Settings& s) {
  constexpr std::string_view kMem[] = {"mem", "mem-per-cpu", "mem-per-gpu"};
  auto count = [&](bool from_env) {
    int n = 0;
    for (std::string_view m : kMem) {
      const Setting* x = s.Last(m);
      if (x != nullptr && (x->source == Source::kEnvironment) == from_env) ++n;
    }
    return n;
  };
  auto keep_only = [&](bool from_env) {
    for (std::string_view m : kMem) {
      const Setting* x = s.Last(m);
      if (x != nullptr && (x->source == Source::kEnvironment) != from_env) s.Drop(m);
    }
  };
  if (count(false) > 1) {
    return Fatal(in, "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  }
  if (count(false) == 1) {
    keep_only(false);
    return std::nullopt;
  }
  if (count(true) > 1) {
    return Fatal(in,
                 "SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually "
                 "exclusive.");
  }
  return std::nullopt;
}

bool GresHasGpu(const std::string& gres) {
  for (std::string_view item : Split(gres, ',')) {
    if (item.substr(0, 5) == "gres/") item.remove_prefix(5);
    if (item.substr(0, 3) == "gpu" && (item.size() == 3 || item[3] == ':')) return true;
  }
  return false;
}

bool AsksForGpus(const Settings& s) {
  return s.Has("gpus") || s.Has("gpus-per-node") || s.Has("gpus-per-task") ||
         s.Has("gpus-per-socket") || GresHasGpu(s.Value("gres"));
}

// Whether sbatch knows the job's task count: -n, or a fixed node count (-N 2, or the default
// one node with --ntasks-per-node) times --ntasks-per-node (one task a node without it). A range
// such as -N 2-4 leaves it open (Slurm 22.05.8: "-N2 --ntasks-per-node=4 --gpus-per-task=1" is
// 8 tasks, "-N 2-4 --ntasks-per-node=2 --gpus-per-task=1" is refused).
bool TaskCountKnown(const Settings& s) {
  if (s.Has("ntasks")) return true;
  if (!s.Has("nodes")) return s.Has("ntasks-per-node");
  return s.Value("nodes").find('-') == std::string::npos;
}

// The GPU combinations Slurm's client refuses (its gres_job_state_validate), each followed by
// "Invalid generic resource (gres) specification".
std::optional<SbatchFailure> CheckGpuRequest(const SbatchInputs& in, const Settings& s) {
  if (s.Has("gpus-per-task") && s.Has("ntasks-per-gpu")) {
    return Fatal(in,
                 "--gpus-per-task is mutually exclusive with --ntasks-per-gpu and "
                 "SLURM_NTASKS_PER_GPU");
  }
  std::string why;
  if (s.Has("cpus-per-gpu") && s.Has("cpus-per-task")) {
    why = "--cpus-per-gpu is mutually exclusive with --cpus-per-task";
  } else if (s.Has("gpus-per-task") && !s.Has("gpus") && !TaskCountKnown(s)) {
    why =
        "Failed to validate job spec. --gpus-per-task used without either --gpus or -n/--ntasks "
        "is not allowed.";
  } else if (s.Has("gpus-per-socket") && !s.Has("sockets-per-node")) {
    why = "--gpus-per-socket option requires --sockets-per-node specification";
  } else if (s.Has("ntasks-per-gpu") && !AsksForGpus(s) && !s.Has("nodes") && !s.Has("ntasks")) {
    why =
        "gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU specification or a "
        "node/ntask specification";
  } else if (s.Has("mem-per-gpu") && !AsksForGpus(s)) {
    Result<int64_t> mib = ParseMemoryMiB(s.Value("mem-per-gpu"));
    why = "Requested mem_per_tres=gres:gpu:" + std::to_string(mib.ok() ? *mib : 0) +
          " but did not request any GPU.";
  }
  if (why.empty()) return std::nullopt;
  SbatchFailure f = Error(in, why);
  f.text += Error(in, "Invalid generic resource (gres) specification").text;
  return f;
}

bool IsGpuOption(std::string_view name) {
  return name == "gpus" || name == "gpus-per-node" || name == "gpus-per-task" || name == "gres";
}

// "[type:]count" as Slurm takes it for --gpus*: a bare type means one GPU of it.
std::optional<std::string> GpuCount(const std::string& v) {
  size_t colon = v.rfind(':');
  std::string count = colon == std::string::npos ? v : v.substr(colon + 1);
  bool digits = !count.empty() && count.find_first_not_of("0123456789") == std::string::npos;
  if (colon == std::string::npos && !digits && !v.empty() && v.find(',') == std::string::npos) {
    return v + ":1";
  }
  if (!digits) return std::nullopt;
  return v;
}

// berth has no burst buffers, so "afterburstbuffer" (the job ended and its stage-out is done)
// is "afterany".
std::string WithoutBurstBuffers(std::string dependency) {
  static constexpr std::string_view kType = "afterburstbuffer";
  for (size_t at = dependency.find(kType); at != std::string::npos;
       at = dependency.find(kType, at)) {
    dependency.replace(at, kType.size(), "afterany");
  }
  return dependency;
}

// Applies the options that shape the job (config::ApplyJobOption) with Slurm's messages for a
// refused value.
std::optional<SbatchFailure> ApplySpec(const SbatchInputs& in, const Settings& s,
                                       core::JobSpec& spec) {
  for (const Setting* x : s.Final()) {
    const OptionArg& o = x->option;
    if (!config::IsJobOption(o.name)) continue;
    std::string value = o.value.value_or("");
    if (o.name == "dependency") value = WithoutBurstBuffers(value);
    if (IsGpuOption(o.name) && o.name != "gres") {
      std::optional<std::string> v = GpuCount(value);
      if (!v) return Error(in, "Invalid generic resource (gres) specification");
      value = *v;
    }
    Status st = config::ApplyJobOption(o.name, value, in.now, spec);
    if (st.ok()) continue;
    if (o.name == "gres") return Error(in, "Invalid generic resource (gres) specification");
    std::string_view slurm = SlurmSubmitError(o.name);
    if (!slurm.empty()) return Error(in, "Batch job submission failed: " + std::string(slurm));
    return Error(in, st.message());
  }
  if (s.Has("gid")) {
    std::optional<int> gid = SlurmInteger(s.Value("gid"), false);
    spec.gid = static_cast<uint32_t>(gid.value_or(0));
  }
  if (spec.time_min != kNoTime && spec.time_limit != kNoTime && spec.time_min > spec.time_limit) {
    return Error(in, "Batch job submission failed: " + std::string(SlurmSubmitError("time-min")));
  }
  return std::nullopt;
}

// "dir/file" for a relative path, as Slurm joins them (no normalization: "/a/./" + "x").
std::string Under(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return dir + "/" + path;
}

void Set(EnvironmentList& env, const std::string& name, const std::string& value) {
  for (auto& [n, v] : env) {
    if (n == name) {
      v = value;
      return;
    }
  }
  env.emplace_back(name, value);
}

// The SLURM_* variables sbatch gives the job from its request (man sbatch, OUTPUT ENVIRONMENT
// VARIABLES, the ones set "if the option is specified").
void AddRequestVariables(const SbatchInputs& in, const Settings& s, const core::JobSpec& spec,
                         EnvironmentList& env) {
  std::erase_if(env, [](const auto& kv) {
    return std::find(std::begin(kRequestVariables), std::end(kRequestVariables), kv.first) !=
           std::end(kRequestVariables);
  });
  auto copy = [&](std::string_view option, const std::string& var) {
    if (s.Has(option)) Set(env, var, s.Value(option));
  };
  int64_t ntasks = 0;
  if (s.Has("ntasks")) {
    ntasks = spec.ntasks;
  } else if (s.Has("ntasks-per-node")) {
    ntasks = int64_t{std::max(spec.min_nodes, 1)} * spec.ntasks_per_node;
  } else if (s.Has("ntasks-per-gpu") && spec.gpus > 0) {
    ntasks = int64_t{spec.gpus} * spec.ntasks_per_gpu;
  }
  if (ntasks > 0) {
    Set(env, "SLURM_NTASKS", std::to_string(ntasks));
    Set(env, "SLURM_NPROCS", std::to_string(ntasks));
  }
  copy("cpus-per-task", "SLURM_CPUS_PER_TASK");
  copy("ntasks-per-node", "SLURM_NTASKS_PER_NODE");
  copy("ntasks-per-gpu", "SLURM_NTASKS_PER_GPU");
  copy("ntasks-per-socket", "SLURM_NTASKS_PER_SOCKET");
  copy("ntasks-per-core", "SLURM_NTASKS_PER_CORE");
  copy("gpus", "SLURM_GPUS");
  copy("gpus-per-node", "SLURM_GPUS_PER_NODE");
  copy("gpus-per-task", "SLURM_GPUS_PER_TASK");
  copy("gpus-per-socket", "SLURM_GPUS_PER_SOCKET");
  copy("cpus-per-gpu", "SLURM_CPUS_PER_GPU");
  if (s.Has("mem") && spec.mem_per_node_mib > 0) {
    Set(env, "SLURM_MEM_PER_NODE", std::to_string(spec.mem_per_node_mib));
  }
  if (s.Has("mem-per-cpu")) Set(env, "SLURM_MEM_PER_CPU", std::to_string(spec.mem_per_cpu_mib));
  if (s.Has("mem-per-gpu")) Set(env, "SLURM_MEM_PER_GPU", std::to_string(spec.mem_per_gpu_mib));
  copy("dependency", "SLURM_JOB_DEPENDENCY");
  if (s.Has("open-mode")) Set(env, "SLURM_OPEN_MODE", s.Value("open-mode") == "append" ? "a" : "t");
  copy("export", "SLURM_EXPORT_ENV");
  if (s.Has("get-user-env") || s.Value("export") == "NONE") Set(env, "SLURM_GET_USER_ENV", "1");
  copy("distribution", "SLURM_DISTRIBUTION");
  if (s.Has("overcommit")) Set(env, "SLURM_OVERCOMMIT", "1");
  copy("threads-per-core", "SLURM_THREADS_PER_CORE");
  copy("profile", "SLURM_PROFILE");
  copy("gpu-bind", "SLURM_GPU_BIND");
  copy("gpu-freq", "SLURM_GPU_FREQ");
  copy("container", "SLURM_CONTAINER");
  Set(env, "SLURM_PRIO_PROCESS", std::to_string(in.nice));
  Set(env, "SLURM_SUBMIT_DIR", in.cwd);
  Set(env, "SLURM_SUBMIT_HOST", in.host);
}

// Slurm ORs each --mail-type into the job's flags (arg_set_mail_type), so repeats accumulate:
// "--mail-type=BEGIN --mail-type=END" asks for both, from every source alike.
std::string AllMailTypes(const Settings& s) {
  std::string all;
  for (const Setting& x : s.All()) {
    if (x.option.name != "mail-type") continue;
    all += (all.empty() ? "" : ",") + x.option.value.value_or("");
  }
  return all;
}

std::optional<SbatchFailure> BuildExec(const SbatchInputs& in, const Settings& s,
                                       const core::JobSpec& spec, core::JobExecSpec& exec) {
  exec.work_dir = s.Has("chdir") ? Under(in.cwd, s.Value("chdir")) : in.cwd;
  for (const Setting* x : s.Final()) {
    const OptionArg& o = x->option;
    std::string value = o.value.value_or("");
    if (o.name == "output" || o.name == "error" || o.name == "input") {
      value = Under(exec.work_dir, value);
    }
    if (o.name == "chdir") continue;
    if (o.name == "mail-type") value = AllMailTypes(s);
    Status st = ApplyExecOption(o.name, value, exec);
    if (!st.ok() && st.code() != StatusCode::kNotFound) return Error(in, st.message());
  }
  if (exec.stdout_pattern.empty()) {
    exec.stdout_pattern =
        Under(exec.work_dir, spec.array.empty() ? "slurm-%j.out" : "slurm-%A_%a.out");
  }
  EnvironmentList from_file;
  if (s.Has("export-file")) {
    std::string path = s.Value("export-file");
    std::optional<int> fd = SlurmInteger(path, true);
    if (fd && *fd >= 3) path = "/dev/fd/" + std::to_string(*fd);
    Result<std::string> text = in.read_file(path);
    if (!text.ok()) return Error(in, "Unable to read --export-file " + s.Value("export-file"));
    from_file = ParseExportFile(*text);
  }
  EnvironmentList env = ExportEnvironment(s.Value("export"), in.env, from_file);
  AddRequestVariables(in, s, spec, env);
  exec.environment.assign(env.begin(), env.end());
  return std::nullopt;
}

// --nodefile: the node names in a file (blanks, commas or newlines between) as --nodelist.
std::optional<SbatchFailure> ReadNodeFile(const SbatchInputs& in, Settings& s) {
  if (!s.Has("nodefile")) return std::nullopt;
  Result<std::string> text = in.read_file(s.Value("nodefile"));
  if (!text.ok()) return Error(in, "Unable to open file " + s.Value("nodefile"));
  std::string list;
  std::string word;
  for (char c : *text + "\n") {
    if (c == ' ' || c == '\t' || c == '\n' || c == ',' || c == '\r') {
      if (!word.empty()) list += (list.empty() ? "" : ",") + word;
      word.clear();
    } else {
      word += c;
    }
  }
  s.Add({"nodelist", list}, Source::kCommandLine);
  return std::nullopt;
}

struct ScriptSource {
  std::string text;
  std::string name;  // the default job name
  std::string file;  // as named on the command line, for messages
  bool wrapped = false;
};

std::variant<ScriptSource, SbatchFailure> LoadScript(const SbatchInputs& in,
                                                     const std::vector<OptionArg>& command_line,
                                                     const std::vector<std::string>& operands) {
  ScriptSource src;
  const OptionArg* wrap = nullptr;
  for (const OptionArg& o : command_line) {
    if (o.name == "wrap") wrap = &o;
  }
  if (wrap != nullptr) {
    if (!operands.empty()) return Error(in, "Script arguments not permitted with --wrap option");
    src.text = WrapScript(wrap->value.value_or(""));
    src.name = "wrap";
    src.wrapped = true;
    return src;
  }
  Result<std::string> text = Status::NotFound("");
  if (!operands.empty()) {
    src.file = operands[0];
    src.name = BaseName(operands[0]);
    text = in.read_file(operands[0]);
    if (!text.ok()) return Error(in, "Unable to open file " + operands[0]);
  } else {
    src.name = "sbatch";
    text = in.read_stdin ? in.read_stdin() : Result<std::string>(std::string());
    if (!text.ok()) return Error(in, "Unable to read the batch script from standard input");
  }
  src.text = std::move(*text);
  return src;
}

// sbatch --help: Slurm prints its plugins' options before "Help options:".
std::string HelpText() {
  std::string_view help = kHelpText;
  const size_t at = help.find("\nHelp options:\n");
  return std::string(help.substr(0, at)) + PyxisHelp() + std::string(help.substr(at));
}

// pyxis's options from every source, in order (a repeat with another value is an error, as in
// pyxis), and the container they ask for in exec.container (docs/slurm.md "Containers").
std::optional<SbatchFailure> ApplyContainer(const SbatchInputs& in, const Settings& s,
                                            core::JobExecSpec& exec) {
  PyxisRequest pyxis;
  for (const Setting& x : s.All()) {
    if (FindPyxisOption(x.option.name) == nullptr) continue;
    Status st = AddPyxisOption(x.option.name, x.option.value, pyxis);
    if (!st.ok()) return Error(in, st.message(), 255);
  }
  Result<std::optional<image::ContainerSpec>> spec =
      PyxisContainer(pyxis, exec.work_dir, in.env, /*new_job=*/true);
  if (!spec.ok()) return Error(in, spec.status().message());
  if (*spec) exec.container = image::EncodeContainerSpec(**spec).dump();
  return std::nullopt;
}

void SetClientOptions(const Settings& s, SbatchRequest& r) {
  r.parsable = s.Has("parsable");
  r.test_only = s.Has("test-only");
  r.wait = s.Has("wait");
  r.quiet = s.Has("quiet");
  r.clusters = s.Value("clusters");
  for (const Setting* x : s.Final()) {
    if (IsIgnored(x->option.name)) r.ignored.push_back("--" + x->option.name);
  }
}

}  // namespace

SbatchOutcome ParseSbatch(const SbatchInputs& in) {
  // The command line is checked first, in order, before the script is even read.
  GetoptResult cl = GetoptSbatch(in.args, in.prog);
  ValueContext ctx{in.prog, in.now, in.zone};
  std::vector<OptionArg> command_line;
  int verbose = 0;
  for (OptionArg o : cl.options) {
    if (o.name == "help") return SbatchInfo{HelpText()};
    if (o.name == "usage") return SbatchInfo{std::string(kUsageText)};
    if (o.name == "version") return SbatchInfo{"slurm 22.05.8\n"};
    if (o.name == "verbose") ++verbose;
    if (auto f = CheckSbatchValue(o, ctx)) return *f;
    if (auto f = CheckPyxisValue(in, o)) return *f;
    command_line.push_back(std::move(o));
  }
  if (!cl.error.empty()) return GetoptFailure(in, cl.error);
  std::vector<std::string> operands(in.args.begin() + static_cast<std::ptrdiff_t>(cl.next),
                                    in.args.end());
  auto loaded = LoadScript(in, command_line, operands);
  if (auto* f = std::get_if<SbatchFailure>(&loaded)) return *f;
  ScriptSource script = std::move(std::get<ScriptSource>(loaded));
  if (auto f = CheckBatchScript(script.text, in.prog)) return *f;

  SbatchRequest r;
  Settings s;
  // Warnings printed while reading the script come before any later error, as in Slurm.
  auto fail = [&r](SbatchFailure f) {
    f.text = r.warnings + f.text;
    return f;
  };
  if (!script.wrapped) {
    auto [directives, bad] = ReadDirectives(script.text, script.file, in.prog);
    for (const std::string& w : directives.warnings) r.warnings += w;
    if (bad) return fail(*bad);
    if (directives.heterogeneous) {
      return fail(Error(in, "berth does not run heterogeneous jobs (#SBATCH hetjob)"));
    }
    GetoptResult dr = GetoptSbatch(directives.words, in.prog);
    if (auto f = TakeOptions(in, dr.options, Source::kScript, s)) return fail(*f);
    if (!dr.error.empty()) return fail(GetoptFailure(in, dr.error));
    if (dr.next < directives.words.size()) {
      return fail(
          Error(in, "Invalid directive found in batch script: " + directives.words[dr.next], 255));
    }
  }
  if (auto f = TakeOptions(in, OptionsFromEnvironment(in.env), Source::kEnvironment, s)) {
    return fail(*f);
  }
  for (OptionArg& o : command_line) {
    if (o.name != "wrap") s.Add(std::move(o), Source::kCommandLine);
  }
  if (auto f = ResolveMemory(in, s)) return fail(*f);
  if (auto f = CheckGpuRequest(in, s)) return fail(*f);
  if (auto f = ReadNodeFile(in, s)) return fail(*f);
  if (auto f = ApplySpec(in, s, r.spec)) return fail(*f);
  if (r.spec.name.empty()) r.spec.name = script.name;
  r.exec.script = std::move(script.text);
  if (operands.size() > 1) r.script_args.assign(operands.begin() + 1, operands.end());
  if (auto f = BuildExec(in, s, r.spec, r.exec)) return fail(*f);
  if (auto f = ApplyContainer(in, s, r.exec)) return fail(*f);
  SetClientOptions(s, r);
  r.verbose = verbose;
  return r;
}

}  // namespace berth::slurm
