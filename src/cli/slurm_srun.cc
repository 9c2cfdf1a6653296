// srun: inside an allocation, a job step of this node's tasks (src/slurm/srun_step.h) and,
// through the controller, of its other nodes; outside one, a new job that runs the same step,
// with its input, output and terminal carried to and from it (srun_relay.h) and Ctrl-C
// cancelling it.
// A step with pyxis's --container-image (or --container-name) runs in that container on every
// node, this one included: all of its parts start through the controller.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/job_json.h"
#include "api/step_record.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/signal_watch.h"
#include "cli/srun_relay.h"
#include "common/hostlist.h"
#include "config/job_options.h"
#include "image/container_spec.h"
#include "slurm/job_view.h"
#include "slurm/srun.h"
#include "slurm/srun_stdio.h"
#include "slurm/srun_step.h"

namespace berth::cli {
namespace {

using nlohmann::json;
using slurm::SrunOptions;

// Polling periods and bounds of the job mode.
constexpr int kTickMillis = 50;             // output copy and signal check
constexpr int kStatePollTicks = 4;          // job state every 200 ms
constexpr int kQueuedAfterTicks = 20;       // "queued and waiting" when not started within 1 s
constexpr int kAbortWaitSeconds = 32;       // after Ctrl-C, as Slurm's KillWait (30 s) + 2
constexpr int kControllerGoneSeconds = 60;  // give up when the controller stays unreachable
// Streams (srun_relay.h): how long a launcher's stream waits for its part to start; how long the
// launcher waits for the parts' last output once they ended; how long a part waits for what its
// tasks (and what they left running) still print once they ended.
constexpr int kPartArrivalMillis = 10 * 60 * 1000;
constexpr int kOutputDrainMillis = 10000;
constexpr int kPartDrainMillis = 2000;

// The file behind srun's standard output or error, where the other nodes' tasks append theirs
// (the job's output file, as Slurm's srun gathers the other nodes' output into its own); "" when
// it is not a file.
std::string FileBehind(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "";
  // From now on every writer of this open file (the batch script too, which shares it) appends:
  // otherwise its next write lands at its own offset, over what the other nodes appended.
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && !(flags & O_APPEND)) (void)fcntl(fd, F_SETFL, flags | O_APPEND);
  char buf[4096];
  ssize_t n = readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), buf, sizeof(buf) - 1);
  if (n <= 0 || buf[0] != '/') return "";
  return std::string(buf, static_cast<size_t>(n));
}

// The step's other nodes, through the controller: POST /v1/jobs/ID/steps starts a supervisor on
// each (running this same srun for that node's tasks), GET .../steps/N says which ended and how.
class ControllerNodes : public slurm::RemoteNodes {
 public:
  // `container`: the step's (its JSON object), or null for the host.
  // `streamed`: each node's part meets srun's stream for it (srun_relay.h), which carries the
  // input and, with `output_streamed`, the output (else the parts append to srun's files).
  ControllerNodes(const SrunOptions& opt, const slurm::Allocation& alloc,
                  const slurm::StepLayout& layout, uint32_t step_id, const slurm::EnvList& env,
                  std::vector<std::string> nodes, json container, bool streamed,
                  bool output_streamed)
      : opt_(opt),
        alloc_(alloc),
        layout_(layout),
        step_id_(step_id),
        env_(env),
        nodes_(std::move(nodes)),
        container_(std::move(container)),
        streamed_(streamed),
        output_streamed_(output_streamed) {}

