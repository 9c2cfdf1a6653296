#include "slurm/sinfo_view.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <map>
#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

// A node as GET /v1/nodes lists it (src/controller/controller_http.cc).
json Node(const std::string& name, const std::string& state, int alloc_cpus = 0,
          json extra = json::object()) {
  json n = {{"name", name},
            {"state", state},
            {"reason", ""},
            {"cpus", 64},
            {"alloc_cpus", alloc_cpus},
            {"mem_mib", 1000000},
            {"alloc_mem_mib", 0},
            {"gpus", json::array()},
            {"alloc_gpus", 0},
            {"gres", json::object()},
            {"features", json::array()},
            {"partitions", {"batch"}},
            {"jobs", json::array()},
            {"weight", 1},
            {"sockets", 64},
            {"cores_per_socket", 1},
            {"threads_per_core", 1},
            {"last_seen", 0},
            {"agent_connected", true}};
  for (const auto& [k, v] : extra.items()) n[k] = v;
  return n;
}

json Partition(const std::string& name, const std::string& nodes, bool is_default,
               json extra = json::object()) {
  json p = {{"name", name},   {"default", is_default}, {"state", "UP"},  {"nodes", nodes},
            {"max_time", -1}, {"default_time", -1},    {"max_nodes", 0}, {"priority_tier", 1}};
  for (const auto& [k, v] : extra.items()) p[k] = v;
  return p;
}

// The bench cluster of shared/bench/slurm as the real sinfo 22.05.8 showed it: bench1 running a
// job, the others idle.
SinfoData Bench() {
  json nodes = {{"nodes",
                 {Node("bench1", "MIXED", 4), Node("bench2", "IDLE"), Node("bench3", "IDLE"),
                  Node("bench4", "IDLE")}}};
  json parts = {{"partitions", {Partition("batch", "bench[1-4]", true)}}};
  Result<SinfoData> d = SinfoDataFromJson(nodes, parts, nullptr);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : SinfoData{};
}

std::string Sinfo(const SinfoData& d, std::vector<std::string> args) {
  args.insert(args.begin(), "sinfo");
  SinfoParse p = ParseSinfoArgs(args, [](std::string_view) { return std::nullopt; });
  EXPECT_FALSE(p.exit.done) << p.exit.err;
  OutputFormat f = p.options.percent_form ? ParsePercentFormat(p.options.format)
                                          : ParseFieldList(p.options.format);
  return RenderSinfo(p.options, f, d);
}

// Golden outputs copied from sinfo 22.05.8 on the bench cluster.
TEST(SinfoRender, MatchesSlurmOnTheBenchCluster) {
  SinfoData d = Bench();
  EXPECT_EQ(Sinfo(d, {}),
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "batch*       up   infinite      1    mix bench1\n"
            "batch*       up   infinite      3   idle bench[2-4]\n");
  EXPECT_EQ(Sinfo(d, {"-l"}),
            "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE "
            "NODELIST\n"
            "batch*       up   infinite 1-infinite   no       NO        all      1       mixed "
            "bench1\n"
            "batch*       up   infinite 1-infinite   no       NO        all      3        idle "
            "bench[2-4]\n");
  EXPECT_EQ(Sinfo(d, {"-N"}),
            "NODELIST   NODES PARTITION STATE \n"
            "bench1         1    batch* mix   \n"
            "bench2         1    batch* idle  \n"
            "bench3         1    batch* idle  \n"
            "bench4         1    batch* idle  \n");
  EXPECT_EQ(Sinfo(d, {"-N", "-l", "-n", "bench[1-2]"}),
            "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE "
            "REASON              \n"
            "bench1         1    batch*       mixed 64     64:1:1 100000        0      1   (null) "
            "none                \n"
            "bench2         1    batch*        idle 64     64:1:1 100000        0      1   (null) "
            "none                \n");
  EXPECT_EQ(Sinfo(d, {"-s"}),
            "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
            "batch*       up   infinite          1/3/0/4 bench[1-4]\n");
  EXPECT_EQ(Sinfo(d, {"-R"}), "REASON               USER      TIMESTAMP           NODELIST\n");
  EXPECT_EQ(Sinfo(d, {"-e"}), Sinfo(d, {}));
}

