#include "core/sched/gpu_policy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace berth::core {
namespace {

// A node under construction: capacity, free CPU and memory, and its devices.
struct TestNode {
  int64_t cpu_cap = 8000;
  int64_t cpu_free = 8000;
  int64_t mem_cap = 65536;
  int64_t mem_free = 65536;
  std::vector<GpuDeviceFree> devices;

  TestNode& Cpu(int64_t cap, int64_t free) {
    cpu_cap = cap;
    cpu_free = free;
    return *this;
  }
  TestNode& Gpus(std::vector<int32_t> free, uint8_t type = 0) {
    devices.clear();
    for (int32_t f : free) devices.push_back({f, type});
    return *this;
  }
};

std::vector<GpuNodeFree> View(const std::vector<TestNode>& nodes) {
  std::vector<GpuNodeFree> out;
  for (const TestNode& n : nodes) {
    out.push_back({n.cpu_cap, n.cpu_free, n.mem_cap, n.mem_free, n.devices});
  }
  return out;
}

GpuRequest Share(int32_t milli, int64_t cpu = 1000) {
  GpuRequest r;
  r.cpu_milli = cpu;
  r.share_milli = milli;
  return r;
}

GpuRequest Whole(int32_t gpus, int64_t cpu = 1000) {
  GpuRequest r;
  r.cpu_milli = cpu;
  r.gpus = gpus;
  return r;
}

GpuRequest CpuOnly(int64_t cpu) {
  GpuRequest r;
  r.cpu_milli = cpu;
  return r;
}

// (node, devices) as "n1:0b10" for readable failures.
std::string Str(const std::optional<GpuChoice>& c) {
  if (!c) return "none";
  std::string bits;
  for (int i = 63; i >= 0; --i) {
    if ((c->devices >> i) & 1 || !bits.empty()) bits += ((c->devices >> i) & 1) ? '1' : '0';
  }
  return "n" + std::to_string(c->node) + ":0b" + (bits.empty() ? "0" : bits);
}

TEST(GpuPlacementNameTest, RoundTripsAndRejectsOthers) {
  for (GpuPlacement p : kAllGpuPlacements) {
    Result<GpuPlacement> back = ParseGpuPlacement(GpuPlacementName(p));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, p);
  }
  Result<GpuPlacement> bad = ParseGpuPlacement("worst-fit");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown GPU placement 'worst-fit'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("gpu-packing"), std::string::npos);
}

// The four policies choose differently on one tiny cluster. Request: a 500-milli share and
// 1 CPU (1000 milli). FGD's workload: 250-milli shares needing 2 CPUs (weight 1).
//   n0: CPU 8000 cap, 2500 free; GPUs [1000, 1000]  (wholly free GPUs, few CPUs left)
//   n1: CPU 8000 free;            GPUs [1000, 600]
//   n2: CPU 8000 cap, 4000 free;  GPU  [700]
// first-fit: n0, device 0 (the first node and device that fit).
// best-fit: 0.5 x CPU left / 8000 + 0.5 x (GPU free - 500) / 2000 (the largest capacities):
//   n0 = 0.5x1500/8000 + 0.5x1500/2000 = 0.46875; n1 = 0.5x7000/8000 + 0.5x1100/2000 = 0.7125;
//   n2 = 0.5x3000/8000 + 0.5x200/2000 = 0.2375  -> n2, device 0.
// gpu-packing: a share on a device in use, the fullest first: n1 dev1 (600) beats n2 (700)
//   -> n1, device 1.
// fgd: F = free milli that cannot serve a (250 milli, 2 CPU) shape; before, 0 on every node.
//   n0: after, 1500 CPUs free < 2000: all 1500 free milli are fragment: delta +1500.
//   n1 dev1: [1000, 100]: 100 < 250 is fragment: delta +100; n1 dev0: [500, 600]: delta 0.
//   n2: [200]: 200 < 250: delta +200. -> n1, device 0.
// dot-product: (CPU req/cap) x (CPU free/cap) + (GPU req/cap) x (device free/cap):
//   n0 dev0 = 0.125x0.3125 + 0.25x0.5 = 0.1640625; n1 dev1 = 0.125 + 0.25x0.3 = 0.2;
//   n1 dev0 = 0.25; n2 = 0.125x0.5 + 0.5x0.7 = 0.4125 -> n0, device 0.
TEST(PickGpuPlacementTest, PoliciesChooseDifferentlyOnAHandComputedCluster) {
  std::vector<TestNode> nodes(3);
  nodes[0].Cpu(8000, 2500).Gpus({1000, 1000});
  nodes[1].Gpus({1000, 600});
  nodes[2].Cpu(8000, 4000).Gpus({700});
  std::vector<GpuNodeFree> view = View(nodes);
  std::vector<GpuRequest> shapes = {Share(250, 2000)};
  std::vector<double> weights = {1};
  FgdWorkload workload = FgdWorkload::Build(shapes, weights);
  FgdCache cache(&workload);

  struct Case {
    GpuPlacement policy;
    const char* want;
  };
  for (const Case& c :
       {Case{GpuPlacement::kFirstFit, "n0:0b1"}, Case{GpuPlacement::kBestFit, "n2:0b1"},
        Case{GpuPlacement::kGpuPacking, "n1:0b10"}, Case{GpuPlacement::kFgd, "n1:0b1"},
        Case{GpuPlacement::kDotProduct, "n0:0b1"}}) {
    EXPECT_EQ(Str(PickGpuPlacement(c.policy, Share(500), view, &cache)), c.want)
        << GpuPlacementName(c.policy);
  }
}

