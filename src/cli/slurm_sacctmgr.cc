// sacctmgr: accounts, users' associations and QoS, shown and changed live (src/slurm/sacctmgr.h
// has the rules; the controller applies and keeps the changes).
#include <poll.h>
#include <unistd.h>

#include <cstdio>

#include "cli/client.h"
#include "cli/commands.h"
#include "slurm/sacctmgr.h"

namespace berth::cli {
namespace {

constexpr const char* kProg = "sacctmgr";

const char* ActionOf(slurm::SacctmgrVerb v) {
  switch (v) {
    case slurm::SacctmgrVerb::kAdd:
      return "add";
    case slurm::SacctmgrVerb::kModify:
      return "modify";
    case slurm::SacctmgrVerb::kDelete:
      return "delete";
    case slurm::SacctmgrVerb::kShow:
      break;
  }
  return "show";
}

const char* EntityOf(config::AcctEntity e) {
  switch (e) {
    case config::AcctEntity::kAccount:
      return "account";
    case config::AcctEntity::kUser:
      return "user";
    case config::AcctEntity::kQos:
      return "qos";
    case config::AcctEntity::kAssociation:
      return "association";
  }
  return "account";
}

// Slurm's commit_check: the question, then one answer within 30 seconds. 'y' commits; 'n', a
// bare newline, end of input or the timeout discard.
bool Confirm() {
  std::printf("Would you like to commit changes? (You have 30 seconds to decide)\n");
  for (;;) {
    std::printf("(N/y): ");
    std::fflush(stdout);
    struct pollfd p = {STDIN_FILENO, POLLIN, 0};
    if (poll(&p, 1, 30000) <= 0) {
      std::printf("timeout\n");
      return false;
    }
    int c = std::getchar();
    std::printf("\n");
    if (c == 'y' || c == 'Y') return true;
    if (c == 'n' || c == 'N' || c == '\n' || c == EOF) return false;
    while (c != '\n' && c != EOF) c = std::getchar();  // the rest of that line
    std::printf("Y or N please\n");
  }
}

// An error as sacctmgr words it: " Nothing new added." and the like on stdout, the rest on
// stderr.
int Refused(const Status& st) {
  if (st.message().starts_with("Nothing")) {
    std::printf(" %s\n", st.message().c_str());
  } else {
    std::fprintf(stderr, " Error with request: %s\n", st.message().c_str());
  }
  return 1;
}

int Show(Client& client, const slurm::SacctmgrCommand& c) {
  Result<nlohmann::json> body = client.Call("GET", "/v1/associations");
  if (!body.ok()) return Fail(kProg, body.status());
  Result<slurm::SacctmgrData> data = slurm::SacctmgrDataFromJson(*body);
  if (!data.ok()) return Fail(kProg, data.status());
  data->cluster = ClusterName(client);
  std::fputs(slurm::RenderSacctmgrShow(c, *data).c_str(), stdout);
  return 0;
}

}  // namespace

int SacctmgrMain(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.empty()) args.emplace_back();
  args[0] = kProg;
  slurm::SacctmgrParse parsed = slurm::ParseSacctmgrArgs(args);
  if (parsed.done) return PrintParseExit(parsed);
  const slurm::SacctmgrCommand& c = parsed.command;
  Result<std::unique_ptr<Client>> client = Client::Connect();
  if (!client.ok()) return Fail(kProg, client.status());
  if (c.verb == slurm::SacctmgrVerb::kShow) return Show(**client, c);

  nlohmann::json request = {{"action", ActionOf(c.verb)},
                            {"entity", EntityOf(c.entity)},
                            {"where", nlohmann::json::array()},
                            {"set", nlohmann::json::array()}};
  for (const auto& [k, v] : c.where) request["where"].push_back({k, v});
  for (const auto& [k, v] : c.set) request["set"].push_back({k, v});  // in order, repeats kept
  const std::string cluster = ClusterName(**client);
  if (!c.immediate) {  // show what would change, then ask
    request["dry_run"] = true;
    Result<nlohmann::json> preview = (*client)->Call("POST", "/v1/associations", request);
    if (!preview.ok()) return Refused(preview.status());
    std::fputs(slurm::RenderSacctmgrChange(c, *preview, cluster).c_str(), stdout);
    if (!Confirm()) {
      std::printf(" Changes Discarded\n");
      return 0;
    }
    request["dry_run"] = false;
    Result<nlohmann::json> done = (*client)->Call("POST", "/v1/associations", request);
    if (!done.ok()) return Refused(done.status());
    return 0;
  }
  Result<nlohmann::json> done = (*client)->Call("POST", "/v1/associations", request);
  if (!done.ok()) return Refused(done.status());
  if (!c.quiet) std::fputs(slurm::RenderSacctmgrChange(c, *done, cluster).c_str(), stdout);
  return 0;
}

}  // namespace berth::cli
