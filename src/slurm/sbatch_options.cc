// glibc 2.36's getopt_long (posix/getopt.c: process_long_option, _getopt_internal_r) for sbatch's
// table, in REQUIRE_ORDER, with its messages.
#include "slurm/sbatch_options.h"

#include <algorithm>

namespace berth::slurm {
namespace {

// The order and the argument kinds were read from sbatch 22.05.8 itself (each prefix's
// "possibilities" and each option's "requires an argument" / "doesn't allow an argument").
constexpr SbatchOption kOptions[] = {
    {"account", "account", 'A', ArgKind::kRequired},
    {"acctg-freq", "acctg-freq", 0, ArgKind::kRequired},
    {"array", "array", 'a', ArgKind::kRequired},
    {"batch", "batch", 0, ArgKind::kRequired},
    {"begin", "begin", 'b', ArgKind::kRequired},
    {"bb", "bb", 0, ArgKind::kRequired},
    {"bbf", "bbf", 0, ArgKind::kRequired},
    {"cluster-constraint", "cluster-constraint", 0, ArgKind::kRequired},
    {"chdir", "chdir", 'D', ArgKind::kRequired},
    {"cluster", "clusters", 0, ArgKind::kRequired},
    {"clusters", "clusters", 'M', ArgKind::kRequired},
    {"comment", "comment", 0, ArgKind::kRequired},
    {"container", "container", 0, ArgKind::kRequired},
    {"context", "context", 0, ArgKind::kRequired},
    {"contiguous", "contiguous", 0, ArgKind::kNone},
    {"constraint", "constraint", 'C', ArgKind::kRequired},
    {"core-spec", "core-spec", 'S', ArgKind::kRequired},
    {"cores-per-socket", "cores-per-socket", 0, ArgKind::kRequired},
    {"cpu-freq", "cpu-freq", 0, ArgKind::kRequired},
    {"cpus-per-gpu", "cpus-per-gpu", 0, ArgKind::kRequired},
    {"cpus-per-task", "cpus-per-task", 'c', ArgKind::kRequired},
    {"deadline", "deadline", 0, ArgKind::kRequired},
    {"delay-boot", "delay-boot", 0, ArgKind::kRequired},
    {"dependency", "dependency", 'd', ArgKind::kRequired},
    {"distribution", "distribution", 'm', ArgKind::kRequired},
    {"error", "error", 'e', ArgKind::kRequired},
    {"exclude", "exclude", 'x', ArgKind::kRequired},
    {"exclusive", "exclusive", 0, ArgKind::kOptional},
    {"export", "export", 0, ArgKind::kRequired},
    {"export-file", "export-file", 0, ArgKind::kRequired},
    {"extra-node-info", "extra-node-info", 'B', ArgKind::kRequired},
    {"get-user-env", "get-user-env", 0, ArgKind::kOptional},
    {"gid", "gid", 0, ArgKind::kRequired},
    {"gpu-bind", "gpu-bind", 0, ArgKind::kRequired},
    {"gpu-freq", "gpu-freq", 0, ArgKind::kRequired},
    {"gpus", "gpus", 'G', ArgKind::kRequired},
    {"gpus-per-node", "gpus-per-node", 0, ArgKind::kRequired},
    {"gpus-per-socket", "gpus-per-socket", 0, ArgKind::kRequired},
    {"gpus-per-task", "gpus-per-task", 0, ArgKind::kRequired},
    {"gres", "gres", 0, ArgKind::kRequired},
    {"gres-flags", "gres-flags", 0, ArgKind::kRequired},
    {"help", "help", 'h', ArgKind::kNone},
    {"hint", "hint", 0, ArgKind::kRequired},
    {"hold", "hold", 'H', ArgKind::kNone},
    {"ignore-pbs", "ignore-pbs", 0, ArgKind::kNone},
    {"input", "input", 'i', ArgKind::kRequired},
    {"mail-type", "mail-type", 0, ArgKind::kRequired},
    {"mail-user", "mail-user", 0, ArgKind::kRequired},
    {"mcs-label", "mcs-label", 0, ArgKind::kRequired},
    {"mem", "mem", 0, ArgKind::kRequired},
    {"mem-bind", "mem-bind", 0, ArgKind::kRequired},
    {"mem-per-cpu", "mem-per-cpu", 0, ArgKind::kRequired},
    {"mem-per-gpu", "mem-per-gpu", 0, ArgKind::kRequired},
    {"mincpus", "mincpus", 0, ArgKind::kRequired},
    {"network", "network", 0, ArgKind::kRequired},
    {"nice", "nice", 0, ArgKind::kOptional},
    {"no-kill", "no-kill", 'k', ArgKind::kOptional},
    {"no-requeue", "no-requeue", 0, ArgKind::kNone},
    {"nodefile", "nodefile", 'F', ArgKind::kRequired},
    {"nodelist", "nodelist", 'w', ArgKind::kRequired},
    {"nodes", "nodes", 'N', ArgKind::kRequired},
    {"ntasks", "ntasks", 'n', ArgKind::kRequired},
    {"ntasks-per-core", "ntasks-per-core", 0, ArgKind::kRequired},
    {"ntasks-per-gpu", "ntasks-per-gpu", 0, ArgKind::kRequired},
    {"ntasks-per-node", "ntasks-per-node", 0, ArgKind::kRequired},
    {"ntasks-per-socket", "ntasks-per-socket", 0, ArgKind::kRequired},
    {"ntasks-per-tres", "ntasks-per-tres", 0, ArgKind::kRequired},
    {"open-mode", "open-mode", 0, ArgKind::kRequired},
    {"output", "output", 'o', ArgKind::kRequired},
    {"overcommit", "overcommit", 'O', ArgKind::kNone},
    {"oversubscribe", "oversubscribe", 's', ArgKind::kNone},
    {"parsable", "parsable", 0, ArgKind::kNone},
    {"partition", "partition", 'p', ArgKind::kRequired},
    {"power", "power", 0, ArgKind::kRequired},
    {"prefer", "prefer", 0, ArgKind::kRequired},
    {"priority", "priority", 0, ArgKind::kRequired},
    {"profile", "profile", 0, ArgKind::kRequired},
    {"propagate", "propagate", 0, ArgKind::kOptional},
    {"qos", "qos", 'q', ArgKind::kRequired},
    {"quiet", "quiet", 'Q', ArgKind::kNone},
    {"reboot", "reboot", 0, ArgKind::kNone},
    {"requeue", "requeue", 0, ArgKind::kNone},
    {"reservation", "reservation", 0, ArgKind::kRequired},
    {"signal", "signal", 0, ArgKind::kRequired},
    {"sockets-per-node", "sockets-per-node", 0, ArgKind::kRequired},
    {"spread-job", "spread-job", 0, ArgKind::kNone},
    {"switches", "switches", 0, ArgKind::kRequired},
    {"tasks-per-node", "ntasks-per-node", 0, ArgKind::kRequired},
    {"test-only", "test-only", 0, ArgKind::kNone},
    {"thread-spec", "thread-spec", 0, ArgKind::kRequired},
    {"threads-per-core", "threads-per-core", 0, ArgKind::kRequired},
    {"time", "time", 't', ArgKind::kRequired},
    {"time-min", "time-min", 0, ArgKind::kRequired},
    {"tmp", "tmp", 0, ArgKind::kRequired},
    {"uid", "uid", 0, ArgKind::kRequired},
    {"use-min-nodes", "use-min-nodes", 0, ArgKind::kNone},
    {"usage", "usage", 0, ArgKind::kNone},
    {"verbose", "verbose", 'v', ArgKind::kNone},
    {"version", "version", 'V', ArgKind::kNone},
    {"wait", "wait", 'W', ArgKind::kNone},
    {"wait-all-nodes", "wait-all-nodes", 0, ArgKind::kRequired},
    {"wckey", "wckey", 0, ArgKind::kRequired},
    {"wrap", "wrap", 0, ArgKind::kRequired},
    {"job-name", "job-name", 'J', ArgKind::kRequired},
    {"kill-on-invalid-dep", "kill-on-invalid-dep", 0, ArgKind::kRequired},
    {"licenses", "licenses", 'L', ArgKind::kRequired},
    // NVIDIA pyxis's options (slurm/pyxis.h): Slurm appends a SPANK plugin's options to its own.
    {"container-image", "container-image", 0, ArgKind::kRequired},
    {"container-mounts", "container-mounts", 0, ArgKind::kRequired},
    {"container-workdir", "container-workdir", 0, ArgKind::kRequired},
    {"container-name", "container-name", 0, ArgKind::kRequired},
    {"container-save", "container-save", 0, ArgKind::kRequired},
    {"container-mount-home", "container-mount-home", 0, ArgKind::kNone},
    {"no-container-mount-home", "no-container-mount-home", 0, ArgKind::kNone},
    {"container-remap-root", "container-remap-root", 0, ArgKind::kNone},
    {"no-container-remap-root", "no-container-remap-root", 0, ArgKind::kNone},
    {"container-entrypoint", "container-entrypoint", 0, ArgKind::kNone},
    {"no-container-entrypoint", "no-container-entrypoint", 0, ArgKind::kNone},
    {"container-entrypoint-log", "container-entrypoint-log", 0, ArgKind::kNone},
    {"container-writable", "container-writable", 0, ArgKind::kNone},
    {"container-readonly", "container-readonly", 0, ArgKind::kNone},
    {"container-env", "container-env", 0, ArgKind::kRequired},
};

// glibc treats two long options as one when they set the same value the same way.
bool SameOption(const SbatchOption& a, const SbatchOption& b) {
  return a.canonical == b.canonical && a.arg == b.arg;
}

std::string Quoted(std::string_view prog, std::string_view what) {
  return std::string(prog) + ": " + std::string(what);
}

class Parser {
 public:
  Parser(const std::vector<std::string>& words, std::string_view prog)
      : words_(words), prog_(prog) {}