  bool Start() override {
    Result<std::unique_ptr<Client>> c = Client::Connect();
    if (!c.ok()) {
      std::fprintf(stderr, "srun: error: cannot start the step on %s: %s\n",
                   hostlist::Compress(nodes_).c_str(), c.status().message().c_str());
      return false;
    }
    client_ = std::move(*c);
    json env = json::array();
    for (const auto& [n, v] : env_) {
      if (!slurm::NodeSpecificVariable(n)) env.push_back({n, v});
    }
    env.push_back({slurm::kStepVariable, slurm::EncodeStepLayout(layout_, step_id_)});
    if (streamed_) env.push_back({kRelayVariable, "step"});
    std::vector<std::string> argv = opt_.step_args;
    argv.push_back("--");
    argv.insert(argv.end(), opt_.command.begin(), opt_.command.end());
    std::string out, err;
    if (!output_streamed_) {
      out = FileBehind(STDOUT_FILENO);
      err = FileBehind(STDERR_FILENO);
    }
    json body = {{"step_id", step_id_},
                 {"nodes", nodes_},
                 {"argv", argv},
                 {"environment", env},
                 {"work_dir", CurrentDir()},
                 {"stdout", out.empty() ? "/dev/null" : out},
                 {"stderr", err.empty() ? "/dev/null" : err}};
    if (!container_.is_null()) body["container"] = container_;
    Result<json> r = client_->Call("POST", Path(), body);
    if (!r.ok()) {
      std::fprintf(stderr, "srun: error: Unable to create step for job %u: %s\n", alloc_.job_id,
                   r.status().message().c_str());
      return false;
    }
    if (opt_.verbose > 0) {
      std::fprintf(stderr, "srun: launching StepId=%u.%u on %s\n", alloc_.job_id, step_id_,
                   hostlist::Compress(nodes_).c_str());
    }
    return true;
  }

  void Signal(int signal) override {
    if (!client_) return;
    (void)client_->Call("POST", Path() + "/" + std::to_string(step_id_) + "/signal",
                        json{{"signal", signal}});
  }

  std::optional<std::vector<slurm::TaskEnd>> Ended() override {
    const time_t now = std::time(nullptr);
    Result<json> r = client_->Call("GET", Path() + "/" + std::to_string(step_id_));
    if (!r.ok()) {
      // The controller restarting (its agents report their steps again when they register):
      // wait for it, within bounds; a step it no longer knows of for a minute is lost.
      if (r.status().code() == StatusCode::kUnavailable) {
        Result<std::unique_ptr<Client>> c = Client::Connect();
        if (c.ok()) client_ = std::move(*c);
      }
      if (trouble_since_ == 0) trouble_since_ = now;
      if (now - trouble_since_ < kControllerGoneSeconds) return std::nullopt;
      std::fprintf(stderr, "srun: error: lost step %u.%u on %s: %s\n", alloc_.job_id, step_id_,
                   hostlist::Compress(nodes_).c_str(), r.status().message().c_str());
      return std::vector<slurm::TaskEnd>{{-1, 1 << 8}};
    }
    trouble_since_ = 0;
    const json& nodes = r->at("nodes");
    if (nodes.empty() && r->value("job_state", "") != "RUNNING") {
      // The job ended (cancelled, out of time): its steps ended with it.
      return std::vector<slurm::TaskEnd>{{-1, SIGKILL}};
    }
    std::vector<slurm::TaskEnd> ends;
    usage_.clear();
    for (const std::string& n : nodes_) {
      if (!nodes.contains(n) || !nodes[n].value("ended", false)) return std::nullopt;
      const json& e = nodes[n];
      // What its tasks used there, for the step's record (absent from an older agent).
      slurm::NodeUsage u;
      u.node = n;
      for (size_t i = 0; i < layout_.nodes.size(); ++i) {
        if (layout_.nodes[i] != n) continue;
        const std::vector<int32_t> ids = layout_.TaskIds(i);
        if (!ids.empty()) u.first_task = ids.front();
      }
      u.max_rss_kib = NumberOr(e, "max_task_rss_kib", int64_t{0});
      u.user_seconds = NumberOr(e, "user_cpu_seconds", 0.0);
      u.system_seconds = NumberOr(e, "system_cpu_seconds", 0.0);
      usage_.push_back(u);
      const int code = e.value("exit_code", 0), sig = e.value("term_signal", 0);
      const std::string state = e.value("state", "");
      if (state == "NODE_FAIL" || (state != "COMPLETED" && code == 0 && sig == 0)) {
        std::fprintf(stderr, "srun: error: %s: %s\n", n.c_str(),
                     e.value("message", std::string("the step's part failed")).c_str());
      }
      // The other node's srun exited with its tasks' code (128 + a signal for a killed task);
      // a signal that killed that srun itself stays a signal.
      int status = sig != 0 ? sig : (code & 0xff) << 8;
      if (sig == 0 && code == 0 && state != "COMPLETED") status = 1 << 8;
      ends.push_back({-1, status});
    }
    return ends;
  }

