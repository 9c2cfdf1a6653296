// sshare: the fair-share tree of accounts and users, as Slurm 22.05's sshare prints it
// (src/slurm/sshare_view.h has the rules).
#include <pwd.h>
#include <unistd.h>

#include <cstdio>

#include "cli/client.h"
#include "cli/commands.h"
#include "slurm/sshare_view.h"

namespace berth::cli {
namespace {

std::string CallerName() {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &found) != 0 || found == nullptr) return "";
  return found->pw_name;
}

}  // namespace

int SshareMain(int argc, char** argv) {
  constexpr const char* kProg = "sshare";
  std::vector<std::string> args(argv, argv + argc);
  if (args.empty()) args.emplace_back();
  args[0] = kProg;  // getopt's messages name the program
  slurm::SshareParse parsed = slurm::ParseSshareArgs(args, CallerName());
  if (parsed.exit.done) return PrintParseExit(parsed.exit);
  const slurm::SshareOptions& o = parsed.options;
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail(kProg, c.status());
  Result<nlohmann::json> body = (*c)->Call("GET", "/v1/fairshare");
  if (!body.ok()) return Fail(kProg, body.status());
  Result<slurm::SshareData> data = slurm::SshareDataFromJson(*body);
  if (!data.ok()) return Fail(kProg, data.status());
  Result<std::vector<slurm::SshareField>> fields = slurm::SshareFields(o, data->fair_tree);
  if (!fields.ok()) {
    std::fprintf(stderr, "sshare: error: %s\n", fields.status().message().c_str());
    return 1;
  }
  std::fputs(slurm::RenderSshare(o, *fields, *data).c_str(), stdout);
  return 0;
}

}  // namespace berth::cli
