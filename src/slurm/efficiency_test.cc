#include "slurm/efficiency.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

// A job of alice's that ran 10 minutes on n1 with 8 CPUs, asking 64G and an hour.
json Record(const std::string& state, json usage, json request_extra = json::object()) {
  json request = {{"name", "train"},
                  {"user", "alice"},
                  {"uid", 1000},
                  {"gid", 0},
                  {"script", "#!/bin/sh\ntrue\n"},
                  {"time_limit", 86400},
                  {"mem_per_node", 65536},
                  {"cpus_per_task", 8}};
  for (auto& [k, v] : request_extra.items()) request[k] = v;
  return {
      {"id", 42},
      {"state", state},
      {"request", request},
      {"submit_time", 1000},
      {"eligible_time", 1000},
      {"start_time", 2000},
      {"end_time", 2603},
      {"partition", "gpu"},
      {"exit_code", state == "FAILED" ? 3 : 0},
      {"term_signal", 0},
      {"allocation",
       {{"nodes", {{{"node", "n1"}, {"cpus", 8}, {"mem_mib", 65536}, {"gpus", json::array()}}}}}},
      {"usage", usage}};
}

JobView View(const json& r) {
  Result<JobView> v = JobViewFromJson(r, 5000);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : JobView{};
}

TEST(SeffTest, ReportInSeffsLayoutWithSuggestions) {
  JobView v = View(Record("COMPLETED", {{"cpu_seconds", 600.4}, {"max_rss_mib", 3174}}));
  v.group = "alice";  // the test host has no such group
  EXPECT_EQ(SeffReport(v, {"berth", 65536}),
            "Job ID: 42\n"
            "Cluster: berth\n"
            "User/Group: alice/alice\n"
            "State: COMPLETED (exit code 0)\n"
            "Nodes: 1\n"
            "Cores per node: 8\n"
            "CPU Utilized: 00:10:00\n"
            "CPU Efficiency: 12.44% of 01:20:24 core-walltime\n"
            "Job Wall-clock time: 00:10:03\n"
            "Memory Utilized: 3.10 GB\n"
            "Memory Efficiency: 4.84% of 64.00 GB\n"
            "Suggestion: memory: asked 64G, peaked at 3.1G: --mem=4G would do\n"
            "Suggestion: time: asked 1-00:00:00, ran 00:10:03: --time=00:20:00 would do\n"
            "Suggestion: CPUs: asked 8 cores, 1.0 busy on average: 2 cores would do\n");
}

TEST(SeffTest, OneCoreFailedJobWithoutWaste) {
  JobView v = View(Record("FAILED", {{"cpu_seconds", 590}, {"max_rss_mib", 3000}},
                          {{"cpus_per_task", 1}, {"mem_per_node", 4096}, {"time_limit", 900}}));
  v.group = "alice";
  v.num_cpus = 1;
  EXPECT_EQ(SeffReport(v, {"c1", 4096}),
            "Job ID: 42\n"
            "Cluster: c1\n"
            "User/Group: alice/alice\n"
            "State: FAILED (exit code 3)\n"
            "Cores: 1\n"
            "CPU Utilized: 00:09:50\n"
            "CPU Efficiency: 97.84% of 00:10:03 core-walltime\n"
            "Job Wall-clock time: 00:10:03\n"
            "Memory Utilized: 2.93 GB\n"
            "Memory Efficiency: 73.24% of 4.00 GB\n");
}

TEST(SeffTest, PendingAndRunning) {
  json pending = Record("PENDING", json::object());
  pending.erase("allocation");
  pending["start_time"] = -1;
  pending["end_time"] = -1;
  JobView p = View(pending);
  p.group = "g";
  EXPECT_EQ(SeffReport(p, {"c", 0}),
            "Job ID: 42\nCluster: c\nUser/Group: alice/g\nState: PENDING\nNodes: 1\n"
            "Cores per node: 8\nEfficiency not available for jobs in the PENDING state.\n");
  JobView r = View(Record("RUNNING", {{"cpu_seconds", 10}, {"max_rss_mib", 100}}));
  std::string text = SeffReport(r, {"c", 0});
  EXPECT_NE(text.find("State: RUNNING\n"), std::string::npos);
  EXPECT_NE(text.find("WARNING: Efficiency statistics may be misleading for RUNNING jobs.\n"),
            std::string::npos);
  EXPECT_EQ(text.find("Suggestion"), std::string::npos);  // only once it ended
}