  // The other nodes' usage, once Ended() saw every part end.
  const std::vector<slurm::NodeUsage>& usage() const { return usage_; }

 private:
  template <typename T>
  static T NumberOr(const json& e, const char* key, T fallback) {
    auto it = e.find(key);
    if (it == e.end() || !it->is_number()) return fallback;
    const T v = it->get<T>();
    return v >= T{0} ? v : fallback;
  }

  // Seconds srun waits for an answer about the other nodes before it gives their part up.
  static constexpr time_t kControllerGoneSeconds = 60;
  std::string Path() const { return "/v1/jobs/" + std::to_string(alloc_.job_id) + "/steps"; }

  const SrunOptions& opt_;
  const slurm::Allocation& alloc_;
  const slurm::StepLayout& layout_;
  uint32_t step_id_;
  const slurm::EnvList& env_;
  std::vector<std::string> nodes_;
  json container_;
  bool streamed_ = false;
  bool output_streamed_ = false;
  std::unique_ptr<Client> client_;
  time_t trouble_since_ = 0;
  std::vector<slurm::NodeUsage> usage_;
};

// Records the step with the controller when its tasks start and when it ends (POST
// /v1/jobs/ID/steps/N/record), as Slurm's srun creates and completes a step in slurmctld: sacct
// shows it as JOB.N. A controller that cannot be reached costs the step nothing but its row.
class StepRecorder : public slurm::StepObserver {
 public:
  StepRecorder(const SrunOptions& opt, const slurm::Allocation& alloc,
               const slurm::StepLayout& layout, uint32_t step_id, const slurm::EnvList& env)
      : job_id_(alloc.job_id),
        node_(alloc.this_node >= 0 && static_cast<size_t>(alloc.this_node) < alloc.nodes.size()
                  ? alloc.nodes[static_cast<size_t>(alloc.this_node)]
                  : std::string()) {
    record_.id = step_id;
    for (const auto& [n, v] : env) {
      if (n == "SLURM_RESTART_COUNT") record_.attempt = std::atoi(v.c_str());
    }
    const std::string& program = opt.command.empty() ? std::string() : opt.command.front();
    record_.name = program.substr(program.rfind('/') + 1);
    record_.ntasks = layout.ntasks;
    record_.ncpus = layout.ntasks * std::max(1, layout.cpus_per_task);
    record_.nodes = hostlist::Compress(layout.nodes);
  }

  ~StepRecorder() override {
    if (starting_.joinable()) starting_.join();
  }

  // The start is sent beside the step, so that srun's loop (signals, output, input) never waits
  // on the controller; the end once the start is through. The thread starts with srun's signals
  // blocked (RunLocalStep blocked them first), so it takes none of them.
  void Started() override {
    record_.state = "RUNNING";
    record_.start = std::time(nullptr);
    starting_ = std::thread([this, body = api::EncodeStepRecord(record_)] { Send(body); });
  }
  void Ended(const std::vector<slurm::TaskUsage>& local, const std::vector<slurm::TaskEnd>& ends,
             bool ending_signal_passed) override {
    if (starting_.joinable()) starting_.join();
    slurm::FinishStepRecord(
        local, ends, ending_signal_passed, node_, std::time(nullptr), &record_,
        remote_ != nullptr ? remote_->usage() : std::vector<slurm::NodeUsage>{});
    Send(api::EncodeStepRecord(record_));
  }

  // The step's other nodes, whose usage joins the record.
  void set_remote(const ControllerNodes* remote) { remote_ = remote; }

