// A job step's container through the controller's API, without daemons (fake agents read their
// command queues): srun's "container" reaches every node's step LaunchSpec, a step without one
// runs on the host even in a job that has a container, and a bad one is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent/agent_commands.h"
#include "controller/controller_test_util.h"

namespace berth::controller {
namespace {

using nlohmann::json;

class StepContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(controller_.ok());
    for (const char* n : {"n1", "n2"}) {
      auto [status, body] = Api("POST", "/v1/agents/register",
                                {{"node", {{"name", n}, {"cpus", 2}, {"mem_mib", 1024}}}});
      ASSERT_EQ(status, 200) << body.dump();
    }
  }

  // A request as the controller's own user on the Unix socket (an operator).
  std::pair<int, json> Api(const std::string& method, const std::string& target,
                           const json& body = nullptr) {
    return controller_.Api(method, target, body);
  }

  // The step commands queued for `node` since the last call.
  std::vector<agent::StepCommand> Steps(const std::string& node) {
    auto [status, body] =
        Api("GET",
            "/v1/agents/" + node + "/commands?after=" + std::to_string(seen_[node]) + "&wait_ms=0");
    EXPECT_EQ(status, 200) << body.dump();
    std::vector<agent::StepCommand> out;
    for (const json& c : body.value("commands", json::array())) {
      seen_[node] = std::max<uint64_t>(seen_[node], c.value("seq", uint64_t{0}));
      Result<agent::AgentCommand> d = agent::DecodeAgentCommand(c.dump());
      EXPECT_TRUE(d.ok()) << d.status().message();
      if (d.ok() && std::holds_alternative<agent::StepCommand>(*d)) {
        out.push_back(std::get<agent::StepCommand>(*d));
      }
    }
    return out;
  }

  // A two-node job whose batch script runs in a container, running.
  uint32_t RunJob() {
    auto [status, body] = Api("POST", "/v1/jobs",
                              {{"name", "c"},
                               {"script", "#!/bin/sh\nsleep 100\n"},
                               {"work_dir", "/tmp"},
                               {"stdout", "/dev/null"},
                               {"nodes", 2},
                               {"container", {{"image", "batch-image"}, {"name", "b"}}}});
    EXPECT_EQ(status, 201) << body.dump();
    const uint32_t id = body.value("job_id", 0u);
    for (int i = 0; i < 200; ++i) {
      if (Api("GET", "/v1/jobs/" + std::to_string(id)).second.value("state", "") == "RUNNING") {
        return id;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "job " << id << " did not start";
    return id;
  }

  json StepBody(uint32_t step_id) {
    return {{"step_id", step_id},
            {"nodes", {"n1", "n2"}},
            {"argv", {"--", "true"}},
            {"environment", json::array()},
            {"work_dir", "/tmp"}};
  }

  TestController controller_{
      "NodeName=n[1-2] CPUs=2 RealMemory=1024\nPartitionName=p Nodes=n[1-2] Default=YES\n",
      [](ControllerOptions& o) { o.backfill_interval_s = 1; }};
  std::map<std::string, uint64_t> seen_;
};

TEST_F(StepContainerTest, TheStepsContainerReachesEveryNode) {
  const uint32_t id = RunJob();
  const std::string path = "/v1/jobs/" + std::to_string(id) + "/steps";
  json body = StepBody(0);
  body["container"] = {{"image", "step-image"},
                       {"mounts", {{{"source", "/a"}, {"destination", "/b"}}}}};
  auto [status, answer] = Api("POST", path, body);
  ASSERT_EQ(status, 200) << answer.dump();
  for (const char* n : {"n1", "n2"}) {
    std::vector<agent::StepCommand> steps = Steps(n);
    ASSERT_EQ(steps.size(), 1u) << n;
    EXPECT_EQ(json::parse(steps[0].spec.container), json::parse(R"({"image": "step-image",
                              "mounts": [{"source": "/a", "destination": "/b"}]})"))
        << n;
  }
  // A name alone: the job's named container (the node finds it).
  body = StepBody(1);
  body["container"] = {{"name", "b"}};
  std::tie(status, answer) = Api("POST", path, body);
  ASSERT_EQ(status, 200) << answer.dump();
  for (const char* n : {"n1", "n2"}) {
    std::vector<agent::StepCommand> steps = Steps(n);
    ASSERT_EQ(steps.size(), 1u) << n;
    EXPECT_EQ(json::parse(steps[0].spec.container), json({{"image", ""}, {"name", "b"}})) << n;
  }
}

TEST_F(StepContainerTest, AStepWithoutOneRunsOnTheHost) {
  const uint32_t id = RunJob();
  auto [status, answer] = Api("POST", "/v1/jobs/" + std::to_string(id) + "/steps", StepBody(0));
  ASSERT_EQ(status, 200) << answer.dump();
  for (const char* n : {"n1", "n2"}) {
    std::vector<agent::StepCommand> steps = Steps(n);
    ASSERT_EQ(steps.size(), 1u) << n;
    EXPECT_EQ(steps[0].spec.container, "") << n;  // not the batch script's
  }
}

TEST_F(StepContainerTest, ABadContainerStartsNothing) {
  const uint32_t id = RunJob();
  const std::string path = "/v1/jobs/" + std::to_string(id) + "/steps";
  json body = StepBody(0);
  body["container"] = {{"mount_home", false}};
  auto [status, answer] = Api("POST", path, body);
  EXPECT_EQ(status, 400);
  EXPECT_NE(answer.dump().find("container.image: required"), std::string::npos) << answer.dump();
  body["container"] = "busybox";
  std::tie(status, answer) = Api("POST", path, body);
  EXPECT_EQ(status, 400);
  EXPECT_NE(answer.dump().find("container"), std::string::npos) << answer.dump();
  EXPECT_NE(answer.dump().find("(optional)"), std::string::npos) << answer.dump();
  EXPECT_TRUE(Steps("n1").empty());
  EXPECT_TRUE(Steps("n2").empty());
}

}  // namespace
}  // namespace berth::controller
