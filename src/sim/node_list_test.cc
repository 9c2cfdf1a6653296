// The openb node list and pod list readers (sim/node_list.h) and the fill experiment on them.
#include "sim/node_list.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/gpu_fill.h"

namespace berth::sim {
namespace {

TEST(NodeListTest, ReadsRowsByColumnName) {
  const std::string text =
      "\xEF\xBB\xBFsn,cpu_milli,memory_mib,gpu,model\r\n"
      "openb-node-0000,64000,262144,2,P100\r\n"
      "\n"
      "openb-node-0001, 96000 , 393216, 8, G2\n"
      "cpu-node,32000,131072,0,\n";
  Result<NodeList> l = ParseNodeList(text, "/data/nodes.csv");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->name, "nodes.csv");
  ASSERT_EQ(l->nodes.size(), 3u);
  EXPECT_EQ(l->total_gpus, 10);
  EXPECT_EQ(l->nodes[0].name, "openb-node-0000");
  EXPECT_EQ(l->nodes[0].cpu_milli, 64000);
  EXPECT_EQ(l->nodes[0].mem_mib, 262144);
  EXPECT_EQ(l->nodes[0].gpus, 2);
  EXPECT_EQ(l->nodes[0].model, "P100");
  EXPECT_EQ(l->nodes[1].line, 4);
  EXPECT_EQ(l->nodes[1].model, "G2");
  EXPECT_EQ(l->nodes[2].gpus, 0);
  EXPECT_EQ(l->nodes[2].model, "");
  const std::string reordered = "model,gpu,sn,memory_mib,cpu_milli,extra\nT4,2,n1,1024,8000,x\n";
  Result<NodeList> r = ParseNodeList(reordered, "r.csv");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->nodes[0].name, "n1");
  EXPECT_EQ(r->nodes[0].cpu_milli, 8000);
  EXPECT_TRUE(IsNodeListHeader("sn,cpu_milli,memory_mib,gpu,model"));
  EXPECT_FALSE(IsNodeListHeader("name,cpu_milli,memory_mib,num_gpu,gpu_milli"));
}

TEST(NodeListTest, BecomesAClusterForTheReplay) {
  Result<NodeList> l = ParseNodeList(
      "sn,cpu_milli,memory_mib,gpu,model\na,64500,262144,2,P100\nb,500,1024,0,\n", "n.csv");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  core::ClusterSpec c = NodeListCluster(*l);
  ASSERT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(c.nodes[0].name, "a");
  EXPECT_EQ(c.nodes[0].cpus, 64);  // whole CPUs, rounded down
  EXPECT_EQ(c.nodes[0].mem_mib, 262144);
  EXPECT_EQ(c.nodes[0].gpus, (std::vector<std::string>{"P100", "P100"}));
  EXPECT_EQ(c.nodes[1].cpus, 1);  // at least one
  EXPECT_TRUE(c.nodes[1].gpus.empty());
}

TEST(NodeListTest, MalformedRowsNameFileAndLine) {
  const std::string header = "sn,cpu_milli,memory_mib,gpu,model\n";
  struct Case {
    std::string body;
    std::string want;
  };
  for (const Case& c : {
           Case{"n1,64000,1024,2,P100,extra\n", "n.csv:2: expected 5 fields, found 6"},
           Case{"n1,64000,1024,2,P100\nn2,lots,1024,2,P100\n",
                "n.csv:3: cpu_milli is not a number from 0 to"},
           Case{"n1,64000,-5,2,P100\n", "n.csv:2: memory_mib is not a number"},
           Case{"n1,64000,1024,65,P100\n", "n.csv:2: gpu is not a number from 0 to 64"},
           Case{"n1,64000,1024,2,\n", "n.csv:2: a node with GPUs needs a model"},
           Case{",64000,1024,2,P100\n", "n.csv:2: empty node name"},
           Case{"n1,64000,\"1024,2,P100\n", "n.csv:2: "},
       }) {
    Result<NodeList> l = ParseNodeList(header + c.body, "n.csv");
    ASSERT_FALSE(l.ok()) << c.body;
    EXPECT_NE(l.status().message().find(c.want), std::string::npos) << l.status().message();
  }
  Result<NodeList> no_model = ParseNodeList("sn,cpu_milli,memory_mib,gpu\nn1,1,1,0\n", "n.csv");
  ASSERT_FALSE(no_model.ok());
  EXPECT_NE(no_model.status().message().find("n.csv:1: the header has no column 'model'"),
            std::string::npos);
  EXPECT_FALSE(ParseNodeList(header, "n.csv").ok());  // no nodes
  EXPECT_FALSE(ReadNodeList("/nonexistent/nodes.csv").ok());
}

