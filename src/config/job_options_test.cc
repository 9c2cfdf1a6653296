#include "config/job_options.h"

#include <gtest/gtest.h>

#include <functional>

namespace berth::config {
namespace {

constexpr Time kNow = 1700000000;

using core::ExclusiveMode;
using core::JobSpec;

struct GoodCase {
  std::string name;
  std::string value;
  std::function<void(const core::JobSpec&)> check;
};

const GoodCase kGoodCases[] = {
    {"job-name", "train", [](const JobSpec& s) { EXPECT_EQ(s.name, "train"); }},
    {"name", "eval", [](const JobSpec& s) { EXPECT_EQ(s.name, "eval"); }},
    {"--job-name", "dashed", [](const JobSpec& s) { EXPECT_EQ(s.name, "dashed"); }},
    {"account", "physics", [](const JobSpec& s) { EXPECT_EQ(s.account, "physics"); }},
    {"partition", "gpu",
     [](const JobSpec& s) { EXPECT_EQ(s.partitions, (std::vector<std::string>{"gpu"})); }},
    {"partition", "gpu,cpu",
     [](const JobSpec& s) {
       EXPECT_EQ(s.partitions, (std::vector<std::string>{"gpu", "cpu"}));
     }},
    {"qos", "high", [](const JobSpec& s) { EXPECT_EQ(s.qos, "high"); }},
    {"nodes", "4",
     [](const JobSpec& s) {
       EXPECT_EQ(s.min_nodes, 4);
       EXPECT_EQ(s.max_nodes, 4);
     }},
    {"nodes", "2-8",
     [](const JobSpec& s) {
       EXPECT_EQ(s.min_nodes, 2);
       EXPECT_EQ(s.max_nodes, 8);
     }},
    {"nodes", "0-3",
     [](const JobSpec& s) {
       EXPECT_EQ(s.min_nodes, 1);
       EXPECT_EQ(s.max_nodes, 3);
     }},
    {"nodes", "2-0",
     [](const JobSpec& s) {
       EXPECT_EQ(s.min_nodes, 2);
       EXPECT_EQ(s.max_nodes, 0);
     }},
    {"nodes", "1k", [](const JobSpec& s) { EXPECT_EQ(s.min_nodes, 1024); }},
    {"ntasks", "16", [](const JobSpec& s) { EXPECT_EQ(s.ntasks, 16); }},
    {"ntasks-per-node", "8", [](const JobSpec& s) { EXPECT_EQ(s.ntasks_per_node, 8); }},
    {"ntasks-per-gpu", "2", [](const JobSpec& s) { EXPECT_EQ(s.ntasks_per_gpu, 2); }},
    {"cpus-per-task", "4", [](const JobSpec& s) { EXPECT_EQ(s.cpus_per_task, 4); }},
    {"cpus-per-gpu", "6", [](const JobSpec& s) { EXPECT_EQ(s.cpus_per_gpu, 6); }},
    {"mem", "64G", [](const JobSpec& s) { EXPECT_EQ(s.mem_per_node_mib, 65536); }},
    {"mem", "0", [](const JobSpec& s) { EXPECT_EQ(s.mem_per_node_mib, 0); }},
    {"mem", "4000", [](const JobSpec& s) { EXPECT_EQ(s.mem_per_node_mib, 4000); }},
    {"mem-per-cpu", "2G", [](const JobSpec& s) { EXPECT_EQ(s.mem_per_cpu_mib, 2048); }},
    {"mem-per-gpu", "80GB", [](const JobSpec& s) { EXPECT_EQ(s.mem_per_gpu_mib, 81920); }},
    {"gpus", "8",
     [](const JobSpec& s) {
       EXPECT_EQ(s.gpus, 8);
       EXPECT_EQ(s.gpu_type, "");
     }},
    {"gpus", "a100:2",
     [](const JobSpec& s) {
       EXPECT_EQ(s.gpus, 2);
       EXPECT_EQ(s.gpu_type, "a100");
     }},
    {"gpus", "0", [](const JobSpec& s) { EXPECT_EQ(s.gpus, 0); }},
    {"gpus-per-node", "4", [](const JobSpec& s) { EXPECT_EQ(s.gpus_per_node, 4); }},
    {"gpus-per-node", "h100:8",
     [](const JobSpec& s) {
       EXPECT_EQ(s.gpus_per_node, 8);
       EXPECT_EQ(s.gpu_type, "h100");
     }},
    {"gpus-per-task", "1", [](const JobSpec& s) { EXPECT_EQ(s.gpus_per_task, 1); }},
    {"gpus-per-task", "v100:1", [](const JobSpec& s) { EXPECT_EQ(s.gpu_type, "v100"); }},
    {"gres", "gpu:2",
     [](const JobSpec& s) {
       EXPECT_EQ(s.gpus_per_node, 2);
       EXPECT_TRUE(s.gres.empty());
     }},
    {"gres", "gpu:a100:2",
     [](const JobSpec& s) {
       EXPECT_EQ(s.gpus_per_node, 2);
       EXPECT_EQ(s.gpu_type, "a100");
     }},
    {"gres", "gpu", [](const JobSpec& s) { EXPECT_EQ(s.gpus_per_node, 1); }},
    {"gres", "gres/gpu:4", [](const JobSpec& s) { EXPECT_EQ(s.gpus_per_node, 4); }},
    {"gres", "shard:4",
     [](const JobSpec& s) {
       EXPECT_EQ(s.gres, (std::vector<core::NamedCount>{{"shard", 4}}));
       EXPECT_EQ(s.gpus_per_node, 0);
     }},
    {"gres", "gpu:a100:1,gpu:a100:1,shard:2,shard:2",
     [](const JobSpec& s) {
       EXPECT_EQ(s.gpus_per_node, 2);
       EXPECT_EQ(s.gres, (std::vector<core::NamedCount>{{"shard", 4}}));
     }},
    {"gres", "none",
     [](const JobSpec& s) {
       EXPECT_TRUE(s.gres.empty());
       EXPECT_EQ(s.gpus_per_node, 0);
     }},
    {"gres", "mps:50",
     [](const JobSpec& s) {
       EXPECT_EQ(s.gpu_milli, 500);
       EXPECT_TRUE(s.gpu_mps);
       EXPECT_EQ(s.gpus_per_node, 0);
       EXPECT_TRUE(s.gres.empty());
     }},
    {"gres", "gres/mps:h100:100,shard:2",
     [](const JobSpec& s) {
       EXPECT_EQ(s.gpu_milli, 1000);
       EXPECT_EQ(s.gpu_type, "h100");
       EXPECT_EQ(s.gres, (std::vector<core::NamedCount>{{"shard", 2}}));
     }},
    {"time", "30", [](const JobSpec& s) { EXPECT_EQ(s.time_limit, 1800); }},
    {"time", "1-12:00:00", [](const JobSpec& s) { EXPECT_EQ(s.time_limit, 36 * 3600); }},
    {"time", "UNLIMITED", [](const JobSpec& s) { EXPECT_EQ(s.time_limit, kInfinite); }},
    {"time", "0", [](const JobSpec& s) { EXPECT_EQ(s.time_limit, kInfinite); }},
    {"time-min", "10:00", [](const JobSpec& s) { EXPECT_EQ(s.time_min, 600); }},
    {"begin", "now+1hour", [](const JobSpec& s) { EXPECT_EQ(s.begin_time, kNow + 3600); }},
    {"begin", "now+60", [](const JobSpec& s) { EXPECT_EQ(s.begin_time, kNow + 60); }},
    {"begin", "2024-01-05T10:30", [](const JobSpec& s) { EXPECT_EQ(s.begin_time, 1704450600); }},
    {"begin", "uts1800000000", [](const JobSpec& s) { EXPECT_EQ(s.begin_time, 1800000000); }},
    {"deadline", "now+2days", [](const JobSpec& s) { EXPECT_EQ(s.deadline, kNow + 2 * 86400); }},
    {"nice", "", [](const JobSpec& s) { EXPECT_EQ(s.nice, 100); }},
    {"nice", "-20", [](const JobSpec& s) { EXPECT_EQ(s.nice, -20); }},
    {"nice", "2147483645", [](const JobSpec& s) { EXPECT_EQ(s.nice, 2147483645); }},
    {"priority", "500", [](const JobSpec& s) { EXPECT_EQ(s.admin_priority, 500); }},
    {"priority", "0", [](const JobSpec& s) { EXPECT_EQ(s.admin_priority, 0); }},
    {"priority", "top", [](const JobSpec& s) { EXPECT_EQ(s.admin_priority, 4294967293); }},
    {"hold", "", [](const JobSpec& s) { EXPECT_EQ(s.hold, core::HoldKind::kUser); }},
    {"exclusive", "", [](const JobSpec& s) { EXPECT_EQ(s.exclusive, ExclusiveMode::kNode); }},
    {"exclusive", "exclusive",
     [](const JobSpec& s) { EXPECT_EQ(s.exclusive, ExclusiveMode::kNode); }},
    {"exclusive", "user", [](const JobSpec& s) { EXPECT_EQ(s.exclusive, ExclusiveMode::kUser); }},
    {"exclusive", "oversubscribe",
     [](const JobSpec& s) {
       EXPECT_EQ(s.exclusive, ExclusiveMode::kNo);
       EXPECT_TRUE(s.oversubscribe);
     }},
    {"oversubscribe", "", [](const JobSpec& s) { EXPECT_TRUE(s.oversubscribe); }},
    {"constraint", "a100&ib", [](const JobSpec& s) { EXPECT_EQ(s.constraint.text(), "a100&ib"); }},
    {"constraint", "[rack1|rack2]",
     [](const JobSpec& s) {
       EXPECT_EQ(s.constraint.MatchingAlternatives(), (std::vector<std::string>{"rack1", "rack2"}));
     }},
    {"nodelist", "gpu[01-03],cpu1",
     [](const JobSpec& s) {
       EXPECT_EQ(s.nodelist, (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "cpu1"}));
     }},
    {"exclude", "n[1-2]",
     [](const JobSpec& s) {
       EXPECT_EQ(s.exclude, (std::vector<std::string>{"n1", "n2"}));
     }},
    {"dependency", "afterok:12:13",
     [](const JobSpec& s) {
       ASSERT_EQ(s.dependency.conditions.size(), 1u);
       EXPECT_EQ(s.dependency.conditions[0].type, core::DependencyType::kAfterOk);
       EXPECT_EQ(s.dependency.conditions[0].targets.size(), 2u);
     }},
    {"dependency", "singleton", [](const JobSpec& s) { EXPECT_FALSE(s.dependency.empty()); }},
    {"kill-on-invalid-dep", "yes", [](const JobSpec& s) { EXPECT_TRUE(s.kill_on_invalid_dep); }},
    {"kill-on-invalid-dep", "NO", [](const JobSpec& s) { EXPECT_FALSE(s.kill_on_invalid_dep); }},
    {"kill-on-invalid-dep", "", [](const JobSpec& s) { EXPECT_TRUE(s.kill_on_invalid_dep); }},
    {"array", "0-15:4%2",
     [](const JobSpec& s) {
       EXPECT_EQ(s.array.task_ids, (std::vector<int32_t>{0, 4, 8, 12}));
       EXPECT_EQ(s.array.max_running, 2);
     }},
    {"array", "500-17000:1000%26",
     [](const JobSpec& s) { EXPECT_EQ(s.array.task_ids.size(), 17u); }},
    {"requeue", "", [](const JobSpec& s) { EXPECT_TRUE(s.requeue); }},
    {"no-requeue", "", [](const JobSpec& s) { EXPECT_FALSE(s.requeue); }},
    {"licenses", "matlab:2,fluent",
     [](const JobSpec& s) {
       EXPECT_EQ(s.licenses, (std::vector<core::NamedCount>{{"matlab", 2}, {"fluent", 1}}));
     }},
    {"licenses", "SCRATCH*3",
     [](const JobSpec& s) {
       EXPECT_EQ(s.licenses, (std::vector<core::NamedCount>{{"SCRATCH", 3}}));
     }},
    {"reservation", "maint", [](const JobSpec& s) { EXPECT_EQ(s.reservation, "maint"); }},
    {"user", "alice", [](const JobSpec& s) { EXPECT_EQ(s.user, "alice"); }},
    {"uid", "1001", [](const JobSpec& s) { EXPECT_EQ(s.uid, 1001u); }},
};

TEST(JobOptionsTest, GoodValues) {
  for (const GoodCase& c : kGoodCases) {
    SCOPED_TRACE("--" + c.name + "=" + c.value);
    EXPECT_TRUE(IsJobOption(c.name));
    core::JobSpec spec;
    if (c.name == "no-requeue") spec.requeue = true;
    Status s = ApplyJobOption(c.name, c.value, kNow, spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
    c.check(spec);
  }
}

struct BadCase {
  std::string name;
  std::string value;
  std::string message;  // the whole message, or its start when it ends in "..."
};

const BadCase kBadCases[] = {
    {"foo", "1", "unrecognized option '--foo'"},
    {"--foo", "1", "unrecognized option '--foo'"},
    {"hold", "yes", "option '--hold' doesn't allow an argument"},
    {"requeue", "1", "option '--requeue' doesn't allow an argument"},
    {"oversubscribe", "x", "option '--oversubscribe' doesn't allow an argument"},
    {"time", "", "option '--time' requires an argument"},
    {"account", "", "option '--account' requires an argument"},
    {"nodes", "x", "invalid --nodes value 'x': expected N or MIN-MAX"},
    {"nodes", "0", "invalid --nodes value '0': 0 is not a valid node count"},
    {"nodes", "4-2", "invalid --nodes value '4-2': the maximum is less than the minimum"},
    {"nodes", "-4", "invalid --nodes value '-4': ..."},
    {"nodes", "2-", "invalid --nodes value '2-': ..."},
    {"nodes", "1,2", "invalid --nodes value '1,2': ..."},
    {"nodes", "3000000k", "invalid --nodes value '3000000k': node count too large"},
    {"ntasks", "0", "invalid --ntasks value '0': expected an integer from 1 to 2147483647"},
    {"ntasks", "-1", "invalid --ntasks value '-1': ..."},
    {"ntasks-per-node", "x", "invalid --ntasks-per-node value 'x': ..."},
    {"ntasks-per-gpu", "0", "invalid --ntasks-per-gpu value '0': ..."},
    {"cpus-per-task", "0", "invalid --cpus-per-task value '0': ..."},
    {"cpus-per-gpu", "1.5", "invalid --cpus-per-gpu value '1.5': ..."},
    {"mem", "4X", "invalid --mem value '4X': ..."},
    {"mem", "-1", "invalid --mem value '-1': negative sizes are not allowed"},
    {"mem-per-cpu", "lots", "invalid --mem-per-cpu value 'lots': ..."},
    // Found by fuzzing (fuzz/corpus/sbatch_script/mem-over-1eib): sbatch took it, the API did not.
    {"mem-per-cpu", "1601402360G",
     "invalid --mem-per-cpu value '1601402360G': more memory than any node has (over 1 EiB)"},
    {"mem", "1048577T",
     "invalid --mem value '1048577T': more memory than any node has (over 1 EiB)"},
    {"mem-per-gpu", "1.5G", "invalid --mem-per-gpu value '1.5G': ..."},
    {"gpus", "x", "invalid --gpus value 'x': ..."},
    {"gpus", "a100:2,v100:1",
     "invalid --gpus value 'a100:2,v100:1': berth takes one GPU type per job"},
    {"gpus", "gpu:a100:2", "invalid --gpus value 'gpu:a100:2': expected [type:]count"},
    {"gpus", ":2", "invalid --gpus value ':2': expected [type:]count"},
    {"gpus-per-node", "-1", "invalid --gpus-per-node value '-1': ..."},
    {"gpus-per-task", "a100:", "invalid --gpus-per-task value 'a100:': ..."},
    {"gres", "gpu:a:b:2", "invalid --gres value 'gpu:a:b:2': expected name[:type][:count]"},
    {"gres", "gpu:a100:1,gpu:v100:1",
     "invalid --gres value 'gpu:a100:1,gpu:v100:1': berth takes one GPU type per job"},
    {"gres", "gpu:2,,shard", "invalid --gres value 'gpu:2,,shard': empty name"},
    {"gres", "mps:150", "invalid --gres value 'mps:150': mps is a percentage of one GPU: 1..100"},
    {"gres", "mps:0", "invalid --gres value 'mps:0': mps is a percentage of one GPU: 1..100"},
    {"gres", "gpu:1,mps:50",
     "invalid --gres value 'gpu:1,mps:50': a job asks for whole GPUs or an MPS share, not both"},
    {"time", "1:xx", "invalid --time value '1:xx': ..."},
    {"time", "2h", "invalid --time value '2h': ..."},
    {"time-min", "-5", "invalid --time-min value '-5': ..."},
    {"begin", "noon",
     "invalid --begin value 'noon': this form depends on the local time zone, ..."},
    {"begin", "now+1h", "invalid --begin value 'now+1h': unknown unit 'h' ..."},
    {"begin", "2024-13-01", "invalid --begin value '2024-13-01': ..."},
    {"deadline", "whenever", "invalid --deadline value 'whenever': unknown time format; ..."},
    {"nice", "x", "invalid --nice value 'x': ..."},
    {"nice", "2147483646", "invalid --nice value '2147483646': ..."},
    {"priority", "-1",
     "invalid --priority value '-1': expected TOP or an integer from 0 to 4294967293"},
    {"priority", "4294967294", "invalid --priority value '4294967294': ..."},
    {"priority", "high", "invalid --priority value 'high': ..."},
    {"exclusive", "mcs", "invalid --exclusive value 'mcs': berth does not support this mode ..."},
    {"exclusive", "topo", "invalid --exclusive value 'topo': ..."},
    {"exclusive", "node",
     "invalid --exclusive value 'node': expected nothing, user or oversubscribe"},
    {"constraint", "a&&b", "invalid --constraint value 'a&&b': ..."},
    {"nodelist", "n[1-", "invalid --nodelist value 'n[1-': ..."},
    {"nodelist", "/tmp/hosts",
     "invalid --nodelist value '/tmp/hosts': node list files are not supported; ..."},
    {"exclude", "n[3-1]", "invalid --exclude value 'n[3-1]': ..."},
    {"dependency", "aftr:1", "invalid --dependency value 'aftr:1': ..."},
    {"kill-on-invalid-dep", "maybe",
     "invalid --kill-on-invalid-dep value 'maybe': expected yes or no"},
    {"array", "5-2", "invalid --array value '5-2': ..."},
    {"array", "0-4000001", "invalid --array value '0-4000001': ..."},
    {"licenses", "matlab:0", "invalid --licenses value 'matlab:0': ..."},
    {"licenses", "a,,b", "invalid --licenses value 'a,,b': ..."},
    {"partition", "a,,b", "invalid --partition value 'a,,b': empty partition name"},
    {"uid", "alice", "invalid --uid value 'alice': expected a numeric user id"},
    {"uid", "4294967295", "invalid --uid value '4294967295': ..."},
};

TEST(JobOptionsTest, BadValues) {
  for (const BadCase& c : kBadCases) {
    SCOPED_TRACE("--" + c.name + "=" + c.value);
    core::JobSpec spec;
    Status s = ApplyJobOption(c.name, c.value, kNow, spec);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    const std::string& m = s.message();
    if (c.message.size() > 3 && c.message.compare(c.message.size() - 3, 3, "...") == 0) {
      std::string start = c.message.substr(0, c.message.size() - 3);
      EXPECT_EQ(m.substr(0, start.size()), start);
    } else {
      EXPECT_EQ(m, c.message);
    }
  }
}

TEST(JobOptionsTest, MaxArraySize) {
  core::JobSpec spec;
  EXPECT_TRUE(ApplyJobOption("array", "0-1000", kNow, 1001, spec).ok());
  Status s = ApplyJobOption("array", "0-1001", kNow, 1001, spec);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("invalid --array value '0-1001': ", 0), 0u) << s.message();
  EXPECT_TRUE(ApplyJobOption("array", "0-99999", kNow, 100000, spec).ok());
}

TEST(JobOptionsTest, LaterOptionsWinAndExclusiveOversubscribeInteract) {
  core::JobSpec spec;
  ASSERT_TRUE(ApplyJobOption("exclusive", "", kNow, spec).ok());
  ASSERT_TRUE(ApplyJobOption("oversubscribe", "", kNow, spec).ok());
  EXPECT_EQ(spec.exclusive, core::ExclusiveMode::kNo);
  EXPECT_TRUE(spec.oversubscribe);
  ASSERT_TRUE(ApplyJobOption("exclusive", "user", kNow, spec).ok());
  EXPECT_EQ(spec.exclusive, core::ExclusiveMode::kUser);
  EXPECT_FALSE(spec.oversubscribe);
  // A GPU type given once stays when a later option gives only a count.
  ASSERT_TRUE(ApplyJobOption("gres", "gpu:a100:2", kNow, spec).ok());
  ASSERT_TRUE(ApplyJobOption("gpus-per-task", "1", kNow, spec).ok());
  EXPECT_EQ(spec.gpu_type, "a100");
  // A bad value leaves the field as it was.
  ASSERT_TRUE(ApplyJobOption("time", "10", kNow, spec).ok());
  EXPECT_FALSE(ApplyJobOption("time", "x", kNow, spec).ok());
  EXPECT_EQ(spec.time_limit, 600);
}

TEST(JobOptionsTest, IsJobOption) {
  EXPECT_TRUE(IsJobOption("gpus-per-node"));
  EXPECT_TRUE(IsJobOption("--nodes"));
  EXPECT_FALSE(IsJobOption("output"));  // an exec option, not a scheduling one
  EXPECT_FALSE(IsJobOption("node"));    // no getopt-style abbreviations here
  EXPECT_FALSE(IsJobOption(""));
}

}  // namespace
}  // namespace berth::config
