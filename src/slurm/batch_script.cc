// Slurm 22.05's src/sbatch/sbatch.c (_get_script_buffer, _script_wrap) and src/sbatch/opt.c
// (_opt_batch_script, _get_argument, the env_vars table), re-expressed.
#include "slurm/batch_script.h"

#include <cctype>
#include <cstdlib>

#include "common/strings.h"

namespace berth::slurm {
namespace {

SbatchFailure Errors(std::string_view prog, std::initializer_list<std::string_view> lines) {
  SbatchFailure f;
  for (std::string_view line : lines) {
    f.text += std::string(prog) + ": error: " + std::string(line) + "\n";
  }
  return f;
}

SbatchFailure Fatal(std::string_view prog, std::string_view file, int line_no,
                    std::string_view what, std::string_view rest) {
  return {std::string(prog) + ": fatal: " + std::string(file) + ": line " +
              std::to_string(line_no) + ": " + std::string(what) + " in [" + std::string(rest) +
              "]\n",
          1};
}

// One word of a directive starting at `pos` (Slurm's _get_argument). Returns false when the
// line has no more words: its end, an unquoted '#', or a word with no characters at all (Slurm
// stops at "" too). `unmatched` is set to the quote character of an unclosed quote.
bool NextWord(std::string_view line, size_t& pos, std::string& word, char& unmatched) {
  while (pos < line.size() && IsSpace(line[pos])) ++pos;
  word.clear();
  bool escaped = false, any = false;
  char quote = '\0';
  while (pos < line.size() && (quote != '\0' || !IsSpace(line[pos]))) {
    char c = line[pos];
    if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
      ++pos;
      continue;
    } else if (quote != '\0') {
      if (c == quote) {
        quote = '\0';
        ++pos;
        continue;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      ++pos;
      continue;
    } else if (c == '#') {
      break;
    }
    word += c;
    any = true;
    ++pos;
  }
  unmatched = quote;
  return any;
}

// Whether a line that is not a directive is a command (and so ends the directives).
bool IsCommand(std::string_view line) {
  for (char c : line) {
    if (IsSpace(c)) continue;
    return c != '#';
  }
  return false;
}

bool IsHetSeparator(std::string_view rest) {
  size_t pos = 0;
  std::string word;
  char unmatched = '\0';
  if (!NextWord(rest, pos, word, unmatched)) return false;
  return EqualsIgnoreCase(word, "hetjob") || EqualsIgnoreCase(word, "packjob");
}

// The words of one directive's text (after "#SBATCH"), or Slurm's fatal error.
std::optional<SbatchFailure> SplitDirective(std::string_view rest, std::string_view file,
                                            int line_no, std::string_view prog,
                                            std::vector<std::string>& words) {
  size_t pos = 0;
  while (true) {
    size_t start = pos;
    while (pos < rest.size() && IsSpace(rest[pos])) ++pos;
    if (pos < rest.size() && rest[pos] == ':') {
      return Fatal(prog, file, line_no, "Unexpected `:`", rest.substr(start));
    }
    pos = start;
    std::string word;
    char unmatched = '\0';
    bool any = NextWord(rest, pos, word, unmatched);
    if (unmatched != '\0') {
      return Fatal(prog, file, line_no, std::string("Unmatched `") + unmatched + "`",
                   rest.substr(start));
    }
    if (!any) return std::nullopt;
    words.push_back(std::move(word));
  }
}

enum class EnvKind { kValue, kFlag, kOptional };

struct EnvOption {
  std::string_view var;
  std::string_view option;
  EnvKind kind;
};

// sbatch 22.05's input environment variables (man sbatch, and the names its binary reads).
constexpr EnvOption kEnvOptions[] = {
    {"SBATCH_ACCOUNT", "account", EnvKind::kValue},
    {"SBATCH_ACCTG_FREQ", "acctg-freq", EnvKind::kValue},
    {"SBATCH_ARRAY_INX", "array", EnvKind::kValue},
    {"SBATCH_BATCH", "batch", EnvKind::kValue},
    {"SBATCH_BURST_BUFFER", "bb", EnvKind::kValue},
    {"SBATCH_CLUSTERS", "clusters", EnvKind::kValue},
    {"SLURM_CLUSTERS", "clusters", EnvKind::kValue},
    {"SBATCH_CLUSTER_CONSTRAINT", "cluster-constraint", EnvKind::kValue},
    {"SBATCH_CONSTRAINT", "constraint", EnvKind::kValue},
    {"SBATCH_CONTAINER", "container", EnvKind::kValue},
    {"SBATCH_CORE_SPEC", "core-spec", EnvKind::kValue},
    {"SBATCH_CPU_FREQ_REQ", "cpu-freq", EnvKind::kValue},
    {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu", EnvKind::kValue},
    {"SBATCH_DEBUG", "verbose", EnvKind::kFlag},
    {"SBATCH_DELAY_BOOT", "delay-boot", EnvKind::kValue},
    {"SBATCH_DISTRIBUTION", "distribution", EnvKind::kValue},
    {"SBATCH_ERROR", "error", EnvKind::kValue},
    {"SBATCH_EXCLUSIVE", "exclusive", EnvKind::kOptional},
    {"SBATCH_EXPORT", "export", EnvKind::kValue},
    {"SBATCH_GET_USER_ENV", "get-user-env", EnvKind::kOptional},
    {"SBATCH_GPU_BIND", "gpu-bind", EnvKind::kValue},
    {"SBATCH_GPU_FREQ", "gpu-freq", EnvKind::kValue},
    {"SBATCH_GPUS", "gpus", EnvKind::kValue},
    {"SBATCH_GPUS_PER_NODE", "gpus-per-node", EnvKind::kValue},
    {"SBATCH_GPUS_PER_SOCKET", "gpus-per-socket", EnvKind::kValue},
    {"SBATCH_GPUS_PER_TASK", "gpus-per-task", EnvKind::kValue},
    {"SBATCH_GRES", "gres", EnvKind::kValue},
    {"SBATCH_GRES_FLAGS", "gres-flags", EnvKind::kValue},
    {"SBATCH_HINT", "hint", EnvKind::kValue},
    {"SLURM_HINT", "hint", EnvKind::kValue},
    {"SBATCH_IGNORE_PBS", "ignore-pbs", EnvKind::kFlag},
    {"SBATCH_INPUT", "input", EnvKind::kValue},
    {"SBATCH_JOB_NAME", "job-name", EnvKind::kValue},
    {"SBATCH_MEM_BIND", "mem-bind", EnvKind::kValue},
    {"SBATCH_MEM_PER_CPU", "mem-per-cpu", EnvKind::kValue},
    {"SBATCH_MEM_PER_GPU", "mem-per-gpu", EnvKind::kValue},
    {"SBATCH_MEM_PER_NODE", "mem", EnvKind::kValue},
    {"SBATCH_NETWORK", "network", EnvKind::kValue},
    {"SBATCH_NO_KILL", "no-kill", EnvKind::kOptional},
    {"SBATCH_NO_REQUEUE", "no-requeue", EnvKind::kFlag},
    {"SBATCH_OPEN_MODE", "open-mode", EnvKind::kValue},
    {"SBATCH_OUTPUT", "output", EnvKind::kValue},
    {"SBATCH_OVERCOMMIT", "overcommit", EnvKind::kFlag},
    {"SBATCH_PARTITION", "partition", EnvKind::kValue},
    {"SBATCH_POWER", "power", EnvKind::kValue},
    {"SBATCH_PROFILE", "profile", EnvKind::kValue},
    {"SBATCH_QOS", "qos", EnvKind::kValue},
    {"SBATCH_REQ_SWITCH", "switches", EnvKind::kValue},
    {"SBATCH_REQUEUE", "requeue", EnvKind::kFlag},
    {"SBATCH_RESERVATION", "reservation", EnvKind::kValue},
    {"SBATCH_SIGNAL", "signal", EnvKind::kValue},
    {"SBATCH_SPREAD_JOB", "spread-job", EnvKind::kFlag},
    {"SBATCH_THREAD_SPEC", "thread-spec", EnvKind::kValue},
    {"SBATCH_THREADS_PER_CORE", "threads-per-core", EnvKind::kValue},
    {"SBATCH_TIMELIMIT", "time", EnvKind::kValue},
    {"SBATCH_USE_MIN_NODES", "use-min-nodes", EnvKind::kFlag},
    {"SBATCH_WAIT", "wait", EnvKind::kFlag},
    {"SBATCH_WAIT_ALL_NODES", "wait-all-nodes", EnvKind::kValue},
    {"SBATCH_WCKEY", "wckey", EnvKind::kValue},
};

// A flag variable is on when empty, "yes" (any case) or a non-zero number.
bool FlagIsOn(std::string_view v) {
  if (v.empty()) return true;
  if (EqualsIgnoreCase(v, "yes")) return true;
  std::string s(v);
  char* end = nullptr;
  long n = std::strtol(s.c_str(), &end, 10);
  return end != s.c_str() && *end == '\0' && n != 0;
}

const std::string* Lookup(const EnvironmentList& env, std::string_view name) {
  const std::string* found = nullptr;
  for (const auto& [k, v] : env) {
    if (k == name) found = &v;  // the last definition wins, as getenv finds it
  }
  return found;
}

}  // namespace

std::optional<SbatchFailure> CheckBatchScript(std::string_view script, std::string_view prog) {
  if (script.empty()) return Errors(prog, {"Batch script is empty!"});
  bool blank = true;
  for (char c : script) blank = blank && IsSpace(c);
  if (blank) return Errors(prog, {"Batch script contains only whitespace!"});
  if (script.substr(0, 2) != "#!") {
    return Errors(prog, {"This does not look like a batch script.  The first",
                         "line must start with #! followed by the path to an interpreter.",
                         "For instance: #!/bin/sh"});
  }
  if (script.find('\0') != std::string_view::npos) {
    return Errors(prog, {"The Slurm controller does not allow scripts that",
                         "contain a NULL character '\\0'."});
  }
  if (script.find("\r\n") != std::string_view::npos) {
    return Errors(prog, {"Batch script contains DOS line breaks (\\r\\n)",
                         "instead of expected UNIX line breaks (\\n)."});
  }
  return std::nullopt;
}

std::pair<DirectiveWords, std::optional<SbatchFailure>> ReadDirectives(std::string_view script,
                                                                       std::string_view file_name,
                                                                       std::string_view prog) {
  DirectiveWords out;
  bool warned = false;
  int line_no = 0;
  size_t start = 0;
  while (start < script.size()) {
    size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    std::string_view line = script.substr(start, end - start);
    start = end + 1;
    ++line_no;
    std::string_view rest;
    if (line.substr(0, 7) == "#SBATCH") {
      rest = line.substr(7);
    } else if (line.substr(0, 6) == "#SLURM") {
      rest = line.substr(6);
      if (!warned) {
        out.warnings.push_back(std::string(prog) +
                               ": error: Change from #SLURM to #SBATCH in your script and verify "
                               "the options are valid in sbatch\n");
        warned = true;
      }
    } else {
      if (IsCommand(line)) break;
      continue;
    }
    if (IsHetSeparator(rest)) {
      out.heterogeneous = true;
      break;
    }
    if (auto fail = SplitDirective(rest, file_name, line_no, prog, out.words)) {
      return {std::move(out), std::move(fail)};
    }
  }
  return {std::move(out), std::nullopt};
}

std::string WrapScript(std::string_view command) {
  return "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + std::string(command) + "\n";
}

std::vector<OptionArg> OptionsFromEnvironment(const EnvironmentList& env) {
  std::vector<OptionArg> out;
  for (const EnvOption& e : kEnvOptions) {
    const std::string* v = Lookup(env, e.var);
    if (v == nullptr) continue;
    switch (e.kind) {
      case EnvKind::kValue:
        out.push_back({std::string(e.option), *v});
        break;
      case EnvKind::kFlag:
        if (FlagIsOn(*v)) out.push_back({std::string(e.option), std::nullopt});
        break;
      case EnvKind::kOptional:
        out.push_back(
            {std::string(e.option), v->empty() ? std::nullopt : std::optional<std::string>(*v)});
        break;
    }
  }
  return out;
}

std::string_view EnvironmentVariableOf(std::string_view option) {
  for (const EnvOption& e : kEnvOptions) {
    if (e.option == option) return e.var;
  }
  return "";
}

}  // namespace berth::slurm
