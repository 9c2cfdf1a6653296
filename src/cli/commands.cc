#include "cli/commands.h"

namespace berth::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"sim", "replay a workload trace through the scheduler in virtual time", &SimMain},
  };
  return kCommands;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace berth::cli
