#include "agent/node_metrics.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

TEST(NodeMetricsTest, ParsesTheCpuLineOfProcStat) {
  const std::string stat =
      "cpu  1000 20 300 40000 50 6 7 8 0 0\n"
      "cpu0 500 10 150 20000 25 3 3 4 0 0\n"
      "intr 12345\n";
  Result<std::vector<std::pair<std::string, double>>> cpu = ParseProcStatCpu(stat, 100);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  const std::vector<std::pair<std::string, double>> want = {
      {"user", 10},    {"nice", 0.2}, {"system", 3},     {"idle", 400},
      {"iowait", 0.5}, {"irq", 0.06}, {"softirq", 0.07}, {"steal", 0.08}};
  EXPECT_EQ(*cpu, want);
  // An old kernel's shorter line gives the modes it has.
  cpu = ParseProcStatCpu("cpu 1 2 3 4\n", 1);
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->size(), 4u);
}

TEST(NodeMetricsTest, RejectsBadProcStat) {
  EXPECT_FALSE(ParseProcStatCpu("intr 1\n", 100).ok());
  EXPECT_FALSE(ParseProcStatCpu("", 100).ok());
  EXPECT_FALSE(ParseProcStatCpu("cpu\n", 100).ok());
  Result<std::vector<std::pair<std::string, double>>> bad = ParseProcStatCpu("cpu 1 x 3\n", 100);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "/proc/stat: the cpu line has a bad nice field 'x'");
  EXPECT_FALSE(ParseProcStatCpu("cpu 1 2\n", 0).ok());
}

TEST(NodeMetricsTest, ParsesMeminfo) {
  Result<NodeMemory> m = ParseMeminfo(
      "MemTotal:       16384 kB\nMemFree:  100 kB\nMemAvailable:    8192 kB\nBuffers: 1 kB\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->total_bytes, 16384 * 1024);
  EXPECT_EQ(m->available_bytes, 8192 * 1024);
  EXPECT_EQ(ParseMeminfo("MemTotal: 1 kB\n").status().message(), "/proc/meminfo: no MemAvailable");
  EXPECT_EQ(ParseMeminfo("MemTotal: x kB\nMemAvailable: 1 kB\n").status().message(),
            "/proc/meminfo: bad MemTotal: 'x'");
}

TEST(NodeMetricsTest, RendersEveryFamily) {
  AgentMetricsInput in;
  in.node = "node1";
  in.cgroups = "v2";
  in.registered = true;
  in.cpus = 8;
  in.cpu_seconds = {{"user", 1.5}, {"idle", 100}};
  in.memory = {1 << 30, 1 << 29};
  in.gpus = {{0, "h100", 0.25, 80, 40}, {1, "h100", -1, 80, -1}};
  in.jobs_running = 2;
  in.jobs_started = 5;
  in.jobs_ended = 3;
  Result<std::string> text = RenderAgentMetrics(in);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  for (const char* line : {
           "berth_node_info{node=\"node1\",cgroups=\"v2\"} 1\n",
           "berth_agent_registered 1\n",
           "berth_node_cpus 8\n",
           "# TYPE berth_node_cpu_seconds_total counter\n",
           "berth_node_cpu_seconds_total{mode=\"user\"} 1.5\n",
           "berth_node_cpu_seconds_total{mode=\"idle\"} 100\n",
           "berth_node_memory_size_bytes 1073741824\n",
           "berth_node_memory_available_bytes 536870912\n",
           "berth_node_gpu_utilization_ratio{gpu=\"0\",type=\"h100\"} 0.25\n",
           "berth_node_gpu_memory_size_bytes{gpu=\"1\",type=\"h100\"} 80\n",
           "berth_node_gpu_memory_used_bytes{gpu=\"0\",type=\"h100\"} 40\n",
           "berth_agent_jobs_running 2\n",
           "berth_agent_jobs_started_total 5\n",
           "berth_agent_jobs_ended_total 3\n",
       }) {
    EXPECT_NE(text->find(line), std::string::npos) << line << " not in\n" << *text;
  }
  // Unknown values have no series.
  EXPECT_EQ(text->find("berth_node_gpu_utilization_ratio{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(text->find("berth_node_gpu_memory_used_bytes{gpu=\"1\""), std::string::npos);
}

TEST(NodeMetricsTest, LeavesOutWhatItCouldNotRead) {
  AgentMetricsInput in;
  in.node = "n";
  Result<std::string> text = RenderAgentMetrics(in);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->find("berth_node_cpu_seconds_total"), std::string::npos);
  EXPECT_EQ(text->find("berth_node_memory"), std::string::npos);
  EXPECT_EQ(text->find("berth_node_gpu"), std::string::npos);
  EXPECT_NE(text->find("berth_agent_registered 0\n"), std::string::npos);
}

TEST(NodeMetricsTest, ParsesListenAddresses) {
  struct Case {
    std::string text, host;
    uint16_t port;
  };
  const Case good[] = {{"127.0.0.1:0", "127.0.0.1", 0},
                       {"0.0.0.0:9464", "0.0.0.0", 9464},
                       {":9464", "", 9464},
                       {"localhost:65535", "localhost", 65535},
                       {"[::1]:80", "::1", 80}};
  for (const Case& c : good) {
    Result<std::pair<std::string, uint16_t>> a = ParseListenAddress(c.text);
    ASSERT_TRUE(a.ok()) << c.text << ": " << a.status().ToString();
    EXPECT_EQ(a->first, c.host) << c.text;
    EXPECT_EQ(a->second, c.port) << c.text;
  }
  for (const char* bad :
       {"", "9464", "host:", "host:x", "host:65536", "host:-1", "::1:80", "[::1:80", "h:1 "}) {
    Result<std::pair<std::string, uint16_t>> a = ParseListenAddress(bad);
    EXPECT_FALSE(a.ok()) << bad;
    if (!a.ok()) {
      EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
    }
  }
  EXPECT_EQ(ParseListenAddress("host:x").status().message(),
            "expected HOST:PORT (e.g. 0.0.0.0:9464 or 127.0.0.1:0), got 'host:x': the port is not "
            "in 0..65535");
}

}  // namespace
}  // namespace berth::agent
