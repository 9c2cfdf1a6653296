// What the agent does with a controller command (agent_commands.h): launches of job attempts and
// of job steps' parts, on a few worker threads; cancels, signals and new time limits, held for
// a launch under way until its supervisor exists; the end of a job's steps here.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "agent/agent_internal.h"
#include "agent/file_util.h"

namespace berth::agent {

void Agent::Impl::Handle(const json& text) {
  Result<AgentCommand> cmd = DecodeAgentCommand(text.dump());
  if (!cmd.ok()) {
    Log("%s", cmd.status().message());
    return;
  }
  std::visit([this](auto& c) { Do(c); }, *cmd);
}

void Agent::Impl::Do(LaunchCommand& c) {
  {
    MutexLock<Mutex> l(launch_mu);
    const JobKey key{c.target.job_id, c.target.attempt};
    if (!launching.emplace(key, AfterLaunch{}).second) return;  // already queued or starting
    launches.push_back(std::move(c));
  }
  launch_cv.notify_one();
}

void Agent::Impl::Do(const CancelCommand& c) {
  {
    // A cancel for a launch under way is applied once the supervisor exists.
    MutexLock<Mutex> l(launch_mu);
    if (auto it = launching.find({c.target.job_id, c.target.attempt}); it != launching.end()) {
      it->second.cancel = true;
      return;
    }
  }
  (void)CancelJob(FolderOf(c.target.job_id, c.target.attempt));
}

void Agent::Impl::Do(const SignalCommand& c) {
  (void)SignalJob(FolderOf(c.target.job_id, c.target.attempt), c.signal,
                  {c.batch_only, c.full, c.step});
}

void Agent::Impl::Do(const TimeLimitCommand& c) {
  {
    MutexLock<Mutex> l(launch_mu);
    if (auto it = launching.find({c.target.job_id, c.target.attempt}); it != launching.end()) {
      it->second.time_limit = c.time_limit;
      return;
    }
  }
  (void)SetJobTimeLimit(FolderOf(c.target.job_id, c.target.attempt), c.time_limit);
}

void Agent::Impl::Do(StepCommand& c) {
  {
    MutexLock<Mutex> l(launch_mu);
    const StepDirKey k{c.target.job_id, c.target.attempt, c.step_id};
    if (!step_launching.emplace(k, false).second) return;  // already queued or starting
    launches.push_back(std::move(c));
  }
  launch_cv.notify_one();
}

void Agent::Impl::Do(const EndStepsCommand& c) {
  {
    MutexLock<Mutex> l(launch_mu);
    for (auto& [key, end] : step_launching) {
      if (key.job_id == c.target.job_id && key.attempt == c.target.attempt) end = true;
    }
  }
  EndSteps(c.target.job_id, c.target.attempt);
}

void Agent::Impl::Do(const StepSignalCommand& c) {
  // A step's part: its launcher passes the signal on to its tasks, as on the batch node.
  (void)SignalJob(StepFolder({c.target.job_id, c.target.attempt, c.step_id}), c.signal, {});
}

std::set<StepDirKey> Agent::Impl::StartingSteps() {
  std::set<StepDirKey> out;
  MutexLock<Mutex> l(launch_mu);
  for (const auto& [key, end] : step_launching) out.insert(key);
  return out;
}

// Folders of launches that never got as far as a supervisor (the agent died in between):
// nothing ran, so they go, and the controller's reconciliation launches the job again.
void Agent::Impl::RemoveUnstarted() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(jobs_dir, ec)) {
    bool started = std::filesystem::exists(e.path() / "supervisor.pid", ec) ||
                   std::filesystem::exists(e.path() / "result.json", ec);
    if (e.is_directory(ec) && !started) std::filesystem::remove_all(e.path(), ec);
  }
}

void Agent::Impl::LaunchWorker() {
  while (true) {
    std::variant<LaunchCommand, StepCommand> cmd;
    {
      UniqueLock l(launch_mu);
      launch_cv.wait(l.get(),
                     [&]() REQUIRES(launch_mu) { return launch_stop || !launches.empty(); });
      if (launches.empty()) return;
      cmd = std::move(launches.front());
      launches.pop_front();
    }
    if (auto* step = std::get_if<StepCommand>(&cmd)) {
      StepDirKey k{step->target.job_id, step->target.attempt, step->step_id};
      AddControllerEnv(step->job_token, step->spec);  // its srun talks to the launcher's
      AddGpuFacts(step->spec);
      LaunchStep(k, std::move(step->spec));
      bool end = false;
      {
        MutexLock<Mutex> l(launch_mu);
        end = step_launching[k];
        step_launching.erase(k);
      }
      if (end) EndSteps(k.job_id, k.attempt);
      continue;
    }
    LaunchCommand& launch = std::get<LaunchCommand>(cmd);
    JobKey key{launch.target.job_id, launch.target.attempt};
    Launch(std::move(launch));
    AfterLaunch after;
    {
      MutexLock<Mutex> l(launch_mu);
      after = launching[key];
      launching.erase(key);
    }
    if (after.time_limit > 0)
      (void)SetJobTimeLimit(FolderOf(key.first, key.second), after.time_limit);
    if (after.cancel) (void)CancelJob(FolderOf(key.first, key.second));
  }
}