SinfoData Mixed() {
  json nodes = {
      {"nodes",
       {Node("gpu01", "ALLOCATED", 64,
             {{"gpus", {"a100", "a100", "a100", "a100"}},
              {"alloc_gpus", 4},
              {"partitions", {"gpu", "verylongpartition"}}}),
        Node("gpu02", "DRAINED", 0,
             {{"reason", "bad dimm"},
              {"gpus", {"a100", "a100", "a100", "a100"}},
              {"partitions", {"gpu"}},
              {"reason_time", 1800000000},
              {"reason_user", "root"},
              {"reason_uid", 0}}),
        Node("gpu03", "DOWN", 0,
             {{"reason", "not responding"},
              {"agent_connected", false},
              {"gpus", {"a100", "a100", "a100", "a100"}},
              {"partitions", {"gpu"}}}),
        Node("gpu04", "DRAINING", 8,
             {{"reason", "bad dimm"},
              {"gpus", {"a100", "a100", "a100", "a100"}},
              {"partitions", {"gpu"}},
              {"reason_time", 1800000000},
              {"reason_user", "root"},
              {"reason_uid", 0}}),
        Node("cpu1", "IDLE", 0, {{"cpus", 32}, {"partitions", {"cpu"}}}),
        Node("cpu2", "IDLE+POWERED_DOWN", 0, {{"partitions", {"cpu"}}, {"agent_connected", false}}),
        Node("cpu3", "IDLE", 0, {{"partitions", {"cpu"}}})}}};
  json parts = {{"partitions",
                 {Partition("cpu", "cpu[1-3]", true, {{"max_time", 86400}}),
                  Partition("gpu", "gpu[01-04]", false, {{"max_time", 1800}, {"max_nodes", 2}}),
                  Partition("verylongpartition", "gpu01", false)}}};
  json jobs = {
      {"jobs",
       {{{"id", 1},
         {"state", "RUNNING"},
         {"allocation", {{"nodes", {{{"node", "gpu01"}, {"cpus", 64}, {"gpus", {0, 1, 3}}}}}}}}}}};
  Result<SinfoData> d = SinfoDataFromJson(nodes, parts, jobs);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : SinfoData{};
}

TEST(SinfoRender, StatesPartitionsAndWidths) {
  setenv("TZ", "UTC", 1);
  tzset();
  SinfoData d = Mixed();
  // Partitions in configuration order, states in decreasing Slurm state order; the partition
  // column fits the longest name; cpu2 is powered down; cpus differ within a line ("32+").
  EXPECT_EQ(Sinfo(d, {}),
            "PARTITION         AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "cpu*                 up 1-00:00:00      1  idle~ cpu2\n"
            "cpu*                 up 1-00:00:00      2   idle cpu[1,3]\n"
            "gpu                  up      30:00      1  down* gpu03\n"
            "gpu                  up      30:00      1   drng gpu04\n"
            "gpu                  up      30:00      1  drain gpu02\n"
            "gpu                  up      30:00      1  alloc gpu01\n"
            "verylongpartition    up   infinite      1  alloc gpu01\n");
  EXPECT_EQ(Sinfo(d, {"-o", "%P %c %D", "-p", "cpu"}), "PARTITION CPUS NODES\ncpu* 32+ 3\n");
  EXPECT_EQ(Sinfo(d, {"-e", "-o", "%P %c %D", "-p", "cpu"}),
            "PARTITION CPUS NODES\ncpu* 64 2\ncpu* 32 1\n");
  EXPECT_EQ(Sinfo(d, {"-R"}),
            "REASON               USER      TIMESTAMP           NODELIST\n"
            "not responding       Unknown   Unknown             gpu03\n"
            "bad dimm             root      2027-01-15T08:00:00 gpu[02,04]\n");
  EXPECT_EQ(Sinfo(d, {"-R", "-l"}),
            "REASON               USER         TIMESTAMP           STATE  NODELIST\n"
            "not responding       Unknown      Unknown             down*  gpu03\n"
            "bad dimm             root(0)      2027-01-15T08:00:00 drng   gpu04\n"
            "bad dimm             root(0)      2027-01-15T08:00:00 drain  gpu02\n");
  EXPECT_EQ(Sinfo(d, {"-s", "-p", "gpu"}),
            "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
            "gpu          up      30:00          2/0/2/4 gpu[01-04]\n");
  EXPECT_EQ(Sinfo(d, {"-h", "-o", "%P|%s|%a|%l|%L"}),
            "cpu*|1-infinite|up|1-00:00:00|n/a\ngpu|1-2|up|30:00|n/a\n"
            "verylongpartition|1-infinite|up|infinite|n/a\n");
}

