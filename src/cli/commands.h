// The table of berth's commands. Each command is a function of argc/argv (argv[0] being the
// command's name) returning the process exit code.
#ifndef BERTH_CLI_COMMANDS_H_
#define BERTH_CLI_COMMANDS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace berth::slurm {
struct ParseExit;
}  // namespace berth::slurm

namespace berth::cli {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);
};

const std::vector<Command>& Commands();
const Command* FindCommand(std::string_view name);

// What the commands ask of this process and its host.
std::string SelfPath();       // this binary (/proc/self/exe): the program of the jobs berth makes
std::string CurrentDir();     // the working directory ("/" when it cannot be had)
std::string ShortHostName();  // the host's name up to its first dot
// The process's environment variables whose names start with `prefix` ("": all), in order.
std::vector<std::pair<std::string, std::string>> EnvironmentWithPrefix(std::string_view prefix);

int SimMain(int argc, char** argv);
int UpMain(int argc, char** argv);
int ControllerMain(int argc, char** argv);
int AgentMain(int argc, char** argv);
int SuperviseMain(int argc, char** argv);
int SuperviseServerMain(int argc, char** argv);
int SubmitMain(int argc, char** argv);
int JobsMain(int argc, char** argv);
int JobMain(int argc, char** argv);
int CancelMain(int argc, char** argv);
int NodesMain(int argc, char** argv);
int NodeActionMain(int argc, char** argv);
int KubeconfigMain(int argc, char** argv);
int TokenMain(int argc, char** argv);
int StatusMain(int argc, char** argv);  // status_command.cc
int WebMain(int argc, char** argv);     // web_command.cc
int ReportMain(int argc, char** argv);  // report_command.cc
int ImagesMain(int argc, char** argv);  // images_command.cc
// Slurm's commands (src/cli/slurm_*.cc).
int SbatchMain(int argc, char** argv);
int SqueueMain(int argc, char** argv);
int SinfoMain(int argc, char** argv);
int ScancelMain(int argc, char** argv);
int ScontrolMain(int argc, char** argv);
int SacctMain(int argc, char** argv);
int SprioMain(int argc, char** argv);
int SshareMain(int argc, char** argv);
int SacctmgrMain(int argc, char** argv);
int SstatMain(int argc, char** argv);
int SeffMain(int argc, char** argv);
int SrunMain(int argc, char** argv);
int SallocMain(int argc, char** argv);  // slurm_salloc.cc

// A Slurm command that stops after parsing its arguments: prints `out` to stdout and `err` to
// stderr, and returns the exit code.
int PrintParseExit(const slurm::ParseExit& exit);

}  // namespace berth::cli

#endif  // BERTH_CLI_COMMANDS_H_
