#include "agent/agent_daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <variant>

#include "agent/agent_commands.h"
#include "agent/file_util.h"
#include "agent/launch.h"
#include "agent/node_info.h"
#include "agent/node_metrics.h"
#include "agent/nvml.h"
#include "agent/supervisor.h"
#include "common/prometheus_text.h"
#include "net/http.h"

namespace berth::agent {

namespace {

using nlohmann::json;

void Log(const char* fmt, const std::string& a) {
  std::fprintf(stderr, "berth agent: ");
  std::fprintf(stderr, fmt, a.c_str());
  std::fprintf(stderr, "\n");
}

}  // namespace

struct Agent::Impl {
  AgentOptions opt;
  std::string jobs_dir;

  // The folders of job attempts (the batch step), and of job steps' parts on this node (both in
  // jobs_dir: supervisor.h StepDirKey).
  std::vector<std::string> JobDirs() const { return Split().first; }
  std::vector<std::string> StepDirs() const { return Split().second; }
  std::pair<std::vector<std::string>, std::vector<std::string>> Split() const {
    std::pair<std::vector<std::string>, std::vector<std::string>> out;
    for (std::string& dir : ListJobDirs(jobs_dir)) {
      (StepDirKey::Of(dir) ? out.second : out.first).push_back(std::move(dir));
    }
    return out;
  }
  std::string node;
  DetectedNode detected;
  int heartbeat_s = 5;
  std::atomic<bool> registered{false};
  // Talking to the controller: for a tls: address, the bearer credential of this node.
  net::ClientOptions client_options;
  std::mutex credential_mu;
  std::string credential;  // guarded by credential_mu
  // Fencing: the last time the controller answered (or was plainly not running: see
  // NoteFailure), in SteadyMs(); the fence time the controller asked for; whether the jobs were
  // fenced off since the last answer.
  std::atomic<int64_t> last_contact_ms{0};
  std::atomic<int> fence_s{0};
  std::atomic<bool> fenced{false};
  // For GET /metrics (--metrics-listen).
  std::atomic<uint64_t> jobs_started{0};
  std::atomic<uint64_t> jobs_ended{0};
  std::unique_ptr<Nvml> nvml;  // when metrics are served and NVML found GPUs

  std::string FolderOf(uint32_t job_id, int32_t attempt) const {
    return jobs_dir + "/" + std::to_string(job_id) + "." + std::to_string(attempt);
  }

  static int64_t SteadyMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  bool Tls() const { return opt.controller.starts_with("tls:"); }

  Result<std::unique_ptr<net::HttpClient>> Connect(int timeout_ms, const std::string& bearer) {
    net::ClientOptions o = client_options;
    o.timeout_ms = timeout_ms;
    o.bearer_token = bearer;
    Result<std::unique_ptr<net::HttpClient>> c = net::HttpClient::Connect(opt.controller, o);
    if (!c.ok()) NoteFailure(c.status());
    return c;
  }

  Result<std::unique_ptr<net::HttpClient>> Connect(int timeout_ms) {
    std::string bearer;
    if (Tls()) {
      std::lock_guard<std::mutex> l(credential_mu);
      bearer = credential;
    }
    return Connect(timeout_ms, bearer);
  }

  // The controller answered: the fence clock starts again.
  void NoteContact() {
    last_contact_ms = SteadyMs();
    fenced = false;
  }
  // A controller that is not running (its port refuses, its socket is gone) cannot be declaring
  // this node down: a restarted controller gives every node its node timeout afresh. Only
  // silence (timeouts, unreachable networks) counts towards the fence.
  void NoteFailure(const Status& st) {
    const std::string& m = st.message();
    if (m.find("Connection refused") != std::string::npos ||
        m.find("No such file or directory") != std::string::npos) {
      last_contact_ms = SteadyMs();
    }
  }

  std::string CredentialPath() const {
    return opt.credential_file.empty() ? opt.state_dir + "/credential" : opt.credential_file;
  }