TEST(SinfoRender, GresAndGresUsed) {
  SinfoData d = Mixed();
  EXPECT_EQ(Sinfo(d, {"-N", "-p", "gpu", "-O", "NodeList:8,Gres:13,GresUsed:22,StateLong"}),
            "NODELISTGRES         GRES_USED             STATE               \n"
            "gpu01   gpu:a100:4   gpu:a100:3(IDX:0-1,3) allocated           \n"
            "gpu02   gpu:a100:4   gpu:a100:0(IDX:N/A)   drained             \n"
            "gpu03   gpu:a100:4   gpu:a100:0(IDX:N/A)   down*               \n"
            "gpu04   gpu:a100:4   gpu:a100:0(IDX:N/A)   draining            \n");
  EXPECT_EQ(NodeGres(d.nodes[4]), "(null)");
  SinfoNode n;
  n.gpu_types = {"", ""};
  n.gpu_used = {false, true};
  n.gres = {{"shard", 16}};
  n.gres_used = {{"shard", 4}};
  EXPECT_EQ(NodeGres(n), "gpu:2,shard:16");
  EXPECT_EQ(NodeGresUsed(n), "gpu:1(IDX:1),shard:4");
}

TEST(SinfoStates, FilterMatchesSinfo) {
  SinfoData d = Mixed();
  auto names = [&](const std::string& states) {
    Result<NodeStateFilter> f = ParseNodeStateList(states);
    EXPECT_TRUE(f.ok()) << states;
    std::string out;
    for (const SinfoNode& n : d.nodes) {
      if (NodeStateMatches(*f, n)) out += (out.empty() ? "" : ",") + n.name;
    }
    return out;
  };
  EXPECT_EQ(names("idle"), "cpu1,cpu3");     // not drained, not powered down
  EXPECT_EQ(names("alloc"), "gpu01,gpu04");  // any CPU in use, draining too
  EXPECT_EQ(names("drain"), "gpu02,gpu04");
  EXPECT_EQ(names("drained"), "gpu02");
  EXPECT_EQ(names("DRNG"), "gpu04");
  EXPECT_EQ(names("down"), "gpu03");
  EXPECT_EQ(names("no_respond"), "gpu03");
  EXPECT_EQ(names("powered_down"), "cpu2");
  EXPECT_EQ(names("d"), "gpu03");  // a prefix: DOWN comes first
  EXPECT_EQ(names("all"), "gpu01,gpu02,gpu03,gpu04,cpu1,cpu2,cpu3");
  EXPECT_EQ(ParseNodeStateList("foo").status().message(), "Bad state string: \"foo\"");
}

TEST(SinfoStates, Words) {
  SinfoData d = Mixed();
  std::vector<std::string> compact, full;
  for (const SinfoNode& n : d.nodes) {
    compact.push_back(NodeStateCompact(n));
    full.push_back(NodeStateLong(n));
  }
  EXPECT_EQ(compact,
            std::vector<std::string>({"alloc", "drain", "down*", "drng", "idle", "idle~", "idle"}));
  EXPECT_EQ(full, std::vector<std::string>(
                      {"allocated", "drained", "down*", "draining", "idle", "idle~", "idle"}));
}

// Nodes an active reservation holds (the controller's "reservation_state").
TEST(SinfoStates, MaintenanceAndReservedNodes) {
  auto node = [](const std::string& state, const std::string& resv) {
    SinfoNode n;
    n.state = state;
    n.cpus = 8;
    n.alloc_cpus = state == "ALLOCATED" ? 8 : 0;
    n.resv_state = resv;
    return n;
  };
  EXPECT_EQ(NodeStateCompact(node("IDLE", "MAINT")), "maint");
  EXPECT_EQ(NodeStateLong(node("IDLE", "MAINT")), "maint");
  EXPECT_EQ(NodeStateCompact(node("ALLOCATED", "MAINT")), "alloc");  // jobs still on it
  EXPECT_EQ(NodeStateCompact(node("DRAINED", "MAINT")), "drain");
  EXPECT_EQ(NodeStateCompact(node("IDLE", "RESERVED")), "resv");
  EXPECT_EQ(NodeStateLong(node("IDLE", "RESERVED")), "reserved");
  EXPECT_EQ(NodeStateCompact(node("ALLOCATED", "RESERVED")), "alloc");
  SinfoNode gone = node("IDLE", "MAINT");
  gone.responding = false;
  EXPECT_EQ(NodeStateCompact(gone), "maint*");
}

