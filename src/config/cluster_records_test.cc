// NodeName, PartitionName, QOS, Account and User records of the cluster configuration file.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "config/cluster_config.h"
#include "core/state/cluster_state.h"

namespace berth::config {
namespace {

ClusterConfig MustParse(std::string_view text) {
  Result<ClusterConfig> r = ParseClusterConfig(text, "t.conf");
  EXPECT_TRUE(r.ok()) << text << "\n-> " << r.status().ToString();
  return r.ok() ? std::move(r).value() : ClusterConfig();
}

bool Has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

struct ErrorCase {
  std::string text;
  std::string message;  // the whole message, or its start when it ends in "..."
};

void ExpectErrors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    Result<ClusterConfig> r = ParseClusterConfig(c.text, "t.conf");
    ASSERT_FALSE(r.ok()) << c.text;
    const std::string m = r.status().message();
    if (c.message.size() > 3 && c.message.compare(c.message.size() - 3, 3, "...") == 0) {
      std::string start = c.message.substr(0, c.message.size() - 3);
      EXPECT_EQ(m.substr(0, start.size()), start) << c.text;
    } else {
      EXPECT_EQ(m, c.message) << c.text;
    }
  }
}

// ---- NodeName

struct NodeCase {
  std::string text;  // lines; the node checked is the last one declared
  std::function<void(core::NodeSpec& want)> edit;  // applied to the expected spec
};

