#include "cli/commands.h"

namespace berth::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"up", "start a controller and a local agent (the single-machine cluster)", &UpMain},
      {"controller", "run the controller daemon", &ControllerMain},
      {"agent", "run the node agent daemon", &AgentMain},
      {"submit", "submit a job (a script, or --wrap CMD), sbatch-style options", &SubmitMain},
      {"jobs", "list jobs (the queue)", &JobsMain},
      {"job", "show one job as JSON", &JobMain},
      {"cancel", "cancel jobs", &CancelMain},
      {"nodes", "list nodes", &NodesMain},
      {"drain", "drain a node: berth drain NODE REASON", &NodeActionMain},
      {"resume", "resume a node: berth resume NODE", &NodeActionMain},
      {"sim", "replay a workload trace through the scheduler in virtual time", &SimMain},
      {"supervise", "(internal) run one job attempt on this node", &SuperviseMain},
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