// best-fit on one node: its devices score alike at node level; the fullest that holds the share
// wins (a regression test: the device term once fell within the tie tolerance, so the first
// device won).
TEST(PickGpuPlacementTest, BestFitTakesTheFullestDeviceOfANode) {
  std::vector<TestNode> nodes(1);
  nodes[0].Gpus({1000, 400, 700});
  std::vector<GpuNodeFree> view = View(nodes);
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kBestFit, Share(300), view)), "n0:0b10");
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kBestFit, Share(500), view)), "n0:0b100");
}

// Fragmentation by hand. Workload: 500-milli shares (0.5) and one whole GPU (0.5), 1 CPU each.
// [1000, 600]: the share fits on both (fragment 0); the whole GPU only on device 0, so 600 is
// fragment: F = 0.5 x 0 + 0.5 x 600 = 300. [700]: the whole GPU fits nowhere: 0.5 x 700 = 350.
// With 500 CPUs free neither runs: F = total = 1600.
TEST(FgdWorkloadTest, FragmentationByHand) {
  std::vector<GpuRequest> shapes = {Share(500), Whole(1), CpuOnly(4000)};
  std::vector<double> weights = {1, 1, 5};  // the CPU-only shape is left out
  FgdWorkload w = FgdWorkload::Build(shapes, weights);
  std::vector<GpuDeviceFree> a = {{1000, 0}, {600, 0}};
  std::vector<GpuDeviceFree> b = {{700, 0}};
  EXPECT_DOUBLE_EQ(w.Fragmentation(8000, a), 300);
  EXPECT_DOUBLE_EQ(w.Fragmentation(8000, b), 350);
  EXPECT_DOUBLE_EQ(w.Fragmentation(500, a), 1600);
  EXPECT_DOUBLE_EQ(w.Fragmentation(8000, {}), 0);
  FgdCache cache(&w);
  EXPECT_DOUBLE_EQ(cache.Fragmentation(8000, a), 300);
  std::vector<GpuDeviceFree> a_swapped = {{600, 0}, {1000, 0}};
  EXPECT_DOUBLE_EQ(cache.Fragmentation(8000, a_swapped), 300);
  EXPECT_EQ(cache.hits(), 1);  // the same state in another device order
}

// A shape allowed only on type 1 sees all the free milli of a type-0 node as fragment.
TEST(FgdWorkloadTest, DisallowedTypeIsAllFragment) {
  GpuRequest t1 = Share(500);
  t1.allowed_types = uint64_t{1} << 1;
  std::vector<GpuRequest> shapes = {t1};
  std::vector<double> weights = {1};
  FgdWorkload w = FgdWorkload::Build(shapes, weights);
  std::vector<GpuDeviceFree> type0 = {{1000, 0}};
  std::vector<GpuDeviceFree> type1 = {{1000, 1}};
  EXPECT_DOUBLE_EQ(w.Fragmentation(8000, type0), 1000);
  EXPECT_DOUBLE_EQ(w.Fragmentation(8000, type1), 0);
}