  // For a tls: controller: the node's credential from its file, or by joining with the join
  // token (then kept in the file). PERMISSION_DENIED when the controller refuses the join token
  // or there is neither; UNAVAILABLE to try again.
  Status EnsureCredential() {
    if (!Tls()) return Status::Ok();
    {
      std::lock_guard<std::mutex> l(credential_mu);
      if (!credential.empty()) return Status::Ok();
    }
    if (Result<std::string> saved = ReadFile(CredentialPath()); saved.ok()) {
      std::string c = *saved;
      while (!c.empty() && (c.back() == '\n' || c.back() == ' ')) c.pop_back();
      if (!c.empty()) {
        std::lock_guard<std::mutex> l(credential_mu);
        credential = c;
        return Status::Ok();
      }
    }
    if (opt.join_token.empty()) {
      return Status::PermissionDenied("no credential in " + CredentialPath() +
                                      " and no join token (berth agent --join-token)");
    }
    Result<std::unique_ptr<net::HttpClient>> connected = Connect(10000, opt.join_token);
    if (!connected.ok()) {
      // A certificate the CA does not sign: say so, and try again (the CA file may be fixed).
      if (connected.status().code() == StatusCode::kPermissionDenied) {
        Log("%s", connected.status().message());
        return Status::Unavailable(connected.status().message());
      }
      return connected.status();
    }
    std::unique_ptr<net::HttpClient> c = std::move(*connected);
    BERTH_ASSIGN_OR_RETURN(net::ClientResponse r,
                           c->Request("POST", "/v1/agents/join", json{{"node", node}}.dump()));
    NoteContact();
    if (r.status == 401 || r.status == 403) {
      return Status::PermissionDenied("the controller refused the join token: " + r.body);
    }
    if (r.status != 200) return Status::Unavailable("join refused: " + r.body);
    json reply = json::parse(r.body, nullptr, false);
    if (!reply.is_object() || !reply.contains("credential") || !reply["credential"].is_string()) {
      return Status::Unavailable("join: the controller sent no credential");
    }
    std::string c2 = reply["credential"].get<std::string>();
    BERTH_RETURN_IF_ERROR(WriteFileAtomic(CredentialPath(), c2 + "\n", 0600));
    Log("joined the cluster; credential in %s", CredentialPath());
    std::lock_guard<std::mutex> l(credential_mu);
    credential = c2;
    return Status::Ok();
  }

  // The controller does not know this credential (its secret changed): join again if we can.
  Status ForgetCredential() {
    if (opt.join_token.empty()) {
      return Status::PermissionDenied("the controller refuses this node's credential (" +
                                      CredentialPath() + ") and there is no join token");
    }
    ::unlink(CredentialPath().c_str());
    std::lock_guard<std::mutex> l(credential_mu);
    credential.clear();
    return Status::Ok();
  }

  // Kills every job here at once when the controller has been silent for the fence time, so that
  // none still runs when the controller, which calls the node down at twice that, requeues it.
  void CheckFence() {
    const int f = opt.fence_s >= 0 ? opt.fence_s : fence_s.load();
    if (f <= 0 || fenced || !registered) return;
    const int64_t silent_ms = SteadyMs() - last_contact_ms;
    if (silent_ms <= int64_t{f} * 1000) return;
    fenced = true;
    const std::string why = "fenced: the node lost the controller for " +
                            std::to_string(silent_ms / 1000) + " s (fence time " +
                            std::to_string(f) + " s)";
    int n = 0;
    for (const std::string& dir : ListJobDirs(jobs_dir)) {
      if (!SupervisorRunning(dir) || ReadResult(dir)) continue;
      (void)WriteFileAtomic(dir + "/fenced", why + "\n", 0644);
      (void)SignalJob(dir, SIGKILL, false);
      ++n;
    }
    Log("%s", why + "; killed " + std::to_string(n) + " job(s)");
  }

  // An attempt's result; one the agent fenced off says so.
  std::optional<JobResult> ResultOf(const std::string& dir) const {
    std::optional<JobResult> r = ReadResult(dir);
    if (!r) return r;
    if (Result<std::string> why = ReadFile(dir + "/fenced"); why.ok()) {
      r->fenced = true;
      r->state = "NODE_FAIL";
      r->message = *why;
      while (!r->message.empty() && r->message.back() == '\n') r->message.pop_back();
    }
    return r;
  }

