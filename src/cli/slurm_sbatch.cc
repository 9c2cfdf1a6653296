// sbatch: reads the job as Slurm 22.05's sbatch does (src/slurm/sbatch_job.h) and submits it to
// the controller (POST /v1/jobs); --test-only asks when it would start, --wait follows it to its
// end.
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "api/job_json.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "common/hostlist.h"
#include "core/model/job_state.h"
#include "slurm/sbatch_job.h"

extern char** environ;

namespace berth::cli {
namespace {

using nlohmann::json;

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Result<std::string> ReadStdin() {
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = read(0, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::InvalidArgument(std::string("reading the script from stdin: ") +
                                     std::strerror(errno));
    }
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
  }
}

slurm::SbatchInputs Inputs(int argc, char** argv) {
  slurm::SbatchInputs in;
  std::string self = argv[0];
  in.prog = self.substr(self.rfind('/') + 1);
  if (in.prog != "sbatch") in.prog = "sbatch";
  in.args.assign(argv + 1, argv + argc);
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) in.env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  in.cwd = CurrentDir();
  in.host = ShortHostName();
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, 0);
  in.nice = errno == 0 ? nice : 0;
  in.now = std::time(nullptr);
  in.zone = config::HostTimeZone();
  in.read_file = ReadFile;
  in.read_stdin = ReadStdin;
  return in;
}

// Slurm's error exit status can be changed with SLURM_EXIT_ERROR; option errors stay 255.
int ErrorExit(int code) {
  const char* v = std::getenv("SLURM_EXIT_ERROR");
  if (code != 1 || v == nullptr) return code;
  int n = std::atoi(v);
  return n != 0 ? n : code;
}

std::string LocalTime(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm local;
  char buf[64] = "Unknown";
  if (localtime_r(&tt, &local) != nullptr)
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &local);
  return buf;
}

int SubmitFailed(const std::string& prog, const Status& st) {
  std::string why = st.message();
  // Slurm names the partition on a line of its own, then gives the error's general text.
  if (why.rfind("invalid partition specified: ", 0) == 0) {
    std::fprintf(stderr, "%s: error: %s\n", prog.c_str(), why.c_str());
    why = "Invalid partition name specified";
  }
  std::fprintf(stderr, "%s: error: Batch job submission failed: %s\n", prog.c_str(), why.c_str());
  return ErrorExit(1);
}

// -M: berth runs one cluster; its own name is accepted.
int CheckCluster(Client& c, const std::string& prog, const std::string& clusters) {
  Result<json> r = c.Call("GET", "/v1/config");
  if (!r.ok()) return 0;  // an older controller: nothing to check against
  std::string name;
  for (const json& kv : r->value("config", json::array())) {
    if (kv.is_array() && kv.size() == 2 && kv[0] == "ClusterName" && kv[1].is_string())
      name = kv[1].get<std::string>();
  }
  if (name.empty() || clusters == name) return 0;
  std::fprintf(stderr,
               "%s: error: '%s' can't be reached now, or it is an invalid entry for --cluster.  "
               "Use 'sacctmgr list clusters' to see available clusters.\n",
               prog.c_str(), clusters.c_str());
  return ErrorExit(1);
}

int TestOnly(Client& c, const std::string& prog, const json& body) {
  Result<json> r = c.Call("POST", "/v1/jobs?test_only=1", body);
  if (!r.ok()) {
    std::fprintf(stderr, "allocation failure: %s\n", r.status().message().c_str());
    return ErrorExit(1);
  }
  std::vector<std::string> nodes;
  for (const json& n : r->value("nodes", json::array())) {
    if (n.is_string()) nodes.push_back(n.get<std::string>());
  }
  std::fprintf(stderr,
               "%s: Job %lld to start at %s using %lld processors on nodes %s in partition %s\n",
               prog.c_str(), r->value("job_id", 0LL),
               LocalTime(r->value("expected_start", int64_t{0})).c_str(), r->value("cpus", 0LL),
               hostlist::Compress(nodes).c_str(), r->value("partition", "").c_str());
  return 0;
}

// The exit status sbatch --wait gives for ended records: the highest exit code, 1 for a job
// killed by a signal or ended without running to completion.
int ExitStatusOf(const json& jobs) {
  int worst = 0;
  for (const json& j : jobs) {
    int code = j.value("exit_code", 0);
    if (j.value("term_signal", 0) != 0 || (code == 0 && j.value("state", "") != "COMPLETED")) {
      code = 1;
    }
    worst = std::max(worst, code);
  }
  return worst;
}

bool AllEnded(const json& jobs) {
  if (!jobs.is_array() || jobs.empty()) return false;
  for (const json& j : jobs) {
    std::optional<core::JobState> s = core::ParseJobState(j.value("state", ""));
    if (!s || !core::IsTerminal(*s)) return false;
  }
  return true;
}

// -W: polls until the job (every task of an array) has ended.
int WaitFor(Client& c, uint32_t id, bool array) {
  std::string target =
      array ? "/v1/jobs?all=1&array=" + std::to_string(id) : "/v1/jobs/" + std::to_string(id);
  auto delay = std::chrono::milliseconds(200);
  while (true) {
    Result<json> r = c.Call("GET", target);
    if (r.ok()) {
      json jobs = array ? r->value("jobs", json::array()) : json::array({*r});
      if (AllEnded(jobs)) return ExitStatusOf(jobs);
    } else if (r.status().code() != StatusCode::kNotFound &&
               r.status().code() != StatusCode::kUnavailable) {
      return Fail("sbatch", r.status());
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(2000));
  }
}

int Submit(const std::string& prog, const slurm::SbatchRequest& req) {
  json body = api::EncodeJob(req.spec, &req.exec);
  if (!req.script_args.empty()) body["script_args"] = req.script_args;
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return SubmitFailed(prog, c.status());
  if (!req.clusters.empty()) {
    if (int rc = CheckCluster(**c, prog, req.clusters)) return rc;
  }
  if (req.test_only) return TestOnly(**c, prog, body);
  Result<json> r = (*c)->Call("POST", "/v1/jobs", body);
  if (!r.ok()) return SubmitFailed(prog, r.status());
  uint32_t id = r->value("job_id", 0u);
  if (id == 0 && r->contains("job_ids") && !r->at("job_ids").empty())
    id = r->at("job_ids").at(0).get<uint32_t>();
  if (req.parsable) {
    std::printf("%u%s\n", id, req.clusters.empty() ? "" : (";" + req.clusters).c_str());
  } else {
    std::printf("Submitted batch job %u\n", id);
  }
  std::fflush(stdout);
  if (!req.wait) return 0;
  return WaitFor(**c, id, !req.spec.array.empty());
}

}  // namespace

int SbatchMain(int argc, char** argv) {
  slurm::SbatchInputs in = Inputs(argc, argv);
  slurm::SbatchOutcome out = slurm::ParseSbatch(in);
  if (auto* info = std::get_if<slurm::SbatchInfo>(&out)) {
    std::fputs(info->text.c_str(), stdout);
    return 0;
  }
  if (auto* f = std::get_if<slurm::SbatchFailure>(&out)) {
    std::fputs(f->text.c_str(), stderr);
    return ErrorExit(f->exit_code);
  }
  const slurm::SbatchRequest& req = std::get<slurm::SbatchRequest>(out);
  std::fputs(req.warnings.c_str(), stderr);
  if (req.verbose > 0) {
    for (const std::string& o : req.ignored) {
      std::fprintf(stderr, "%s: berth ignores %s\n", in.prog.c_str(), o.c_str());
    }
  }
  return Submit(in.prog, req);
}

}  // namespace berth::cli