 private:
  // One call at a time: the end waits for the start's thread.
  void Send(const json& body) {
    if (!client_) {
      Result<std::unique_ptr<Client>> c = Client::Connect();
      if (!c.ok()) return Warn(c.status());
      client_ = std::move(*c);
    }
    Result<json> r = client_->Call(
        "POST",
        "/v1/jobs/" + std::to_string(job_id_) + "/steps/" + std::to_string(record_.id) + "/record",
        body);
    if (!r.ok()) Warn(r.status());
  }
  void Warn(const Status& st) {
    if (warned_) return;
    warned_ = true;
    std::fprintf(stderr, "srun: warning: step %u.%u is not in the accounting (sacct): %s\n",
                 job_id_, record_.id, st.message().c_str());
  }

  uint32_t job_id_;
  std::string node_;
  api::StepRecord record_;
  const ControllerNodes* remote_ = nullptr;
  std::unique_ptr<Client> client_;
  bool warned_ = false;
  std::thread starting_;
};

// The srun that launched this step is waiting on its stream (srun_relay.h): this srun's output
// and error go to it, its input and --pty's window size come from it. Null when it cannot be
// reached: then the tasks read /dev/null (with a warning), and *fatal says whether the step
// cannot go on without it (--pty).
std::unique_ptr<PartStream> ConnectPart(const SrunOptions& opt, uint32_t job_id,
                                        const std::string& step_key, const std::string& node,
                                        slurm::LocalStep& step, bool* fatal) {
  *fatal = false;
  Result<std::unique_ptr<PartStream>> part = PartStream::Connect(job_id, step_key, node, opt.pty);
  if (part.ok()) {
    const PartIo io = (*part)->io();
    step.input_fd = io.input_fd;
    step.window = io.window;
    step.window_now = io.window_now;
    return std::move(*part);
  }
  if (opt.pty) {
    std::fprintf(stderr, "srun: error: --pty: cannot reach the srun that launched step %u.%s: %s\n",
                 job_id, step_key.c_str(), part.status().message().c_str());
    *fatal = true;
    return nullptr;
  }
  std::fprintf(stderr,
               "srun: warning: cannot reach the srun that launched step %u.%s (%s): the tasks "
               "read /dev/null\n",
               job_id, step_key.c_str(), part.status().message().c_str());
  step.input_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  return nullptr;
}

// On one of a step's other nodes: this node's tasks of the step the batch node's srun laid out.
int RunStepPart(const SrunOptions& opt, const slurm::Allocation& alloc, const slurm::EnvList& env,
                const std::string& layout_text, const std::string& relay) {
  Result<std::pair<slurm::StepLayout, uint32_t>> layout = slurm::DecodeStepLayout(layout_text);
  if (!layout.ok()) {
    std::fprintf(stderr, "%s\n", layout.status().message().c_str());
    return 1;
  }
  const slurm::StepLayout& l = layout->first;
  const size_t local = slurm::SplitStep(l, alloc).local;
  if (local == l.nodes.size()) {
    std::fprintf(stderr, "srun: error: this node (%d) is not in the step\n", alloc.this_node);
    return 1;
  }
  slurm::EnvList base;
  for (const auto& [n, v] : env) {
    if (n != slurm::kStepVariable) base.emplace_back(n, v);
  }
  slurm::LocalStep step{opt, alloc, l, local, layout->second, base};
  step.part_of_remote_step = true;
  std::unique_ptr<PartStream> part;
  if (relay == "step") {
    bool fatal = false;
    part = ConnectPart(opt, alloc.job_id, std::to_string(layout->second), l.nodes[local], step,
                       &fatal);
    if (fatal) return 1;
  }
  const int rc = slurm::RunLocalStep(step);
  if (part) part->Finish(kPartDrainMillis);
  return rc;
}

// Where a step's tasks read srun's input: on this node, on the others.
struct InputReaders {
  bool local = false;
  bool remote = false;
};
InputReaders WhoReadsInput(const SrunOptions& opt, const slurm::StepLayout& layout,
                           const std::vector<std::string>& others) {
  const slurm::InputMode in = slurm::ParseInputMode(opt.input, layout.ntasks);
  InputReaders r;
  for (size_t n = 0; n < layout.nodes.size(); ++n) {
    const std::vector<int32_t> ids = layout.TaskIds(n);
    auto has = [&ids](int32_t task) {
      return std::find(ids.begin(), ids.end(), task) != ids.end();
    };
    const bool reads = opt.pty ? has(0)
                               : (in.kind == slurm::InputMode::Kind::kAll && !ids.empty()) ||
                                     (in.kind == slurm::InputMode::Kind::kTask && has(in.task));
    if (!reads) continue;
    const bool remote = std::find(others.begin(), others.end(), layout.nodes[n]) != others.end();
    (remote ? r.remote : r.local) = true;
  }
  return r;
}