TEST(PodListTest, ReadsSharesWholeGpusAndModels) {
  const std::string text =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "p0,12000,16384,1,1000,,LS,Running,0,100,0\n"
      "p1,6000,12288,1,460,V100M16|V100M32,LS,Pending,5,,\n"  // never ran: kept all the same
      "p2,4000,1024,8,1000,G2,LS,Running,0,100,0\n"
      "p3,2000,1024,0,0,,BE,Running,0,100,0\n";
  Result<PodList> l = ParsePodList(text, "pods.csv");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_EQ(l->pods.size(), 4u);
  EXPECT_EQ(l->pods[0].gpus, 1);
  EXPECT_EQ(l->pods[0].share_milli, 0);
  EXPECT_EQ(l->pods[1].gpus, 0);
  EXPECT_EQ(l->pods[1].share_milli, 460);
  EXPECT_EQ(l->pods[1].gpu_models, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_EQ(l->pods[2].gpus, 8);
  EXPECT_EQ(l->pods[3].gpus, 0);
  EXPECT_EQ(l->pods[3].cpu_milli, 2000);
  Result<PodList> bad =
      ParsePodList("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1,1,1001\n", "pods.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("pods.csv:2: gpu_milli is not a number from 0 to 1000"),
            std::string::npos);
}

// Two nodes of 2 GPUs (4 GPUs); pods: 0.5, 0.5, 1, 1 GPU = 3 GPUs (75%), then draws to 130%.
TEST(GpuFillTest, ArrivalsReachTheLastCheckpointAndAllocationsAddUp) {
  Result<NodeList> nodes = ParseNodeList(
      "sn,cpu_milli,memory_mib,gpu,model\na,8000,1024,2,T4\nb,8000,1024,2,T4\n", "n.csv");
  Result<PodList> pods = ParsePodList(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "p0,1000,1,1,500\np1,1000,1,1,500\np2,1000,1,1,1000\np3,1000,1,1,1000\n",
      "p.csv");
  ASSERT_TRUE(nodes.ok() && pods.ok());
  FillOptions o;
  o.placements = {core::GpuPlacement::kFirstFit, core::GpuPlacement::kFgd};
  o.seed = 7;
  Result<FillRun> run = RunFill(*nodes, *pods, o);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->list_pods, 4);
  EXPECT_DOUBLE_EQ(run->list_demand_gpus, 3);
  EXPECT_GT(run->sampled_pods, 0);
  ASSERT_EQ(run->results.size(), 2u);
  for (const FillResult& r : run->results) {
    EXPECT_EQ(r.gpus_total, 4);
    EXPECT_EQ(r.pods_placed + r.pods_refused, r.pods_arrived);
    for (size_t i = 0; i < kFillCheckpoints.size(); ++i) {
      EXPECT_GE(r.unallocated_gpus[i], 0);
      EXPECT_LE(r.unallocated_gpus[i], 4);
      EXPECT_DOUBLE_EQ(r.allocated_share[i], 1 - r.unallocated_gpus[i] / 4);
      if (i > 0) {
        EXPECT_LE(r.unallocated_gpus[i], r.unallocated_gpus[i - 1]);
      }
    }
  }
  // The same seed gives the same run.
  Result<FillRun> again = RunFill(*nodes, *pods, o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->sampled_pods, run->sampled_pods);
  EXPECT_EQ(again->results[1].unallocated_gpus, run->results[1].unallocated_gpus);
  Result<NodeList> cpu_only =
      ParseNodeList("sn,cpu_milli,memory_mib,gpu,model\na,8000,1024,0,\n", "c.csv");
  ASSERT_TRUE(cpu_only.ok());
  EXPECT_FALSE(RunFill(*cpu_only, *pods, o).ok());
}

}  // namespace
}  // namespace berth::sim
