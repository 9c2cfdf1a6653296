// berth: one binary, many commands. `berth <command> ...`, or a command's own name through a
// symlink (argv[0] = "sbatch", ...), the way Slurm users type them.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "cli/commands.h"

namespace {

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "berth: a workload manager for GPU clusters, with Slurm's and Kubernetes' faces.\n"
               "\n"
               "Usage: berth <command> [options]\n"
               "\n"
               "Commands:\n");
  int width = 0;
  for (const berth::cli::Command& c : berth::cli::Commands()) {
    width = std::max(width, static_cast<int>(c.name.size()));
  }
  for (const berth::cli::Command& c : berth::cli::Commands()) {
    std::fprintf(out, "  %-*s %s\n", width, std::string(c.name).c_str(),
                 std::string(c.summary).c_str());
  }
  std::fprintf(out, "\nRun `berth <command> --help` for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view self = argv[0];
  if (size_t slash = self.rfind('/'); slash != std::string_view::npos)
    self.remove_prefix(slash + 1);
  if (self != "berth") {
    if (const berth::cli::Command* c = berth::cli::FindCommand(self)) return c->run(argc, argv);
  }
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(stdout);
    return 0;
  }
  if (name == "--version" || name == "version") {
    std::printf("berth %s\n", BERTH_VERSION);
    return 0;
  }
  if (const berth::cli::Command* c = berth::cli::FindCommand(name))
    return c->run(argc - 1, argv + 1);
  std::fprintf(stderr, "berth: unknown command '%s' (try `berth --help`)\n", argv[1]);
  return 2;
}