const NodeCase kNodeCases[] = {
    {"NodeName=n1", [](core::NodeSpec& n) { n.mem_mib = 1; }},  // Slurm's RealMemory default
    {"NodeName=n1 Sockets=2 CoresPerSocket=4 ThreadsPerCore=2",
     [](core::NodeSpec& n) {
       n.cpus = 16, n.sockets = 2, n.cores_per_socket = 4, n.threads_per_core = 2, n.mem_mib = 1;
     }},
    {"NodeName=n1 CPUs=16", [](core::NodeSpec& n) { n.cpus = 16, n.sockets = 16, n.mem_mib = 1; }},
    {"NodeName=n1 Procs=4", [](core::NodeSpec& n) { n.cpus = 4, n.sockets = 4, n.mem_mib = 1; }},
    {"NodeName=n1 CPUs=16 CoresPerSocket=4 ThreadsPerCore=2",
     [](core::NodeSpec& n) {
       n.cpus = 16, n.sockets = 2, n.cores_per_socket = 4, n.threads_per_core = 2, n.mem_mib = 1;
     }},
    {"NodeName=n1 CPUs=8 Sockets=2 CoresPerSocket=4 ThreadsPerCore=2",  // CPUs count cores
     [](core::NodeSpec& n) {
       n.cpus = 8, n.sockets = 2, n.cores_per_socket = 4, n.threads_per_core = 2, n.mem_mib = 1;
     }},
    {"NodeName=n1 CPUs=2 Sockets=2 CoresPerSocket=4",  // CPUs count sockets
     [](core::NodeSpec& n) { n.cpus = 2, n.sockets = 2, n.cores_per_socket = 4, n.mem_mib = 1; }},
    {"NodeName=n1 Boards=2 SocketsPerBoard=2 CoresPerSocket=2",
     [](core::NodeSpec& n) { n.cpus = 8, n.sockets = 4, n.cores_per_socket = 2, n.mem_mib = 1; }},
    {"NodeName=n1 RealMemory=2097152", [](core::NodeSpec& n) { n.mem_mib = 2097152; }},
    {"NodeName=n1 RealMemory=4G", [](core::NodeSpec& n) { n.mem_mib = 4096; }},
    {"NodeName=n1 Gres=gpu:h100:4",
     [](core::NodeSpec& n) {
       n.gpus = {"h100", "h100", "h100", "h100"}, n.mem_mib = 1;
     }},
    {"NodeName=n1 Gres=gpu:2",
     [](core::NodeSpec& n) {
       n.gpus = {"", ""}, n.mem_mib = 1;
     }},
    {"NodeName=n1 Gres=gpu", [](core::NodeSpec& n) { n.gpus = {""}, n.mem_mib = 1; }},
    {"NodeName=n1 Gres=gpu:a100:2,gpu:v100:1,shard:16,mps:100,shard:4,nic:mlx5:2",
     [](core::NodeSpec& n) {
       n.gpus = {"a100", "a100", "v100"};
       n.gres = {{"shard", 20}, {"mps", 100}, {"nic", 2}};
       n.mem_mib = 1;
     }},
    {"NodeName=n1 Gres=gpu:tesla:no_consume:2",
     [](core::NodeSpec& n) {
       n.gpus = {"tesla", "tesla"}, n.mem_mib = 1;
     }},
    {"NodeName=n1 Gres=gpu:64", [](core::NodeSpec& n) { n.gpus.assign(64, ""), n.mem_mib = 1; }},
    {"NodeName=n1 Features=ib,a100",
     [](core::NodeSpec& n) {
       n.features = {"ib", "a100"}, n.mem_mib = 1;
     }},
    {"NodeName=n1 Feature=ib", [](core::NodeSpec& n) { n.features = {"ib"}, n.mem_mib = 1; }},
    {"NodeName=n1 AvailableFeatures=ib ActiveFeatures=ib",
     [](core::NodeSpec& n) { n.features = {"ib"}, n.mem_mib = 1; }},
    {"NodeName=n1 Features=\"\"", [](core::NodeSpec& n) { n.mem_mib = 1; }},
    {"NodeName=n1 Weight=10", [](core::NodeSpec& n) { n.weight = 10, n.mem_mib = 1; }},
    {"NodeName=n1 Weight=0", [](core::NodeSpec& n) { n.weight = 0, n.mem_mib = 1; }},
    {"NodeName=n1 Weight=INFINITE", [](core::NodeSpec& n) { n.weight = INT32_MAX, n.mem_mib = 1; }},
    {"NodeName=n1 State=CLOUD", [](core::NodeSpec& n) { n.cloud = true, n.mem_mib = 1; }},
    {"NodeName=n1 State=unknown", [](core::NodeSpec& n) { n.mem_mib = 1; }},
    {"NodeName=n1 Topology=block1/switch3",
     [](core::NodeSpec& n) {
       n.topology = {"block1", "switch3"}, n.mem_mib = 1;
     }},
    {"NodeName=n1 NodeAddr=10.0.0.1 NodeHostname=h1 Port=17 TmpDisk=100 Reason=x CoreSpecCount=1",
     [](core::NodeSpec& n) { n.mem_mib = 1; }},
    {"nodename=n1 cpus=2 realmemory=10",
     [](core::NodeSpec& n) { n.cpus = 2, n.sockets = 2, n.mem_mib = 10; }},
    {"NodeName=DEFAULT CPUs=4 RealMemory=100\nNodeName=n1",
     [](core::NodeSpec& n) { n.cpus = 4, n.sockets = 4, n.mem_mib = 100; }},
    {"NodeName=DEFAULT CPUs=4 RealMemory=100\nNodeName=n1 CPUs=8",
     [](core::NodeSpec& n) { n.cpus = 8, n.sockets = 8, n.mem_mib = 100; }},
    {"NodeName=DEFAULT CPUs=4\nNodeName=DEFAULT RealMemory=100\nNodeName=n1",
     [](core::NodeSpec& n) { n.cpus = 4, n.sockets = 4, n.mem_mib = 100; }},
    {"NodeName=DEFAULT Features=a\nNodeName=n1 Feature=b",
     [](core::NodeSpec& n) { n.features = {"b"}, n.mem_mib = 1; }},
};

TEST(ClusterNodesTest, Values) {
  for (const NodeCase& c : kNodeCases) {
    ClusterConfig cfg = MustParse(c.text);
    ASSERT_FALSE(cfg.cluster.nodes.empty()) << c.text;
    core::NodeSpec want;
    want.name = "n1";
    c.edit(want);
    EXPECT_EQ(cfg.cluster.nodes.back(), want) << c.text;
  }
}

TEST(ClusterNodesTest, HostlistsAndIgnoredKeys) {
  ClusterConfig c = MustParse(
      "NodeName=gpu[01-03],cpu1 CPUs=2 NodeAddr=x State=DRAIN\n"
      "NodeName=n1 Port=1 State=DOWN\n");
  ASSERT_EQ(c.cluster.nodes.size(), 5u);
  EXPECT_EQ(c.cluster.nodes[0].name, "gpu01");
  EXPECT_EQ(c.cluster.nodes[3].name, "cpu1");
  EXPECT_EQ(c.cluster.nodes[3].cpus, 2);
  EXPECT_EQ(c.ignored_keys, (std::vector<std::string>{"NodeName:State=DRAIN", "NodeName:Port",
                                                      "NodeName:State=DOWN"}));
  // One NodeAddr for all four nodes (several slurmd on one host).
  EXPECT_EQ(c.node_addrs.size(), 4u);
  EXPECT_EQ(c.node_addrs.at("cpu1"), "x");
}