int RunInAllocation(const SrunOptions& opt, const slurm::Allocation& alloc,
                    const slurm::EnvList& srun_env) {
  std::string relay;
  slurm::EnvList env;
  for (const auto& [n, v] : srun_env) {
    if (n == kRelayVariable) {
      relay = v;
    } else {
      env.emplace_back(n, v);
    }
  }
  for (const auto& [n, v] : env) {
    if (n == slurm::kStepVariable) return RunStepPart(opt, alloc, env, v, relay);
  }
  Result<std::optional<image::ContainerSpec>> container =
      slurm::StepContainer(opt, env, CurrentDir(), /*new_job=*/false);
  if (!container.ok()) {
    std::fprintf(stderr, "srun: error: %s\n", container.status().message().c_str());
    return 1;
  }
  if (opt.pty && container->has_value()) {
    std::fprintf(stderr,
                 "srun: error: --pty with a container is not supported by berth yet (a "
                 "container's tasks start through the controller, which forwards no terminal)\n");
    return 1;
  }
  Result<slurm::StepLayout> layout = slurm::PlanStep(opt, alloc);
  if (!layout.ok()) {
    std::fprintf(stderr, "%s\n", layout.status().message().c_str());
    return 1;
  }
  // In a container every part of the step, this node's too, starts through the controller:
  // srun here only drives it.
  const slurm::StepSplit split = slurm::SplitStep(*layout, alloc, container->has_value());
  slurm::LocalStep step{opt, alloc, *layout, split.local, slurm::NextStepId(alloc), env};
  StepRecorder recorder(opt, alloc, *layout, step.step_id, env);
  step.observer = &recorder;
  // The srun inside a job an srun outside an allocation created: that srun has the caller's
  // input, output and terminal.
  std::unique_ptr<PartStream> part;
  if (relay == "batch") {
    bool fatal = false;
    part = ConnectPart(opt, alloc.job_id, "batch", "", step, &fatal);
    if (fatal) return 1;
  }
  std::optional<ControllerNodes> remote;
  std::unique_ptr<LauncherStreams> streams;
  if (!split.others.empty()) {
    // The other nodes' tasks read srun's input and print to srun's output through a stream each
    // (srun_relay.h), as Slurm's tasks do through srun's connections; output that goes to a file
    // srun has open they append to themselves (a filesystem the nodes share).
    const InputReaders readers = WhoReadsInput(opt, *layout, split.others);
    const bool forward = readers.remote && !slurm::IsDevNull(step.input_fd);
    const bool output_streamed =
        FileBehind(STDOUT_FILENO).empty() || FileBehind(STDERR_FILENO).empty();
    if (forward || output_streamed) {
      std::vector<std::unique_ptr<StepStream>> opened;
      for (const std::string& node : split.others) {
        Result<std::unique_ptr<StepStream>> st = StepStream::Open(
            alloc.job_id, std::to_string(step.step_id), node, true, kPartArrivalMillis);
        if (!st.ok()) {
          std::fprintf(stderr, "srun: error: Unable to create step for job %u: %s\n", alloc.job_id,
                       st.status().message().c_str());
          return 1;
        }
        opened.push_back(std::move(*st));
      }
      LauncherStreams::Options o;
      o.forward_input = forward;
      o.input_fd = step.input_fd;
      o.pty = opt.pty && forward;  // task 0 is on another node
      o.window_now = step.window_now;
      streams = std::make_unique<LauncherStreams>(std::move(opened), std::move(o));
      if (forward) {
        // The same input for this node's tasks, or none where they read none of it.
        step.input_fd =
            readers.local ? streams->LocalInput() : open("/dev/null", O_RDONLY | O_CLOEXEC);
      }
      streams->Start();
    }
    remote.emplace(opt, alloc, *layout, step.step_id, env, split.others,
                   *container ? image::EncodeContainerSpec(**container) : json(),
                   streams != nullptr, output_streamed);
    step.remote = &*remote;
    recorder.set_remote(&*remote);
  }
  const int rc = slurm::RunLocalStep(step);
  if (streams) streams->Finish(kOutputDrainMillis);
  if (part) part->Finish(kPartDrainMillis);
  return rc;
}