TEST(SeffTest, Suggestions) {
  struct Case {
    std::string name;
    json record;
    std::vector<std::string> expect;
  };
  const Case cases[] = {
      {"fits",
       Record("COMPLETED", {{"cpu_seconds", 4800}, {"max_rss_mib", 50000}}, {{"time_limit", 900}}),
       {}},
      {"small peak: 128M steps",
       Record("COMPLETED", {{"cpu_seconds", 4800}, {"max_rss_mib", 100}}, {{"time_limit", 900}}),
       {"memory: asked 64G, peaked at 100M: --mem=128M would do"}},
      {"per CPU",
       Record("COMPLETED", {{"cpu_seconds", 4800}, {"max_rss_mib", 8000}},
              {{"mem_per_node", nullptr}, {"mem_per_cpu", 8192}, {"time_limit", 900}}),
       {"memory: asked 8G per CPU, peaked at 1000M per CPU: --mem-per-cpu=2G would do"}},
      {"out of memory",
       Record("OUT_OF_MEMORY", {{"cpu_seconds", 4800}, {"max_rss_mib", 65536}},
              {{"mem_per_node", 4096}, {"time_limit", 900}}),
       {"memory: the job ran out of its 4G: try --mem=8G"}},
      {"out of memory with a low peak: never less memory",
       Record("OUT_OF_MEMORY", {{"cpu_seconds", 4800}, {"max_rss_mib", 100}},
              {{"mem_per_node", 4096}, {"time_limit", 900}}),
       {"memory: the job ran out of its 4G: try --mem=8G"}},
      {"GPUs not measured: nothing said of them",
       Record("COMPLETED", {{"cpu_seconds", 4800}, {"max_rss_mib", 50000}, {"gpu_utilization", -1}},
              {{"time_limit", 900}, {"gpus_per_node", 2}}),
       {}},
      {"timeout",
       Record("TIMEOUT", {{"cpu_seconds", 4800}, {"max_rss_mib", 50000}}, {{"time_limit", 600}}),
       {"time: the job reached its limit of 00:10:00: ask for more with --time"}},
      {"idle GPUs",
       Record("COMPLETED",
              {{"cpu_seconds", 4800}, {"max_rss_mib", 50000}, {"gpu_utilization", 5.0}},
              {{"time_limit", 900}, {"gpus_per_node", 2}}),
       {"GPUs: 2 GPUs were 5% busy on average: fewer GPUs would do, or the job waits on "
        "something else"}},
  };
  for (const Case& c : cases) {
    json r = c.record;
    if (r["request"].contains("mem_per_node") && r["request"]["mem_per_node"].is_null()) {
      r["request"].erase("mem_per_node");
    }
    JobView v = View(r);
    int64_t alloc = v.min_memory_cpu_mib > 0 ? v.min_memory_cpu_mib * 8 : v.req_mem_mib;
    EXPECT_EQ(EfficiencySuggestions(v, {"c", alloc}), c.expect) << c.name;
  }
}

TEST(SeffTest, Units) {
  EXPECT_EQ(SeffMemory(0), "0.00 MB");
  EXPECT_EQ(SeffMemory(500), "500.00 KB");
  EXPECT_EQ(SeffMemory(3250176), "3.10 GB");
  EXPECT_EQ(SeffMemory(67108864), "64.00 GB");
  EXPECT_EQ(SeffTime(83), "00:01:23");
  EXPECT_EQ(SeffTime(93784), "1-02:03:04");
  EXPECT_EQ(ShortMemory(65536), "64G");
  EXPECT_EQ(ShortMemory(3174), "3.1G");
  EXPECT_EQ(ShortMemory(512), "512M");
}

}  // namespace
}  // namespace berth::slurm