// NodeHostname and NodeAddr: one value per node name, in order, or one for all; and the node a
// host is, as slurmd finds its name.
TEST(ClusterNodesTest, HostNamesAddressesAndTheNodeAHostIs) {
  ClusterConfig c = MustParse(
      "NodeName=bench1 NodeHostname=vm CPUs=2\n"
      "NodeName=gpu[1-2] NodeHostname=host[7-8] NodeAddr=10.0.0.[7-8]\n"
      "NodeName=cpu1\n"
      "NodeName=multi[1-2] NodeAddr=10.0.0.9\n");
  EXPECT_EQ(c.node_hostnames, (std::map<std::string, std::string>{
                                  {"bench1", "vm"}, {"gpu1", "host7"}, {"gpu2", "host8"}}));
  EXPECT_EQ(c.node_addrs.at("gpu2"), "10.0.0.8");
  EXPECT_EQ(NodeNameOfHost(c, "vm", {}), "bench1");
  EXPECT_EQ(NodeNameOfHost(c, "vm.example.org", {}), "bench1");  // the short form too
  EXPECT_EQ(NodeNameOfHost(c, "host8", {}), "gpu2");
  EXPECT_EQ(NodeNameOfHost(c, "elsewhere", {"127.0.0.1", "10.0.0.7"}), "gpu1");
  EXPECT_EQ(NodeNameOfHost(c, "cpu1", {}), "cpu1");     // no NodeHostname: its own name
  EXPECT_EQ(NodeNameOfHost(c, "bench1", {}), "");       // bench1's host is vm
  EXPECT_EQ(NodeNameOfHost(c, "x", {"10.0.0.9"}), "");  // shared by two nodes: not one
  EXPECT_EQ(NodeNameOfHost(c, "unknown", {"192.0.2.1"}), "");
  ExpectErrors({{"NodeName=a[1-3] NodeHostname=h[1-2]",
                 "t.conf:1: NodeName=a[1-3]: invalid NodeHostname value 'h[1-2]': 2 values for 3 "
                 "node names ..."}});
}

TEST(ClusterNodesTest, Errors) {
  ExpectErrors({
      {"NodeName=n1 CPUs=x",
       "t.conf:1: NodeName=n1: invalid CPUs value 'x': expected an integer from 1 to 65535"},
      {"NodeName=n1 CPUs=0", "t.conf:1: NodeName=n1: invalid CPUs value '0': ..."},
      {"NodeName=n1 CPUs=65536", "t.conf:1: NodeName=n1: invalid CPUs value '65536': ..."},
      {"NodeName=n1 Sockets=-2", "t.conf:1: NodeName=n1: invalid Sockets value '-2': ..."},
      {"NodeName=n1 CoresPerSocket=",
       "t.conf:1: NodeName=n1: invalid CoresPerSocket value '': ..."},
      {"NodeName=n1 ThreadsPerCore=two",
       "t.conf:1: NodeName=n1: invalid ThreadsPerCore value 'two': ..."},
      {"NodeName=n1 CPUs=7 Sockets=2 CoresPerSocket=4",
       "t.conf:1: NodeName=n1: invalid CPUs value '7': matches none of Sockets (2), "
       "Sockets*CoresPerSocket (8) and Sockets*CoresPerSocket*ThreadsPerCore (8)"},
      {"NodeName=n1 CPUs=6 CoresPerSocket=4",  // 6 is no multiple of 4: one socket
       "t.conf:1: NodeName=n1: invalid CPUs value '6': matches none of Sockets (1), "
       "Sockets*CoresPerSocket (4) and Sockets*CoresPerSocket*ThreadsPerCore (4)"},
      {"NodeName=n1 Sockets=2 SocketsPerBoard=2",
       "t.conf:1: NodeName=n1: give Sockets or SocketsPerBoard, not both"},
      {"NodeName=n1 Sockets=256 CoresPerSocket=256",
       "t.conf:1: NodeName=n1: more than 65535 CPUs (65536)"},
      {"NodeName=n1 RealMemory=1X", "t.conf:1: NodeName=n1: invalid RealMemory value '1X': ..."},
      {"NodeName=n1 Gres=gpu:65",
       "t.conf:1: NodeName=n1: invalid Gres value 'gpu:65': more than 64 GPUs on one node"},
      {"NodeName=n1 Gres=gpu:32,gpu:a:33",
       "t.conf:1: NodeName=n1: invalid Gres value 'gpu:32,gpu:a:33': ..."},
      {"NodeName=n1 Gres=gpu:a:b:2",
       "t.conf:1: NodeName=n1: invalid Gres value 'gpu:a:b:2': bad GRES entry ..."},
      {"NodeName=n1 Features=a,,b",
       "t.conf:1: NodeName=n1: invalid Features value 'a,,b': empty item"},
      {"NodeName=n1 Weight=-1", "t.conf:1: NodeName=n1: invalid Weight value '-1': ..."},
      {"NodeName=n1 State=BROKEN", "t.conf:1: NodeName=n1: invalid State value 'BROKEN': ..."},
      {"NodeName=n1 Topology=a//b",
       "t.conf:1: NodeName=n1: invalid Topology value 'a//b': empty item"},
      {"NodeName=n1 Bogus=1", "t.conf:1: NodeName=n1: unknown key 'Bogus'"},
      {"NodeName=n[1-2]\nNodeName=n2", "t.conf:2: NodeName=n2: node 'n2' defined twice"},
      {"NodeName=n1,n1", "t.conf:1: NodeName=n1,n1: node 'n1' defined twice"},
      {"NodeName=ALL", "t.conf:1: NodeName=ALL: ALL is a reserved word"},
      {"NodeName=n[2-1]", "t.conf:1: NodeName=n[2-1]: invalid NodeName value 'n[2-1]': ..."},
      {"NodeName=\"\"", "t.conf:1: NodeName=: invalid NodeName value '': no node names"},
      {"NodeName=DEFAULT CPUs=x\nNodeName=n1",
       "t.conf:1: NodeName=DEFAULT: invalid CPUs value 'x': ..."},
      {"NodeName=DEFAULT Bogus=1", "t.conf:1: NodeName=DEFAULT: unknown key 'Bogus'"},
  });
}