// --export: ALL (the default), NONE, or a list of names and NAME=value (with ALL in it: all
// of srun's variables too).
std::vector<std::pair<std::string, std::string>> Exported(const std::string& spec,
                                                          const slurm::EnvList& env) {
  if (spec.empty() || spec == "ALL") return env;
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = spec.substr(start, comma - start);
    start = comma + 1;
    if (item == "ALL") {
      out.insert(out.begin(), env.begin(), env.end());
    } else if (size_t eq = item.find('='); eq != std::string::npos) {
      out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    } else if (!item.empty() && item != "NONE") {
      for (const auto& [n, v] : env) {
        if (n == item) out.emplace_back(n, v);
      }
    }
  }
  return out;
}

struct JobMode {
  Client& client;
  uint32_t job_id = 0;
  bool forward_input = false;  // srun's input goes to the job's tasks
  bool pty = false;
  std::unique_ptr<LauncherStreams> streams;  // to the job's srun, once the job runs
};

// The stream to the srun inside the job, which sends the tasks' output back and takes srun's
// input and terminal (srun_relay.h): opened at once, so that a job that ends before this srun
// sees it run loses nothing; used once the job runs. With --pty the caller's terminal goes into
// raw mode only then (as Slurm's srun once slurmstepd connects): until then ^C still cancels a
// job that waits for resources.
void OpenJobStream(JobMode& m) {
  Result<std::unique_ptr<StepStream>> st =
      StepStream::Open(m.job_id, "batch", "", true, kPartArrivalMillis);
  if (!st.ok()) {
    std::fprintf(stderr, "srun: error: cannot reach the tasks of job %u: %s\n", m.job_id,
                 st.status().message().c_str());
    return;
  }
  std::vector<std::unique_ptr<StepStream>> one;
  one.push_back(std::move(*st));
  LauncherStreams::Options o;
  o.forward_input = m.forward_input;
  o.pty = m.pty;
  m.streams = std::make_unique<LauncherStreams>(std::move(one), std::move(o));
}

// The job's record, or nothing while the controller does not answer.
std::optional<slurm::JobView> Poll(JobMode& m, time_t& unreachable_since) {
  Result<json> r = m.client.Call("GET", "/v1/jobs/" + std::to_string(m.job_id));
  if (!r.ok()) {
    if (unreachable_since == 0) unreachable_since = std::time(nullptr);
    return std::nullopt;
  }
  unreachable_since = 0;
  Result<slurm::JobView> v = slurm::JobViewFromJson(*r, std::time(nullptr));
  if (!v.ok()) return std::nullopt;
  return *v;
}

void Cancel(JobMode& m) {
  (void)m.client.Call("POST", "/v1/jobs/cancel", json{{"ids", {std::to_string(m.job_id)}}});
}

// What slurmstepd and srun print when a job step ends other than by itself.
void ReportEnd(const slurm::JobView& v, bool aborted) {
  const std::string node = v.batch_host.empty() ? "unknown" : v.batch_host;
  const std::string step = std::to_string(v.job_id) + ".0";
  const std::string at =
      slurm::SlurmTimeText(v.end_time != kNoTime ? v.end_time : std::time(nullptr));
  switch (v.state) {
    case core::JobState::kTimeout:
      std::fprintf(stderr,
                   "slurmstepd: error: *** STEP %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***\n",
                   step.c_str(), node.c_str(), at.c_str());
      break;
    case core::JobState::kCancelled:
      if (!aborted) {
        std::fprintf(stderr, "slurmstepd: error: *** STEP %s ON %s CANCELLED AT %s ***\n",
                     step.c_str(), node.c_str(), at.c_str());
      }
      break;
    case core::JobState::kOutOfMemory:
      std::fprintf(stderr,
                   "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=%s. Some of your "
                   "processes may have been killed by the cgroup out-of-memory handler.\n",
                   step.c_str());
      std::fprintf(stderr, "srun: error: %s: task 0: Out Of Memory\n", node.c_str());
      break;
    case core::JobState::kNodeFail:
      std::fprintf(stderr, "srun: error: Node failure on %s\n", node.c_str());
      break;
    default:
      if (!v.message.empty() && v.state != core::JobState::kCompleted && v.exit_code == 0 &&
          v.exit_signal == 0) {
        std::fprintf(stderr, "srun: error: %s\n", v.message.c_str());
      }
      break;
  }
}