  json NodeJson() const {
    std::vector<std::string> gpus;
    for (const GpuDevice& g : detected.gpus) gpus.push_back(g.type);
    if (gpus.empty()) gpus.assign(static_cast<size_t>(opt.declared_gpus), opt.declared_gpu_type);
    return {{"name", node},
            {"cpus", opt.cpus > 0 ? opt.cpus : detected.cpus},
            {"mem_mib", opt.mem_mib > 0 ? opt.mem_mib : detected.mem_mib},
            {"gpus", gpus},
            {"features", opt.features},
            {"cgroups", detected.cgroups},
            {"cannot_enforce", detected.cannot_enforce}};
  }

  // What runs here, and what ended, for the registration.
  json LocalJobs() {
    json jobs = json::array();
    std::map<std::pair<uint32_t, int32_t>, AfterLaunch> starting;
    {
      std::lock_guard<std::mutex> l(launch_mu);
      starting = launching;
    }
    // Launches under way run as far as the controller is concerned: reporting them missing
    // would have it send them again, and reporting them lost would fail a healthy job.
    for (const auto& [key, after] : starting) {
      jobs.push_back({{"job_id", key.first}, {"attempt", key.second}});
    }
    for (const std::string& dir : JobDirs()) {
      // The folder's name says which attempt it holds; the spec is read only for a folder named
      // otherwise (none that this agent makes).
      std::optional<std::pair<uint32_t, int32_t>> key = JobDirKey(dir);
      if (!key) {
        Result<LaunchSpec> spec = ReadSpec(dir);
        if (!spec.ok()) continue;
        key = std::make_pair(spec->job_id, spec->attempt);
      }
      if (starting.count(*key)) continue;
      json j = {{"job_id", key->first}, {"attempt", key->second}};
      if (std::optional<JobResult> r = ResultOf(dir)) {
        j["result"] = json::parse(EncodeJobResult(*r));
      } else if (!SupervisorRunning(dir)) {
        JobResult lost;
        lost.job_id = key->first;
        lost.attempt = key->second;
        lost.state = "FAILED";
        lost.message = "the job's supervisor died without a result";
        j["result"] = json::parse(EncodeJobResult(lost));
      }
      jobs.push_back(std::move(j));
    }
    return jobs;
  }

  // The job steps of other nodes' jobs here, for the registration (and what ended, reported).
  json LocalSteps() {
    json out = json::array();
    const std::set<StepDirKey> starting = StartingSteps();
    for (const StepDirKey& k : starting) {
      out.push_back({{"job_id", k.job_id}, {"attempt", k.attempt}, {"step_id", k.step_id}});
    }
    for (const std::string& dir : StepDirs()) {
      std::optional<StepDirKey> k = StepDirKey::Of(dir);
      if (!k || starting.count(*k)) continue;
      json j = {{"job_id", k->job_id}, {"attempt", k->attempt}, {"step_id", k->step_id}};
      if (std::optional<JobResult> r = StepResultOf(dir)) {
        j["result"] = json::parse(EncodeJobResult(*r));
      }
      out.push_back(std::move(j));
    }
    return out;
  }

  // How a step's part here ended, once it has: its supervisor's result, or a failure when the
  // supervisor died without one.
  std::optional<JobResult> StepResultOf(const std::string& dir) const {
    if (SupervisorRunning(dir)) return std::nullopt;
    if (std::optional<JobResult> r = ResultOf(dir)) return r;
    JobResult lost;
    lost.state = "FAILED";
    lost.exit_code = 1;
    lost.message = "the step's supervisor died without a result";
    return lost;
  }

  Status Register(net::HttpClient& c) {
    json body = {{"node", NodeJson()}, {"jobs", LocalJobs()}, {"steps", LocalSteps()}};
    BERTH_ASSIGN_OR_RETURN(net::ClientResponse r,
                           c.Request("POST", "/v1/agents/register", body.dump()));
    NoteContact();
    if (r.status == 401) return Status::FailedPrecondition("credential refused: " + r.body);
    if (r.status == 403) return Status::PermissionDenied("registration refused: " + r.body);
    if (r.status != 200) return Status::Unavailable("registration refused: " + r.body);
    json reply = json::parse(r.body, nullptr, false);
    if (reply.is_object()) {
      heartbeat_s = reply.value("heartbeat_s", 5);
      fence_s = reply.value("fence_s", 0);
    }
    // Results sent with the registration are known to the controller now.
    for (const std::string& dir : JobDirs()) {
      if (ReadResult(dir) && RemoveJobDir(dir).ok()) ++jobs_ended;
    }
    for (const std::string& dir : StepDirs()) {
      if (StepResultOf(dir)) (void)WriteFileAtomic(dir + "/reported", "", 0644);
    }
    return Status::Ok();
  }