// ---- PartitionName

TEST(ClusterPartitionsTest, AllValues) {
  ClusterConfig c = MustParse(
      "NodeName=n[1-2]\n"
      "Account=a\nAccount=b\nQOS=high\n"
      "PartitionName=p Nodes=n[1-2] Default=YES MaxTime=1-00:00:00 DefaultTime=30 "
      "PriorityTier=5 PriorityJobFactor=7 State=DRAIN MaxNodes=4 MinNodes=1 "
      "PreemptMode=REQUEUE OverSubscribe=FORCE:4 AllowAccounts=a,b AllowQos=normal,high "
      "DefMemPerCPU=1000\n");
  ASSERT_EQ(c.cluster.partitions.size(), 1u);
  core::PartitionSpec want;
  want.name = "p";
  want.nodes = {"n1", "n2"};
  want.is_default = true;
  want.max_time = 86400;
  want.default_time = 1800;
  want.priority_tier = 5;
  want.priority_job_factor = 7;
  want.state = core::PartitionState::kDrain;
  want.max_nodes = 4;
  want.min_nodes = 1;
  want.preempt_mode = core::PreemptMode::kRequeue;
  want.oversubscribe = core::OverSubscribe::kForce;
  want.allow_accounts = {"a", "b"};
  want.allow_qos = {"normal", "high"};
  want.def_mem_per_cpu_mib = 1000;
  EXPECT_EQ(c.cluster.partitions[0], want);
}

struct PartitionCase {
  std::string line;  // after "PartitionName=p "
  std::function<void(core::PartitionSpec& want)> edit;
};

