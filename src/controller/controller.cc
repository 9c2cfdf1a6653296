// The controller: creation, recovery from the store, threads, and the command queue.
#include "controller/controller.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <optional>
#include <thread>

#include "api/job_json.h"
#include "common/slices.h"
#include "controller/controller_internal.h"

namespace berth::controller {

Controller::Controller() : impl_(std::make_unique<Impl>()) {}

Controller::~Controller() {
  Stop();
}

const ControllerOptions& Controller::options() const {
  return impl_->opt;
}

Status Controller::StoreFailure() const {
  return impl_->StoreFailure();
}

std::string Controller::KubernetesNotServed() const {
  return impl_->k8s ? impl_->k8s->not_served() : std::string();
}

Time Controller::Impl::Now() const {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Controller::Impl::NodeName(uint32_t index) const {
  return index < cs->num_nodes() ? cs->node(index).spec.name : "?";
}

Result<std::unique_ptr<Controller>> Controller::Create(ControllerOptions options) {
  std::unique_ptr<Controller> c(new Controller());
  Impl& im = *c->impl_;
  im.state_thread.AssertHeld();  // no other thread runs yet
  im.opt = std::move(options);
  im.own_uid = getuid();
  {
    struct passwd pw, *found = nullptr;
    char buf[4096];
    im.own_user = getpwuid_r(im.own_uid, &pw, buf, sizeof(buf), &found) == 0 && found
                      ? found->pw_name
                      : std::to_string(im.own_uid);
  }
  im.auth.Configure({im.own_uid, im.opt.operators, im.opt.munge_socket});
  im.web_sessions.Configure(
      {.code_ttl_s = 60, .idle_s = im.opt.web_session_idle_s, .max_sessions = 10000});
  if (mkdir(im.opt.state_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::InvalidArgument("cannot create state folder " + im.opt.state_dir);
  }
  BERTH_ASSIGN_OR_RETURN(im.store,
                         store::Store::Open(im.opt.store, im.opt.state_dir + "/state.db"));
  if (!im.opt.accounting_store.empty()) {
    BERTH_ASSIGN_OR_RETURN(
        im.archive, store::Archive::Open(im.opt.accounting_store, im.opt.config.cluster.name));
    // Rounds every half MinJobAge, at most every archive_interval_s.
    im.archiver = std::make_unique<Archiver>(
        im.store.get(), im.archive.get(), im.opt.min_job_age_s,
        std::clamp(im.opt.min_job_age_s / 2, 1, std::max(1, im.opt.archive_interval_s)),
        [&im] { return im.Now(); }, [&im](uint32_t id) { return im.FindRecord(id) != nullptr; });
  }
  BERTH_ASSIGN_OR_RETURN(core::ClusterState cs, core::ClusterState::Create(im.opt.config.cluster));
  cs.SetFairshareConfig(im.opt.config.scheduler.fairshare);
  im.cs.emplace(std::move(cs));
  im.scheduler = std::make_unique<core::Scheduler>(im.opt.config.scheduler);
  im.power = std::make_unique<PowerSaver>(im.opt.config.power, &im.metrics);
  BERTH_RETURN_IF_ERROR(im.Recover());
  return c;
}

Status Controller::Impl::Recover() {
  const Time now = Now();
  watch_hub.StartAt(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count()));
  BERTH_RETURN_IF_ERROR(RecoverAccounting());  // jobs refer to their accounts and QoS
  BERTH_RETURN_IF_ERROR(RecoverNodes(now));
  BERTH_RETURN_IF_ERROR(RecoverJobs(now));
  RecoverNodeAdmin(now);
  RecoverReservations();
  RecoverHistory();
  Result<std::optional<std::string>> next = store->GetMeta("next_job_id");
  if (next.ok() && next->has_value()) {
    core::JobId id = static_cast<core::JobId>(std::stoul(**next));
    if (id > cs->next_job_id()) cs->set_next_job_id(id);
  }
  {
    MutexLock<SharedMutex> l(view_mu);
    pending_view = std::make_shared<PendingMap>();
  }
  RebuildNodeView();
  return Status::Ok();
}

Status Controller::Impl::RecoverNodes(Time now) {
  // Nodes agents added at run time come back first: restored jobs may run on them.
  BERTH_RETURN_IF_ERROR(store->ScanNodes([&](const std::string& name, const std::string& record) {
    state_thread.AssertHeld();  // the scan calls back on this thread
    if (cs->FindNode(name)) return;
    try {
      nlohmann::json j = nlohmann::json::parse(record);
      core::NodeSpec n;
      n.name = name;
      n.cpus = j.at("cpus").get<int32_t>();
      n.mem_mib = j.at("mem_mib").get<int64_t>();
      n.gpus = j.at("gpus").get<std::vector<std::string>>();
      n.features = j.value("features", std::vector<std::string>{});
      (void)cs->AddNode(n, j.value("partitions", std::vector<std::string>{}), now);
    } catch (const std::exception&) {
      std::fprintf(stderr, "berth controller: skipping a bad node record for %s\n", name.c_str());
    }
  }));
  // Every node is down until its agent registers; running jobs get node_timeout_s of grace.
  for (uint32_t i = 0; i < cs->num_nodes(); ++i) {
    const core::NodeInfo& n = cs->node(i);
    if (n.health == core::NodeHealth::kUp) {
      (void)cs->SetNodeHealth(i, core::NodeHealth::kDown, "Not responding", now);
    }
    agents.Expect(n.spec.name, now);
  }
  return Status::Ok();
}

namespace {

// A stored row decoded: its record and, for a pending or running job, the core's copy of the
// job (made where the row is decoded: the restart's own thread has the rest to do).
struct DecodedRow {
  Status status;
  std::shared_ptr<JobRecord> record;
  std::optional<core::Job> job;
};

// Decodes `rows` into `out` (same order) on up to `caches.size()` threads, each with its own
// cache of run specifications (caches[k] for the k-th slice of every batch: jobs submitted
// together share a specification and sit next to each other in the store).
void DecodeRows(const std::vector<store::JobRow>& rows, std::vector<ExecCache>& caches,
                std::vector<DecodedRow>& out) {
  out.clear();
  out.resize(rows.size());
  ForEachSlice(rows.size(), std::max<size_t>(1, std::min(caches.size(), rows.size())),
               [&](size_t k, size_t begin, size_t end) {
                 for (size_t i = begin; i < end; ++i) {
                   Result<JobRecord> r = DecodeJobRow(rows[i], &caches[k]);
                   DecodedRow& d = out[i];
                   if (!r.ok()) {
                     d.status = r.status();
                     continue;
                   }
                   d.record = std::make_shared<JobRecord>(std::move(*r));
                   if (rows[i].active) d.job = d.record->job;
                 }
               });
}

}  // namespace

Status Controller::Impl::RecoverJobs(Time now) {
  const auto began = std::chrono::steady_clock::now();
  size_t rows_read = 0;
  size_t restored = 0;
  std::chrono::steady_clock::duration applying_time{};
  // What was loaded is as of the event before the first of this start.
  const uint64_t loaded_seq = watch_hub.Next() - 1;
  // Records are decoded in batches on a few threads (decoding is most of a restart with many
  // jobs) while this thread reads the store and applies the batch before, in the store's order.
  // Jobs share run specifications: each worker decodes each of those once.
  constexpr size_t kBatch = 4096;
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::vector<ExecCache> exec_caches(workers);
  std::vector<store::JobRow> batch;
  std::vector<store::JobRow> decoding_rows;
  std::vector<DecodedRow> decoding;
  std::future<void> in_flight;
  std::vector<store::JobRow> applying_rows;
  std::vector<DecodedRow> applying;
  auto apply = [&] {
    state_thread.AssertHeld();
    const auto from = std::chrono::steady_clock::now();
    for (size_t i = 0; i < applying_rows.size(); ++i) {
      const store::JobRow& row = applying_rows[i];
      DecodedRow& d = applying[i];
      if (!d.status.ok()) {
        std::fprintf(stderr, "berth controller: job %u: %s\n", row.id, d.status.message().c_str());
        continue;
      }
      JobRecord& r = *d.record;
      if (!d.job) {
        cs->RestoreOutcome(r.job.id, r.job.array_job_id, r.job.array_task_id, r.job.outcome);
        if (r.job.end_time != kNoTime && r.job.end_time + opt.min_job_age_s >= now) {
          NoteFinished(r.job.id, r.job.end_time);
          r.event_seq = loaded_seq;
          PutCommittedRecord(r.job.id, std::move(d.record));
        }
        continue;
      }
      r.job.exec = exec_pool.Intern(std::move(r.job.exec));
      core::Job& job = *d.job;
      job.exec = r.job.exec;
      for (size_t n = 0; n < job.alloc.nodes.size() && n < r.node_names.size(); ++n) {
        std::optional<uint32_t> index = cs->FindNode(r.node_names[n]);
        job.alloc.nodes[n].node = index.value_or(UINT32_MAX);
      }
      Status rs = cs->Restore(std::move(job));
      if (!rs.ok()) {
        std::fprintf(stderr, "berth controller: cannot restore job %u: %s\n", r.job.id,
                     rs.message().c_str());
        continue;
      }
      ++restored;
      r.event_seq = loaded_seq;
      const core::JobId id = r.job.id;
      PutCommittedRecord(id, std::move(d.record));
    }
    applying_rows.clear();
    applying.clear();
    applying_time += std::chrono::steady_clock::now() - from;
  };
  // Waits for the batch the workers decode, and takes it to apply.
  auto wait_in_flight = [&] {
    if (!in_flight.valid()) return;
    in_flight.get();
    std::swap(decoding_rows, applying_rows);
    std::swap(decoding, applying);
  };
  // Hands the batch read to the workers, and applies the one they decoded before.
  auto start_batch = [&] {
    wait_in_flight();
    std::swap(batch, decoding_rows);
    batch.clear();
    // Deferred (decoded when waited for) where no thread is to be had.
    in_flight = std::async(std::launch::async | std::launch::deferred,
                           [&] { DecodeRows(decoding_rows, exec_caches, decoding); });
    apply();
  };
  Status st = store->ScanJobs(false, [&](const store::JobRow& row) {
    state_thread.AssertHeld();  // the scan calls back on this thread
    ++rows_read;
    batch.push_back(row);
    if (batch.size() >= kBatch) start_batch();
  });
  if (!st.ok()) {
    if (in_flight.valid()) in_flight.wait();  // its workers use this frame's vectors
    return st;
  }
  if (!batch.empty()) start_batch();
  wait_in_flight();
  apply();
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto done = std::chrono::steady_clock::now();
  std::fprintf(stderr,
               "berth controller: %zu jobs recovered from the store (%zu pending or running) "
               "in %.0f ms, %.0f ms of it applying them here while the next were decoded\n",
               rows_read, restored, ms(done - began), ms(applying_time));
  return Status::Ok();
}

void Controller::Impl::RecoverNodeAdmin(Time now) {
  // What operators set on nodes outlives restarts.
  Result<std::optional<std::string>> admin = store->GetMeta("node_admin");
  if (admin.ok() && admin->has_value()) {
    nlohmann::json j = nlohmann::json::parse(**admin, nullptr, false);
    if (j.is_object()) node_admin = std::move(j);
  }
  for (auto& [name, a] : node_admin.items()) {
    std::optional<uint32_t> index = cs->FindNode(name);
    if (!index || !a.is_object()) continue;
    std::string reason = a.value("reason", "");
    if (a.value("drain", false)) (void)cs->SetNodeDrain(*index, true, reason, now);
    if (a.value("down", false)) {
      (void)cs->SetNodeHealth(*index, core::NodeHealth::kDown, reason, now);
    }
  }
}

namespace {

std::string SelfExe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("berth");
}

}  // namespace

Status Controller::Impl::StartPower() {
  PowerSaver::StartContext ctx;
  ctx.self_exe = SelfExe();
  ctx.socket_path = opt.socket_path;
  ctx.home = opt.state_dir + "/power";
  ctx.nodes = opt.config.cluster.nodes;
  if (power->enabled()) {  // it walks every record (100,000 after a restart): only when used
    ForEachOwnRecord([&ctx](core::JobId id, const JobRecord& r) {
      if (r.job.state == core::JobState::kConfiguring) ctx.configuring.push_back(id);
    });
  }
  return power->Start(*cs, std::move(ctx), Now());
}

void Controller::Impl::PowerTick(Txn& t) {
  if (!power->enabled()) return;  // it runs after every batch: nothing to do costs nothing
  PowerSaver::Effects e;
  power->Tick(*cs, Now(), t.nodes_changed, &e);
  for (const auto& [id, message] : e.messages) {
    const JobRecord* current = OwnRecord(id);
    if (current == nullptr) continue;
    auto r = std::make_shared<JobRecord>(*current);
    r->run.Mut().message = message;
    PutRecord(id, std::move(r));
  }
  for (core::JobId id : e.touched) t.touched.insert(id);
  t.launches.insert(t.launches.end(), e.launches.begin(), e.launches.end());
  for (const std::string& node : e.disconnected) agents.Disconnect(node);
  for (std::string& event : e.events) t.events.push_back(MakeWatchEvent(std::move(event)));
  t.nodes_changed = t.nodes_changed || e.nodes_changed;
  dirty = dirty || e.reschedule;
}

Status Controller::Start() {
  Impl& im = *impl_;
  im.state_thread.AssertHeld();          // the state thread has not started
  BERTH_RETURN_IF_ERROR(im.StartK8s());  // before the state thread: it reads the store
  if (im.k8s && im.k8s->signer()) im.auth.set_signer(im.k8s->signer());
  BERTH_RETURN_IF_ERROR(im.StartPower());
  im.next_pass = im.Now();
  // The loop's hooks run on the state thread.
  im.loop.Start({[&im](std::deque<Command> batch) {
                   im.state_thread.AssertHeld();
                   im.RunBatch(std::move(batch));
                 },
                 [&im] {
                   im.state_thread.AssertHeld();
                   return im.NextWake();
                 }});
  im.server = std::make_unique<net::HttpServer>(
      [this](const net::HttpRequest& r) { return impl_->Serve(r); });
  BERTH_RETURN_IF_ERROR(im.server->ListenUnix(im.opt.socket_path, 0666));
  BERTH_RETURN_IF_ERROR(im.server->Start());
  if (!im.opt.tcp_listen.empty()) {
    size_t colon = im.opt.tcp_listen.rfind(':');
    im.tcp_server = std::make_unique<net::HttpServer>(
        [this](const net::HttpRequest& r) { return impl_->Serve(r); });
    BERTH_RETURN_IF_ERROR(im.tcp_server->ListenTcp(
        im.opt.tcp_listen.substr(0, colon),
        static_cast<uint16_t>(std::stoi(im.opt.tcp_listen.substr(colon + 1)))));
    BERTH_RETURN_IF_ERROR(im.tcp_server->Start());
  }
  if (im.archiver) im.archiver->Start();
  im.ready = true;
  return Status::Ok();
}

void Controller::Stop() {
  Impl& im = *impl_;
  im.ready = false;
  if (im.archiver) im.archiver->Stop();
  im.agent_hub.Shutdown();
  im.watch_hub.Shutdown();
  if (im.server) im.server->Stop();
  if (im.tcp_server) im.tcp_server->Stop();
  im.StopK8s();
  im.loop.Stop();
  im.state_thread.AssertHeld();  // the state thread has stopped
  im.FlushHistory();
  im.StopPower();
}

net::HttpResponse Controller::Handle(const net::HttpRequest& request) {
  return impl_->Serve(request);
}

std::shared_ptr<const JobRecord> Controller::Impl::FindRecord(core::JobId id) const {
  ReaderLock l(view_mu);
  auto it = records.find(id);
  return it == records.end() ? nullptr : it->second;
}

}  // namespace berth::controller