// Scarcity by hand: the GPU milli typed shapes ask of a type (a shape allowed several types
// spread over them by supply), as a share of all the milli asked, over the type's share of the
// devices. Shapes, whole GPUs, weights 4 : 3 : 1 (0.5, 0.375, 0.125 normalised): any type,
// type 0 only, type 1 only. Supply: 9 devices of type 0, 1 of type 1. Milli asked per pod:
// 1000 in all; typed: 375 of type 0, 125 of type 1. Type 0: 0.375 / 0.9 = 5/12; type 1:
// 0.125 / 0.1 = 1.25; type 2 (no devices): 0.
TEST(FgdWorkloadTest, TypeScarcityByHand) {
  GpuRequest only0 = Whole(1);
  only0.allowed_types = uint64_t{1} << 0;
  GpuRequest only1 = Whole(1);
  only1.allowed_types = uint64_t{1} << 1;
  std::vector<GpuRequest> shapes = {Whole(1), only0, only1};
  std::vector<double> weights = {4, 3, 1};
  std::vector<int64_t> supply = {9, 1, 0};
  FgdWorkload w = FgdWorkload::Build(shapes, weights, supply);
  EXPECT_DOUBLE_EQ(w.TypeScarcity(0), 5.0 / 12);
  EXPECT_DOUBLE_EQ(w.TypeScarcity(1), 1.25);
  EXPECT_DOUBLE_EQ(w.TypeScarcity(2), 0);
  // Without a supply (the controller's case) or without typed shapes: no scarcity.
  FgdWorkload no_supply = FgdWorkload::Build(shapes, weights);
  EXPECT_DOUBLE_EQ(no_supply.TypeScarcity(1), 0);
  std::vector<GpuRequest> untyped = {Whole(1), Share(500)};
  std::vector<double> two = {1, 1};
  FgdWorkload none_typed = FgdWorkload::Build(untyped, two, supply);
  EXPECT_DOUBLE_EQ(none_typed.TypeScarcity(0), 0);
  EXPECT_DOUBLE_EQ(none_typed.TypeScarcity(1), 0);
  // A 400-milli share allowed types 0 and 1 (weight 1) with untyped 400-milli shares (weight 1),
  // supply 3 : 1: 400 milli asked per pod, 200 typed, 150 of it on type 0 and 50 on type 1;
  // type 0: (150 / 400) / 0.75 = 0.5, type 1: (50 / 400) / 0.25 = 0.5.
  GpuRequest both = Share(400);
  both.allowed_types = 0b11;
  std::vector<GpuRequest> spread = {Share(400), both};
  std::vector<int64_t> supply31 = {3, 1};
  FgdWorkload s = FgdWorkload::Build(spread, two, supply31);
  EXPECT_DOUBLE_EQ(s.TypeScarcity(0), 0.5);
  EXPECT_DOUBLE_EQ(s.TypeScarcity(1), 0.5);
}

// An untyped whole GPU between a node of type 0 (n0) and one of type 1 (n1), each one free GPU
// and 8 CPUs; the workload and supply of TypeScarcityByHand. Fragmentation alone (the old
// measure) prefers the rarer model: taking n0's GPU frees the type-1-only shapes' fragment,
// 0.125 x 1000, taking n1's the type-0-only shapes', 0.375 x 1000, so delta -125 on n0 and -375
// on n1 -> n1, the only device type-1-only pods may use. The scarcity term adds 0.5 x scarcity
// x 1000 milli: n0 = -125 + 0.5 x 5/12 x 1000 = 83.3, n1 = -375 + 0.5 x 1.25 x 1000 = 250 -> n0.
// A type-1-only request still goes to n1, the one node it may use.
TEST(PickGpuPlacementTest, FgdLeavesTheScarceModelToTheShapesThatNeedIt) {
  std::vector<TestNode> nodes(2);
  nodes[0].Gpus({1000}, 0);
  nodes[1].Gpus({1000}, 1);
  std::vector<GpuNodeFree> view = View(nodes);
  GpuRequest only0 = Whole(1);
  only0.allowed_types = uint64_t{1} << 0;
  GpuRequest only1 = Whole(1);
  only1.allowed_types = uint64_t{1} << 1;
  std::vector<GpuRequest> shapes = {Whole(1), only0, only1};
  std::vector<double> weights = {4, 3, 1};
  std::vector<int64_t> supply = {9, 1};
  FgdWorkload with_supply = FgdWorkload::Build(shapes, weights, supply);
  FgdCache cache(&with_supply);
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kFgd, Whole(1), view, &cache)), "n0:0b1");
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kFgd, only1, view, &cache)), "n1:0b1");
  // Fragmentation alone (no supply given): the rarer model.
  FgdWorkload frag_only = FgdWorkload::Build(shapes, weights);
  FgdCache frag_cache(&frag_only);
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kFgd, Whole(1), view, &frag_cache)), "n1:0b1");
}

