// scancel: Slurm's job cancel command (the logic is in src/slurm/scancel.h). Every cancel of one
// run goes to the controller in one POST /v1/jobs/cancel, so 10,000 jobs are one request.
#include <pwd.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "slurm/job_view.h"
#include "slurm/scancel.h"

namespace berth::cli {
namespace {

using nlohmann::json;
using slurm::ScancelOptions;
using slurm::ScancelTarget;

// Slurm's uid_from_string(): a user name, or a number.
std::optional<uint32_t> UidOf(const std::string& user) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwnam_r(user.c_str(), &pw, buf, sizeof(buf), &found) == 0 && found) return found->pw_uid;
  uint32_t uid = 0;
  auto [p, ec] = std::from_chars(user.data(), user.data() + user.size(), uid);
  if (ec == std::errc() && p == user.data() + user.size()) return uid;
  return std::nullopt;
}

// Loads the active jobs for the filtered path, one record at a time (no tree of the whole list:
// `scancel -u` of 10,000 jobs spent most of its time there).
Result<std::vector<slurm::JobView>> ActiveJobs(Client& client) {
  Result<std::string> text = client.CallText("GET", "/v1/jobs");
  if (!text.ok()) return text.status();
  Result<std::vector<slurm::JobView>> jobs = slurm::JobViewsFromList(*text, std::time(nullptr));
  if (!jobs.ok()) {
    return Status::Internal("the controller's job list: " + jobs.status().message());
  }
  return jobs;
}

// The filtered path's selection made by the controller (POST /v1/views/scancel), with the same
// code as below: its errors printed, the targets set, and the exit code returned. Nothing when
// the controller has no such view (an older one), or for -i, which shows each job's name and
// partition; a failure to reach it is reported and returned.
std::optional<int> SelectOnController(Client& client, const std::vector<std::string>& args,
                                      const ScancelOptions& o, std::vector<ScancelTarget>& out) {
  if (o.interactive) return std::nullopt;
  json env = json::object();
  for (const auto& [k, v] : EnvironmentWithPrefix("SCANCEL_")) env[k] = v;
  json body = {{"args", json(std::vector<std::string>(args.begin() + 1, args.end()))},
               {"env", std::move(env)}};
  if (o.uid) body["uid"] = *o.uid;
  Result<json> r = client.Call("POST", "/v1/views/scancel", body);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kNotFound) return std::nullopt;
    std::fprintf(stderr, "scancel: error: %s\n", r.status().message().c_str());
    return 1;
  }
  try {
    for (const json& e : r->at("errors"))
      std::fprintf(stderr, "%s\n", e.get<std::string>().c_str());
    for (const json& t : r->at("targets")) {
      ScancelTarget target;
      target.request_ids = t.at("ids").get<std::vector<std::string>>();
      target.display_id = t.at("display_id").get<std::string>();
      out.push_back(std::move(target));
    }
    return r->at("exit_code").get<int>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scancel: error: the controller's selection: %s\n", e.what());
    return 1;
  }
}

// -i: asks on the terminal for each target; end of input counts as "no".
std::vector<ScancelTarget> Confirmed(const std::vector<ScancelTarget>& targets) {
  std::vector<ScancelTarget> yes;
  for (const ScancelTarget& t : targets) {
    while (true) {
      std::fputs(slurm::ConfirmPrompt(t).c_str(), stdout);
      std::fflush(stdout);
      char* read = nullptr;
      size_t size = 0;
      const ssize_t n = ::getline(&read, &size, stdin);
      const std::string line = n > 0 ? std::string(read, static_cast<size_t>(n)) : "";
      std::free(read);
      if (n < 0) break;
      if (!line.empty() && (line[0] == 'y' || line[0] == 'Y')) {
        yes.push_back(t);
        break;
      }
      if (!line.empty() && (line[0] == 'n' || line[0] == 'N')) break;
    }
  }
  return yes;
}

json CancelBody(const ScancelOptions& o, const std::vector<ScancelTarget>& targets) {
  json ids = json::array();
  for (const ScancelTarget& t : targets) {
    for (const std::string& id : t.request_ids) ids.push_back(id);
  }
  json body = {{"ids", ids}, {"batch_only", o.batch}, {"full", o.full}};
  // A KILL to the whole job is a cancel (pending jobs too), as slurm_kill_job() makes it.
  const bool plain_kill = o.signal == 9 && !o.batch && !o.full;
  if (!o.signal_name.empty() && !plain_kill) body["signal"] = o.signal_name;
  return body;
}

// Sends the cancels and reports failures; returns Slurm's rc.
int SendCancels(Client& client, const ScancelOptions& o,
                const std::vector<ScancelTarget>& targets) {
  if (targets.empty()) return 0;
  if (o.verbose > 0) {
    for (const ScancelTarget& t : targets) {
      std::fprintf(stderr, "%s\n", slurm::VerboseLine(o, t.display_id).c_str());
    }
  }
  Result<json> r = client.Call("POST", "/v1/jobs/cancel", CancelBody(o, targets));
  if (!r.ok()) {
    std::fprintf(stderr, "scancel: error: %s\n", r.status().message().c_str());
    return 1;
  }
  int rc = 0;
  if (!r->contains("results") || !r->at("results").is_array()) return rc;
  for (const json& res : r->at("results")) {
    if (!res.contains("error")) continue;
    slurm::CancelFailure f{res.value("code", 500), res.value("error", std::string())};
    slurm::FailureReport report = slurm::ReportFailure(o, res.value("id", std::string()), f);
    if (!report.line.empty()) std::fprintf(stderr, "%s\n", report.line.c_str());
    rc = std::max(rc, report.exit_code);
  }
  return rc;
}

}  // namespace

int ScancelMain(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (!args.empty()) args[0] = "scancel";  // getopt's messages name the program
  slurm::ScancelParse parsed = slurm::ParseScancelArgs(args, EnvironmentWithPrefix("SCANCEL_"));
  if (parsed.done) return PrintParseExit(parsed);
  ScancelOptions& o = parsed.options;
  if (o.version) {
    std::printf("slurm 22.05 (berth %s)\n", BERTH_VERSION);
    return 0;
  }
  if (!o.user.empty()) {
    o.uid = UidOf(o.user);
    if (!o.uid) {
      std::fprintf(stderr, "scancel: error: Invalid user name: %s\n", o.user.c_str());
      return 1;
    }
  } else if (o.me) {
    o.uid = getuid();
    o.user = std::to_string(*o.uid);  // what Slurm's -v summary shows for --me
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("scancel", c.status());
  Client& client = **c;
  int rc = 0;
  std::vector<ScancelTarget> targets;
  std::vector<slurm::JobView> jobs;  // owns what the targets point to
  if (o.IdsOnly()) {
    targets = slurm::IdTargets(o);
  } else if (std::optional<int> selected = SelectOnController(client, args, o, targets)) {
    // The controller selected the jobs from its records (no list of them to read here).
    rc = *selected;
  } else {
    Result<std::vector<slurm::JobView>> loaded = ActiveJobs(client);
    if (!loaded.ok()) return Fail("scancel", loaded.status());
    jobs = std::move(*loaded);
    slurm::ScancelSelection sel = slurm::SelectScancelTargets(o, jobs);
    for (const std::string& line : sel.errors) std::fprintf(stderr, "%s\n", line.c_str());
    rc = sel.exit_code;
    targets = o.interactive ? Confirmed(sel.targets) : std::move(sel.targets);
  }
  rc = std::max(rc, SendCancels(client, o, targets));
  return slurm::ExitStatusOf(rc);
}

}  // namespace berth::cli
