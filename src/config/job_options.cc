// sbatch's options with Slurm's value syntax (src/common/slurm_opt.c, proc_args.c, parse_time.c
// of Slurm 22.05-24.11). Values are checked here; combinations (--mem with --mem-per-cpu, --gpus
// with --gres=gpu, ...) are the scheduler's to judge, as they are slurmctld's in Slurm.
#include "config/job_options.h"

#include <string>

#include "common/hostlist.h"
#include "common/slurm_time.h"
#include "common/strings.h"
#include "common/units.h"
#include "config/gres_text.h"
#include "config/slurm_datetime.h"
#include "config/value_text.h"

namespace berth::config {
namespace {

// Slurm's ceiling on MaxArraySize (read_config.c).
constexpr int32_t kSlurmMaxArraySize = 4000001;
// --nice: |n| <= NICE_OFFSET - 3.
constexpr int64_t kMaxNice = 2147483645;
// --priority=TOP: NO_VAL - 1, the highest priority Slurm can store.
constexpr int64_t kTopPriority = 4294967293;

struct Context {
  std::string_view option;  // "--nodes", for messages
  Time now;
  int32_t max_array_size;
};

using Setter = Status (*)(std::string_view value, const Context& ctx, core::JobSpec& spec);

enum class Arg { kRequired, kOptional, kNone };

struct Option {
  const char* name;
  Arg arg;
  Setter set;
};

Status Bad(const Context& ctx, std::string_view value, std::string_view why) {
  return InvalidValue(ctx.option, value, why);
}

Status Bad(const Context& ctx, std::string_view value, const Status& why) {
  return InvalidValue(ctx.option, value, Reason(why));
}

// A positive int option (Slurm's parse_int(..., positive=true)).
Result<int32_t> Positive(const Context& ctx, std::string_view value) {
  Result<int64_t> n = ParseInteger(value, 1, INT32_MAX);
  if (!n.ok()) return Bad(ctx, value, n.status());
  return static_cast<int32_t>(*n);
}

// One node count with Slurm's suffixes: k/K (x1024), then m/M (x1048576).
Result<int64_t> NodeCount(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 10) return Status::InvalidArgument("expected N or MIN-MAX");
  int64_t n = 0;
  for (size_t i = 0; i < digits; ++i) n = n * 10 + (text[i] - '0');
  std::string_view rest = text.substr(digits);
  // n < 10^10, so one multiplication at a time stays far from overflow once checked.
  if (!rest.empty() && (rest[0] == 'k' || rest[0] == 'K')) {
    n *= 1024;
    rest.remove_prefix(1);
  }
  if (n <= INT32_MAX && !rest.empty() && (rest[0] == 'm' || rest[0] == 'M')) {
    n *= 1024 * 1024;
    rest.remove_prefix(1);
  }
  if (n > INT32_MAX) return Status::InvalidArgument("node count too large");
  if (!rest.empty()) return Status::InvalidArgument("expected N or MIN-MAX");
  return n;
}

// -N N or MIN-MAX (verify_node_count): N must be > 0; a MIN of 0 means 1; a MAX of 0, none.
Status SetNodes(std::string_view v, const Context& ctx, core::JobSpec& spec) {
  size_t dash = v.find('-');
  Result<int64_t> min = NodeCount(v.substr(0, dash));
  if (!min.ok()) return Bad(ctx, v, min.status());
  int64_t max = *min;
  if (dash == std::string_view::npos) {
    if (*min == 0) return Bad(ctx, v, "0 is not a valid node count");
  } else {
    Result<int64_t> m = NodeCount(v.substr(dash + 1));
    if (!m.ok()) return Bad(ctx, v, m.status());
    max = *m;
    if (*min == 0) *min = 1;
    if (max != 0 && max < *min) return Bad(ctx, v, "the maximum is less than the minimum");
  }
  spec.min_nodes = static_cast<int32_t>(*min);
  spec.max_nodes = static_cast<int32_t>(max);
  return Status::Ok();
}

// "[type:]count" for --gpus, --gpus-per-node and --gpus-per-task. One type per job.
Status SetGpuCount(std::string_view v, const Context& ctx, core::JobSpec& spec, int32_t& out) {
  if (v.find(',') != std::string_view::npos) {
    return Bad(ctx, v, "berth takes one GPU type per job");
  }
  std::vector<std::string_view> parts = Split(v, ':');
  if (parts.size() > 2 || (parts.size() == 2 && parts[0].empty())) {
    return Bad(ctx, v, "expected [type:]count");
  }
  Result<int64_t> n = ParseInteger(parts.back(), 0, INT32_MAX);
  if (!n.ok()) return Bad(ctx, v, n.status());
  out = static_cast<int32_t>(*n);
  if (parts.size() == 2) spec.gpu_type = std::string(parts[0]);
  return Status::Ok();
}

// --gres: GPUs go to gpus_per_node and gpu_type, other GRES replace spec.gres. "none" clears.
Status SetGres(std::string_view v, const Context& ctx, core::JobSpec& spec) {
  if (EqualsIgnoreCase(v, "none")) {
    spec.gres.clear();
    spec.gpus_per_node = 0;
    spec.gpu_milli = 0;
    spec.gpu_mps = false;
    return Status::Ok();
  }
  Result<std::vector<GresEntry>> list = ParseGresList(v, GresSyntax::kJobRequest);
  if (!list.ok()) return Bad(ctx, v, list.status());
  std::vector<core::NamedCount> other;
  int64_t gpus = -1;
  int64_t mps = -1;
  std::string type;
  for (const GresEntry& g : *list) {
    if (g.name == "mps") {
      // Slurm's MPS gres: a percentage of one device (berth counts 100 per GPU).
      if (mps >= 0) return Bad(ctx, v, "mps given twice");
      if (g.count < 1 || g.count > 100) {
        return Bad(ctx, v, "mps is a percentage of one GPU: 1..100");
      }
      if (gpus >= 0 && !g.type.empty() && g.type != type) {
        return Bad(ctx, v, "berth takes one GPU type per job");
      }
      if (!g.type.empty()) type = g.type;
      mps = g.count;
      continue;
    }
    if (g.name == "gpu") {
      if (gpus >= 0 && g.type != type) return Bad(ctx, v, "berth takes one GPU type per job");
      type = g.type;
      gpus = std::max<int64_t>(gpus, 0) + g.count;
      continue;
    }
    bool merged = false;
    for (core::NamedCount& c : other) {
      if (c.name == g.name) {
        c.count += g.count;
        merged = true;
      }
    }
    if (!merged) other.push_back({g.name, g.count});
  }
  if (gpus > INT32_MAX) return Bad(ctx, v, "GPU count too large");
  if (gpus > 0 && mps > 0)
    return Bad(ctx, v, "a job asks for whole GPUs or an MPS share, not both");
  if (gpus >= 0) {
    spec.gpus_per_node = static_cast<int32_t>(gpus);
    if (!type.empty()) spec.gpu_type = type;
  }
  if (mps > 0) {
    spec.gpu_milli = static_cast<int32_t>(mps * 10);
    spec.gpu_mps = true;
    spec.gpus_per_node = 0;
    if (!type.empty()) spec.gpu_type = type;
  } else if (gpus >= 0) {
    spec.gpu_milli = 0;
    spec.gpu_mps = false;
  }
  spec.gres = std::move(other);
  return Status::Ok();
}

Status SetTime(std::string_view v, const Context& ctx, Duration& out) {
  Result<Duration> d = ParseTimeLimit(v);
  if (!d.ok()) return Bad(ctx, v, d.status());
  out = *d;
  return Status::Ok();
}

Status SetDateTime(std::string_view v, const Context& ctx, Time& out) {
  Result<Time> t = ParseSlurmDateTime(v, ctx.now);
  if (!t.ok()) return Bad(ctx, v, t.status());
  out = *t;
  return Status::Ok();
}

// A job's memory per node, CPU or GPU: at most 2^40 MiB (an exbibyte), the job JSON's bound
// (api/job_json.cc), so that what sbatch accepts the API accepts too, and a product with a CPU
// count cannot overflow.
constexpr int64_t kMaxJobMemoryMiB = INT64_C(1) << 40;

Status SetMemory(std::string_view v, const Context& ctx, int64_t& out) {
  Result<int64_t> mib = ParseMemoryMiB(v);
  if (!mib.ok()) return Bad(ctx, v, mib.status());
  if (*mib > kMaxJobMemoryMiB) return Bad(ctx, v, "more memory than any node has (over 1 EiB)");
  out = *mib;
  return Status::Ok();
}

// --nodelist / --exclude: a hostlist. Slurm also takes a file name (a value with '/'); berth
// reads no files here.
Status SetHosts(std::string_view v, const Context& ctx, std::vector<std::string>& out) {
  if (v.find('/') != std::string_view::npos) {
    return Bad(ctx, v, "node list files are not supported; give the host names");
  }
  Result<std::vector<std::string>> hosts = hostlist::Expand(v);
  if (!hosts.ok()) return Bad(ctx, v, hosts.status());
  out = std::move(*hosts);
  return Status::Ok();
}

// --exclusive[=user|oversubscribe]; Slurm's mcs and topo modes are not modelled.
Status SetExclusive(std::string_view v, const Context& ctx, core::JobSpec& spec) {
  if (v.empty() || EqualsIgnoreCase(v, "exclusive")) {
    spec.exclusive = core::ExclusiveMode::kNode;
    spec.oversubscribe = false;
  } else if (EqualsIgnoreCase(v, "user")) {
    spec.exclusive = core::ExclusiveMode::kUser;
    spec.oversubscribe = false;
  } else if (EqualsIgnoreCase(v, "oversubscribe")) {
    spec.exclusive = core::ExclusiveMode::kNo;
    spec.oversubscribe = true;
  } else if (EqualsIgnoreCase(v, "mcs") || EqualsIgnoreCase(v, "topo")) {
    return Bad(ctx, v, "berth does not support this mode (use --exclusive or --exclusive=user)");
  } else {
    return Bad(ctx, v, "expected nothing, user or oversubscribe");
  }
  return Status::Ok();
}

Status SetNice(std::string_view v, const Context& ctx, core::JobSpec& spec) {
  if (v.empty()) {  // a bare --nice means +100, as in Slurm
    spec.nice = 100;
    return Status::Ok();
  }
  Result<int64_t> n = ParseInteger(v, -kMaxNice, kMaxNice);
  if (!n.ok()) return Bad(ctx, v, n.status());
  spec.nice = static_cast<int32_t>(*n);
  return Status::Ok();
}

Status SetPriority(std::string_view v, const Context& ctx, core::JobSpec& spec) {
  if (EqualsIgnoreCase(v, "TOP")) {
    spec.admin_priority = kTopPriority;
    return Status::Ok();
  }
  Result<int64_t> n = ParseInteger(v, 0, kTopPriority);
  if (!n.ok()) return Bad(ctx, v, "expected TOP or an integer from 0 to 4294967293");
  spec.admin_priority = *n;
  return Status::Ok();
}

Status SetPartitions(std::string_view v, const Context& ctx, core::JobSpec& spec) {
  std::vector<std::string> parts;
  for (std::string_view p : Split(v, ',')) {
    if (p.empty()) return Bad(ctx, v, "empty partition name");
    parts.emplace_back(p);
  }
  spec.partitions = std::move(parts);
  return Status::Ok();
}

Status SetKillOnInvalidDep(std::string_view v, const Context& ctx, core::JobSpec& spec) {
  if (v.empty() || EqualsIgnoreCase(v, "yes")) {
    spec.kill_on_invalid_dep = true;
  } else if (EqualsIgnoreCase(v, "no")) {
    spec.kill_on_invalid_dep = false;
  } else {
    return Bad(ctx, v, "expected yes or no");
  }
  return Status::Ok();
}

Status SetUid(std::string_view v, const Context& ctx, core::JobSpec& spec) {
  Result<int64_t> uid = ParseInteger(v, 0, UINT32_MAX - 1);
  if (!uid.ok()) return Bad(ctx, v, "expected a numeric user id");
  spec.uid = static_cast<uint32_t>(*uid);
  return Status::Ok();
}

template <typename T>
Status Store(Result<T> r, T& out) {
  if (!r.ok()) return r.status();
  out = std::move(r).value();
  return Status::Ok();
}

// The options, in sbatch's man page order of their long names.
const Option kOptions[] = {
    {"account", Arg::kRequired,
     [](std::string_view v, const Context&, core::JobSpec& s) {
       s.account = std::string(v);
       return Status::Ok();
     }},
    {"array", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       Result<core::ArraySpec> a = core::ParseArraySpec(v, c.max_array_size);
       if (!a.ok()) return Bad(c, v, a.status());
       s.array = std::move(*a);
       return Status::Ok();
     }},
    {"begin", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetDateTime(v, c, s.begin_time);
     }},
    {"constraint", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       Result<core::Constraint> k = core::Constraint::Parse(v);
       if (!k.ok()) return Bad(c, v, k.status());
       s.constraint = std::move(*k);
       return Status::Ok();
     }},
    {"cpus-per-gpu", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return Store(Positive(c, v), s.cpus_per_gpu);
     }},
    {"cpus-per-task", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return Store(Positive(c, v), s.cpus_per_task);
     }},
    {"deadline", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetDateTime(v, c, s.deadline);
     }},
    {"dependency", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       Result<core::Dependency> d = core::ParseDependency(v);
       if (!d.ok()) return Bad(c, v, d.status());
       s.dependency = std::move(*d);
       return Status::Ok();
     }},
    {"exclude", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetHosts(v, c, s.exclude);
     }},
    {"exclusive", Arg::kOptional, SetExclusive},
    {"gpus", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetGpuCount(v, c, s, s.gpus);
     }},
    {"gpus-per-node", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetGpuCount(v, c, s, s.gpus_per_node);
     }},
    {"gpus-per-task", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetGpuCount(v, c, s, s.gpus_per_task);
     }},
    {"gres", Arg::kRequired, SetGres},
    {"hold", Arg::kNone,
     [](std::string_view, const Context&, core::JobSpec& s) {
       s.hold = core::HoldKind::kUser;
       return Status::Ok();
     }},
    {"job-name", Arg::kRequired,
     [](std::string_view v, const Context&, core::JobSpec& s) {
       s.name = std::string(v);
       return Status::Ok();
     }},
    {"kill-on-invalid-dep", Arg::kOptional, SetKillOnInvalidDep},
    {"licenses", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       Result<std::vector<core::NamedCount>> l = ParseLicenses(v, 1);
       if (!l.ok()) return Bad(c, v, l.status());
       s.licenses = std::move(*l);
       return Status::Ok();
     }},
    {"mem", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetMemory(v, c, s.mem_per_node_mib);
     }},
    {"mem-per-cpu", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetMemory(v, c, s.mem_per_cpu_mib);
     }},
    {"mem-per-gpu", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetMemory(v, c, s.mem_per_gpu_mib);
     }},
    {"name", Arg::kRequired,
     [](std::string_view v, const Context&, core::JobSpec& s) {
       s.name = std::string(v);
       return Status::Ok();
     }},
    {"nice", Arg::kOptional, SetNice},
    {"no-requeue", Arg::kNone,
     [](std::string_view, const Context&, core::JobSpec& s) {
       s.requeue = false;
       return Status::Ok();
     }},
    {"nodelist", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetHosts(v, c, s.nodelist);
     }},
    {"nodes", Arg::kRequired, SetNodes},
    {"ntasks", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return Store(Positive(c, v), s.ntasks);
     }},
    {"ntasks-per-gpu", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return Store(Positive(c, v), s.ntasks_per_gpu);
     }},
    {"ntasks-per-node", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return Store(Positive(c, v), s.ntasks_per_node);
     }},
    {"ntasks-per-socket", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return Store(Positive(c, v), s.ntasks_per_socket);
     }},
    {"ntasks-per-core", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return Store(Positive(c, v), s.ntasks_per_core);
     }},
    {"overcommit", Arg::kNone,
     [](std::string_view, const Context&, core::JobSpec& s) {
       s.overcommit = true;
       return Status::Ok();
     }},
    {"oversubscribe", Arg::kNone,
     [](std::string_view, const Context&, core::JobSpec& s) {
       s.oversubscribe = true;
       s.exclusive = core::ExclusiveMode::kNo;
       return Status::Ok();
     }},
    {"partition", Arg::kRequired, SetPartitions},
    {"priority", Arg::kRequired, SetPriority},
    {"qos", Arg::kRequired,
     [](std::string_view v, const Context&, core::JobSpec& s) {
       s.qos = std::string(v);
       return Status::Ok();
     }},
    {"requeue", Arg::kNone,
     [](std::string_view, const Context&, core::JobSpec& s) {
       s.requeue = true;
       return Status::Ok();
     }},
    {"reservation", Arg::kRequired,
     [](std::string_view v, const Context&, core::JobSpec& s) {
       s.reservation = std::string(v);
       return Status::Ok();
     }},
    {"time", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetTime(v, c, s.time_limit);
     }},
    {"time-min", Arg::kRequired,
     [](std::string_view v, const Context& c, core::JobSpec& s) {
       return SetTime(v, c, s.time_min);
     }},
    {"uid", Arg::kRequired, SetUid},
    {"user", Arg::kRequired,
     [](std::string_view v, const Context&, core::JobSpec& s) {
       s.user = std::string(v);
       return Status::Ok();
     }},
};