void Agent::Impl::StartLaunchers(int n) {
  for (int i = 0; i < n; ++i) launchers.emplace_back([this] { LaunchWorker(); });
}

void Agent::Impl::StopLaunchers() {
  {
    MutexLock<Mutex> l(launch_mu);
    launch_stop = true;
  }
  launch_cv.notify_all();
  for (std::thread& t : launchers) t.join();
  launchers.clear();
  spawner.reset();
}

void Agent::Impl::Launch(LaunchCommand cmd) {
  std::string dir = FolderOf(cmd.target.job_id, cmd.target.attempt);
  struct stat st;
  if (stat((dir + "/supervisor.pid").c_str(), &st) == 0) return;  // a repeated command
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // what an interrupted launch left
  AddControllerEnv(cmd.job_token, cmd.spec);
  AddGpuFacts(cmd.spec);
  Result<SupervisorHandle> h =
      StartSupervisor(opt.berth_binary, jobs_dir, cmd.spec, "", spawner.get());
  if (!h.ok()) {
    Log("cannot start a supervisor: %s", h.status().message());
    return;
  }
  ++jobs_started;
}

// How srun in the job reaches the controller from this host to start steps on the job's other
// nodes and to record its steps: over TLS the controller's address, its CA and the job's step
// token; on this host the controller's Unix socket (the controller knows the user by the
// socket's peer credentials), whatever the job's own environment says, as slurmd's jobs always
// reach their slurmctld.
void Agent::Impl::AddControllerEnv(const std::string& job_token, LaunchSpec& spec) const {
  auto has = [&](const std::string& name) {
    for (const auto& [n, v] : spec.environment) {
      if (n == name) return true;
    }
    return false;
  };
  // Every controller of the list (an HA group's, docs/ha.md) of the first's kind, as a list.
  auto list_of = [&](std::string_view kind, const auto& as) {
    std::string out;
    for (const std::string& c : choice->addresses()) {
      if (c.starts_with(kind)) out += (out.empty() ? "" : ",") + as(c.substr(kind.size()));
    }
    return out;
  };
  if (Tls() && !has("BERTH_SERVER")) {
    spec.environment.emplace_back(
        "BERTH_SERVER", list_of("tls:", [](const std::string& a) { return "https://" + a; }));
    std::error_code ec;
    std::filesystem::path ca = std::filesystem::absolute(opt.ca_file, ec);
    spec.environment.emplace_back("BERTH_CA_FILE", ec ? opt.ca_file : ca.string());
  } else if (opt.controller.starts_with("unix:") && !has("BERTH_SERVER")) {
    std::erase_if(spec.environment, [](const auto& kv) { return kv.first == "BERTH_SOCKET"; });
    spec.environment.emplace_back("BERTH_SOCKET", list_of("unix:", [](const std::string& path) {
                                    std::error_code ec;
                                    std::filesystem::path sock =
                                        std::filesystem::absolute(path, ec);
                                    return ec ? path : sock.string();
                                  }));
  }
  if (!job_token.empty()) spec.environment.emplace_back("BERTH_JOB_TOKEN", job_token);
}

void Agent::Impl::AddGpuFacts(LaunchSpec& spec) const {
  // The configuration's UUIDs (from the controller) stand unless NVML found the device here.
  spec.gpu_uuids.resize(spec.gpu_indices.size());
  spec.gpu_nvml_indices.assign(spec.gpu_indices.size(), -1);
  for (size_t k = 0; k < spec.gpu_indices.size(); ++k) {
    int32_t i = spec.gpu_indices[k];
    if (i < 0 || static_cast<size_t>(i) >= detected.gpus.size()) continue;
    const GpuDevice& d = detected.gpus[static_cast<size_t>(i)];
    if (d.uuid.starts_with("MIG-")) spec.gpu_uuids[k] = d.uuid;
    spec.gpu_nvml_indices[k] = d.nvml_index;  // -1: NVML does not measure it
  }
  if (spec.gpu_mps) {
    spec.mps_pipe_dir = opt.mps_pipe_dir;
    spec.mps_log_dir = opt.mps_log_dir;
  }
}

// Starts this node's part of a job step: a supervisor (the job's user, a cgroup of the node's
// share of the allocation, the job's output files appended) that runs `berth srun` for this
// node's tasks. A part that cannot start gets a result that says why, so srun hears of it.
void Agent::Impl::LaunchStep(const StepDirKey& k, LaunchSpec spec) {
  const std::string dir = StepFolder(k);
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return;  // a repeated command
  std::vector<std::string> argv = {opt.berth_binary, "srun"};
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  spec.argv = std::move(argv);
  Result<SupervisorHandle> h =
      StartSupervisor(opt.berth_binary, jobs_dir, spec, k.Name(), spawner.get());
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
void Agent::Impl::EndSteps(uint32_t job_id, int32_t attempt) {
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

}  // namespace berth::agent
