#include "cli/option_table.h"

#include <getopt.h>

#include <optional>

#include "slurm/view_options.h"

namespace berth::cli {

namespace {
constexpr int kFirstCode = 1000;  // option i is getopt code kFirstCode + i
}  // namespace

OptionsOutcome RunOptionTable(int argc, char** argv,
                              const std::vector<std::pair<const char*, bool>>& options,
                              const std::function<Status(size_t i, const char* value)>& apply) {
  std::vector<option> longs;
  for (size_t i = 0; i < options.size(); ++i) {
    longs.push_back({options[i].first, options[i].second ? required_argument : no_argument, nullptr,
                     kFirstCode + static_cast<int>(i)});
  }
  longs.push_back({"help", no_argument, nullptr, 'h'});
  longs.push_back({nullptr, 0, nullptr, 0});
  OptionsOutcome out;
  std::optional<std::vector<std::string>> operands = slurm::RunGetoptQuietly(
      std::vector<std::string>(argv, argv + argc), "h", longs.data(),
      [&](int code, const char* value) {
        if (code == 'h') {
          out.kind = OptionsOutcome::Kind::kHelp;
          return false;
        }
        out.error = apply(static_cast<size_t>(code - kFirstCode), value);
        if (!out.error.ok()) out.kind = OptionsOutcome::Kind::kBadValue;
        return out.error.ok();
      },
      &out.unknown);
  if (!operands) {
    out.kind = OptionsOutcome::Kind::kUnknownOption;
  } else if (out.kind == OptionsOutcome::Kind::kOk) {
    out.operands = std::move(*operands);
  }
  return out;
}

}  // namespace berth::cli
