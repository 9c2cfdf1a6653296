// berth's own client commands (the Slurm-named ones come with the Slurm face): submit, jobs,
// job, cancel, nodes, drain, resume.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api/job_json.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "common/hostlist.h"
#include "common/slurm_time.h"
#include "config/job_options.h"
#include "slurm/job_view.h"
#include "slurm/sbatch_job.h"

extern char** environ;

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr const char* kSubmitUsage = R"(Usage: berth submit [options] SCRIPT [ARGS...]
       berth submit [options] --wrap 'COMMAND'

Submits a job. Options are sbatch's long names (--nodes=2, --gpus-per-node=8, --time=1:00:00,
--mem=16G, --array=0-7%2, --dependency=afterok:12, ...), plus --output, --error, --input,
--chdir, --export=ALL|NONE|VAR[=value],..., --signal, --comment, --open-mode, --json FILE
(submit the native JSON form, docs/formats/job-json.md). Prints the job id.
)";

bool IsFlag(std::string_view name) {
  return name == "hold" || name == "requeue" || name == "no-requeue" || name == "parsable" ||
         name == "oversubscribe";
}

// The calling process's environment, for --export.
slurm::EnvironmentList CallerEnvironment() {
  slurm::EnvironmentList env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

// --export with sbatch's rules (ALL, NONE, NAME, NAME=value; SLURM_* always pass).
Status ApplyExport(const std::string& value, core::JobExecSpec& exec) {
  slurm::EnvironmentList env = slurm::ExportEnvironment(value, CallerEnvironment(), {});
  exec.environment.assign(env.begin(), env.end());
  return Status::Ok();
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The options that say how the job runs, shared with sbatch (src/slurm/sbatch_job.h).
Status ApplyExecOption(const std::string& name, const std::string& value, core::JobExecSpec& e) {
  if (name == "export") return ApplyExport(value, e);
  return slurm::ApplyExecOption(name, value, e);
}

}  // namespace

int SubmitMain(int argc, char** argv) {
  core::JobSpec spec;
  core::JobExecSpec exec;
  exec.work_dir = CurrentDir();
  (void)ApplyExport("ALL", exec);
  std::string wrap, json_file;
  bool parsable = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kSubmitUsage, stdout);
      return 0;
    }
    if (arg.rfind("--", 0) != 0) break;
    std::string name = arg.substr(2), value;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (!IsFlag(name) && name != "exclusive") {
      if (i + 1 >= argc)
        return Fail("berth submit",
                    Status::InvalidArgument("option '--" + name + "' needs a value"));
      value = argv[++i];
    }
    if (name == "wrap") {
      wrap = value;
    } else if (name == "json") {
      json_file = value;
    } else if (name == "parsable") {
      parsable = true;
    } else {
      Status st = ApplyExecOption(name, value, exec);
      if (st.code() == StatusCode::kNotFound)
        st = config::ApplyJobOption(name, value, std::time(nullptr), spec);
      if (!st.ok()) return Fail("berth submit", st);
    }
  }
  json body;
  if (!json_file.empty()) {
    Result<std::string> text = ReadFile(json_file);
    if (!text.ok()) return Fail("berth submit", text.status());
    body = json::parse(*text, nullptr, false);
    if (body.is_discarded())
      return Fail("berth submit", Status::InvalidArgument(json_file + " is not JSON"));
  } else {
    if (!wrap.empty()) {
      exec.script =
          "#!/bin/sh\n# This script was created by berth submit --wrap.\n\n" + wrap + "\n";
    } else if (i < argc) {
      Result<std::string> text = ReadFile(argv[i]);
      if (!text.ok()) return Fail("berth submit", text.status());
      exec.script = *text;
      if (spec.name.empty()) {
        std::string path = argv[i];
        spec.name = path.substr(path.rfind('/') + 1);
      }
    } else {
      return Fail("berth submit", Status::InvalidArgument("give a script, or --wrap 'COMMAND'"));
    }
    if (spec.name.empty()) spec.name = "wrap";
    body = api::EncodeJob(spec, &exec);
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("berth submit", c.status());
  Result<json> r = (*c)->Call("POST", "/v1/jobs", body);
  if (!r.ok()) return Fail("berth submit", r.status());
  for (const json& id : r->at("job_ids")) {
    if (parsable) {
      std::printf("%u\n", id.get<uint32_t>());
    } else {
      std::printf("Submitted batch job %u\n", id.get<uint32_t>());
    }
  }
  return 0;
}

