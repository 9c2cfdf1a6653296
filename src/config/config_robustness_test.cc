// Property tests: no input crashes the parsers, and every error names where it came from
// (the file and line, or the option). Inputs are mutations of valid text from a seeded
// generator; a failure prints the seed and the input, so it replays exactly.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "config/cluster_config.h"
#include "config/job_options.h"
#include "core/state/cluster_state.h"

namespace berth::config {
namespace {

constexpr char kBase[] =
    "ClusterName=test MaxArraySize=5000 Licenses=a:2,b\n"
    "NodeName=DEFAULT Sockets=2 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=64000\n"
    "NodeName=gpu[01-04] Gres=gpu:h100:8,shard:16 Features=ib,h100 Topology=b1/s1 \\\n"
    "  Weight=5 State=CLOUD\n"
    "NodeName=cpu[1-8] CPUs=8 Sockets=2 CoresPerSocket=4 # a comment\n"
    "PartitionName=DEFAULT MaxTime=1-00:00:00 State=UP\n"
    "PartitionName=gpu Nodes=gpu[01-04] Default=YES PriorityTier=2 OverSubscribe=FORCE:2\n"
    "PartitionName=all Nodes=ALL AllowQos=normal,high PreemptMode=REQUEUE\n"
    "QOS=high Priority=10 Preempt=normal MaxTRESPerUser=gres/gpu=8,mem=1T MaxWall=2-0\n"
    "Account=phys Parent=root Fairshare=3 GrpTRES=cpu=100\n"
    "User=ann Account=phys DefaultAccount=yes MaxTRES=node=2\n"
    "SchedulerPolicy=easy\n"
    "SchedulerParameters=bf_window=60,bf_continue PriorityWeightTRES=CPU=1,GRES/gpu=4\n"
    "TRESBillingWeights=CPU=1.0,Mem=0.25G PreemptType=preempt/qos PreemptMode=CANCEL\n";

constexpr char kNoise[] = "=,:;[]-\\#\" \n\t*/0123456789aZ_.%&|?()";

std::string Mutate(std::string text, std::mt19937& rng) {
  std::uniform_int_distribution<int> edits(1, 4);
  std::uniform_int_distribution<int> kind(0, 3);
  std::uniform_int_distribution<size_t> noise(0, sizeof(kNoise) - 2);
  for (int e = edits(rng); e > 0 && !text.empty(); --e) {
    size_t at = std::uniform_int_distribution<size_t>(0, text.size() - 1)(rng);
    switch (kind(rng)) {
      case 0:
        text[at] = kNoise[noise(rng)];
        break;
      case 1:
        text.insert(at, 1, kNoise[noise(rng)]);
        break;
      case 2:
        text.erase(at, std::uniform_int_distribution<size_t>(1, 8)(rng));
        break;
      default:
        text.insert(at, text.substr(at, std::uniform_int_distribution<size_t>(1, 12)(rng)));
    }
  }
  return text;
}

TEST(ConfigRobustnessTest, ClusterFileMutations) {
  ASSERT_TRUE(ParseClusterConfig(kBase, "t.conf").ok())
      << ParseClusterConfig(kBase, "t.conf").status().ToString();
  for (uint32_t seed = 0; seed < 3000; ++seed) {
    std::mt19937 rng(seed);
    std::string text = Mutate(kBase, rng);
    Result<ClusterConfig> r = ParseClusterConfig(text, "t.conf");
    if (r.ok()) {
      (void)core::ClusterState::Create(r->cluster);  // may refuse; must not crash
      continue;
    }
    std::string m = r.status().message();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << "seed " << seed;
    EXPECT_EQ(m.rfind("t.conf:", 0), 0u) << "seed " << seed << ": " << m << "\n" << text;
  }
}

TEST(ConfigRobustnessTest, JobOptionNoise) {
  const char* names[] = {"account",
                         "array",
                         "begin",
                         "constraint",
                         "cpus-per-gpu",
                         "cpus-per-task",
                         "deadline",
                         "dependency",
                         "exclude",
                         "exclusive",
                         "gpus",
                         "gpus-per-node",
                         "gpus-per-task",
                         "gres",
                         "hold",
                         "job-name",
                         "kill-on-invalid-dep",
                         "licenses",
                         "mem",
                         "mem-per-cpu",
                         "mem-per-gpu",
                         "name",
                         "nice",
                         "no-requeue",
                         "nodelist",
                         "nodes",
                         "ntasks",
                         "ntasks-per-gpu",
                         "ntasks-per-node",
                         "oversubscribe",
                         "partition",
                         "priority",
                         "qos",
                         "requeue",
                         "reservation",
                         "time",
                         "time-min",
                         "uid",
                         "user"};
  const char* seeds[] = {"4",           "2-8",
                         "a100:2",      "gpu:a100:2",
                         "now+1hour",   "2024-01-05T10:30",
                         "1-12:00:00",  "64G",
                         "afterok:1:2", "n[1-4]",
                         "0-15:4%2",    "a:2,b",
                         "[a|b]&c",     "TOP",
                         "user",        ""};
  std::mt19937 rng(7);
  for (const char* name : names) {
    ASSERT_TRUE(IsJobOption(name)) << name;
    for (const char* value : seeds) {
      for (int round = 0; round < 40; ++round) {
        std::string v = round == 0 ? value : Mutate(value, rng);
        core::JobSpec spec;
        Status s = ApplyJobOption(name, v, 1700000000, spec);
        if (s.ok()) continue;
        EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
        EXPECT_NE(s.message().find(std::string("--") + name), std::string::npos)
            << name << "=" << v << ": " << s.message();
      }
    }
  }
}

}  // namespace
}  // namespace berth::config