std::string_view StripDashes(std::string_view name) {
  if (name.size() > 2 && name[0] == '-' && name[1] == '-') name.remove_prefix(2);
  return name;
}

const Option* FindOption(std::string_view name) {
  name = StripDashes(name);
  for (const Option& o : kOptions) {
    if (name == o.name) return &o;
  }
  return nullptr;
}

}  // namespace

Status ApplyJobOption(std::string_view name, std::string_view value, Time now,
                      core::JobSpec& spec) {
  return ApplyJobOption(name, value, now, kSlurmMaxArraySize, spec);
}

Status ApplyJobOption(std::string_view name, std::string_view value, Time now,
                      int32_t max_array_size, core::JobSpec& spec) {
  const Option* o = FindOption(name);
  if (o == nullptr) {
    return Status::InvalidArgument("unrecognized option '--" + std::string(StripDashes(name)) +
                                   "'");
  }
  std::string option = std::string("--") + o->name;
  if (o->arg == Arg::kNone && !value.empty()) {
    return Status::InvalidArgument("option '" + option + "' doesn't allow an argument");
  }
  if (o->arg == Arg::kRequired && value.empty()) {
    return Status::InvalidArgument("option '" + option + "' requires an argument");
  }
  Context ctx{option, now, max_array_size};
  return o->set(value, ctx, spec);
}

bool IsJobOption(std::string_view name) {
  return FindOption(name) != nullptr;
}

}  // namespace berth::config