  // Folders of launches that never got as far as a supervisor (the agent died in between):
  // nothing ran, so they go, and the controller's reconciliation launches the job again.
  void RemoveUnstarted() {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(jobs_dir, ec)) {
      bool started = std::filesystem::exists(e.path() / "supervisor.pid", ec) ||
                     std::filesystem::exists(e.path() / "result.json", ec);
      if (e.is_directory(ec) && !started) std::filesystem::remove_all(e.path(), ec);
    }
  }

  // Launches run on a few worker threads: starting a supervisor takes milliseconds (a process
  // that sets up cgroups and the user's environment), and jobs should not start one by one.
  std::mutex launch_mu;
  std::condition_variable launch_cv;
  std::deque<std::variant<LaunchCommand, StepCommand>> launches;
  // Launches queued or under way, by (job, attempt), and what came for them meanwhile: applied
  // once the supervisor exists (a launch starts by clearing the job's folder).
  struct AfterLaunch {
    bool cancel = false;
    int64_t time_limit = 0;  // a new limit (scontrol update TimeLimit); 0 = none
  };
  std::map<std::pair<uint32_t, int32_t>, AfterLaunch> launching;
  // Steps being started, and whether their job ended meanwhile (end them once started).
  std::map<StepDirKey, bool> step_launching;
  std::set<StepDirKey> StartingSteps() {
    std::set<StepDirKey> out;
    std::lock_guard<std::mutex> l(launch_mu);
    for (const auto& [key, end] : step_launching) out.insert(key);
    return out;
  }
  bool launch_stop = false;
  std::vector<std::thread> launchers;

  void LaunchWorker() {
    while (true) {
      std::variant<LaunchCommand, StepCommand> cmd;
      {
        std::unique_lock<std::mutex> l(launch_mu);
        launch_cv.wait(l, [&] { return launch_stop || !launches.empty(); });
        if (launches.empty()) return;
        cmd = std::move(launches.front());
        launches.pop_front();
      }
      if (auto* step = std::get_if<StepCommand>(&cmd)) {
        StepDirKey k{step->target.job_id, step->target.attempt, step->step_id};
        LaunchStep(k, std::move(step->spec));
        bool end = false;
        {
          std::lock_guard<std::mutex> l(launch_mu);
          end = step_launching[k];
          step_launching.erase(k);
        }
        if (end) EndSteps(k.job_id, k.attempt);
        continue;
      }
      LaunchCommand& launch = std::get<LaunchCommand>(cmd);
      std::pair<uint32_t, int32_t> key{launch.target.job_id, launch.target.attempt};
      Launch(std::move(launch));
      AfterLaunch after;
      {
        std::lock_guard<std::mutex> l(launch_mu);
        after = launching[key];
        launching.erase(key);
      }
      if (after.time_limit > 0)
        (void)SetJobTimeLimit(FolderOf(key.first, key.second), after.time_limit);
      if (after.cancel) (void)CancelJob(FolderOf(key.first, key.second));
    }
  }

  void StartLaunchers(int n) {
    for (int i = 0; i < n; ++i) launchers.emplace_back([this] { LaunchWorker(); });
  }

  void StopLaunchers() {
    {
      std::lock_guard<std::mutex> l(launch_mu);
      launch_stop = true;
    }
    launch_cv.notify_all();
    for (std::thread& t : launchers) t.join();
  }

