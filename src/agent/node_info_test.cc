#include "agent/node_info.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace berth::agent {
namespace {

TEST(NodeInfoTest, GpuTypeFromRealNvmlNames) {
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA H100 80GB HBM3", "h100"},
      {"NVIDIA H100 PCIe", "h100"},
      {"NVIDIA H100 NVL", "h100"},
      {"NVIDIA H200", "h200"},
      {"NVIDIA H200 NVL", "h200"},
      {"NVIDIA H800", "h800"},
      {"NVIDIA GH200 480GB", "gh200"},
      {"NVIDIA B200", "b200"},
      {"NVIDIA A100-SXM4-40GB", "a100"},
      {"NVIDIA A100-SXM4-80GB", "a100"},
      {"NVIDIA A100-PCIE-40GB", "a100"},
      {"NVIDIA A100 80GB PCIe", "a100"},
      {"NVIDIA A800-SXM4-80GB", "a800"},
      {"NVIDIA A10", "a10"},
      {"NVIDIA A10G", "a10g"},
      {"NVIDIA A30", "a30"},
      {"NVIDIA A40", "a40"},
      {"NVIDIA L4", "l4"},
      {"NVIDIA L40S", "l40s"},
      {"Tesla V100-SXM2-16GB", "v100"},
      {"Tesla V100-SXM2-32GB", "v100"},
      {"Tesla V100-PCIE-32GB", "v100"},
      {"Tesla V100S-PCIE-32GB", "v100s"},
      {"Tesla P100-PCIE-16GB", "p100"},
      {"Tesla T4", "t4"},
      {"Tesla K80", "k80"},
      {"Tesla M60", "m60"},
      {"GRID K520", "k520"},
      {"NVIDIA GeForce RTX 4090", "rtx4090"},
      {"NVIDIA GeForce RTX 3090 Ti", "rtx3090ti"},
      {"NVIDIA GeForce RTX 2080 SUPER", "rtx2080super"},
      {"NVIDIA GeForce RTX 3080 Laptop GPU", "rtx3080"},
      {"NVIDIA GeForce GTX 1080 Ti", "gtx1080ti"},
      {"GeForce GTX 1080", "gtx1080"},
      {"NVIDIA TITAN RTX", "titanrtx"},
      {"NVIDIA TITAN V", "titanv"},
      {"NVIDIA RTX A6000", "a6000"},
      {"NVIDIA RTX A4000", "a4000"},
      {"NVIDIA RTX 6000 Ada Generation", "rtx6000ada"},
      {"NVIDIA RTX 4000 SFF Ada Generation", "rtx4000ada"},
      {"Quadro RTX 8000", "rtx8000"},
      {"Quadro RTX 6000", "rtx6000"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtxpro6000"},
      {"", "gpu"},
      {"NVIDIA", "gpu"},
  };
  for (const auto& [name, want] : cases) EXPECT_EQ(GpuTypeFromName(name), want) << name;
}

TEST(NodeInfoTest, DetectsThisNode) {
  Result<DetectedNode> node = DetectNode();
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_FALSE(node->hostname.empty());
  EXPECT_EQ(node->hostname.find('.'), std::string::npos);
  EXPECT_GT(node->cpus, 0);
  EXPECT_GT(node->mem_mib, 0);
  EXPECT_EQ(node->root, geteuid() == 0);
  EXPECT_TRUE(node->cgroups == "v1" || node->cgroups == "v2" || node->cgroups == "none");
  if (!node->root) {
    EXPECT_FALSE(node->cannot_enforce.empty());
  }
  if (!node->nvml) {
    EXPECT_TRUE(node->gpus.empty());
    EXPECT_EQ(SampleGpuUtilization({0}), -1);
  }
  for (const GpuDevice& g : node->gpus) {
    EXPECT_FALSE(g.name.empty());
    EXPECT_EQ(g.type, GpuTypeFromName(g.name));
    EXPECT_GT(g.memory_mib, 0);
  }
}

}  // namespace
}  // namespace berth::agent