TEST(PickGpuPlacementTest, WholeGpusTakeOnlyFullyFreeDevices) {
  std::vector<TestNode> nodes(2);
  nodes[0].Gpus({999, 1000, 500});  // one fully free device: not enough for two
  nodes[1].Gpus({1000, 400, 1000, 1000});
  std::vector<GpuNodeFree> view = View(nodes);
  for (GpuPlacement p : kAllGpuPlacements) {
    FgdWorkload w;
    FgdCache cache(&w);
    EXPECT_EQ(Str(PickGpuPlacement(p, Whole(2), view, &cache)), "n1:0b101") << GpuPlacementName(p);
  }
}

TEST(PickGpuPlacementTest, RefusesWhatFitsNowhere) {
  std::vector<TestNode> nodes(2);
  nodes[0].Cpu(8000, 500).Gpus({1000});  // too few CPUs
  nodes[1].Gpus({200, 300}, 1);          // type 1, shares too small
  nodes[1].mem_free = 10;
  std::vector<GpuNodeFree> view = View(nodes);
  FgdWorkload w;
  FgdCache cache(&w);
  GpuRequest typed = Share(300);
  typed.allowed_types = 1;  // type 0 only
  GpuRequest big_mem = CpuOnly(100);
  big_mem.mem_mib = 100000;
  for (GpuPlacement p : kAllGpuPlacements) {
    EXPECT_FALSE(PickGpuPlacement(p, Share(500), view, &cache)) << GpuPlacementName(p);
    EXPECT_FALSE(PickGpuPlacement(p, typed, view, &cache)) << GpuPlacementName(p);
    EXPECT_FALSE(PickGpuPlacement(p, big_mem, view, &cache)) << GpuPlacementName(p);
    EXPECT_EQ(Str(PickGpuPlacement(p, Share(300), view, &cache)), "n1:0b10") << GpuPlacementName(p);
  }
}

// CPU-only requests: gpu-packing sends them where the least GPU milli is free; fgd where taking
// the CPUs strands the fewest GPUs. Workload: one whole GPU with 4 CPUs. Request: 3 CPUs.
//   n0: 8000 free, [1000]: after, 5000 >= 4000 still runs the shape: F stays 0.
//   n1: 6000 free, [1000, 1000]: after, 3000 < 4000: F goes 0 -> 2000.
//   n2: 8000 free, no GPU: F stays 0.
// gpu-packing: n2 (0 GPU milli free); first-fit: n0; fgd: never n1 (delta 2000), and of n0 and
// n2 (delta 0) the tie goes as gpu-packing's: n2. With only n1 then n0, in that order, first-fit
// takes n1 and fgd still n0.
TEST(PickGpuPlacementTest, CpuOnlyRequests) {
  std::vector<TestNode> nodes(3);
  nodes[0].Gpus({1000});
  nodes[1].Cpu(8000, 6000).Gpus({1000, 1000});
  nodes[2].Gpus({});
  std::vector<GpuNodeFree> view = View(nodes);
  std::vector<GpuRequest> shapes = {Whole(1, 4000)};
  std::vector<double> weights = {1};
  FgdWorkload w = FgdWorkload::Build(shapes, weights);
  FgdCache cache(&w);
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kFgd, CpuOnly(3000), view, &cache)), "n2:0b0");
  std::vector<GpuNodeFree> n1_first = {view[1], view[0]};  // n1 before n0
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kFgd, CpuOnly(3000), n1_first, &cache)), "n1:0b0")
      << "index 1 is n0";
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kFirstFit, CpuOnly(3000), n1_first, &cache)),
            "n0:0b0");
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kGpuPacking, CpuOnly(3000), view, &cache)),
            "n2:0b0");
  EXPECT_EQ(Str(PickGpuPlacement(GpuPlacement::kFirstFit, CpuOnly(3000), view, &cache)), "n0:0b0");
}