TEST(SinfoOptions, ModesAndErrors) {
  auto parse = [](std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), "sinfo");
    return ParseSinfoArgs(args, [env](std::string_view n) -> std::optional<std::string> {
      auto it = env.find(std::string(n));
      if (it == env.end()) return std::nullopt;
      return it->second;
    });
  };
  SinfoParse p = parse({});
  EXPECT_EQ(p.options.format, kSinfoFormat);
  EXPECT_FALSE(p.options.percent_form);
  EXPECT_EQ(p.options.sort, "#P,-t");
  EXPECT_TRUE(p.options.size_partitions);
  p = parse({"-N"});
  EXPECT_EQ(p.options.sort, "N");
  EXPECT_TRUE(p.options.size_nodes);
  p = parse({"-o", "%N"}, {{"SINFO_FORMAT", "%P"}});
  EXPECT_EQ(p.options.format, "%N");
  EXPECT_FALSE(p.options.size_partitions);
  p = parse({}, {{"SINFO_FORMAT", "%P %D"}, {"SINFO_PARTITION", "gpu"}});
  EXPECT_EQ(p.options.format, "%P %D");
  EXPECT_TRUE(p.options.percent_form);
  EXPECT_EQ(p.options.partitions, std::vector<std::string>({"gpu"}));
  p = parse({"-R"});
  EXPECT_EQ(p.options.states.codes.size(), 3u);
  p = parse({"-a", "-p", "x"});
  EXPECT_EQ(p.exit.exit_code, 1);
  EXPECT_EQ(p.exit.err,
            "sinfo: error: Conflicting options, -a and -p, specified. Please choose one or the "
            "other.\n");
  p = parse({"-t", "foo"});
  EXPECT_EQ(p.exit.exit_code, 1);
  EXPECT_EQ(p.exit.err.rfind("sinfo: error: Bad state string: \"foo\"\nsinfo: error: valid", 0),
            0u);
  p = parse({"-i", "x"});
  EXPECT_EQ(p.exit.err, "sinfo: error: Error: invalid entry for --iterate=x\n");
  p = parse({"-T"});
  EXPECT_FALSE(p.exit.done);
  EXPECT_TRUE(p.options.reservations);
  EXPECT_TRUE(CheckSinfoSortKeys(ParseSortList("#P,-t")).ok());
  EXPECT_EQ(CheckSinfoSortKeys(ParseSortList("q")).message(), "Invalid sort specification: q");
}

TEST(SinfoJson, MainKeys) {
  json out = SinfoJson(Mixed());
  ASSERT_EQ(out["nodes"].size(), 7u);
  const json& n = out["nodes"][0];
  EXPECT_EQ(n["name"], "gpu01");
  EXPECT_EQ(n["state"], "allocated");
  EXPECT_EQ(n["gres"], "gpu:a100:4");
  EXPECT_EQ(n["gres_used"], "gpu:a100:3(IDX:0-1,3)");
  EXPECT_EQ(out["nodes"][2]["state_flags"], json({"NOT_RESPONDING"}));
  EXPECT_EQ(out["nodes"][1]["state_flags"], json({"DRAIN"}));
  EXPECT_EQ(out["nodes"][1]["reason"], "bad dimm");
}

}  // namespace
}  // namespace berth::slurm

namespace berth::slurm {
namespace {

TEST(SinfoStates, PowerSavingStates) {
  json nodes = {{"nodes",
                 {Node("c1", "IDLE+POWERING_UP", 0, {{"agent_connected", false}}),
                  Node("c2", "IDLE+POWERING_DOWN", 0, {{"agent_connected", false}})}}};
  json parts = {{"partitions", {Partition("batch", "c[1-2]", true)}}};
  Result<SinfoData> d = SinfoDataFromJson(nodes, parts, nullptr);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(NodeStateCompact(d->nodes[0]), "idle#");
  EXPECT_EQ(NodeStateCompact(d->nodes[1]), "idle%");
  Result<NodeStateFilter> f = ParseNodeStateList("powering_down");
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(NodeStateMatches(*f, d->nodes[0]));
  EXPECT_TRUE(NodeStateMatches(*f, d->nodes[1]));
}

}  // namespace
}  // namespace berth::slurm