  GetoptResult Run() {
    size_t i = 0;
    while (i < words_.size() && result_.error.empty()) {
      const std::string& w = words_[i];
      if (w == "--") {
        ++i;
        break;
      }
      if (w.size() < 2 || w[0] != '-') break;  // an operand ends the options
      i = w[1] == '-' ? Long(i) : Short(i);
    }
    result_.next = i;
    return std::move(result_);
  }

 private:
  void Add(const SbatchOption& o, std::optional<std::string> value) {
    result_.options.push_back({std::string(o.canonical), std::move(value)});
  }

  void Fail(std::string message) { result_.error = Quoted(prog_, message); }

  // Finds the long option `name` names exactly or as a prefix; sets the error when there is
  // none or several.
  const SbatchOption* Match(std::string_view name, std::string_view typed) {
    for (const SbatchOption& o : kOptions) {
      if (o.name == name) return &o;
    }
    const SbatchOption* found = nullptr;
    std::vector<const SbatchOption*> ambiguous;
    for (const SbatchOption& o : kOptions) {
      if (o.name.substr(0, name.size()) != name) continue;
      if (found == nullptr) {
        found = &o;
      } else if (!SameOption(*found, o)) {
        if (ambiguous.empty()) ambiguous.push_back(found);
        ambiguous.push_back(&o);
      }
    }
    if (!ambiguous.empty()) {
      std::string msg = "option '" + std::string(typed) + "' is ambiguous; possibilities:";
      for (const SbatchOption& o : kOptions) {
        if (std::find(ambiguous.begin(), ambiguous.end(), &o) != ambiguous.end())
          msg += " '--" + std::string(o.name) + "'";
      }
      Fail(msg);
      return nullptr;
    }
    if (found == nullptr) Fail("unrecognized option '" + std::string(typed) + "'");
    return found;
  }

