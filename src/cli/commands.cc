#include "cli/commands.h"

#include <unistd.h>

#include <cstdio>

#include "slurm/view_options.h"

namespace berth::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"up", "start a controller and a local agent (the single-machine cluster)", &UpMain},
      {"controller", "run the controller daemon", &ControllerMain},
      {"status", "the controller, or its HA group: members, leader, epoch, etcd", &StatusMain},
      {"agent", "run the node agent daemon", &AgentMain},
      {"submit", "submit a job (a script, or --wrap CMD), sbatch-style options", &SubmitMain},
      {"jobs", "list jobs (the queue)", &JobsMain},
      {"job", "show one job as JSON", &JobMain},
      {"cancel", "cancel jobs", &CancelMain},
      {"nodes", "list nodes", &NodesMain},
      {"drain", "drain a node: berth drain NODE REASON", &NodeActionMain},
      {"resume", "resume a node: berth resume NODE", &NodeActionMain},
      {"kubeconfig", "print a kubeconfig for kubectl (berth kubeconfig > ~/.kube/config)",
       &KubeconfigMain},
      {"token", "print a bearer token for the HTTPS API (or, for operators, the join token)",
       &TokenMain},
      {"web", "print a link that signs you in to the web console", &WebMain},
      {"sbatch", "submit a batch script (Slurm's sbatch)", &SbatchMain},
      {"srun", "run a job step, or an interactive job (Slurm's srun)", &SrunMain},
      {"salloc", "an interactive allocation: run a command (a shell) with it (Slurm's salloc)",
       &SallocMain},
      {"squeue", "show the queue (Slurm's squeue)", &SqueueMain},
      {"sinfo", "show partitions and nodes (Slurm's sinfo)", &SinfoMain},
      {"scancel", "cancel or signal jobs (Slurm's scancel)", &ScancelMain},
      {"scontrol", "show and change jobs, nodes, partitions (Slurm's scontrol)", &ScontrolMain},
      {"sacct", "accounting of finished and running jobs (Slurm's sacct)", &SacctMain},
      {"sprio", "pending jobs' priorities and their factors (Slurm's sprio)", &SprioMain},
      {"sshare", "the fair-share tree of accounts and users (Slurm's sshare)", &SshareMain},
      {"sacctmgr", "accounts, users and QoS: show, add, modify, delete (Slurm's sacctmgr)",
       &SacctmgrMain},
      {"sstat", "CPU and memory of running jobs, as measured (Slurm's sstat)", &SstatMain},
      {"seff", "a job's CPU, memory and GPU efficiency, with advice (Slurm's seff)", &SeffMain},
      {"eff", "the same as seff", &SeffMain},
      {"report", "usage review: requested vs used per user and account, right-sizing advice",
       &ReportMain},
      {"images", "this node's image cache: list, pull, import, prune (docs/containers.md)",
       &ImagesMain},
      {"sim", "replay a workload trace through the scheduler in virtual time", &SimMain},
      {"supervise", "(internal) run one job attempt on this node", &SuperviseMain},
      {"supervise-server", "(internal) fork the supervisors of this node's agent",
       &SuperviseServerMain},
  };
  return kCommands;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string SelfPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "berth";
  return std::string(buf, static_cast<size_t>(n));
}

std::string CurrentDir() {
  char buf[4096];
  return getcwd(buf, sizeof(buf)) != nullptr ? buf : "/";
}

std::vector<std::pair<std::string, std::string>> EnvironmentWithPrefix(std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const size_t eq = kv.find('=');
    if (eq != std::string_view::npos && kv.substr(0, prefix.size()) == prefix) {
      env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  return env;
}

std::string ShortHostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  const std::string host = buf;
  return host.substr(0, host.find('.'));
}

int PrintParseExit(const slurm::ParseExit& exit) {
  std::fputs(exit.out.c_str(), stdout);
  std::fputs(exit.err.c_str(), stderr);
  return exit.exit_code;
}

}  // namespace berth::cli