int ExitCodeOf(const slurm::JobView& v) {
  if (v.state == core::JobState::kCompleted) return 0;
  if (v.exit_code != 0) return v.exit_code;
  if (v.exit_signal != 0) return 128 + v.exit_signal;
  return 1;
}

// Waits for the job to start, copies its output while it runs, and returns srun's exit code.
int FollowJob(JobMode& m, SignalWatch& signals) {
  bool started = false, queued_said = false, aborted = false;
  time_t unreachable_since = 0, abort_deadline = 0;
  for (int tick = 0;; ++tick) {
    const int sig = signals.Wait(kTickMillis);
    if (sig != 0 && !aborted) {
      // Which message fits depends on whether the job has started, which the last poll may not
      // have seen yet: ask before cancelling.
      if (!started) {
        std::optional<slurm::JobView> now = Poll(m, unreachable_since);
        if (now && now->state != core::JobState::kPending) started = true;
      }
      aborted = true;
      abort_deadline = std::time(nullptr) + kAbortWaitSeconds;
      Cancel(m);
      if (started) {
        std::fprintf(stderr,
                     "srun: Job step aborted: Waiting up to %d seconds for job step to finish.\n",
                     kAbortWaitSeconds);
      } else {
        std::fprintf(stderr, "srun: Job allocation %u has been revoked.\n", m.job_id);
      }
    }
    if (tick % kStatePollTicks != 0 && sig == 0) continue;
    std::optional<slurm::JobView> v = Poll(m, unreachable_since);
    if (!v) {
      if (unreachable_since != 0 &&
          std::time(nullptr) - unreachable_since > kControllerGoneSeconds) {
        std::fprintf(stderr, "srun: error: lost contact with the berth controller\n");
        return 1;
      }
      continue;
    }
    const bool running = v->state != core::JobState::kPending;
    if (!running && !queued_said && tick >= kQueuedAfterTicks && !aborted) {
      std::fprintf(stderr, "srun: job %u queued and waiting for resources\n", m.job_id);
      queued_said = true;
    }
    if (running && !started) {
      started = true;
      if (queued_said)
        std::fprintf(stderr, "srun: job %u has been allocated resources\n", m.job_id);
    }
    if (running && m.streams && !m.streams->started() && !aborted) m.streams->Start();
    if (core::IsTerminal(v->state)) {
      if (m.streams && (m.streams->started() || !v->batch_host.empty())) {
        // The output before the end (of a job that may have run and ended between two looks).
        if (!m.streams->started()) m.streams->Start();
        m.streams->Finish(kOutputDrainMillis);
      }
      ReportEnd(*v, aborted);
      return ExitCodeOf(*v);
    }
    if (aborted && std::time(nullptr) > abort_deadline) {
      std::fprintf(stderr, "srun: error: job %u did not end in %d seconds\n", m.job_id,
                   kAbortWaitSeconds);
      return 1;
    }
  }
}