  void Launch(LaunchCommand cmd) {
    std::string dir = FolderOf(cmd.target.job_id, cmd.target.attempt);
    struct stat st;
    if (stat((dir + "/supervisor.pid").c_str(), &st) == 0) return;  // a repeated command
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);  // what an interrupted launch left
    AddControllerEnv(cmd.job_token, cmd.spec);
    Result<SupervisorHandle> h = StartSupervisor(opt.berth_binary, jobs_dir, cmd.spec);
    if (!h.ok()) {
      Log("cannot start a supervisor: %s", h.status().message());
      return;
    }
    ++jobs_started;
  }

  // How srun in the job reaches the controller from this host to start steps on the job's other
  // nodes: over TLS the controller's address, its CA and the job's step token (the Unix socket
  // needs none of these: the controller knows the user by the socket's peer credentials).
  void AddControllerEnv(const std::string& job_token, LaunchSpec& spec) const {
    auto has = [&](const std::string& name) {
      for (const auto& [n, v] : spec.environment) {
        if (n == name) return true;
      }
      return false;
    };
    if (Tls() && !has("BERTH_SERVER")) {
      spec.environment.emplace_back("BERTH_SERVER", "https://" + opt.controller.substr(4));
      std::error_code ec;
      std::filesystem::path ca = std::filesystem::absolute(opt.ca_file, ec);
      spec.environment.emplace_back("BERTH_CA_FILE", ec ? opt.ca_file : ca.string());
    }
    if (!job_token.empty()) spec.environment.emplace_back("BERTH_JOB_TOKEN", job_token);
  }

  std::string StepFolder(const StepDirKey& k) const { return jobs_dir + "/" + k.Name(); }

  // Starts this node's part of a job step: a supervisor (the job's user, a cgroup of the node's
  // share of the allocation, the job's output files appended) that runs `berth srun` for this
  // node's tasks. A part that cannot start gets a result that says why, so srun hears of it.
  void LaunchStep(const StepDirKey& k, LaunchSpec spec) {
    const std::string dir = StepFolder(k);
    struct stat st;
    if (stat(dir.c_str(), &st) == 0) return;  // a repeated command
    std::vector<std::string> argv = {opt.berth_binary, "srun"};
    argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
    spec.argv = std::move(argv);
    Result<SupervisorHandle> h = StartSupervisor(opt.berth_binary, jobs_dir, spec, k.Name());
    if (h.ok()) return;
    const Status failed = h.status();
    Log("cannot start a job step here: %s", failed.message());
    mkdir(dir.c_str(), 0711);
    JobResult r;
    r.job_id = k.job_id;
    r.attempt = k.attempt;
    r.state = "NODE_FAIL";
    r.exit_code = 1;
    r.message = "the step could not start on " + node + ": " + failed.message();
    if (access((dir + "/spec.json").c_str(), F_OK) != 0) {
      (void)WriteFileAtomic(dir + "/spec.json", "{}\n", 0600);
    }
    (void)WriteFileAtomic(dir + "/result.json", EncodeJobResult(r) + "\n", 0644);
  }

  // The job (this attempt) is over: its steps here end too, and their folders go once ended.
  void EndSteps(uint32_t job_id, int32_t attempt) {
    for (const std::string& dir : StepDirs()) {
      std::optional<StepDirKey> k = StepDirKey::Of(dir);
      if (!k || k->job_id != job_id || k->attempt != attempt) continue;
      if (!SupervisorRunning(dir)) {
        (void)RemoveJobDir(dir);  // ended, and its result is of no more use
        continue;
      }
      (void)WriteFileAtomic(dir + "/over", "", 0644);
      (void)CancelJob(dir);
    }
  }

  // A command from the controller (agent_commands.h); one this build cannot read is logged.
  void Handle(const json& text) {
    Result<AgentCommand> cmd = DecodeAgentCommand(text.dump());
    if (!cmd.ok()) {
      Log("%s", cmd.status().message());
      return;
    }
    std::visit([this](auto& c) { Do(c); }, *cmd);
  }

  void Do(LaunchCommand& c) {
    {
      std::lock_guard<std::mutex> l(launch_mu);
      const std::pair<uint32_t, int32_t> key{c.target.job_id, c.target.attempt};
      if (!launching.emplace(key, AfterLaunch{}).second) return;  // already queued or starting
      launches.push_back(std::move(c));
    }
    launch_cv.notify_one();
  }
  void Do(const CancelCommand& c) {
    {
      // A cancel for a launch under way is applied once the supervisor exists.
      std::lock_guard<std::mutex> l(launch_mu);
      if (auto it = launching.find({c.target.job_id, c.target.attempt}); it != launching.end()) {
        it->second.cancel = true;
        return;
      }
    }
    (void)CancelJob(FolderOf(c.target.job_id, c.target.attempt));
  }
  void Do(const SignalCommand& c) {
    (void)SignalJob(FolderOf(c.target.job_id, c.target.attempt), c.signal, c.batch_only);
  }
  void Do(const TimeLimitCommand& c) {
    {
      std::lock_guard<std::mutex> l(launch_mu);
      if (auto it = launching.find({c.target.job_id, c.target.attempt}); it != launching.end()) {
        it->second.time_limit = c.time_limit;
        return;
      }
    }
    (void)SetJobTimeLimit(FolderOf(c.target.job_id, c.target.attempt), c.time_limit);
  }
  void Do(StepCommand& c) {
    {
      std::lock_guard<std::mutex> l(launch_mu);
      const StepDirKey k{c.target.job_id, c.target.attempt, c.step_id};
      if (!step_launching.emplace(k, false).second) return;  // already queued or starting
      launches.push_back(std::move(c));
    }
    launch_cv.notify_one();
  }
  void Do(const EndStepsCommand& c) {
    {
      std::lock_guard<std::mutex> l(launch_mu);
      for (auto& [key, end] : step_launching) {
        if (key.job_id == c.target.job_id && key.attempt == c.target.attempt) end = true;
      }
    }
    EndSteps(c.target.job_id, c.target.attempt);
  }
  void Do(const StepSignalCommand& c) {
    (void)SignalJob(StepFolder({c.target.job_id, c.target.attempt, c.step_id}), c.signal, false);
  }
  void Do(const NoopCommand&) {}

  // Step parts that ended and are not reported yet, as status events; folders of steps whose job
  // is over go once ended.
  std::vector<std::pair<std::string, json>> StepEvents() {
    std::vector<std::pair<std::string, json>> out;
    const std::set<StepDirKey> starting = StartingSteps();
    for (const std::string& dir : StepDirs()) {
      std::optional<StepDirKey> k = StepDirKey::Of(dir);
      if (!k || starting.count(*k)) continue;
      std::optional<JobResult> r = StepResultOf(dir);
      if (!r) continue;
      if (access((dir + "/over").c_str(), F_OK) == 0) {
        (void)RemoveJobDir(dir);
        continue;
      }
      if (access((dir + "/reported").c_str(), F_OK) == 0) continue;
      out.emplace_back(dir, json{{"kind", "step"},
                                 {"job_id", k->job_id},
                                 {"attempt", k->attempt},
                                 {"step_id", k->step_id},
                                 {"result", json::parse(EncodeJobResult(*r))}});
    }
    return out;
  }

  // Sends the results of ended attempts (and a heartbeat); removes the folders it reported.
  Status Report(net::HttpClient& c) {
    json events = json::array();
    std::vector<std::string> done;
    for (const std::string& dir : JobDirs()) {
      std::optional<JobResult> r = ResultOf(dir);
      if (!r || SupervisorRunning(dir)) continue;
      events.push_back({{"kind", "ended"}, {"result", json::parse(EncodeJobResult(*r))}});
      done.push_back(dir);
    }
    std::vector<std::pair<std::string, json>> step_events = StepEvents();
    for (auto& [dir, e] : step_events) events.push_back(std::move(e));
    BERTH_ASSIGN_OR_RETURN(
        net::ClientResponse resp,
        c.Request("POST", "/v1/agents/" + node + "/status", json{{"events", events}}.dump()));
    NoteContact();
    if (resp.status == 409 || resp.status == 401) {
      return Status::FailedPrecondition("must register again");
    }
    if (resp.status != 200) return Status::Unavailable("status refused: " + resp.body);
    for (const std::string& dir : done) (void)RemoveJobDir(dir);
    jobs_ended += done.size();
    for (const auto& [dir, e] : step_events) (void)WriteFileAtomic(dir + "/reported", "", 0644);
    return Status::Ok();
  }

  AgentMetricsInput MetricsInput() const {
    AgentMetricsInput in;
    in.node = node;
    in.cgroups = detected.cgroups;
    in.registered = registered;
    in.cpus = opt.cpus > 0 ? opt.cpus : detected.cpus;
    if (Result<std::string> stat = ReadFile("/proc/stat"); stat.ok()) {
      Result<std::vector<std::pair<std::string, double>>> cpu =
          ParseProcStatCpu(*stat, static_cast<double>(sysconf(_SC_CLK_TCK)));
      if (cpu.ok()) in.cpu_seconds = std::move(*cpu);
    }
    if (Result<std::string> meminfo = ReadFile("/proc/meminfo"); meminfo.ok()) {
      Result<NodeMemory> memory = ParseMeminfo(*meminfo);
      if (memory.ok()) in.memory = *memory;
    }
    for (const GpuDevice& g : nvml ? detected.gpus : std::vector<GpuDevice>{}) {
      GpuSample sample;
      sample.index = g.index;
      sample.type = g.type;
      if (Result<int32_t> util = nvml->Utilization(g.index); util.ok()) {
        sample.utilization = *util / 100.0;
      }
      if (Result<std::pair<int64_t, int64_t>> mem = nvml->Memory(g.index); mem.ok()) {
        sample.memory_bytes = mem->first;
        sample.memory_used_bytes = mem->second;
      }
      in.gpus.push_back(std::move(sample));
    }
    for (const std::string& dir : JobDirs()) {
      if (SupervisorRunning(dir)) ++in.jobs_running;
    }
    in.jobs_started = jobs_started;
    in.jobs_ended = jobs_ended;
    return in;
  }

  net::HttpResponse ServeMetrics(const net::HttpRequest& req) const {
    net::HttpResponse out;
    out.content_type = "text/plain; charset=utf-8";
    if (req.path != "/metrics") {
      out.status = 404;
      out.body = "no such endpoint: " + req.path + " (GET /metrics)\n";
      return out;
    }
    if (req.method != "GET") {
      out.status = 405;
      out.headers.emplace_back("Allow", "GET");
      out.body = "only GET /metrics\n";
      return out;
    }
    Result<std::string> text = RenderAgentMetrics(MetricsInput());
    if (!text.ok()) {
      out.status = 500;
      out.body = text.status().message() + "\n";
      return out;
    }
    out.content_type = std::string(prometheus::kContentType);
    out.body = std::move(*text);
    return out;
  }

  // Listens on opt.metrics_listen and serves GET /metrics there; says where on stderr.
  Result<std::unique_ptr<net::HttpServer>> StartMetrics() {
    BERTH_ASSIGN_OR_RETURN(auto address, ParseListenAddress(opt.metrics_listen));
    if (detected.nvml && !detected.gpus.empty()) {
      Result<std::unique_ptr<Nvml>> opened = Nvml::Open();
      if (opened.ok()) {
        nvml = std::move(*opened);
      } else {
        Log("metrics without GPUs: %s", opened.status().message());
      }
    }
    auto server = std::make_unique<net::HttpServer>(
        [this](const net::HttpRequest& req) { return ServeMetrics(req); });
    Status st = server->ListenTcp(address.first, address.second);
    if (!st.ok()) return st.WithContext("--metrics-listen " + opt.metrics_listen);
    BERTH_RETURN_IF_ERROR(server->Start());
    const std::string host = address.first.find(':') != std::string::npos
                                 ? "[" + address.first + "]"
                                 : (address.first.empty() ? "0.0.0.0" : address.first);
    Log("metrics on http://%s/metrics", host + ":" + std::to_string(server->port()));
    return server;
  }
};

