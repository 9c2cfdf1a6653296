// scancel: Slurm's job cancel command (the logic is in src/slurm/scancel.h). Every cancel of one
// run is one POST /v1/jobs/cancel, so 10,000 jobs are one request: the ids as given, or for a
// filtered scancel its command line, whose jobs the controller selects (as slurmctld takes
// scancel's filters).
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

// The command line as the controller parses it again: {"args", "env": the SCANCEL_* variables,
// "uid": -u's or --me's user as resolved here}.
json CommandLineBody(const std::vector<std::string>& args, const ScancelOptions& o) {
  json env = json::object();
  for (const auto& [k, v] : EnvironmentWithPrefix("SCANCEL_")) env[k] = v;
  json body = {{"args", json(std::vector<std::string>(args.begin() + 1, args.end()))},
               {"env", std::move(env)}};
  if (o.uid) body["uid"] = *o.uid;
  return body;
}

// Prints the failures of a cancel answer's "results" as scancel reports them; returns Slurm's rc.
int ReportResults(const ScancelOptions& o, const json& answer) {
  int rc = 0;
  if (!answer.contains("results") || !answer.at("results").is_array()) return rc;
  for (const json& res : answer.at("results")) {
    if (!res.contains("error")) continue;
    slurm::CancelFailure f{res.value("code", 500), res.value("error", std::string())};
    slurm::FailureReport report = slurm::ReportFailure(o, res.value("id", std::string()), f);
    if (!report.line.empty()) std::fprintf(stderr, "%s\n", report.line.c_str());
    rc = std::max(rc, report.exit_code);
  }
  return rc;
}

// The filtered path in one request (POST /v1/jobs/cancel with {"scancel": ...}): the
// controller selects the jobs as POST /v1/views/scancel does and cancels them, and answers with
// the selection's lines, its targets (for -v) and the failures. Returns Slurm's rc; nothing
// when the controller does not take such a request (an older one answers 400) or for -i, which
// asks before each job: the active jobs are then read and selected here.
std::optional<int> CancelOnController(Client& client, const std::vector<std::string>& args,
                                      const ScancelOptions& o) {
  if (o.interactive) return std::nullopt;
  Result<json> r =
      client.Call("POST", "/v1/jobs/cancel", json{{"scancel", CommandLineBody(args, o)}});
  if (!r.ok()) {
    const StatusCode code = r.status().code();
    if (code == StatusCode::kNotFound || code == StatusCode::kInvalidArgument) return std::nullopt;
    std::fprintf(stderr, "scancel: error: %s\n", r.status().message().c_str());
    return 1;
  }
  try {
    for (const json& e : r->at("errors"))
      std::fprintf(stderr, "%s\n", e.get<std::string>().c_str());
    if (o.verbose > 0 && r->contains("targets")) {
      for (const json& t : r->at("targets")) {
        std::fprintf(stderr, "%s\n", slurm::VerboseLine(o, t.get<std::string>()).c_str());
      }
    }
    return std::max(r->at("exit_code").get<int>(), ReportResults(o, *r));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scancel: error: the controller's answer: %s\n", e.what());
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
  if (slurm::RequestSignal(o) != 0) body["signal"] = o.signal_name;
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
  return ReportResults(o, *r);
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
  } else if (std::optional<int> done = CancelOnController(client, args, o)) {
    // The controller selected the jobs from its records and cancelled them.
    return slurm::ExitStatusOf(*done);
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