// Builds the job: the allocation options, and the inner srun as its program.
Result<json> JobOf(const SrunOptions& opt, const slurm::EnvList& env) {
  core::JobSpec spec;
  core::JobExecSpec exec;
  for (const auto& [name, value] : opt.job_options) {
    if (name == "comment") {
      exec.comment = value;
      continue;
    }
    BERTH_RETURN_IF_ERROR(config::ApplyJobOption(name, value, std::time(nullptr), spec));
  }
  const std::string& program = opt.command.front();
  spec.name = opt.job_name.empty() ? program.substr(program.rfind('/') + 1) : opt.job_name;
  exec.argv = slurm::InnerSrunArgs(SelfPath(), opt);
  exec.work_dir = opt.chdir.empty() ? CurrentDir() : opt.chdir;
  exec.environment = Exported(opt.export_env, env);
  // The srun inside prints to this srun, through its stream, not to files.
  exec.environment.emplace_back(kRelayVariable, "batch");
  exec.stdout_pattern = "/dev/null";
  exec.stderr_pattern = "/dev/null";
  return api::EncodeJob(spec, &exec);
}

int RunAsJob(const SrunOptions& opt, const slurm::EnvList& env) {
  // Checked before anything is submitted; the srun inside the job makes the containerised step.
  if (Result<std::optional<image::ContainerSpec>> c =
          slurm::StepContainer(opt, env, CurrentDir(), /*new_job=*/true);
      !c.ok()) {
    std::fprintf(stderr, "srun: error: %s\n", c.status().message().c_str());
    return 1;
  }
  Result<json> body = JobOf(opt, env);
  if (!body.ok()) {
    std::fprintf(stderr, "srun: error: %s\n", body.status().message().c_str());
    return 1;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("srun", c.status());
  // From the submission on: Ctrl-C must not leave the job behind.
  SignalWatch signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT});
  Result<json> r = (*c)->Call("POST", "/v1/jobs", *body);
  if (!r.ok()) {
    std::fprintf(stderr, "srun: error: Unable to allocate resources: %s\n",
                 r.status().message().c_str());
    return 1;
  }
  // srun's input goes to the job's tasks unless --input names a file or none (Slurm's default
  // is every task); the srun inside the job decides which of its tasks read it.
  const slurm::InputMode in = slurm::ParseInputMode(opt.input, INT32_MAX);
  JobMode m{**c, r->value("job_id", 0u), false, opt.pty, nullptr};
  m.forward_input = (opt.pty || in.kind == slurm::InputMode::Kind::kAll ||
                     in.kind == slurm::InputMode::Kind::kTask) &&
                    !slurm::IsDevNull(STDIN_FILENO);
  if (opt.verbose > 0) std::fprintf(stderr, "srun: jobid %u submitted\n", m.job_id);
  OpenJobStream(m);
  return FollowJob(m, signals);
}

}  // namespace

int SrunMain(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (!args.empty()) args[0] = "srun";  // getopt's messages name the program
  slurm::SrunParse parsed = slurm::ParseSrunArgs(args);
  if (parsed.done) return PrintParseExit(parsed);
  SrunOptions& opt = parsed.options;
  if (opt.version) {
    std::printf("slurm 22.05 (berth %s)\n", BERTH_VERSION);
    return 0;
  }
  const slurm::EnvList env = EnvironmentWithPrefix("");
  // The srun a user started, without a terminal: --pty is dropped with Slurm 22.05's words (not
  // in the sruns berth itself starts for a job or another node's part, whose input is not the
  // user's: the first srun decided).
  const bool started_by_berth = std::any_of(env.begin(), env.end(), [](const auto& e) {
    return e.first == kRelayVariable || e.first == slurm::kStepVariable;
  });
  if (opt.pty && !started_by_berth && !isatty(STDIN_FILENO)) {
    std::fprintf(stderr, "srun: error: ioctl(TIOCGWINSZ): %s\n", std::strerror(ENOTTY));
    std::fprintf(stderr, "srun: error: Not using a pseudo-terminal, disregarding --pty option\n");
    opt.pty = false;
    std::erase(opt.step_args, "--pty");
  }
  Result<slurm::Allocation> alloc = slurm::AllocationFromEnv(env);
  if (alloc.ok()) return RunInAllocation(opt, *alloc, env);
  if (alloc.status().code() != StatusCode::kNotFound) {
    std::fprintf(stderr, "srun: error: %s\n", alloc.status().message().c_str());
    return 1;
  }
  return RunAsJob(opt, env);
}

}  // namespace berth::cli
