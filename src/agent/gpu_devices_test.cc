#include "agent/gpu_devices.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

GpuDevice Dev(std::string name, std::string type, std::string uuid) {
  GpuDevice d;
  d.name = std::move(name);
  d.type = std::move(type);
  d.uuid = std::move(uuid);
  return d;
}

TEST(GpuDevicesTest, MigProfileFromName) {
  EXPECT_EQ(MigProfileFromName("NVIDIA A100-SXM4-40GB MIG 1g.5gb"), "1g.5gb");
  EXPECT_EQ(MigProfileFromName("NVIDIA H100 80GB HBM3 MIG 3g.40gb"), "3g.40gb");
  EXPECT_EQ(MigProfileFromName("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me"), "1g.10gb+me");
  EXPECT_EQ(MigProfileFromName("NVIDIA H100 80GB HBM3"), "");
}

TEST(GpuDevicesTest, MigGpusOfferTheirInstances) {
  NvmlGpu whole{Dev("NVIDIA H100 80GB HBM3", "h100", "GPU-aaa"), false, {}};
  NvmlGpu split{Dev("NVIDIA H100 80GB HBM3", "h100", "GPU-bbb"),
                true,
                {Dev("NVIDIA H100 80GB HBM3 MIG 3g.40gb", "", "MIG-1"),
                 Dev("NVIDIA H100 80GB HBM3 MIG 1g.10gb", "", "MIG-2"),
                 Dev("NVIDIA H100 80GB HBM3 MIG 1g.10gb", "", "MIG-3")}};
  NvmlGpu empty_mig{Dev("NVIDIA H100 80GB HBM3", "h100", "GPU-ccc"), true, {}};
  std::vector<GpuDevice> d = NodeGpuDevices({whole, split, empty_mig, whole});
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].type, "h100");
  EXPECT_EQ(d[0].uuid, "GPU-aaa");
  EXPECT_EQ(d[1].type, "3g.40gb");
  EXPECT_EQ(d[1].uuid, "MIG-1");
  EXPECT_EQ(d[2].type, "1g.10gb");
  EXPECT_EQ(d[3].uuid, "MIG-3");
  EXPECT_EQ(d[4].uuid, "GPU-aaa");
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(d[i].index, static_cast<int32_t>(i));
}

// A whole GPU keeps its NVML index (where the agent samples its utilisation), which differs
// from berth's index once a MIG GPU came before it; an instance has none.
TEST(GpuDevicesTest, WholeGpusKeepTheirNvmlIndex) {
  NvmlGpu split{
      Dev("NVIDIA A100", "a100", "GPU-x"),
      true,
      {Dev("NVIDIA A100 MIG 3g.20gb", "", "MIG-1"), Dev("NVIDIA A100 MIG 3g.20gb", "", "MIG-2")}};
  split.device.index = 0;
  NvmlGpu whole{Dev("NVIDIA A100", "a100", "GPU-y"), false, {}};
  whole.device.index = 1;
  std::vector<GpuDevice> d = NodeGpuDevices({split, whole});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].nvml_index, -1);
  EXPECT_EQ(d[1].nvml_index, -1);
  EXPECT_EQ(d[2].index, 2);
  EXPECT_EQ(d[2].nvml_index, 1);
}

TEST(GpuDevicesTest, AnInstanceWithoutAProfileKeepsTheGpusType) {
  NvmlGpu split{Dev("NVIDIA A100", "a100", "GPU-x"), true, {Dev("odd name", "", "MIG-9")}};
  std::vector<GpuDevice> d = NodeGpuDevices({split});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, "a100");
}

}  // namespace
}  // namespace berth::agent