// Property: random clusters and requests under every policy. A choice never takes more than a
// device has, whole and shared requests never meet on a device, the request's type and count
// are met, and a refused request truly fits on no node. Seeded; the seed is in the failure.
TEST(PickGpuPlacementPropertyTest, InvariantsHoldOnRandomRequests) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    auto uniform = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    std::vector<TestNode> nodes(static_cast<size_t>(uniform(1, 12)));
    for (TestNode& n : nodes) {
      n.Cpu(uniform(1, 16) * 4000, 0);
      n.cpu_free = n.cpu_cap;
      n.devices.assign(static_cast<size_t>(uniform(0, 8)),
                       GpuDeviceFree{1000, static_cast<uint8_t>(uniform(0, 2))});
    }
    // Per device: 0 free, 1 held whole, 2 holds shares.
    std::vector<std::vector<int>> use(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) use[i].assign(nodes[i].devices.size(), 0);
    // fgd's workload includes a typed shape, and the supply per type (the scarcity term).
    GpuRequest typed = Share(500);
    typed.allowed_types = uint64_t{1} << 1;
    std::vector<GpuRequest> shapes = {Share(250), Share(500), Whole(1), Whole(2), typed};
    std::vector<double> weights = {3, 2, 2, 1, 2};
    std::vector<int64_t> supply(3, 0);
    for (const TestNode& n : nodes) {
      for (const GpuDeviceFree& d : n.devices) ++supply[d.type];
    }
    FgdWorkload w = FgdWorkload::Build(shapes, weights, supply);
    for (GpuPlacement policy : kAllGpuPlacements) {
      std::vector<TestNode> state = nodes;
      std::vector<std::vector<int>> used = use;
      FgdCache cache(&w);
      for (int step = 0; step < 300; ++step) {
        GpuRequest req;
        req.cpu_milli = uniform(0, 8) * 500;
        req.mem_mib = uniform(0, 4) * 1024;
        const int64_t kind = uniform(0, 9);
        if (kind < 5) {
          req.share_milli = static_cast<int32_t>(uniform(1, 999));
        } else if (kind < 9) {
          req.gpus = static_cast<int32_t>(uniform(1, 4));
        }
        if (uniform(0, 3) == 0) req.allowed_types = uint64_t{1} << uniform(0, 2);
        std::vector<GpuNodeFree> view = View(state);
        std::optional<GpuChoice> c = PickGpuPlacement(policy, req, view, &cache);
        const std::string where = "seed " + std::to_string(seed) + " policy " +
                                  std::string(GpuPlacementName(policy)) + " step " +
                                  std::to_string(step);
        if (!c) {
          for (const GpuNodeFree& n : view) ASSERT_FALSE(GpuRequestFits(req, n)) << where;
          continue;
        }
        ASSERT_GE(c->node, 0) << where;
        TestNode& n = state[static_cast<size_t>(c->node)];
        n.cpu_free -= req.cpu_milli;
        n.mem_free -= req.mem_mib;
        ASSERT_GE(n.cpu_free, 0) << where;
        ASSERT_GE(n.mem_free, 0) << where;
        ASSERT_EQ(std::popcount(c->devices), req.device_count()) << where;
        for (size_t d = 0; d < n.devices.size(); ++d) {
          if (((c->devices >> d) & 1) == 0) continue;
          GpuDeviceFree& dev = n.devices[d];
          ASSERT_TRUE(req.allowed_types == 0 || ((req.allowed_types >> dev.type) & 1)) << where;
          int& u = used[static_cast<size_t>(c->node)][d];
          ASSERT_NE(u, 1) << where << ": device " << d << " is held whole";
          if (req.is_share()) {
            u = 2;
          } else {
            ASSERT_EQ(u, 0) << where << ": device " << d << " holds shares";
            u = 1;
          }
          dev.free_milli -= req.milli_per_device();
          ASSERT_GE(dev.free_milli, 0) << where;
        }
        ASSERT_EQ(c->devices >> n.devices.size(), 0u) << where;
      }
    }
  }
}

}  // namespace
}  // namespace berth::core
