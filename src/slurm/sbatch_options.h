// sbatch's command-line grammar: Slurm 22.05's option table (every long option of `man sbatch`
// with its short letter and argument kind, plus the hidden aliases --cluster and
// --tasks-per-node, then NVIDIA pyxis's --container-* options, which Slurm appends to its table
// as it does a SPANK plugin's) and an emulation of glibc's getopt_long over it, as sbatch runs it
// on its command line and on the words of its #SBATCH directives:
//   - short options, bundled where they take no argument ("-Hv"), with attached values ("-N2",
//     "-t1:00:00", "-wnode1") or the next word ("-N 2"); -k's optional value only attached;
//   - long options with "=value" or the next word ("--time 10"); an optional value only with
//     "=" ("--nice=5"); unambiguous prefixes ("--part=gpu", "--tasks=1");
//   - REQUIRE_ORDER ('+' in sbatch's optstring): the first operand (the script) ends the options,
//     and so does "--".
// Errors are glibc's messages, word for word ("sbatch: unrecognized option '--image=x'",
// "sbatch: option '--n=1' is ambiguous; possibilities: '--network' ...").
//
// Thread safety: all functions are pure; the table is immutable.
#ifndef BERTH_SLURM_SBATCH_OPTIONS_H_
#define BERTH_SLURM_SBATCH_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace berth::slurm {

enum class ArgKind : uint8_t { kNone, kRequired, kOptional };

// How sbatch gives up: what it prints to stderr (whole lines, each ending in '\n', with the
// program name where Slurm puts one) and its exit status. Slurm exits 255 (its exit(-1)) for a
// bad option or option value and 1 for most other errors.
struct SbatchFailure {
  std::string text;
  int exit_code = 1;
  friend bool operator==(const SbatchFailure&, const SbatchFailure&) = default;
};

struct SbatchOption {
  std::string_view name;       // the long name as getopt_long knows it ("tasks-per-node")
  std::string_view canonical;  // the option it is ("ntasks-per-node"); aliases share it
  char short_name;             // '\0' when the option has none
  ArgKind arg;
};

// Every option of sbatch 22.05 and then pyxis's, in the order of its getopt_long table (glibc
// lists the possibilities of an ambiguous prefix in this order).
std::span<const SbatchOption> SbatchOptions();

// The option with exactly this long name (an alias gives its own entry), or null.
const SbatchOption* FindSbatchOption(std::string_view long_name);

// The option of a short letter ('N' -> nodes), or null.
const SbatchOption* FindShortOption(char letter);

// One option as getopt_long returned it.
struct OptionArg {
  std::string name;                  // canonical long name: "nodes" for -N2, --nodes, --node=2
  std::optional<std::string> value;  // empty for flags and for an optional value not given
  friend bool operator==(const OptionArg&, const OptionArg&) = default;
};

// What getopt_long made of a list of words (argv without argv[0]).
struct GetoptResult {
  std::vector<OptionArg> options;  // in order, up to the first error
  // Where parsing stopped: the first operand (words.size() when there is none); after "--" the
  // word that follows it. On an error, the word after the bad one.
  size_t next = 0;
  // glibc's message for the first error, with the program name ("sbatch: option requires an
  // argument -- 'J'"); "" when there was none. Options after the error are not parsed.
  std::string error;
};

// Parses `words` as getopt_long("+...") does for sbatch. `prog` is the name errors begin with.
GetoptResult GetoptSbatch(const std::vector<std::string>& words, std::string_view prog);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SBATCH_OPTIONS_H_
