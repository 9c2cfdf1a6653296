// FailNodeJobs through the controller's API, without daemons: fake agents register and read
// their command queues; a node set down by an operator, and a node that falls silent, end their
// jobs NODE_FAIL (requeued when allowed) and every node of each job is told to stop its part.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent/agent_commands.h"
#include "agent/launch.h"
#include "controller/controller_test_util.h"

namespace berth::controller {
namespace {

using nlohmann::json;

class FailNodeJobsTest : public ::testing::Test {
 protected:
  void StartController(int node_timeout_s) {
    controller_ = std::make_unique<TestController>(
        "NodeName=n[1-3] CPUs=2 RealMemory=1024\nPartitionName=p Nodes=n[1-3] Default=YES\n",
        [&](ControllerOptions& o) {
          o.node_timeout_s = node_timeout_s;
          o.backfill_interval_s = 1;
        });
    ASSERT_TRUE(controller_->ok());
    for (const char* n : {"n1", "n2", "n3"}) {
      auto [status, body] = Api("POST", "/v1/agents/register",
                                {{"node", {{"name", n}, {"cpus", 2}, {"mem_mib", 1024}}}});
      ASSERT_EQ(status, 200) << body.dump();
    }
  }

  // A request as the controller's own user on the Unix socket (an operator).
  std::pair<int, json> Api(const std::string& method, const std::string& target,
                           const json& body = nullptr) {
    return controller_->Api(method, target, body);
  }

  // The commands queued for `node` since the last call, decoded.
  std::vector<agent::AgentCommand> Commands(const std::string& node) {
    auto [status, body] =
        Api("GET",
            "/v1/agents/" + node + "/commands?after=" + std::to_string(seen_[node]) + "&wait_ms=0");
    EXPECT_EQ(status, 200) << body.dump();
    std::vector<agent::AgentCommand> out;
    for (const json& c : body.value("commands", json::array())) {
      seen_[node] = std::max<uint64_t>(seen_[node], c.value("seq", uint64_t{0}));
      Result<agent::AgentCommand> d = agent::DecodeAgentCommand(c.dump());
      EXPECT_TRUE(d.ok()) << d.status().message();
      if (d.ok()) out.push_back(std::move(*d));
    }
    return out;
  }

  json Job(uint32_t id) { return Api("GET", "/v1/jobs/" + std::to_string(id)).second; }

  // Submits a job on all three nodes and waits for it to run (its launch sent to n1).
  uint32_t RunThreeNodeJob(bool requeue) {
    auto [status, body] = Api("POST", "/v1/jobs",
                              {{"name", "wide"},
                               {"script", "#!/bin/sh\nsleep 100\n"},
                               {"work_dir", "/tmp"},
                               {"stdout", "/dev/null"},
                               {"time_limit", 600},
                               {"nodes", 3},
                               {"requeue", requeue}});
    EXPECT_EQ(status, 201) << body.dump();
    const uint32_t id = body.value("job_id", 0u);
    WaitFor([&] { return Job(id).value("state", "") == "RUNNING"; }, "the job to start");
    WaitFor(
        [&] {
          for (const agent::AgentCommand& c : Commands("n1")) {
            if (std::holds_alternative<agent::LaunchCommand>(c)) return true;
          }
          return false;
        },
        "the launch on n1");
    return id;
  }

