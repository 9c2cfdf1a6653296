// scontrol: show job|node|partition|reservation|config|hostnames|hostlist, hold, uhold, release,
// requeue, update JobId=... / NodeName=... / ReservationName=..., create|delete reservation
// (Slurm 22.05's src/scontrol/). The text comes from
// src/slurm/scontrol.h; this file handles arguments and talks to the controller.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/slurm_resv.h"
#include "common/hostlist.h"
#include "common/strings.h"
#include "slurm/job_view.h"
#include "slurm/scontrol.h"

namespace berth::cli {
namespace {

using nlohmann::json;

using Options = slurm::ScontrolOptions;

// Slurm's error text for the controller's messages ("Invalid job id specified: 12" -> "Invalid
// job id specified").
std::string SlurmError(const Status& st) {
  static const char* const kSlurmTexts[] = {
      "Invalid job id specified",         "Access/permission denied",
      "Job has already finished",         "Invalid node name specified",
      "Invalid partition name specified", "Requested operation is presently disabled"};
  const std::string& m = st.message();
  for (const char* t : kSlurmTexts) {
    if (m.rfind(t, 0) == 0) return t;
  }
  return m;
}

bool Matches(std::string_view word, std::string_view command, size_t min_len) {
  if (word.size() < min_len || word.size() > command.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (ToLowerAscii(word[i]) != command[i]) return false;
  }
  return true;
}

Time Now() {
  return static_cast<Time>(std::time(nullptr));
}

// "12,13 14" -> {"12", "13", "14"}; "JobId=12" is taken as "12".
std::vector<std::string> JobList(const std::vector<std::string>& args) {
  std::vector<std::string> ids;
  for (std::string a : args) {
    size_t eq = a.find('=');
    if (eq != std::string::npos) a = a.substr(eq + 1);
    for (std::string& id : SplitNonEmpty(a)) ids.push_back(std::move(id));
  }
  return ids;
}

bool ValidJobIdText(const std::string& s) {
  if (s.empty() || !IsDigit(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsDigit(c) || c == '_'; });
}

// ---- show job

void PrintJob(const json& record, const Options& o, int32_t as_task = -1) {
  Result<slurm::JobView> v = slurm::JobViewFromJson(record, Now());
  if (!v.ok()) {
    std::fprintf(stderr, "scontrol: error: %s\n", v.status().message().c_str());
    return;
  }
  if (as_task >= 0) {  // one pending task of an array, shown from its master's record
    v->array_task_id = as_task;
    v->array_pending_tasks.clear();
  }
  std::fputs(slurm::FormatScontrolJob(*v, o.one_liner, o.details).c_str(), stdout);
}

// The listed jobs in id order, each as GET /v1/jobs/ID gives it (lists leave out how a job runs,
// which StdOut=, WorkDir= and Command= need).
std::vector<json> SortedById(Client& c, const json& list) {
  std::vector<json> jobs;
  for (const json& j : list.value("jobs", json::array())) {
    Result<json> full = c.Call("GET", "/v1/jobs/" + std::to_string(j.value("id", 0u)));
    jobs.push_back(full.ok() ? *full : j);
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const json& a, const json& b) { return a.value("id", 0u) < b.value("id", 0u); });
  return jobs;
}

int ShowJob(Client& c, const std::vector<std::string>& args, const Options& o) {
  if (args.empty()) {
    Result<json> list = c.Call("GET", "/v1/jobs?all=1");
    if (!list.ok())
      return Fail("slurm_load_jobs error", Status::Unavailable(SlurmError(list.status())));
    std::vector<json> jobs = SortedById(c, *list);
    if (jobs.empty() && !o.quiet) std::puts("No jobs in the system");
    for (const json& j : jobs) PrintJob(j, o);
    return 0;
  }
  const std::string& id = args[0];
  if (!ValidJobIdText(id)) {
    if (!o.quiet) std::fputs("scontrol_print_job error: Invalid job id specified\n", stderr);
    return 1;
  }
  size_t us = id.find('_');
  int printed = 0;
  if (us != std::string::npos) {
    // One task: its own record, or its array's record while it is still pending in it.
    Result<json> task = c.Call("GET", "/v1/jobs/" + id);
    if (task.ok()) {
      bool in_master = task->value("array_task_id", -1) < 0;
      PrintJob(*task, o, in_master ? std::atoi(id.c_str() + us + 1) : -1);
      ++printed;
    }
  } else {
    // A job, or every record of the array it is.
    Result<json> list = c.Call("GET", "/v1/jobs?all=1&array=" + id);
    Result<json> one = c.Call("GET", "/v1/jobs/" + id);
    if (!one.ok() && (!list.ok() || list->value("jobs", json::array()).empty())) {
      if (!o.quiet) {
        std::fprintf(stderr, "slurm_load_jobs error: %s\n", SlurmError(one.status()).c_str());
      }
      return 1;
    }
    std::vector<json> jobs = list.ok() ? SortedById(c, *list) : std::vector<json>{};
    if (one.ok() && std::none_of(jobs.begin(), jobs.end(), [&](const json& j) {
          return j.value("id", 0u) == one->value("id", 0u);
        })) {
      jobs.insert(jobs.begin(), *one);
    }
    for (const json& j : jobs) {
      PrintJob(j, o);
      ++printed;
    }
  }
  if (printed == 0) {
    if (!o.quiet) std::printf("Job %s not found\n", id.c_str());
    return 1;
  }
  return 0;
}

// ---- show node / partition / config / hostnames

int ShowNode(Client& c, const std::vector<std::string>& args, const Options& o) {
  Result<json> list = c.Call("GET", "/v1/nodes");
  if (!list.ok())
    return Fail("slurm_load_node error", Status::Unavailable(SlurmError(list.status())));
  const json nodes = list->value("nodes", json::array());
  if (args.empty()) {
    if (nodes.empty() && !o.quiet) std::puts("No nodes in the system");
    for (const json& n : nodes)
      std::fputs(slurm::FormatScontrolNode(n, o.one_liner).c_str(), stdout);
    return 0;
  }
  Result<std::vector<std::string>> names = hostlist::Expand(args[0]);
  if (!names.ok()) {
    std::fprintf(stderr, "scontrol: error: Invalid node name specified: %s\n", args[0].c_str());
    return 1;
  }
  int rc = 0;
  for (const std::string& name : *names) {
    auto it = std::find_if(nodes.begin(), nodes.end(),
                           [&](const json& n) { return n.value("name", "") == name; });
    if (it == nodes.end()) {
      if (!o.quiet) std::printf("Node %s not found\n", name.c_str());
      rc = 1;
      continue;
    }
    std::fputs(slurm::FormatScontrolNode(*it, o.one_liner).c_str(), stdout);
  }
  return rc;
}

int ShowPartition(Client& c, const std::vector<std::string>& args, const Options& o) {
  Result<json> parts = c.Call("GET", "/v1/partitions");
  if (!parts.ok()) {
    return Fail("slurm_load_partitions error", Status::Unavailable(SlurmError(parts.status())));
  }
  Result<json> nodes = c.Call("GET", "/v1/nodes");
  int printed = 0;
  for (json p : parts->value("partitions", json::array())) {
    if (!args.empty() && p.value("name", "") != args[0]) continue;
    // The partition's memory (for TRES=) from its nodes.
    int64_t mem = 0;
    if (nodes.ok()) {
      for (const json& n : nodes->value("nodes", json::array())) {
        json in = n.value("partitions", json::array());
        if (std::find(in.begin(), in.end(), p.value("name", "")) != in.end()) {
          mem += n.value("mem_mib", int64_t{0});
        }
      }
    }
    p["total_mem_mib"] = mem;
    std::fputs(slurm::FormatScontrolPartition(p, o.one_liner).c_str(), stdout);
    ++printed;
  }
  if (printed == 0) {
    if (args.empty()) {
      if (!o.quiet) std::puts("No partitions in the system");
      return 0;
    }
    if (!o.quiet) std::printf("Partition %s not found\n", args[0].c_str());
    return 1;
  }
  return 0;
}

int ShowConfig(Client& c) {
  Result<json> conf = c.Call("GET", "/v1/config");
  if (!conf.ok()) return Fail("slurm_load_ctl_conf error", conf.status());
  slurm::KeyValues pairs;
  for (const json& kv : conf->value("config", json::array())) {
    if (!kv.is_array() || kv.size() != 2) continue;
    pairs.emplace_back(kv[0].is_string() ? kv[0].get<std::string>() : kv[0].dump(),
                       kv[1].is_string() ? kv[1].get<std::string>() : kv[1].dump());
  }
  std::fputs(slurm::FormatScontrolConfig(pairs, Now()).c_str(), stdout);
  return 0;
}

int ShowHosts(const std::string& entity, const std::vector<std::string>& args) {
  std::string list;
  if (!args.empty()) {
    list = args[0];
  } else if (const char* env = std::getenv("SLURM_JOB_NODELIST")) {
    list = env;
  }
  if (list.empty()) {
    std::fprintf(stderr, "scontrol: error: host list is empty\n");
    return 1;
  }
  Result<std::vector<std::string>> names = hostlist::Expand(list);
  if (!names.ok()) {
    std::fprintf(stderr, "scontrol: error: Invalid hostlist: %s\n", list.c_str());
    return 1;
  }
  if (entity == "hostnames") {
    for (const std::string& n : *names) std::puts(n.c_str());
  } else if (entity == "hostlist") {
    std::puts(hostlist::Compress(*names).c_str());
  } else {
    std::puts(hostlist::CompressSorted(*names).c_str());
  }
  return 0;
}

int Show(const std::vector<std::string>& args, const Options& o) {
  if (args.empty()) {
    std::fputs("scontrol: error: too few arguments for keyword:show\n", stderr);
    return 1;
  }
  const std::string& e = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (Matches(e, "hostnames", 5)) return ShowHosts("hostnames", rest);
  if (Matches(e, "hostlistsorted", 9)) return ShowHosts("hostlistsorted", rest);
  if (Matches(e, "hostlist", 5)) return ShowHosts("hostlist", rest);
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("scontrol", c.status());
  if (Matches(e, "jobs", 1) || Matches(e, "jobid", 4)) return ShowJob(**c, rest, o);
  if (Matches(e, "nodes", 1)) return ShowNode(**c, rest, o);
  if (Matches(e, "partitions", 1)) return ShowPartition(**c, rest, o);
  if (Matches(e, "reservations", 3)) {
    return ScontrolShowReservation(**c, rest, o.one_liner, o.quiet);
  }
  if (Matches(e, "configuration", 1)) return ShowConfig(**c);
  std::fprintf(stderr, "scontrol: error: invalid entity:%s for keyword:show\n", e.c_str());
  return 1;
}

// ---- hold, release, requeue, update

int JobAction(const std::string& action, const std::vector<std::string>& args, const Options& o,
              json body) {
  std::vector<std::string> ids = JobList(args);
  if (ids.empty()) {
    std::fprintf(stderr, "scontrol: error: too few arguments for keyword:%s\n", action.c_str());
    return 1;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("scontrol", c.status());
  std::string api_action = action == "uhold" ? "hold" : action;
  int rc = 0;
  for (const std::string& id : ids) {
    Status st;
    if (!ValidJobIdText(id)) {
      st = Status::InvalidArgument("Invalid job id specified");
    } else {
      // The controller resolves an array task ("12_3"), splitting it off its array if need be.
      st = (*c)->Call("POST", "/v1/jobs/" + id + "/" + api_action, body).status();
    }
    if (!st.ok()) {
      if (!o.quiet) std::fprintf(stderr, "%s for job %s\n", SlurmError(st).c_str(), id.c_str());
      rc = 1;
    }
  }
  return rc;
}

int UpdateJob(const std::vector<std::string>& args, const Options& o) {
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("scontrol", c.status());
  Duration current = kInfinite;
  if (slurm::NeedsCurrentTimeLimit(args)) {
    // The job named in the arguments (Update puts JobId= first), for a relative TimeLimit.
    std::string id = args[0].substr(args[0].find('=') + 1);
    Result<json> job = (*c)->Call("GET", "/v1/jobs/" + id);
    if (job.ok()) {
      Result<slurm::JobView> v = slurm::JobViewFromJson(*job, Now());
      if (v.ok()) current = v->time_limit;
    }
  }
  Result<std::pair<std::string, json>> u = slurm::ParseJobUpdate(args, current);
  if (!u.ok()) {
    if (!o.quiet) std::fprintf(stderr, "%s\n", u.status().message().c_str());
    return 1;
  }
  Status st;
  if (!ValidJobIdText(u->first)) {
    st = Status::InvalidArgument("Invalid job id specified");
  } else {
    st = (*c)->Call("PATCH", "/v1/jobs/" + u->first, u->second).status();
  }
  if (!st.ok()) {
    if (!o.quiet) std::fprintf(stderr, "%s for job %s\n", SlurmError(st).c_str(), u->first.c_str());
    return 1;
  }
  return 0;
}

int UpdateNode(const std::vector<std::string>& args, const Options& o) {
  Result<slurm::NodeUpdate> u = slurm::ParseNodeUpdate(args);
  if (!u.ok()) {
    if (!o.quiet) std::fprintf(stderr, "%s\n", u.status().message().c_str());
    return 1;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("scontrol", c.status());
  int rc = 0;
  for (const std::string& node : u->nodes) {
    Status st =
        (*c)->Call("POST", "/v1/nodes/" + node + "/" + u->action, json{{"reason", u->reason}})
            .status();
    if (!st.ok()) {
      if (!o.quiet) std::fprintf(stderr, "slurm_update error: %s\n", SlurmError(st).c_str());
      rc = 1;
    }
  }
  return rc;
}

// "ReservationName" and its abbreviations down to "res" (as Slurm's scontrol matches keys).
bool IsReservationKey(const std::string& key) {
  return key.size() >= 3 && std::string_view("reservationname").substr(0, key.size()) == key;
}

int Update(const std::vector<std::string>& args, const Options& o) {
  if (args.empty()) {
    std::fputs("scontrol: error: too few arguments for keyword:update\n", stderr);
    return 1;
  }
  // A job's own "Reservation=" is one of its fields: JobId decides before ReservationName.
  bool job = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return ToLower(a.substr(0, a.find('='))) == "jobid";
  });
  for (const std::string& a : args) {
    std::string key = ToLower(a.substr(0, a.find('=')));
    if (key == "nodename") return UpdateNode(args, o);
    if (!job && IsReservationKey(key)) return ScontrolUpdateReservation(args, o.quiet);
    if (key == "jobid") {
      // JobId first, so that a relative TimeLimit finds the job.
      std::vector<std::string> ordered = {a};
      for (const std::string& other : args) {
        if (&other != &a) ordered.push_back(other);
      }
      return UpdateJob(ordered, o);
    }
  }
  std::fputs("No job identification provided\n", stderr);
  return 1;
}

// ---- create, delete: reservations (cli/slurm_resv.h)

int Create(const std::vector<std::string>& args, const Options& o) {
  if (args.empty()) {
    std::fputs("scontrol: error: too few arguments for keyword:create\n", stderr);
    return 1;
  }
  const std::string first = ToLower(args[0]);
  if (first.find('=') == std::string::npos) {
    if (!Matches(first, "reservation", 3)) {
      std::fprintf(stderr, "scontrol: error: invalid entity:%s for keyword:create\n",
                   args[0].c_str());
      return 1;
    }
    return ScontrolCreateReservation({args.begin() + 1, args.end()}, o.quiet);
  }
  return ScontrolCreateReservation(args, o.quiet);
}

int Run(const std::vector<std::string>& words, const Options& o) {
  const std::string& cmd = words[0];
  std::vector<std::string> args(words.begin() + 1, words.end());
  if (Matches(cmd, "show", 3) || Matches(cmd, "list", 4)) return Show(args, o);
  if (Matches(cmd, "update", 1)) return Update(args, o);
  if (Matches(cmd, "create", 2)) return Create(args, o);
  if (Matches(cmd, "delete", 3)) return ScontrolDeleteReservation(args, o.quiet);
  if (Matches(cmd, "uhold", 2)) return JobAction("uhold", args, o, json{{"admin", false}});
  if (Matches(cmd, "hold", 2)) return JobAction("hold", args, o, json{{"admin", getuid() == 0}});
  if (Matches(cmd, "release", 3)) return JobAction("release", args, o, json::object());
  if (Matches(cmd, "requeue", 3)) return JobAction("requeue", args, o, json::object());
  if (Matches(cmd, "help", 2)) {
    std::fputs(slurm::ScontrolUsage().c_str(), stdout);
    return 0;
  }
  if (Matches(cmd, "version", 4)) {
    std::fputs(slurm::ScontrolVersion().c_str(), stdout);
    return 0;
  }
  std::fprintf(stderr, "invalid keyword: %s\n", cmd.c_str());
  return 1;
}

}  // namespace

int ScontrolMain(int argc, char** argv) {
  slurm::ScontrolParse parsed =
      slurm::ParseScontrolArgs(std::vector<std::string>(argv, argv + argc));
  if (parsed.done) return PrintParseExit(parsed);
  return Run(parsed.words, parsed.options);
}

}  // namespace berth::cli