  // "--name", "--name=value", "--name value"; returns the index of the next word.
  size_t Long(size_t i) {
    std::string_view body = std::string_view(words_[i]).substr(2);
    size_t eq = body.find('=');
    std::string_view name = body.substr(0, eq);
    const SbatchOption* o = Match(name, words_[i]);
    if (o == nullptr) return i + 1;
    std::string full = "--" + std::string(o->name);
    if (eq != std::string_view::npos) {
      if (o->arg == ArgKind::kNone) {
        Fail("option '" + full + "' doesn't allow an argument");
      } else {
        Add(*o, std::string(body.substr(eq + 1)));
      }
      return i + 1;
    }
    if (o->arg != ArgKind::kRequired) {
      Add(*o, std::nullopt);
      return i + 1;
    }
    if (i + 1 >= words_.size()) {
      Fail("option '" + full + "' requires an argument");
      return i + 1;
    }
    Add(*o, words_[i + 1]);
    return i + 2;
  }

  // "-abc": letters until one takes the rest of the word (or the next word) as its value.
  size_t Short(size_t i) {
    const std::string& w = words_[i];
    for (size_t pos = 1; pos < w.size(); ++pos) {
      const SbatchOption* o = FindShortOption(w[pos]);
      if (o == nullptr) {
        Fail(std::string("invalid option -- '") + w[pos] + "'");
        return i + 1;
      }
      std::string rest = w.substr(pos + 1);
      if (o->arg == ArgKind::kNone) {
        Add(*o, std::nullopt);
        continue;
      }
      if (!rest.empty() || o->arg == ArgKind::kOptional) {
        Add(*o, rest.empty() ? std::nullopt : std::optional<std::string>(rest));
        return i + 1;
      }
      if (i + 1 >= words_.size()) {
        Fail(std::string("option requires an argument -- '") + w[pos] + "'");
        return i + 1;
      }
      Add(*o, words_[i + 1]);
      return i + 2;
    }
    return i + 1;
  }

  const std::vector<std::string>& words_;
  std::string_view prog_;
  GetoptResult result_;
};

}  // namespace

std::span<const SbatchOption> SbatchOptions() {
  return kOptions;
}

const SbatchOption* FindSbatchOption(std::string_view long_name) {
  for (const SbatchOption& o : kOptions) {
    if (o.name == long_name) return &o;
  }
  return nullptr;
}

const SbatchOption* FindShortOption(char letter) {
  if (letter == '\0') return nullptr;
  for (const SbatchOption& o : kOptions) {
    if (o.short_name == letter) return &o;
  }
  return nullptr;
}

GetoptResult GetoptSbatch(const std::vector<std::string>& words, std::string_view prog) {
  return Parser(words, prog).Run();
}

}  // namespace berth::slurm