  void WaitFor(const std::function<bool()>& done, const std::string& what) {
    for (int i = 0; i < 200; ++i) {
      if (done()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "timed out waiting for " << what;
  }

  // That `node` was told to stop job `id`'s attempt 0: the first node with a cancel, the others
  // with end_steps.
  void ExpectToldToStop(const std::string& node, uint32_t id, bool cancel) {
    const agent::CommandTarget target{id, 0};
    bool found = false;
    for (const agent::AgentCommand& c : Commands(node)) {
      if (cancel) {
        const auto* x = std::get_if<agent::CancelCommand>(&c);
        found = found || (x != nullptr && x->target == target);
      } else {
        const auto* x = std::get_if<agent::EndStepsCommand>(&c);
        found = found || (x != nullptr && x->target == target);
      }
    }
    EXPECT_TRUE(found) << node << " was not told to " << (cancel ? "cancel" : "end the steps of")
                       << " job " << id;
  }

  std::unique_ptr<TestController> controller_;
  std::map<std::string, uint64_t> seen_;
};

TEST_F(FailNodeJobsTest, DownTellsEveryNodeOfTheJobToStopAndRequeues) {
  StartController(/*node_timeout_s=*/60);
  const uint32_t id = RunThreeNodeJob(/*requeue=*/true);
  auto [status, body] = Api("POST", "/v1/nodes/n2/down", {{"reason", "bad fan"}});
  ASSERT_EQ(status, 200) << body.dump();
  ExpectToldToStop("n1", id, /*cancel=*/true);
  ExpectToldToStop("n2", id, /*cancel=*/false);
  ExpectToldToStop("n3", id, /*cancel=*/false);
  const json job = Job(id);
  EXPECT_EQ(job.value("state", ""), "PENDING") << job.dump();  // requeued
  EXPECT_EQ(job.value("restart_count", -1), 1) << job.dump();
}

TEST_F(FailNodeJobsTest, ASilentNodeEndsItsJobsLikeDownWithoutRequeue) {
  StartController(/*node_timeout_s=*/2);
  const uint32_t id = RunThreeNodeJob(/*requeue=*/false);
  // n1 and n3 keep reporting; n2 falls silent.
  WaitFor(
      [&] {
        for (const char* n : {"n1", "n3"}) {
          EXPECT_EQ(Api("POST", std::string("/v1/agents/") + n + "/status", json::object()).first,
                    200);
        }
        return Job(id).value("state", "") == "NODE_FAIL";
      },
      "the job to end NODE_FAIL");
  ExpectToldToStop("n1", id, /*cancel=*/true);
  ExpectToldToStop("n2", id, /*cancel=*/false);
  ExpectToldToStop("n3", id, /*cancel=*/false);
}

// A status report is all-or-nothing: an ended job next to a malformed event does not end.
TEST_F(FailNodeJobsTest, AReportWithABadEventChangesNothing) {
  StartController(/*node_timeout_s=*/60);
  const uint32_t id = RunThreeNodeJob(/*requeue=*/false);
  agent::JobResult r;
  r.job_id = id;
  r.attempt = 0;
  r.state = "COMPLETED";
  r.end_time = 1;
  const json ended = {{"kind", "ended"}, {"result", json::parse(agent::EncodeJobResult(r))}};
  auto [status, body] =
      Api("POST", "/v1/agents/n1/status", {{"events", {ended, {{"kind", "step"}}}}});
  EXPECT_EQ(status, 400) << body.dump();
  EXPECT_EQ(Job(id).value("state", ""), "RUNNING");
  std::tie(status, body) = Api("POST", "/v1/agents/n1/status", {{"events", {ended}}});
  EXPECT_EQ(status, 200) << body.dump();
  EXPECT_EQ(Job(id).value("state", ""), "COMPLETED");
}

// A step part another node reports ended (srun across hosts) is kept with its result, read back
// through the step endpoint (the report's events outlive their reading: they once pointed into a
// temporary, and the controller crashed on the first such report).
TEST_F(FailNodeJobsTest, AStepPartReportedEndedIsKept) {
  StartController(/*node_timeout_s=*/60);
  const uint32_t id = RunThreeNodeJob(/*requeue=*/false);
  const std::string steps = "/v1/jobs/" + std::to_string(id) + "/steps";
  auto [status, body] = Api("POST", steps,
                            {{"step_id", 3},
                             {"nodes", {"n2"}},
                             {"argv", {"srun", "true"}},
                             {"environment", json::array()},
                             {"work_dir", "/tmp"},
                             {"stdout", "/dev/null"},
                             {"stderr", "/dev/null"}});
  ASSERT_EQ(status, 200) << body.dump();
  agent::JobResult r;
  r.job_id = id;
  r.attempt = 0;
  r.state = "FAILED";
  r.exit_code = 7;
  r.end_time = 1;
  const json step = {{"kind", "step"},
                     {"job_id", id},
                     {"attempt", 0},
                     {"step_id", 3},
                     {"result", json::parse(agent::EncodeJobResult(r))}};
  std::tie(status, body) = Api("POST", "/v1/agents/n2/status", {{"events", {step, step}}});
  ASSERT_EQ(status, 200) << body.dump();
  std::tie(status, body) = Api("GET", steps + "/3");
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body["nodes"]["n2"].value("ended", false), true) << body.dump();
  EXPECT_EQ(body["nodes"]["n2"].value("exit_code", 0), 7) << body.dump();
}

// A job cancelled between its start and its node's next poll: the node still gets the launch,
// then the cancel, so that it starts and stops the job and reports the end the controller waits
// for (a launch turned into a no-op left the job RUNNING for good).
TEST_F(FailNodeJobsTest, ALaunchCancelledBeforeItsNodePolledIsStillDelivered) {
  StartController(/*node_timeout_s=*/60);
  auto [status, body] = Api("POST", "/v1/jobs",
                            {{"name", "short"},
                             {"script", "#!/bin/sh\nsleep 100\n"},
                             {"work_dir", "/tmp"},
                             {"stdout", "/dev/null"},
                             {"time_limit", 600}});
  ASSERT_EQ(status, 201) << body.dump();
  const uint32_t id = body.value("job_id", 0u);
  WaitFor([&] { return Job(id).value("state", "") == "RUNNING"; }, "the job to start");
  const std::string node = Job(id)["allocation"]["nodes"][0].value("node", "");
  std::tie(status, body) = Api("POST", "/v1/jobs/" + std::to_string(id) + "/cancel");
  ASSERT_EQ(status, 200) << body.dump();
  std::vector<std::string> kinds;
  for (const agent::AgentCommand& c : Commands(node)) {
    if (const auto* l = std::get_if<agent::LaunchCommand>(&c); l && l->target.job_id == id) {
      kinds.push_back("launch");
    }
    if (const auto* k = std::get_if<agent::CancelCommand>(&c); k && k->target.job_id == id) {
      kinds.push_back("cancel");
    }
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"launch", "cancel"}));
}

// So is a registration: a malformed job entry after an ended one ends nothing.
TEST_F(FailNodeJobsTest, ARegistrationWithABadEntryChangesNothing) {
  StartController(/*node_timeout_s=*/60);
  const uint32_t id = RunThreeNodeJob(/*requeue=*/false);
  agent::JobResult r;
  r.job_id = id;
  r.attempt = 0;
  r.state = "COMPLETED";
  r.end_time = 1;
  const json ended = {
      {"job_id", id}, {"attempt", 0}, {"result", json::parse(agent::EncodeJobResult(r))}};
  const json node = {{"name", "n1"}, {"cpus", 2}, {"mem_mib", 1024}};
  auto [status, body] = Api("POST", "/v1/agents/register",
                            {{"node", node}, {"jobs", {ended, {{"job_id", "twelve"}}}}});
  EXPECT_EQ(status, 400) << body.dump();
  EXPECT_EQ(Job(id).value("state", ""), "RUNNING");
  std::tie(status, body) = Api("POST", "/v1/agents/register", {{"node", node}, {"jobs", {ended}}});
  EXPECT_EQ(status, 200) << body.dump();
  EXPECT_EQ(Job(id).value("state", ""), "COMPLETED");
}

}  // namespace
}  // namespace berth::controller
