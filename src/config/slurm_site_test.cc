#include "config/slurm_site.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace berth::config {
namespace {

ClusterConfig MustParse(const std::string& text) {
  Result<ClusterConfig> c = ParseClusterConfig(text, "slurm.conf");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : ClusterConfig{};
}

const core::NodeSpec& NodeOf(const ClusterConfig& c, const std::string& name) {
  for (const core::NodeSpec& n : c.cluster.nodes) {
    if (n.name == name) return n;
  }
  static const core::NodeSpec kNone;
  ADD_FAILURE() << "no node " << name;
  return kNone;
}

TEST(GresConfTest, TypesUntypedGpusFromFileLines) {
  ClusterConfig c = MustParse(
      "NodeName=g[1-2] CPUs=8 RealMemory=1000 Gres=gpu:4\n"
      "NodeName=h1 CPUs=8 RealMemory=1000 Gres=gpu:h100:2\n"
      "NodeName=c1 CPUs=8 RealMemory=1000\n");
  Status st = ApplyGresConf(
      "# comment\n"
      "AutoDetect=off\n"
      "NodeName=g[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-1] Cores=0-3\n"
      "NodeName=g[1-2] Name=gpu Type=v100 \\\n"
      "   File=/dev/nvidia[2-3]\n"
      "NodeName=h1 Name=gpu Type=l4 Count=2\n"
      "NodeName=c1 Name=shard Count=8 Flags=x\n",
      "gres.conf", c);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(NodeOf(c, "g1").gpus, (std::vector<std::string>{"a100", "a100", "v100", "v100"}));
  EXPECT_EQ(NodeOf(c, "g2").gpus, (std::vector<std::string>{"a100", "a100", "v100", "v100"}));
  EXPECT_EQ(NodeOf(c, "h1").gpus, (std::vector<std::string>{"h100", "h100"}));  // slurm.conf wins
  EXPECT_EQ(NodeOf(c, "c1").gres, (std::vector<core::NamedCount>{{"shard", 8}}));
  EXPECT_EQ(c.ignored_keys, (std::vector<std::string>{"gres.conf:Cores", "gres.conf:Flags"}));
}

TEST(GresConfTest, LineWithoutNodeNameAppliesToAll) {
  ClusterConfig c = MustParse("NodeName=n[1-3] CPUs=4 RealMemory=100\n");
  ASSERT_TRUE(ApplyGresConf("Name=gpu Type=t4 Count=1\nAutoDetect=nvml\n", "gres.conf", c).ok());
  for (const char* n : {"n1", "n2", "n3"}) {
    EXPECT_EQ(NodeOf(c, n).gpus, (std::vector<std::string>{"t4"})) << n;
  }
  EXPECT_EQ(c.ignored_keys, (std::vector<std::string>{"gres.conf:AutoDetect=nvml"}));
}

TEST(GresConfTest, Errors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"NodeName=zz Name=gpu Count=1", "gres.conf:1: node zz is not in slurm.conf"},
      {"\nNodeName=n1 Name=gpu Count=x", "gres.conf:2: invalid Count value 'x'"},
      {"NodeName=n1 Name=gpu File=/dev/nvidia[3-1]", "gres.conf:1: "},
      {"Name gpu", "gres.conf:1: expected Key=Value at 'Name gpu'"},
  };
  for (const auto& [text, message] : cases) {
    ClusterConfig c = MustParse("NodeName=n1 CPUs=4 RealMemory=100\n");
    Status st = ApplyGresConf(text, "gres.conf", c);
    ASSERT_FALSE(st.ok()) << text;
    EXPECT_EQ(st.message().substr(0, message.size()), message);
  }
}

TEST(SlurmAccountingTest, TypeAndTres) {
  const struct {
    const char* text;
    bool enabled;
    bool gpus;
  } cases[] = {
      {"", false, false},
      {"AccountingStorageType=accounting_storage/none", false, false},
      {"AccountingStorageType=accounting_storage/slurmdbd", true, false},
      {"AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageTRES=gres/gpu,license/"
       "x",
       true, true},
      {"accountingstoragetres=cpu,gres/gpu:a100", false, true},
  };
  for (const auto& c : cases) {
    ClusterConfig config;
    ReadSlurmAccounting(c.text, config);
    EXPECT_EQ(config.slurm_accounting.enabled, c.enabled) << c.text;
    EXPECT_EQ(config.slurm_accounting.gpus_in_tres, c.gpus) << c.text;
    // No accounting database, no QoS list: any name goes.
    EXPECT_EQ(config.cluster.accept_unknown_qos, !c.enabled) << c.text;
  }
}

TEST(SlurmSiteTest, ReadsGresConfBeside) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "berth_slurm_site_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "slurm.conf") << "ClusterName=site\nNodeName=g1 CPUs=4 RealMemory=100 "
                                       "Gres=gpu:2\nPartitionName=p Nodes=ALL Default=YES\n";
  std::ofstream(dir / "gres.conf") << "NodeName=g1 Name=gpu Type=a10 File=/dev/nvidia[0-1]\n";
  Result<ClusterConfig> c = ReadSlurmSiteConfig((dir / "slurm.conf").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->cluster.nodes.at(0).gpus, (std::vector<std::string>{"a10", "a10"}));
  EXPECT_FALSE(c->slurm_accounting.enabled);
  std::filesystem::remove(dir / "gres.conf");
  c = ReadSlurmSiteConfig((dir / "slurm.conf").string());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->cluster.nodes.at(0).gpus, (std::vector<std::string>{"", ""}));
  std::filesystem::remove_all(dir);
}

TEST(SlurmSiteTest, OracleCluster) {
  const std::string path =
      std::string(BERTH_SOURCE_DIR) + "/../shared/bench/slurm/oracle/slurm.conf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not here";
  Result<ClusterConfig> c = ReadSlurmSiteConfig(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->cluster.nodes.size(), 171u);
  EXPECT_EQ(NodeOf(*c, "node040").gpus, std::vector<std::string>(8, "p100"));
  EXPECT_FALSE(c->slurm_accounting.enabled);
  EXPECT_FALSE(c->slurm_accounting.gpus_in_tres);
}

}  // namespace
}  // namespace berth::config