TEST(ClusterPartitionsTest, Values) {
  const PartitionCase cases[] = {
      {"", [](core::PartitionSpec&) {}},
      {"MaxTime=INFINITE", [](core::PartitionSpec& p) { p.max_time = kInfinite; }},
      {"MaxTime=UNLIMITED DefaultTime=90", [](core::PartitionSpec& p) { p.default_time = 5400; }},
      {"MaxTime=0:30", [](core::PartitionSpec& p) { p.max_time = 60; }},  // minutes, rounded up
      {"MaxTime=0", [](core::PartitionSpec& p) { p.max_time = 0; }},
      {"Priority=3",
       [](core::PartitionSpec& p) { p.priority_tier = 3, p.priority_job_factor = 3; }},
      {"Priority=3 PriorityTier=9",
       [](core::PartitionSpec& p) { p.priority_tier = 3, p.priority_job_factor = 3; }},
      {"State=down", [](core::PartitionSpec& p) { p.state = core::PartitionState::kDown; }},
      {"State=INACTIVE", [](core::PartitionSpec& p) { p.state = core::PartitionState::kInactive; }},
      {"Shared=YES", [](core::PartitionSpec& p) { p.oversubscribe = core::OverSubscribe::kYes; }},
      {"OverSubscribe=YES:8",
       [](core::PartitionSpec& p) { p.oversubscribe = core::OverSubscribe::kYes; }},
      {"OverSubscribe=EXCLUSIVE",
       [](core::PartitionSpec& p) { p.oversubscribe = core::OverSubscribe::kExclusive; }},
      {"OverSubscribe=FORCE",
       [](core::PartitionSpec& p) { p.oversubscribe = core::OverSubscribe::kForce; }},
      {"OverSubscribe=no", [](core::PartitionSpec&) {}},
      {"MaxNodes=UNLIMITED", [](core::PartitionSpec&) {}},
      {"MaxNodes=INFINITE MinNodes=2", [](core::PartitionSpec& p) { p.min_nodes = 2; }},
      {"AllowAccounts=ALL AllowQos=ALL", [](core::PartitionSpec&) {}},
      {"DefMemPerNode=2000 DefMemPerCPU=100",
       [](core::PartitionSpec& p) { p.def_mem_per_node_mib = 2000; }},
      {"DefMemPerNode=UNLIMITED", [](core::PartitionSpec&) {}},
      {"PreemptMode=CANCEL",
       [](core::PartitionSpec& p) { p.preempt_mode = core::PreemptMode::kCancel; }},
      {"PreemptMode=GANG", [](core::PartitionSpec&) {}},
      {"Default=NO Default=yes", [](core::PartitionSpec& p) { p.is_default = true; }},
      {"GraceTime=30 Hidden=YES QOS=x TRESBillingWeights=CPU=1", [](core::PartitionSpec&) {}},
  };
  for (const PartitionCase& c : cases) {
    ClusterConfig cfg = MustParse("PartitionName=p " + c.line);
    ASSERT_EQ(cfg.cluster.partitions.size(), 1u) << c.line;
    core::PartitionSpec want;
    want.name = "p";
    c.edit(want);
    EXPECT_EQ(cfg.cluster.partitions[0], want) << c.line;
  }
}

TEST(ClusterPartitionsTest, NodesAllMeansEveryNodeOfTheFile) {
  ClusterConfig c = MustParse(
      "NodeName=n1\n"
      "PartitionName=DEFAULT Nodes=ALL MaxTime=10\n"
      "PartitionName=early\n"
      "NodeName=n[2-3]\n"
      "PartitionName=late MaxTime=20\n"
      "PartitionName=some Nodes=n2\n");
  ASSERT_EQ(c.cluster.partitions.size(), 3u);
  const std::vector<std::string> all = {"n1", "n2", "n3"};
  EXPECT_EQ(c.cluster.partitions[0].nodes, all);
  EXPECT_EQ(c.cluster.partitions[0].max_time, 600);
  EXPECT_EQ(c.cluster.partitions[1].nodes, all);
  EXPECT_EQ(c.cluster.partitions[1].max_time, 1200);
  EXPECT_EQ(c.cluster.partitions[2].nodes, (std::vector<std::string>{"n2"}));
}

TEST(ClusterPartitionsTest, LastDefaultWinsAndIgnoredKeys) {
  ClusterConfig c = MustParse(
      "PartitionName=a Default=YES GraceTime=5\n"
      "PartitionName=b Default=YES PreemptMode=requeue,gang\n");
  EXPECT_FALSE(c.cluster.partitions[0].is_default);
  EXPECT_TRUE(c.cluster.partitions[1].is_default);
  EXPECT_EQ(c.ignored_keys, (std::vector<std::string>{"PartitionName:PreemptMode=gang"}));
  EXPECT_EQ(c.partition_grace_s, (std::map<std::string, Duration>{{"a", 5}}));
}

