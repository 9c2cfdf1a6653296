// The agent daemon's loops (agent_internal.h): the registration, the command long-poll (each
// command to agent_actions.cc), the reporter thread (ended attempts, steps' parts, heartbeats) that
// also keeps the fence, and GET /metrics.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include "agent/agent_internal.h"
#include "agent/container_settings.h"
#include "agent/file_util.h"
#include "agent/job_usage.h"
#include "agent/launch.h"
#include "agent/named_container.h"
#include "common/prometheus_text.h"
#include "common/strings.h"

namespace berth::agent {

using nlohmann::json;

void Agent::Impl::Log(const char* fmt, const std::string& a) {
  std::fprintf(stderr, "berth agent: ");
  std::fprintf(stderr, fmt, a.c_str());
  std::fprintf(stderr, "\n");
}

std::pair<std::vector<std::string>, std::vector<std::string>> Agent::Impl::Split() const {
  std::pair<std::vector<std::string>, std::vector<std::string>> out;
  for (std::string& dir : ListJobDirs(jobs_dir)) {
    (StepDirKey::Of(dir) ? out.second : out.first).push_back(std::move(dir));
  }
  return out;
}

std::string Agent::Impl::FolderOf(uint32_t job_id, int32_t attempt) const {
  return jobs_dir + "/" + std::to_string(job_id) + "." + std::to_string(attempt);
}

int64_t Agent::Impl::SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// An attempt's result; one the agent fenced off says so.
std::optional<JobResult> Agent::Impl::ResultOf(const std::string& dir) const {
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

json Agent::Impl::NodeJson() const {
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

json Agent::Impl::ImagesJson() const {
  json out = json::array();
  if (!image_store) return out;
  Result<std::vector<image::ImageRecord>> all = image_store->List();
  if (!all.ok()) return out;
  for (const image::ImageRecord& r : *all) {
    out.push_back({{"digest", r.digest},
                   {"names", r.names},
                   {"size_bytes", r.size_bytes},
                   {"unpacked_bytes", r.unpacked_bytes},
                   {"pulled_at", r.pulled_at},
                   {"last_used", r.last_used},
                   {"in_use", image_store->InUse(r)}});
  }
  return out;
}

// What runs here, and what ended, for the registration.
json Agent::Impl::LocalJobs() {
  json jobs = json::array();
  std::map<JobKey, AfterLaunch> starting;
  {
    MutexLock<Mutex> l(launch_mu);
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
json Agent::Impl::LocalSteps() {
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
std::optional<JobResult> Agent::Impl::StepResultOf(const std::string& dir) const {
  if (SupervisorRunning(dir)) return std::nullopt;
  if (std::optional<JobResult> r = ResultOf(dir)) return r;
  JobResult lost;
  lost.state = "FAILED";
  lost.exit_code = 1;
  lost.message = "the step's supervisor died without a result";
  return lost;
}

Status Agent::Impl::Register(net::HttpClient& c, bool* standby) {
  const json images = ImagesJson();
  json body = {
      {"node", NodeJson()}, {"jobs", LocalJobs()}, {"steps", LocalSteps()}, {"images", images}};
  BERTH_ASSIGN_OR_RETURN(net::ClientResponse r,
                         c.Request("POST", "/v1/agents/register", body.dump()));
  if (!IsStandbyAnswer(r)) NoteContact();
  if (r.status == 401) return Status::FailedPrecondition("credential refused: " + r.body);
  if (r.status == 403) return Status::PermissionDenied("registration refused: " + r.body);
  if (r.status != 200) {
    if (MovedOnFromStandby(r) && standby != nullptr) *standby = true;
    return Status::Unavailable("registration refused: " + r.body);
  }
  json reply = json::parse(r.body, nullptr, false);
  if (!FromCurrentLeader(reply)) {
    return Status::Unavailable("registration answered by a deposed leader");
  }
  if (reply.is_object()) {
    heartbeat_s = reply.value("heartbeat_s", 5);
    fence_s = reply.value("fence_s", 0);
    // The configuration's ImageCacheSize, unless --image-cache-size said otherwise.
    const int64_t cache = reply.value("image_cache_bytes", int64_t{0});
    if (opt.image_cache_bytes == 0 && !containers.image_store.empty() &&
        cache != containers.cache_bytes) {
      containers.cache_bytes = cache;
      if (Status st = WriteContainerSettings(opt.state_dir, containers); !st.ok()) {
        Log("cannot keep the image cache's size: %s", st.ToString());
      }
    }
  }
  {
    MutexLock<Mutex> l(images_mu);
    images_sent = images.dump();
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

// Step parts that ended and are not reported yet, as status events; folders of steps whose job
// is over go once ended.
std::vector<std::pair<std::string, json>> Agent::Impl::StepEvents() {
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
Status Agent::Impl::Report(net::HttpClient& c) {
  json events = json::array();
  std::vector<std::string> done;
  for (const std::string& dir : JobDirs()) {
    std::optional<JobResult> r = ResultOf(dir);
    if (!r || SupervisorRunning(dir)) continue;
    events.push_back({{"kind", "ended"}, {"result", json::parse(EncodeJobResult(*r))}});
    done.push_back(dir);
  }
  // A running container's phase (its image being pulled, then started), once per change.
  std::vector<std::pair<std::string, std::string>> phases;
  for (const std::string& dir : JobDirs()) {
    Result<std::string> phase = ReadFile(dir + "/container.json");
    if (!phase.ok() || !SupervisorRunning(dir)) continue;
    Result<std::string> sent = ReadFile(dir + "/container.reported");
    std::optional<std::pair<uint32_t, int32_t>> key = JobDirKey(dir);
    json body = json::parse(*phase, nullptr, false);
    if ((sent.ok() && *sent == *phase) || !key || !body.is_object()) continue;
    events.push_back({{"kind", "container"},
                      {"job_id", key->first},
                      {"attempt", key->second},
                      {"container", std::move(body)}});
    phases.emplace_back(dir, *phase);
  }
  std::vector<std::pair<std::string, json>> step_events = StepEvents();
  for (auto& [dir, e] : step_events) events.push_back(std::move(e));
  // The image cache, when it changed since the controller last heard of it.
  const std::string images = ImagesJson().dump();
  bool images_changed = false;
  {
    MutexLock<Mutex> l(images_mu);
    images_changed = images != images_sent;
  }
  if (images_changed) {
    events.push_back({{"kind", "images"}, {"images", json::parse(images)}});
  }
  if (std::optional<json> usage = UsageEvent()) events.push_back(std::move(*usage));
  BERTH_ASSIGN_OR_RETURN(
      net::ClientResponse resp,
      c.Request("POST", "/v1/agents/" + node + "/status", json{{"events", events}}.dump()));
  if (!IsStandbyAnswer(resp)) NoteContact();
  if (resp.status == 409 || resp.status == 401) {
    return Status::FailedPrecondition("must register again");
  }
  if (resp.status != 200) {
    MovedOnFromStandby(resp);
    return Status::Unavailable("status refused: " + resp.body);
  }
  for (const std::string& dir : done) (void)RemoveJobDir(dir);
  for (const auto& [dir, phase] : phases) (void)WriteFileAtomic(dir + "/container.reported", phase);
  if (images_changed) {
    MutexLock<Mutex> l(images_mu);
    images_sent = images;
  }
  jobs_ended += done.size();
  // Named containers of jobs that have no folder here any more (docs/containers.md).
  (void)SweepNamedContainers(opt.state_dir, jobs_dir,
                             [this](const std::string& digest, const std::string& holder) {
                               if (!image_store) return;
                               image::ImageRecord r;
                               r.digest = digest;
                               image_store->Release(r, holder);
                             });
  for (const auto& [dir, e] : step_events) (void)WriteFileAtomic(dir + "/reported", "", 0644);
  return Status::Ok();
}

// The node's and each running job's usage now (job_usage.h), for kubectl top.
std::optional<json> Agent::Impl::UsageEvent() const {
  std::optional<TreeUsage> node_usage = NodeUsage();
  if (!node_usage) return std::nullopt;
  std::map<pid_t, std::pair<uint32_t, int32_t>> supervisors;
  for (const std::string& dir : JobDirs()) {
    std::optional<std::pair<uint32_t, int32_t>> key = JobDirKey(dir);
    Result<std::string> pid_text = ReadFile(dir + "/supervisor.pid");
    if (!key || !pid_text.ok() || !SupervisorRunning(dir)) continue;
    const pid_t pid = static_cast<pid_t>(std::atoi(pid_text->c_str()));
    if (pid > 0) supervisors[pid] = *key;
  }
  std::vector<pid_t> roots;
  for (const auto& [pid, key] : supervisors) roots.push_back(pid);
  json jobs = json::array();
  for (const auto& [pid, u] : ProcessTreeUsage(roots)) {
    const auto& [id, attempt] = supervisors[pid];
    jobs.push_back({{"job_id", id},
                    {"attempt", attempt},
                    {"cpu_seconds", u.cpu_seconds},
                    {"memory_bytes", u.memory_bytes}});
  }
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  json event{
      {"kind", "usage"},
      {"time_ms", now_ms},
      {"node",
       {{"cpu_seconds", node_usage->cpu_seconds}, {"memory_bytes", node_usage->memory_bytes}}},
      {"jobs", std::move(jobs)}};
  // The GPUs' use now, for the controller's node view and history (the web console's cells and
  // its "GPUs used" chart): each device NVML measured, by berth's device index.
  json gpus = json::array();
  for (const GpuSample& g : GpuSamples()) {
    if (g.utilization < 0) continue;
    json d{{"index", g.index}, {"utilization", std::lround(g.utilization * 100)}};
    if (g.memory_used_bytes >= 0) d["memory_used_bytes"] = g.memory_used_bytes;
    gpus.push_back(std::move(d));
  }
  if (!gpus.empty()) event["gpus"] = std::move(gpus);
  return event;
}

std::vector<GpuSample> Agent::Impl::GpuSamples() const {
  std::vector<GpuSample> out;
  if (!nvml) return out;
  for (const GpuDevice& g : detected.gpus) {
    GpuSample sample;
    sample.index = g.index;
    sample.type = g.type;
    if (g.nvml_index >= 0) {
      if (Result<int32_t> util = nvml->Utilization(g.nvml_index); util.ok()) {
        sample.utilization = *util / 100.0;
      }
      if (Result<std::pair<int64_t, int64_t>> mem = nvml->Memory(g.nvml_index); mem.ok()) {
        sample.memory_bytes = mem->first;
        sample.memory_used_bytes = mem->second;
      }
    }
    out.push_back(std::move(sample));
  }
  return out;
}

AgentMetricsInput Agent::Impl::MetricsInput() const {
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
  in.gpus = GpuSamples();
  for (const std::string& dir : JobDirs()) {
    if (SupervisorRunning(dir)) ++in.jobs_running;
  }
  in.jobs_started = jobs_started;
  in.jobs_ended = jobs_ended;
  return in;
}

net::HttpResponse Agent::Impl::ServeMetrics(const net::HttpRequest& req) const {
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
Result<std::unique_ptr<net::HttpServer>> Agent::Impl::StartMetrics() {
  BERTH_ASSIGN_OR_RETURN(auto address, ParseListenAddress(opt.metrics_listen));
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

namespace {

ContainerSettings ContainerSettingsFor(const AgentOptions& opt) {
  ContainerSettings c;
  if (opt.containers) c.runc = FindExecutable("runc");
  c.skopeo = FindExecutable("skopeo");
  if (c.skopeo.empty()) c.skopeo = "skopeo";
  c.image_store = opt.image_store.empty() ? opt.state_dir + "/images" : opt.image_store;
  std::error_code ec;
  c.image_store = std::filesystem::absolute(c.image_store, ec).string();
  // runc's state: one folder per agent, so that two agents on one machine (tests, berth up)
  // never see each other's containers.
  c.runc_root = std::filesystem::absolute(opt.state_dir, ec).string() + "/runc";
  c.registry_ca_dir = opt.registry_ca_dir;
  c.insecure_registries = opt.insecure_registries;
  c.cache_bytes = opt.image_cache_bytes;
  return c;
}

}  // namespace

Agent::Agent(AgentOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(options);
  impl_->jobs_dir = impl_->opt.state_dir + "/jobs";
  std::vector<std::string> controllers = SplitList(impl_->opt.controller);
  if (controllers.empty()) controllers.push_back(impl_->opt.controller);
  impl_->opt.controller = controllers.front();
  impl_->choice = std::make_unique<ControllerChoice>(std::move(controllers));
}

Agent::~Agent() = default;

Status Agent::Impl::Prepare() {
  mkdir(opt.state_dir.c_str(), 0755);
  mkdir(jobs_dir.c_str(), 0755);
  if (Tls()) {
    if (opt.ca_file.empty()) {
      return Status::InvalidArgument(
          "a tls: controller address needs the controller's CA (--ca-file)");
    }
    client_options.tls_ca_file = opt.ca_file;
  }
  BERTH_ASSIGN_OR_RETURN(detected, DetectNode());
  // Kept open to sample the GPUs' use for /metrics and every report (nvmlInit is slow).
  if (detected.nvml && !detected.gpus.empty()) {
    Result<std::unique_ptr<Nvml>> opened = Nvml::Open();
    if (opened.ok()) {
      nvml = std::move(*opened);
    } else {
      Log("GPU use not measured: %s", opened.status().message());
    }
  }
  containers = ContainerSettingsFor(opt);
  BERTH_RETURN_IF_ERROR(WriteContainerSettings(opt.state_dir, containers));
  Log("containers: %s",
      containers.runc.empty()
          ? std::string(opt.containers ? "off (runc not found)" : "off (--no-containers)")
          : containers.runc + ", images in " + containers.image_store);
  if (!containers.runc.empty()) {
    image::StoreOptions so;
    so.skopeo = containers.skopeo;
    Result<std::unique_ptr<image::Store>> store = image::Store::Open(containers.image_store, so);
    if (store.ok()) {
      image_store = std::move(*store);
    } else {
      Log("the image cache cannot be read: %s", store.status().ToString());
    }
  }
  RemoveUnstarted();
  Result<std::unique_ptr<SupervisorSpawner>> forks =
      SupervisorSpawner::Start(opt.berth_binary, jobs_dir);
  if (forks.ok()) {
    spawner = std::move(*forks);
  } else {
    Log("supervisors exec'd one by one: %s", forks.status().ToString());
  }
  StartLaunchers(8);
  node = opt.node_name.empty() ? detected.hostname : opt.node_name;
  return Status::Ok();
}

void Agent::Impl::Poll::BackOff(bool standby) {
  client.reset();
  if (standby) {
    backoff_ms = 100;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
  backoff_ms = std::min(backoff_ms * 2, 5000);
}

bool Agent::Impl::AnyEnded() const {
  const auto [job_dirs, step_dirs] = Split();  // one listing per tick
  for (const std::string& dir : job_dirs) {
    if (ReadResult(dir) && !SupervisorRunning(dir)) return true;
  }
  for (const std::string& dir : step_dirs) {
    if (!SupervisorRunning(dir) && access((dir + "/reported").c_str(), F_OK) != 0) return true;
  }
  return false;
}

// The reporter: looks for ended attempts every 50 ms and reports them at once; otherwise sends a
// heartbeat every heartbeat_s. It also keeps the fence.
void Agent::Impl::ReportLoop(const std::atomic<bool>& stop) {
  std::unique_ptr<net::HttpClient> c;
  auto last = std::chrono::steady_clock::now();
  while (!stop && !loop_done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (stop || loop_done || !registered) continue;
    CheckFence();
    const bool ended = AnyEnded();
    auto now = std::chrono::steady_clock::now();
    if (!ended && now - last < std::chrono::seconds(heartbeat_s)) continue;
    last = now;
    if (!c) {
      Result<std::unique_ptr<net::HttpClient>> r = Connect(10000);
      if (!r.ok()) continue;
      c = std::move(*r);
    }
    Status st = Report(*c);
    if (st.code() == StatusCode::kFailedPrecondition) need_register = true;
    if (!st.ok()) {
      NoteFailure(st);
      c.reset();
    }
  }
}

Result<bool> Agent::Impl::ReadyToPoll(Poll& p) {
  if (Status st = EnsureCredential(); !st.ok()) {
    if (st.code() == StatusCode::kPermissionDenied) return st;
    NoteFailure(st);
    p.BackOff();
    return false;
  }
  if (!p.client) {
    // The polls wait at most a second; in an HA group a leader that went silent (cut off) must
    // not hold the agent past its fence, so the next member is tried after a few seconds.
    Result<std::unique_ptr<net::HttpClient>> r =
        Connect(choice->size() > 1 ? 5000 : opt.poll_wait_ms + 10000);
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kPermissionDenied) {
        Log("%s", r.status().message());  // a certificate the CA did not sign: say so, go on
      }
      p.BackOff();
      return false;
    }
    p.client = std::move(*r);
  }
  return RegisterIfNeeded(p);
}

Result<bool> Agent::Impl::RegisterIfNeeded(Poll& p) {
  if (!need_register) return true;
  bool standby = false;
  Status st = Register(*p.client, &standby);
  if (st.code() == StatusCode::kPermissionDenied) return st;
  if (st.code() == StatusCode::kFailedPrecondition) {  // the credential is not known
    BERTH_RETURN_IF_ERROR(ForgetCredential());
  }
  if (!st.ok()) {
    NoteFailure(st);
    p.BackOff(standby);
    return false;
  }
  need_register = false;
  registered = true;
  p.after = 0;
  p.backoff_ms = 100;
  return true;
}

Status Agent::Impl::PollCommands(Poll& p) {
  const int wait = std::min(opt.poll_wait_ms, 1000);  // short enough to notice `stop`
  Result<net::ClientResponse> r =
      p.client->Request("GET", "/v1/agents/" + node + "/commands?after=" + std::to_string(p.after) +
                                   "&wait_ms=" + std::to_string(wait));
  if (r.ok() && !IsStandbyAnswer(*r)) NoteContact();
  if (!r.ok() || r->status != 200) {
    if (!r.ok()) {
      NoteFailure(r.status());
      // No answer within the poll's time: in a group, ask the next member rather than wait on
      // this one again (cut off, it would be a connect timeout more); a standby names the
      // leader, be it this one still.
      NextController();
    }
    p.client.reset();
    if (r.ok() && r->status == 403) {
      return Status::PermissionDenied("the controller refuses this agent: " + r->body);
    }
    if (r.ok()) MovedOnFromStandby(*r);
    need_register = true;
    return Status::Ok();
  }
  json reply = json::parse(r->body, nullptr, false);
  if (!reply.is_object()) return Status::Ok();
  if (!FromCurrentLeader(reply)) {  // a deposed leader's commands are not run
    p.client.reset();
    need_register = true;
    return Status::Ok();
  }
  for (const json& cmd : reply.value("commands", json::array())) {
    p.after = std::max<uint64_t>(p.after, cmd.value("seq", uint64_t{0}));
    Handle(cmd);
  }
  return Status::Ok();
}

Status Agent::Impl::CommandLoop(const std::atomic<bool>& stop) {
  Poll p;
  while (!stop) {
    Result<bool> ready = ReadyToPoll(p);
    if (!ready.ok()) return ready.status();
    if (*ready) BERTH_RETURN_IF_ERROR(PollCommands(p));
  }
  return Status::Ok();
}

Status Agent::Run(const std::atomic<bool>& stop) {
  Impl& im = *impl_;
  BERTH_RETURN_IF_ERROR(im.Prepare());
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
  im.need_register = true;
  im.loop_done = false;
  std::thread reporter([&] { im.ReportLoop(stop); });
  Status result = im.CommandLoop(stop);
  im.loop_done = true;
  reporter.join();
  im.StopLaunchers();
  im.streams.StopAll();
  return result;
}

}  // namespace berth::agent
