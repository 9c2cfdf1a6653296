// The Philly machine list reader (sim/philly_machines.h).
#include "sim/philly_machines.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

namespace berth::sim {
namespace {

TEST(PhillyMachinesTest, ReadsNodesByColumnName) {
  const std::string text =
      "\xEF\xBB\xBFmachineId, number of GPUs, single GPU mem\r\n"
      "m0,2, 12GB\r\n"
      "m100,8, 24GB\r\n"
      "\n";
  ASSERT_TRUE(IsPhillyMachineList(text));
  Result<core::ClusterSpec> c = ReadPhillyMachineList(text, "m.csv");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->nodes.size(), 2u);
  EXPECT_EQ(c->nodes[0].name, "m0");
  EXPECT_EQ(c->nodes[0].gpus, (std::vector<std::string>{"12gb", "12gb"}));
  EXPECT_EQ(c->nodes[0].cpus, 2 * kPhillyCpusPerGpu);
  EXPECT_EQ(c->nodes[0].mem_mib, 2 * kPhillyMemPerGpuMib);
  EXPECT_EQ(c->nodes[1].gpus.size(), 8u);
  EXPECT_EQ(c->nodes[1].gpus[7], "24gb");
  // Columns in another order, without the memory column: untyped GPUs.
  c = ReadPhillyMachineList("Number of GPUs,MachineID\n4,x1\n", "m.csv");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->nodes[0].name, "x1");
  EXPECT_EQ(c->nodes[0].gpus, (std::vector<std::string>(4, "")));
}

TEST(PhillyMachinesTest, OtherFilesAreNotMachineLists) {
  EXPECT_FALSE(IsPhillyMachineList("NodeName=n1 CPUs=4\n"));
  EXPECT_FALSE(IsPhillyMachineList("timestamp,duration,num_gpus,gpu_time,cluster\n"));
  EXPECT_FALSE(IsPhillyMachineList(""));
}

TEST(PhillyMachinesTest, MalformedRowsNameFileAndLine) {
  const std::string header = "machineId, number of GPUs, single GPU mem\n";
  struct Case {
    std::string text, message;
  } cases[] = {
      {header + "m0,2, 12GB\nm1,2\n", "m.csv:3: 2 fields, the header has 3"},
      {header + "m0,two, 12GB\n", "m.csv:2: number of GPUs 'two' is not a number in 1..64"},
      {header + "m0,0, 12GB\n", "m.csv:2: number of GPUs '0' is not a number in 1..64"},
      {header + "m0,65, 12GB\n", "m.csv:2: number of GPUs '65' is not a number in 1..64"},
      {header + "m0,2, 12\n", "m.csv:2: single GPU mem '12' is not like 12GB"},
      {header + "m0,2, 12GB\n\nm0,8, 24GB\n", "m.csv:4: machine 'm0' twice"},
      {header + ",2, 12GB\n", "m.csv:2: empty machineId"},
      {header + "\"m0,2, 12GB\n", "m.csv:2: unterminated quote in field 1"},
      {header, "m.csv: no machines"},
      {"", "m.csv: empty machine list"},
      {"a,b\n1,2\n",
       "m.csv:1: not a Philly machine list (expected the columns machineId and "
       "number of GPUs)"},
  };
  for (const Case& c : cases) {
    Result<core::ClusterSpec> r = ReadPhillyMachineList(c.text, "m.csv");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().message(), c.message) << c.text;
  }
}

TEST(PhillyMachinesTest, TheSharedMachineList) {
  const std::string path =
      std::string(BERTH_SHARED_TESTDATA) + "/gpu/microsoft-philly/cluster_machine_list.csv";
  std::ifstream in(path, std::ios::binary);
  if (!in) GTEST_SKIP() << path << " not found";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<core::ClusterSpec> c = ReadPhillyMachineList(text, path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  size_t gpus = 0;
  for (const core::NodeSpec& n : c->nodes) gpus += n.gpus.size();
  EXPECT_EQ(c->nodes.size(), 552u);
  EXPECT_EQ(gpus, 2490u);
}

}  // namespace
}  // namespace berth::sim
