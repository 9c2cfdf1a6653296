// Command-line plumbing shared by all of berth's Slurm commands (squeue, sinfo, sprio, sacct,
// srun, scancel, scontrol, report): glibc's getopt_long run over a copy of the arguments (so
// that its permutation and messages are exactly those of the Slurm commands), environment
// lookups, and the "print this and exit" outcome of parsing (ParseExit, which each command's
// parse result holds or is).
//
// Thread safety: RunGetopt uses getopt_long's process-wide state, under a process-wide mutex:
// any thread may call it (the controller parses squeue's and scancel's options).
#ifndef BERTH_SLURM_VIEW_OPTIONS_H_
#define BERTH_SLURM_VIEW_OPTIONS_H_

#include <getopt.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace berth::slurm {

// Looks an environment variable up; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvLookup ProcessEnv();  // the real environment

// What a command does after parsing when it does not go on: print `out` to stdout and `err` to
// stderr, then exit with `exit_code`.
struct ParseExit {
  bool done = false;
  int exit_code = 0;
  std::string out, err;
};
ParseExit ExitWith(int code, std::string err, std::string out = "");

// Runs getopt_long over `args` (args[0] is the program name, used in getopt's own messages,
// which it prints to stderr as Slurm's commands let it). `handle` gets each option's code and
// its argument (null when none); it returns false to stop. Returns the operands, or nullopt when
// getopt reported an unknown option or a missing argument ('?').
std::optional<std::vector<std::string>> RunGetopt(
    const std::vector<std::string>& args, const char* short_options,
    const struct option* long_options,
    const std::function<bool(int code, const char* value)>& handle);

// RunGetopt for a command that words its own message for a bad option (scontrol): getopt prints
// nothing, and on nullopt *bad_word holds the argument getopt was reading (argv[optind - 1]).
std::optional<std::vector<std::string>> RunGetoptQuietly(
    const std::vector<std::string>& args, const char* short_options,
    const struct option* long_options,
    const std::function<bool(int code, const char* value)>& handle, std::string* bad_word);

// A command's parse result `Parse` (a ParseExit plus its options) that stops: print and exit.
template <typename Parse>
Parse StopWith(int code, std::string err, std::string out = "") {
  Parse p;
  static_cast<ParseExit&>(p) = ExitWith(code, std::move(err), std::move(out));
  return p;
}

// The line squeue and sinfo print above the header with -l or -i: "Wed Dec 02 19:23:59 2026"
// (local time) and a newline.
std::string DateLine();

// How many times -i repeats: until interrupted (-1), or $BERTH_ITERATIONS times (for tests).
int IterationLimit();

}  // namespace berth::slurm

#endif  // BERTH_SLURM_VIEW_OPTIONS_H_
