#include "cli/demo.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "agent/container_settings.h"
#include "agent/file_util.h"
#include "cli/client.h"
#include "image/layout_writer.h"
#include "slurm/job_view.h"

namespace berth::cli {
namespace {

using nlohmann::json;

struct DemoJob {
  json spec;
  std::string expect;  // the final state the demo expects
};

std::vector<DemoJob> Workload(const std::string& dir) {
  auto job = [&](const char* name, const std::string& script, json extra) {
    json j = {{"name", name},
              {"script", "#!/bin/sh\n" + script + "\n"},
              {"work_dir", dir},
              {"stdout", "%x-%j.out"},
              {"time_limit", 120}};
    j.update(extra);
    return j;
  };
  return {
      {job("sweep", "echo \"task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT\"; sleep 2",
           {{"array", "0-5%3"}, {"stdout", "%x-%A_%a.out"}}),
       "COMPLETED"},
      {job("prepare", "echo preparing; sleep 2", json::object()), "COMPLETED"},
      {job("train", "echo \"training on GPUs $CUDA_VISIBLE_DEVICES\"; sleep 3",
           {{"gpus_per_node", 2}, {"cpus_per_task", 1}, {"dependency", "afterok:PREV"}}),
       "COMPLETED"},
      {job("report", "echo done", {{"dependency", "afterok:PREV"}}), "COMPLETED"},
      {job("gpu-a", "echo \"GPUs $CUDA_VISIBLE_DEVICES\"; sleep 3", {{"gpus_per_node", 2}}),
       "COMPLETED"},
      {job("gpu-b", "echo \"GPUs $CUDA_VISIBLE_DEVICES\"; sleep 3", {{"gpus_per_node", 2}}),
       "COMPLETED"},
      {job("too-much-memory", "echo allocating; tail /dev/zero", {{"mem_per_node", 64}}),
       "OUT_OF_MEMORY"},
      {job("too-long", "echo sleeping past the limit; sleep 600", {{"time_limit", 5}}), "TIMEOUT"},
      {job("fails", "echo failing; exit 3", json::object()), "FAILED"},
      // Only the powered-down burst nodes have the feature: berth powers them up (CONFIGURING
      // meanwhile), runs these there, and powers them down after 5 s idle.
      {job("burst-a", "echo \"on $(hostname) as node $SLURMD_NODENAME\"; sleep 2",
           {{"constraint", "burst"}}),
       "COMPLETED"},
      {job("burst-b", "echo \"on node $SLURMD_NODENAME\"; sleep 2", {{"constraint", "burst"}}),
       "COMPLETED"},
  };
}

void Show(const json& jobs, bool tty, int elapsed) {
  if (tty) std::printf("\033[H\033[2J");
  std::printf("berth demo, %d s: the queue (jobs submitted by the demo)\n", elapsed);
  std::printf("%-8s %-16s %-14s %-24s %s\n", "JOBID", "NAME", "STATE", "NODES/GPUS", "REASON");
  for (const json& j : jobs) {
    std::string id = slurm::DisplayJobId(j);
    std::string where;
    if (j.contains("allocation")) {
      for (const json& n : j.at("allocation").at("nodes")) {
        where = n.at("node").get<std::string>();
        if (!n.at("gpus").empty()) where += " gpus=" + n.at("gpus").dump();
      }
    }
    std::printf("%-8s %-16s %-14s %-24s %s\n", id.c_str(),
                j.at("request").value("name", "").c_str(), j.at("state").get<std::string>().c_str(),
                where.c_str(), j.value("reason", "").c_str());
  }
  std::fflush(stdout);
}

}  // namespace

namespace {

// Submits the workload (each dependency on the job before it); the expected end state by job id
// (an array's tasks go by their array's id).
Result<std::map<uint32_t, std::string>> Submit(Client& c, std::vector<DemoJob> work) {
  std::map<uint32_t, std::string> expect;
  uint32_t prev = 0;
  for (DemoJob& d : work) {
    if (d.spec.contains("dependency")) {
      d.spec["dependency"] = "afterok:" + std::to_string(prev);
    }
    BERTH_ASSIGN_OR_RETURN(json r, c.Call("POST", "/v1/jobs", d.spec));
    prev = r.at("job_id").get<uint32_t>();
    expect[prev] = d.expect;
  }
  return expect;
}

// Shows the demo's jobs every second until all have ended (or `stop`); returns them as last
// seen, or nothing when they still run after 5 minutes.
Result<std::optional<json>> WatchUntilEnded(Client& c,
                                            const std::map<uint32_t, std::string>& expect,
                                            const std::atomic<bool>& stop) {
  bool tty = isatty(STDOUT_FILENO);
  auto start = std::chrono::steady_clock::now();
  json mine = json::array();
  std::string last_shown;
  while (!stop) {
    int elapsed = static_cast<int>(
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
            .count());
    BERTH_ASSIGN_OR_RETURN(json r, c.Call("GET", "/v1/jobs?all=1"));
    mine = json::array();
    bool active = false;
    std::string states;
    for (const json& j : r.at("jobs")) {
      uint32_t id = j.at("id").get<uint32_t>();
      uint32_t group = j.value("array_job_id", id);
      if (!expect.count(id) && !expect.count(group)) continue;
      mine.push_back(j);
      std::string st = j.at("state").get<std::string>();
      active = active || st == "PENDING" || st == "RUNNING" || st == "CONFIGURING";
      states += std::to_string(id) + st;
    }
    if (tty || states != last_shown) Show(mine, tty, elapsed);
    last_shown = states;
    if (!active && !mine.empty()) break;
    if (elapsed > 300) return std::optional<json>();
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  return std::optional<json>(std::move(mine));
}

// Prints the jobs that did not end as expected; returns how many.
int ReportUnexpected(const json& mine, std::map<uint32_t, std::string>& expect) {
  int unexpected = 0;
  for (const json& j : mine) {
    uint32_t id = j.at("id").get<uint32_t>();
    std::string want = expect.count(id) ? expect[id] : expect[j.value("array_job_id", id)];
    std::string got = j.at("state").get<std::string>();
    if (got != want) {
      ++unexpected;
      std::printf("  job %u ended %s (expected %s) %s\n", id, got.c_str(), want.c_str(),
                  j.value("message", "").c_str());
    }
  }
  if (unexpected == 0)
    std::printf("  all as expected: completed, out of memory, timed out, failed\n");
  return unexpected;
}

// What autoscaling did for the burst jobs (GET /v1/power), once the idle burst nodes have been
// powered down again (SuspendTime 5 s).
void ShowAutoscaling(Client& c, const std::atomic<bool>& stop) {
  Result<json> p = c.Call("GET", "/v1/power");
  for (int i = 0; i < 20 && !stop && p.ok() && p->value("enabled", false) &&
                  p->at("events").dump().find("\"suspend\"") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    p = c.Call("GET", "/v1/power");
  }
  if (p.ok() && p->value("enabled", false)) {
    std::printf("\nberth demo: autoscaling (the local provider; docs/autoscaling.md):\n");
    for (const json& e : p->at("events")) {
      std::printf("  %-15s %-12s %s\n", e.value("action", "").c_str(), e.value("nodes", "").c_str(),
                  e.value("reason", "").c_str());
    }
  }
}

// True for a 64-bit ELF executable without a program interpreter (statically linked).
bool IsStaticElf(const std::string& b) {
  auto u = [&](size_t off, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n && off + i < b.size(); ++i) {
      v |= static_cast<uint64_t>(static_cast<unsigned char>(b[off + i])) << (8 * i);
    }
    return v;
  };
  if (b.size() < 64 ||
      b.compare(0, 4,
                "\x7f"
                "ELF") != 0 ||
      b[4] != 2)
    return false;
  const uint64_t phoff = u(0x20, 8), phentsize = u(0x36, 2), phnum = u(0x38, 2);
  for (uint64_t i = 0; i < phnum; ++i) {
    if (u(phoff + i * phentsize, 4) == 3) return false;  // PT_INTERP
  }
  return phnum > 0;
}

// A container job, when this machine can run one: an OCI image made here from the host's static
// busybox (Debian's busybox-static; no registry, no internet), which the node imports from its
// path. Empty when runc or a static busybox is missing (the demo says so).
std::optional<DemoJob> ContainerJob(const std::string& dir) {
  const std::string busybox = "/bin/busybox";
  Result<std::string> binary = agent::ReadFile(busybox);
  if (agent::FindExecutable("runc").empty() || !binary.ok() || !IsStaticElf(*binary)) {
    std::printf(
        "berth demo: no container job (it needs runc and a static %s: apt install runc "
        "busybox-static)\n",
        busybox.c_str());
    return std::nullopt;
  }
  using E = image::LayerEntry;
  std::vector<E> layer = {{E::Kind::kDir, "bin", "", 0755},
                          {E::Kind::kFile, "bin/busybox", *binary, 0755},
                          {E::Kind::kDir, "etc", "", 0755},
                          {E::Kind::kFile, "etc/berth-demo",
                           "hello from an OCI image made from busybox by berth up --demo\n", 0644}};
  for (const char* applet : {"sh", "cat", "echo", "id", "pwd", "ls", "sleep"}) {
    layer.push_back({E::Kind::kSymlink, std::string("bin/") + applet, "busybox", 0777});
  }
  image::ImageConfig config;
  config.env = {"PATH=/bin"};
  config.cmd = {"/bin/sh"};
  Result<std::string> written = image::WriteOciLayout(dir + "/image", layer, config, "1");
  if (!written.ok()) {
    std::printf("berth demo: no container job: %s\n", written.status().message().c_str());
    return std::nullopt;
  }
  json spec = {{"name", "in-a-container"},
               {"script", "#!/bin/sh\ncat /etc/berth-demo; echo \"uid $(id -u), in $(pwd)\"\n"},
               {"work_dir", dir},
               {"stdout", "%x-%j.out"},
               {"time_limit", 120},
               {"container",
                {{"image", dir + "/image"},
                 {"mount_home", false},
                 {"mounts", {{{"source", dir}, {"destination", dir}}}}}}};
  return DemoJob{spec, "COMPLETED"};
}

}  // namespace

int RunDemo(const std::string& address, const std::string& home, const std::atomic<bool>& stop) {
  std::string dir = home + "/demo";
  mkdir(dir.c_str(), 0755);
  Result<std::unique_ptr<Client>> c = Client::Connect(address);
  if (!c.ok()) return Fail("berth up --demo", c.status());
  // The local agent registers its node (with the demo's declared GPUs): up to 30 s.
  for (int i = 0; i < 300 && !stop; ++i) {
    Result<json> nodes = (*c)->Call("GET", "/v1/nodes");
    bool up = false;
    if (nodes.ok()) {
      for (const json& n : nodes->value("nodes", json::array())) {
        const std::string state = n.value("state", "");
        const json& gpus = n.value("gpus", json());  // the node's devices
        const bool has_gpus = (gpus.is_array() && !gpus.empty()) ||
                              (gpus.is_number_integer() && gpus.get<int64_t>() > 0);
        up = up || (has_gpus && (state == "IDLE" || state == "MIXED" || state == "ALLOCATED"));
      }
    }
    if (up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<DemoJob> work = Workload(dir);
  if (std::optional<DemoJob> ctr = ContainerJob(dir)) work.push_back(std::move(*ctr));
  Result<std::map<uint32_t, std::string>> expect = Submit(**c, std::move(work));
  if (!expect.ok()) return Fail("berth up --demo", expect.status());
  Result<std::optional<json>> mine = WatchUntilEnded(**c, *expect, stop);
  if (!mine.ok()) return Fail("berth up --demo", mine.status());
  if (!*mine) {
    std::printf("berth demo: still running after 5 minutes; stopping\n");
    return 1;
  }
  std::printf("\nberth demo: every job has ended. Output files are in %s\n", dir.c_str());
  int unexpected = ReportUnexpected(**mine, *expect);
  ShowAutoscaling(**c, stop);
  return unexpected == 0 ? 0 : 1;
}

}  // namespace berth::cli