TEST(ClusterPartitionsTest, GraceTimeOfPartitionsAndQos) {
  ClusterConfig c = MustParse(
      "PartitionName=DEFAULT GraceTime=60\n"
      "PartitionName=spot\n"
      "PartitionName=batch GraceTime=0\n"
      "QOS=low,scavenger GraceTime=120 Priority=1\n"
      "QOS=high Priority=10\n");
  EXPECT_EQ(c.partition_grace_s, (std::map<std::string, Duration>{{"spot", 60}}));
  EXPECT_EQ(c.qos_grace_s, (std::map<std::string, Duration>{{"low", 120}, {"scavenger", 120}}));
  EXPECT_EQ(c.kill_wait_s, -1);  // not given: the controller's default
  EXPECT_EQ(MustParse("KillWait=5\n").kill_wait_s, 5);
  EXPECT_EQ(c.min_job_age_s, -1);
  EXPECT_EQ(MustParse("MinJobAge=2\n").min_job_age_s, 2);
  EXPECT_EQ(MustParse("MinJobAge=0\n").min_job_age_s, 0);
  ExpectErrors({
      {"KillWait=soon", "t.conf:1: invalid KillWait value 'soon': ..."},
      {"MinJobAge=-1", "t.conf:1: invalid MinJobAge value '-1': ..."},
      {"PartitionName=p GraceTime=soon",
       "t.conf:1: PartitionName=p: invalid GraceTime value 'soon': ..."},
      {"QOS=q GraceTime=-5", "t.conf:1: QOS=q: invalid GraceTime value '-5': ..."},
  });
}

TEST(ClusterPartitionsTest, Errors) {
  ExpectErrors({
      {"PartitionName=p Default=maybe",
       "t.conf:1: PartitionName=p: invalid Default value 'maybe': expected YES or NO"},
      {"PartitionName=p MaxTime=1:xx",
       "t.conf:1: PartitionName=p: invalid MaxTime value '1:xx': ..."},
      {"PartitionName=p DefaultTime=soon",
       "t.conf:1: PartitionName=p: invalid DefaultTime value 'soon': ..."},
      {"PartitionName=p PriorityTier=70000",
       "t.conf:1: PartitionName=p: invalid PriorityTier value '70000': ..."},
      {"PartitionName=p PriorityJobFactor=-1",
       "t.conf:1: PartitionName=p: invalid PriorityJobFactor value '-1': ..."},
      {"PartitionName=p Priority=x", "t.conf:1: PartitionName=p: invalid Priority value 'x': ..."},
      {"PartitionName=p State=OPEN",
       "t.conf:1: PartitionName=p: invalid State value 'OPEN': expected UP, DOWN, DRAIN or "
       "INACTIVE"},
      {"PartitionName=p MaxNodes=many",
       "t.conf:1: PartitionName=p: invalid MaxNodes value 'many': ..."},
      {"PartitionName=p MinNodes=-1",
       "t.conf:1: PartitionName=p: invalid MinNodes value '-1': ..."},
      {"PartitionName=p OverSubscribe=YES:1",
       "t.conf:1: PartitionName=p: invalid OverSubscribe value 'YES:1': ..."},
      {"PartitionName=p OverSubscribe=NO:2",
       "t.conf:1: PartitionName=p: invalid OverSubscribe value 'NO:2': ..."},
      {"PartitionName=p Shared=MAYBE",
       "t.conf:1: PartitionName=p: invalid OverSubscribe value 'MAYBE': ..."},
      {"PartitionName=p PreemptMode=SUSPEND",
       "t.conf:1: PartitionName=p: invalid PreemptMode value 'SUSPEND': ..."},
      {"PartitionName=p AllowAccounts=a,",
       "t.conf:1: PartitionName=p: invalid AllowAccounts value 'a,': empty name"},
      {"PartitionName=p DefMemPerCPU=lots",
       "t.conf:1: PartitionName=p: invalid DefMemPerCPU value 'lots': ..."},
      {"PartitionName=p Nodes=n[1-", "t.conf:1: PartitionName=p: invalid Nodes value 'n[1-': ..."},
      {"PartitionName=p Nodes=n1,ALL",
       "t.conf:1: PartitionName=p: invalid Nodes value 'n1,ALL': ALL must stand alone"},
      {"PartitionName=p Bogus=1", "t.conf:1: PartitionName=p: unknown key 'Bogus'"},
      {"PartitionName=\"\"", "t.conf:1: PartitionName=: empty partition name"},
      {"PartitionName=p\nPartitionName=p",
       "t.conf:2: PartitionName=p: partition 'p' defined twice"},
      {"PartitionName=DEFAULT State=x",
       "t.conf:1: PartitionName=DEFAULT: invalid State value 'x': ..."},
      {"NodeName=n1\n\nPartitionName=p Nodes=n[1-2]",
       "t.conf:3: partition 'p' lists unknown node 'n2'"},
      {"PartitionName=p AllowAccounts=nope",
       "t.conf:1: partition 'p' allows unknown account 'nope'"},
      {"PartitionName=p AllowQos=nope", "t.conf:1: partition 'p' allows unknown QoS 'nope'"},
  });
}

