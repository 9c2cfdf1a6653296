// A command's long options as a table (name, whether it takes a value, what it does with it),
// run through the Slurm commands' getopt machinery (slurm/view_options.h RunGetoptQuietly), with
// -h/--help. For the daemons and `berth sim`, whose options are many and all long.
//
// Thread safety: getopt_long's process-wide state: one thread at a time.
#ifndef BERTH_CLI_OPTION_TABLE_H_
#define BERTH_CLI_OPTION_TABLE_H_

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace berth::cli {

// One long option: `apply` gets the value (null for an option without one) and returns an error
// to stop parsing with.
template <typename Args>
struct LongOption {
  const char* name;
  bool takes_value;
  std::function<Status(Args& args, const char* value)> apply;
};

// What parsing came to.
struct OptionsOutcome {
  enum class Kind { kOk, kHelp, kUnknownOption, kBadValue };
  Kind kind = Kind::kOk;
  std::string unknown;                // kUnknownOption: the argument getopt was reading
  Status error;                       // kBadValue: what the option's apply said
  std::vector<std::string> operands;  // kOk: the arguments that are not options, in order
};

// The untyped core: `apply(i, value)` applies option i of `options` (name, takes a value).
OptionsOutcome RunOptionTable(int argc, char** argv,
                              const std::vector<std::pair<const char*, bool>>& options,
                              const std::function<Status(size_t i, const char* value)>& apply);

// Parses argv[1..] into `args` with `table`; getopt's permutation, so options and operands mix.
template <typename Args>
OptionsOutcome ParseOptionTable(int argc, char** argv, const std::vector<LongOption<Args>>& table,
                                Args& args) {
  std::vector<std::pair<const char*, bool>> options;
  for (const LongOption<Args>& o : table) options.emplace_back(o.name, o.takes_value);
  return RunOptionTable(argc, argv, options,
                        [&](size_t i, const char* value) { return table[i].apply(args, value); });
}

// An option that sets a string member to its value; one that sets a member to a constant.
template <typename Args>
LongOption<Args> StringOption(const char* name, std::string Args::*field) {
  return {name, true, [field](Args& a, const char* value) {
            a.*field = value;
            return Status::Ok();
          }};
}
template <typename Args, typename T>
LongOption<Args> FlagOption(const char* name, T Args::*field, T value) {
  return {name, false, [field, value](Args& a, const char*) {
            a.*field = value;
            return Status::Ok();
          }};
}

}  // namespace berth::cli

#endif  // BERTH_CLI_OPTION_TABLE_H_