int JobsMain(int argc, char** argv) {
  bool as_json = false, all = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") {
      as_json = true;
    } else if (a == "--all" || a == "-a") {
      all = true;
    } else if (a == "-h" || a == "--help") {
      std::puts(
          "Usage: berth jobs [--all] [--json]\n\nLists the queue (--all: also jobs that "
          "ended in the last few minutes).");
      return 0;
    } else {
      return Fail("berth jobs", Status::InvalidArgument("unrecognized option '" + a + "'"));
    }
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("berth jobs", c.status());
  Result<json> r = (*c)->Call("GET", std::string("/v1/jobs") + (all ? "?all=1" : ""));
  if (!r.ok()) return Fail("berth jobs", r.status());
  if (as_json) {
    std::printf("%s\n", r->dump(2).c_str());
    return 0;
  }
  std::printf("%8s %-10s %-12s %-8s %-11s %5s %s\n", "JOBID", "PARTITION", "NAME", "USER", "STATE",
              "NODES", "NODELIST(REASON)");
  for (const json& j : r->at("jobs")) {
    const json& req = j.at("request");
    std::string id = slurm::DisplayJobId(j);
    std::string where;
    int nodes = 0;
    if (j.contains("allocation")) {
      std::vector<std::string> names;
      for (const json& n : j.at("allocation").at("nodes")) names.push_back(n.at("node"));
      nodes = static_cast<int>(names.size());
      where = hostlist::Compress(names);
    } else {
      where = "(" + j.value("reason", std::string("None")) + ")";
    }
    std::string part = j.value("partition", "");
    if (part.empty() && req.contains("partition")) part = req.at("partition").at(0);
    std::printf("%8s %-10.10s %-12.12s %-8.8s %-11s %5d %s\n", id.c_str(), part.c_str(),
                req.value("name", "").c_str(), req.value("user", "").c_str(),
                j.at("state").get<std::string>().c_str(), nodes, where.c_str());
  }
  return 0;
}

int JobMain(int argc, char** argv) {
  if (argc != 2) return Fail("berth job", Status::InvalidArgument("usage: berth job ID"));
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("berth job", c.status());
  Result<json> r = (*c)->Call("GET", std::string("/v1/jobs/") + argv[1]);
  if (!r.ok()) return Fail("berth job", r.status());
  std::printf("%s\n", r->dump(2).c_str());
  return 0;
}

int CancelMain(int argc, char** argv) {
  std::string signal;
  std::vector<std::string> ids;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--signal=", 0) == 0) {
      signal = a.substr(9);
    } else if (a == "-h" || a == "--help") {
      std::puts("Usage: berth cancel [--signal=SIG] ID...");
      return 0;
    } else {
      ids.push_back(a);
    }
  }
  if (ids.empty()) return Fail("berth cancel", Status::InvalidArgument("no job id given"));
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("berth cancel", c.status());
  int rc = 0;
  for (const std::string& id : ids) {
    std::string target = "/v1/jobs/" + id + (signal.empty() ? "" : "?signal=" + signal);
    Result<json> r = (*c)->Call("DELETE", target);
    if (!r.ok()) rc = Fail("berth cancel", r.status());
  }
  return rc;
}

int NodesMain(int argc, char** argv) {
  bool as_json = argc > 1 && std::string(argv[1]) == "--json";
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("berth nodes", c.status());
  Result<json> r = (*c)->Call("GET", "/v1/nodes");
  if (!r.ok()) return Fail("berth nodes", r.status());
  if (as_json) {
    std::printf("%s\n", r->dump(2).c_str());
    return 0;
  }
  std::printf("%-16s %-12s %9s %12s %7s %s\n", "NODE", "STATE", "CPUS(A/T)", "MEM(A/T)G", "GPUS",
              "REASON");
  for (const json& n : r->at("nodes")) {
    char cpus[64], mem[64], gpus[64];
    std::snprintf(cpus, sizeof(cpus), "%d/%d", n.at("alloc_cpus").get<int>(),
                  n.at("cpus").get<int>());
    std::snprintf(mem, sizeof(mem), "%lld/%lld", n.at("alloc_mem_mib").get<long long>() / 1024,
                  n.at("mem_mib").get<long long>() / 1024);
    std::snprintf(gpus, sizeof(gpus), "%d/%zu", n.at("alloc_gpus").get<int>(), n.at("gpus").size());
    std::printf("%-16s %-12s %9s %12s %7s %s\n", n.at("name").get<std::string>().c_str(),
                n.at("state").get<std::string>().c_str(), cpus, mem, gpus,
                n.at("reason").get<std::string>().c_str());
  }
  return 0;
}

int NodeActionMain(int argc, char** argv) {
  std::string action = argv[0];
  if (argc < 2 || (action == "drain" && argc < 3)) {
    return Fail(("berth " + action).c_str(),
                Status::InvalidArgument(action == "drain" ? "usage: berth drain NODE REASON"
                                                          : "usage: berth resume NODE"));
  }
  std::string reason;
  for (int i = 2; i < argc; ++i) reason += (reason.empty() ? "" : " ") + std::string(argv[i]);
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("berth", c.status());
  Result<json> r = (*c)->Call("POST", "/v1/nodes/" + std::string(argv[1]) + "/" + action,
                              json{{"reason", reason}});
  return r.ok() ? 0 : Fail(("berth " + action).c_str(), r.status());
}

}  // namespace berth::cli