// ---- QOS, Account, User

TEST(ClusterAccountsTest, Qos) {
  ClusterConfig c = MustParse(
      "QOS=high Priority=100 Preempt=low,normal PreemptMode=CANCEL UsageFactor=2.5 "
      "MaxTRESPerUser=cpu=64,gres/gpu=8,node=4,mem=256G MaxTRESPerAccount=gres/gpu=16 "
      "MaxTRESPerJob=cpu=-1,node=2 MaxJobsPerUser=5 MaxJobsPerAccount=10 MaxWall=2-00:00:00 "
      "Description=\"the fast lane\" Flags=DenyOnLimit\n"
      "QOS=low,scavenger MaxTRESPU=gres/gpu=1 MaxJobsPU=-1 MaxTRESPJ=node=1 "
      "MaxWallDurationPerJob=60 "
      "PreemptMode=cluster\n");
  ASSERT_EQ(c.cluster.qos.size(), 3u);
  core::QosSpec high;
  high.name = "high";
  high.priority = 100;
  high.preempt = {"low", "normal"};
  high.preempt_mode = core::PreemptMode::kCancel;
  high.usage_factor = 2.5;
  high.max_tres_per_user = {64, 256 * 1024, 8, 4};
  high.max_tres_per_account.gpus = 16;
  high.max_tres_per_job.nodes = 2;
  high.max_jobs_per_user = 5;
  high.max_jobs_per_account = 10;
  high.max_wall = 2 * 86400;
  EXPECT_EQ(c.cluster.qos[0], high);
  core::QosSpec low;
  low.name = "low";
  low.max_tres_per_user.gpus = 1;
  low.max_tres_per_job.nodes = 1;
  low.max_wall = 3600;
  EXPECT_EQ(c.cluster.qos[1], low);
  low.name = "scavenger";
  EXPECT_EQ(c.cluster.qos[2], low);
  EXPECT_EQ(c.ignored_keys, (std::vector<std::string>{"QOS:Description", "QOS:Flags"}));
}

TEST(ClusterAccountsTest, AccountsAndUsers) {
  ClusterConfig c = MustParse(
      "Account=root GrpJobs=500\n"
      "Account=physics Parent=science Fairshare=10 GrpTRES=gres/gpu=32,cpu=1024 GrpJobs=100 "
      "Description=x Organization=y\n"
      "Account=science,chemistry Shares=-1\n"
      "User=alice Account=physics,science DefaultAccount=science Fairshare=2 MaxJobs=4 "
      "MaxTRES=gres/gpu=2\n"
      "User=bob,carol Account=chemistry DefaultAccount=yes\n"
      "User=dave Account=physics DefaultAccount=no\n"
      "User=erin DefaultAccount=chemistry QOS=normal\n");
  const core::ClusterSpec& s = c.cluster;
  ASSERT_EQ(s.accounts.size(), 4u);
  EXPECT_EQ(s.accounts[0].name, "root");
  EXPECT_EQ(s.accounts[0].grp_jobs, 500);
  core::AccountSpec physics;
  physics.name = "physics";
  physics.parent = "science";
  physics.shares = 10;
  physics.grp_tres.gpus = 32;
  physics.grp_tres.cpus = 1024;
  physics.grp_jobs = 100;
  EXPECT_EQ(s.accounts[1], physics);
  EXPECT_EQ(s.accounts[2].name, "science");
  EXPECT_EQ(s.accounts[2].shares, 1);
  EXPECT_EQ(s.accounts[3].name, "chemistry");
  ASSERT_EQ(s.users.size(), 6u);
  core::UserSpec alice;
  alice.name = "alice";
  alice.account = "physics";
  alice.shares = 2;
  alice.max_jobs = 4;
  alice.max_tres_per_job.gpus = 2;
  EXPECT_EQ(s.users[0], alice);
  alice.account = "science";
  alice.is_default = true;
  EXPECT_EQ(s.users[1], alice);
  EXPECT_EQ(s.users[2].name, "bob");
  EXPECT_TRUE(s.users[2].is_default);
  EXPECT_EQ(s.users[3].name, "carol");
  EXPECT_TRUE(s.users[3].is_default);
  EXPECT_FALSE(s.users[4].is_default);
  EXPECT_EQ(s.users[5].account, "chemistry");
  EXPECT_TRUE(s.users[5].is_default);
  EXPECT_TRUE(Has(c.ignored_keys, "Account:Description"));
  EXPECT_TRUE(Has(c.ignored_keys, "User:QOS"));
  EXPECT_TRUE(core::ClusterState::Create(s).ok());
}