Agent::Agent(AgentOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(options);
  impl_->jobs_dir = impl_->opt.state_dir + "/jobs";
}

Agent::~Agent() = default;

Status Agent::Run(const std::atomic<bool>& stop) {
  Impl& im = *impl_;
  mkdir(im.opt.state_dir.c_str(), 0755);
  mkdir(im.jobs_dir.c_str(), 0755);
  if (im.Tls()) {
    if (im.opt.ca_file.empty()) {
      return Status::InvalidArgument(
          "a tls: controller address needs the controller's CA (--ca-file)");
    }
    im.client_options.tls_ca_file = im.opt.ca_file;
  }
  BERTH_ASSIGN_OR_RETURN(im.detected, DetectNode());
  im.RemoveUnstarted();
  im.StartLaunchers(8);
  im.node = im.opt.node_name.empty() ? im.detected.hostname : im.opt.node_name;
  std::unique_ptr<net::HttpServer> metrics;  // stopped when Run returns, however it does
  if (!im.opt.metrics_listen.empty()) {
    Result<std::unique_ptr<net::HttpServer>> started = im.StartMetrics();
    if (!started.ok()) {
      im.StopLaunchers();
      return started.status();
    }
    metrics = std::move(*started);
  }
  im.last_contact_ms = Impl::SteadyMs();
  std::atomic<bool>& registered = im.registered;
  std::atomic<bool> need_register{true};
  std::atomic<bool> done{false};  // stop, or a refusal that ends the agent
  // The reporter: looks for ended attempts every 50 ms and reports them at once; otherwise
  // sends a heartbeat every heartbeat_s. It also keeps the fence.
  std::thread reporter([&] {
    std::unique_ptr<net::HttpClient> c;
    auto last = std::chrono::steady_clock::now();
    while (!stop && !done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (stop || done || !registered) continue;
      im.CheckFence();
      bool ended = false;
      const auto [job_dirs, step_dirs] = im.Split();  // one listing per tick
      for (const std::string& dir : job_dirs) {
        if (ReadResult(dir) && !SupervisorRunning(dir)) ended = true;
      }
      for (const std::string& dir : step_dirs) {
        if (!SupervisorRunning(dir) && access((dir + "/reported").c_str(), F_OK) != 0) ended = true;
      }
      auto now = std::chrono::steady_clock::now();
      if (!ended && now - last < std::chrono::seconds(im.heartbeat_s)) continue;
      last = now;
      if (!c) {
        Result<std::unique_ptr<net::HttpClient>> r = im.Connect(10000);
        if (!r.ok()) continue;
        c = std::move(*r);
      }
      Status st = im.Report(*c);
      if (st.code() == StatusCode::kFailedPrecondition) need_register = true;
      if (!st.ok()) {
        im.NoteFailure(st);
        c.reset();
      }
    }
  });
  auto finish = [&](Status result) {
    done = true;
    reporter.join();
    im.StopLaunchers();
    return result;
  };
  std::unique_ptr<net::HttpClient> c;
  uint64_t after = 0;
  int backoff_ms = 100;
  auto back_off = [&] {
    c.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, 5000);
  };
  while (!stop) {
    if (Status st = im.EnsureCredential(); !st.ok()) {
      if (st.code() == StatusCode::kPermissionDenied) return finish(st);
      im.NoteFailure(st);
      back_off();
      continue;
    }
    if (!c) {
      Result<std::unique_ptr<net::HttpClient>> r = im.Connect(im.opt.poll_wait_ms + 10000);
      if (!r.ok()) {
        if (r.status().code() == StatusCode::kPermissionDenied) {
          Log("%s", r.status().message());  // a certificate the CA did not sign: say so, go on
        }
        back_off();
        continue;
      }
      c = std::move(*r);
    }
    if (need_register) {
      Status st = im.Register(*c);
      if (st.code() == StatusCode::kPermissionDenied) return finish(st);
      if (st.code() == StatusCode::kFailedPrecondition) {  // the credential is not known
        if (Status f = im.ForgetCredential(); !f.ok()) return finish(f);
      }
      if (!st.ok()) {
        im.NoteFailure(st);
        back_off();
        continue;
      }
      need_register = false;
      registered = true;
      after = 0;
      backoff_ms = 100;
    }
    int wait = std::min(im.opt.poll_wait_ms, 1000);  // short enough to notice `stop`
    Result<net::ClientResponse> r =
        c->Request("GET", "/v1/agents/" + im.node + "/commands?after=" + std::to_string(after) +
                              "&wait_ms=" + std::to_string(wait));
    if (r.ok()) im.NoteContact();
    if (!r.ok() || r->status != 200) {
      if (!r.ok()) im.NoteFailure(r.status());
      c.reset();
      if (r.ok() && r->status == 403) {
        return finish(Status::PermissionDenied("the controller refuses this agent: " + r->body));
      }
      need_register = true;
      continue;
    }
    json reply = json::parse(r->body, nullptr, false);
    if (!reply.is_object()) continue;
    for (const json& cmd : reply.value("commands", json::array())) {
      after = std::max<uint64_t>(after, cmd.value("seq", uint64_t{0}));
      im.Handle(cmd);
    }
  }
  return finish(Status::Ok());
}

}  // namespace berth::agent