TEST(ClusterAccountsTest, Errors) {
  ExpectErrors({
      {"QOS=x Priority=-1", "t.conf:1: QOS=x: invalid Priority value '-1': ..."},
      {"QOS=x UsageFactor=abc", "t.conf:1: QOS=x: invalid UsageFactor value 'abc': ..."},
      {"QOS=x MaxTRESPerUser=billing=5",
       "t.conf:1: QOS=x: invalid MaxTRESPerUser value 'billing=5': bad TRES entry 'billing=5': "
       "berth limits only cpu, mem, node and gres/gpu"},
      {"QOS=x MaxTRESPA=cpu", "t.conf:1: QOS=x: invalid MaxTRESPA value 'cpu': ..."},
      {"QOS=x MaxJobsPerUser=-2", "t.conf:1: QOS=x: invalid MaxJobsPerUser value '-2': ..."},
      {"QOS=x MaxWall=forever", "t.conf:1: QOS=x: invalid MaxWall value 'forever': ..."},
      {"QOS=x PreemptMode=SUSPEND", "t.conf:1: QOS=x: invalid PreemptMode value 'SUSPEND': ..."},
      {"QOS=x Preempt=a,,b", "t.conf:1: QOS=x: invalid Preempt value 'a,,b': empty name"},
      {"QOS=x Bogus=1", "t.conf:1: QOS=x: unknown key 'Bogus'"},
      {"QOS=x\nQOS=x", "t.conf:2: QOS=x: QoS 'x' defined twice"},
      {"QOS=x,x", "t.conf:1: QOS=x,x: QoS 'x' defined twice"},
      {"QOS=normal\nQOS=normal", "t.conf:2: QOS=normal: QoS 'normal' defined twice"},
      {"QOS=x,", "t.conf:1: QOS=x,: invalid QOS value 'x,': empty name"},
      {"QOS=x Preempt=nope", "t.conf:1: QoS 'x' preempts unknown QoS 'nope'"},
      {"Account=a Parent=nope", "t.conf:1: account 'a' has unknown parent 'nope'"},
      {"Account=a Parent=b\nAccount=b Parent=a", "t.conf:1: account 'a' is its own ancestor"},
      {"Account=a Parent=a", "t.conf:1: account 'a' is its own ancestor"},
      {"Account=a Parent=\"\"", "t.conf:1: Account=a: invalid Parent value '': empty name"},
      {"Account=a Fairshare=parent",
       "t.conf:1: Account=a: invalid Fairshare value 'parent': Fairshare=parent is not supported"},
      {"Account=a GrpJobs=x", "t.conf:1: Account=a: invalid GrpJobs value 'x': ..."},
      {"Account=a GrpTRES=node=x", "t.conf:1: Account=a: invalid GrpTRES value 'node=x': ..."},
      {"Account=a\nAccount=a", "t.conf:2: Account=a: account 'a' defined twice"},
      {"Account=a Bogus=1", "t.conf:1: Account=a: unknown key 'Bogus'"},
      {"User=u", "t.conf:1: User=u: a User line needs Account="},
      {"User=u Account=nope", "t.conf:1: user 'u' is in unknown account 'nope'"},
      {"Account=a\nUser=u Account=a\nUser=u Account=a",
       "t.conf:3: User=u: user 'u' is in account 'a' twice"},
      {"Account=a\nUser=u Account=a,a", "t.conf:2: User=u: user 'u' is in account 'a' twice"},
      {"User=u Account=a DefaultAccount=\"\"",
       "t.conf:1: User=u: invalid DefaultAccount value '': ..."},
      {"User=u Account=a MaxJobs=lots", "t.conf:1: User=u: invalid MaxJobs value 'lots': ..."},
      {"User=u Account=a MaxTRES=gpu=1", "t.conf:1: User=u: invalid MaxTRES value 'gpu=1': ..."},
      {"User=u Account=a Fairshare=-5", "t.conf:1: User=u: invalid Fairshare value '-5': ..."},
      {"User=u Account=a Bogus=1", "t.conf:1: User=u: unknown key 'Bogus'"},
  });
}

}  // namespace
}  // namespace berth::config
