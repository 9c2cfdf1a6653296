#include "controller/routes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::controller {
namespace {

Caller Nobody() {
  return Caller{};
}

Caller User() {
  Caller c;
  c.known = true;
  c.uid = 1000;
  c.user = "alice";
  return c;
}

Caller Operator() {
  Caller c = User();
  c.admin = true;
  return c;
}

Caller Node(const std::string& name) {
  Caller c;
  c.uid = UINT32_MAX;
  c.agent_node = name;
  return c;
}

Caller Join() {
  Caller c;
  c.join_token = true;
  return c;
}

Caller Step(core::JobId job) {
  Caller c;
  c.step_job = job;
  c.step_attempt = 0;
  return c;
}

struct Case {
  const char* who_name;
  Caller who;
  const char* method;
  const char* path;
  Verdict verdict;
  Endpoint endpoint = Endpoint::kHealthz;  // checked when the verdict is kAllowed
};

void Check(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.who_name) + " " + c.method + " " + c.path);
    RouteMatch m = MatchRoute(ApiRoutes(), c.method, c.path, c.who);
    EXPECT_EQ(m.verdict, c.verdict);
    if (c.verdict == Verdict::kAllowed) {
      ASSERT_NE(m.route, nullptr);
      EXPECT_EQ(m.route->endpoint, c.endpoint);
    }
  }
}

TEST(RoutesTest, NobodyReachesHealthReadinessAndMetricsOnly) {
  Check({
      {"nobody", Nobody(), "GET", "/healthz", Verdict::kAllowed, Endpoint::kHealthz},
      {"nobody", Nobody(), "POST", "/readyz", Verdict::kAllowed, Endpoint::kReadyz},
      {"nobody", Nobody(), "GET", "/metrics", Verdict::kAllowed, Endpoint::kMetrics},
      {"nobody", Nobody(), "POST", "/metrics", Verdict::kOutsideApi},
      {"nobody", Nobody(), "GET", "/nothing", Verdict::kOutsideApi},
      {"nobody", Nobody(), "GET", "/v1/jobs", Verdict::kUnauthenticated},
      {"nobody", Nobody(), "GET", "/v1/no/such/thing", Verdict::kUnauthenticated},
      {"nobody", Nobody(), "POST", "/v1/agents/join", Verdict::kUnauthenticated},
  });
}

TEST(RoutesTest, TheConsolesPagesAreOpenAndWhoamiNeedsACredential) {
  Check({
      {"nobody", Nobody(), "GET", "/ui/", Verdict::kAllowed, Endpoint::kUiPage},
      {"nobody", Nobody(), "GET", "/ui", Verdict::kAllowed, Endpoint::kUiPage},
      {"nobody", Nobody(), "GET", "/ui/assets/app.js", Verdict::kAllowed, Endpoint::kUiPage},
      {"node", Node("n1"), "GET", "/ui/assets/app.js", Verdict::kAllowed, Endpoint::kUiPage},
      {"nobody", Nobody(), "POST", "/ui/", Verdict::kOutsideApi},
      {"nobody", Nobody(), "GET", "/ui/other", Verdict::kOutsideApi},
      {"nobody", Nobody(), "GET", "/v1/whoami", Verdict::kUnauthenticated},
      {"user", User(), "GET", "/v1/whoami", Verdict::kAllowed, Endpoint::kWhoami},
      {"user", User(), "GET", "/v1/reports/usage", Verdict::kAllowed, Endpoint::kUsageReport},
      {"user", User(), "GET", "/v1/reports/advice", Verdict::kAllowed, Endpoint::kAdviceReport},
      {"node", Node("n1"), "GET", "/v1/whoami", Verdict::kOutOfScope},
  });
}

TEST(RoutesTest, UsersReachTheApiButNotTheAgentEndpoints) {
  Check({
      {"user", User(), "GET", "/v1/jobs", Verdict::kAllowed, Endpoint::kListJobs},
      {"user", User(), "POST", "/v1/jobs", Verdict::kAllowed, Endpoint::kSubmitJobs},
      {"user", User(), "PUT", "/v1/jobs", Verdict::kAllowed, Endpoint::kJobsOther},
      {"user", User(), "POST", "/v1/jobs/cancel", Verdict::kAllowed, Endpoint::kCancelJobs},
      {"user", User(), "GET", "/v1/jobs/12", Verdict::kAllowed, Endpoint::kGetJob},
      {"user", User(), "DELETE", "/v1/jobs/12_3", Verdict::kAllowed, Endpoint::kJobAction},
      {"user", User(), "POST", "/v1/jobs/12/requeue", Verdict::kAllowed, Endpoint::kJobAction},
      {"user", User(), "POST", "/v1/jobs/12/steps", Verdict::kAllowed, Endpoint::kJobSteps},
      {"user", User(), "GET", "/v1/jobs/12/steps/3", Verdict::kAllowed, Endpoint::kJobSteps},
      {"user", User(), "POST", "/v1/jobs/12/explode", Verdict::kNoRoute},
      {"user", User(), "PUT", "/v1/jobs/12", Verdict::kNoRoute},
      {"user", User(), "POST", "/v1/nodes/n1/drain", Verdict::kAllowed, Endpoint::kNodeAction},
      {"user", User(), "POST", "/v1/tokens", Verdict::kAllowed, Endpoint::kIssueToken},
      {"user", User(), "GET", "/v1/accounting/jobs", Verdict::kAllowed, Endpoint::kAccounting},
      {"user", User(), "GET", "/v1/associations", Verdict::kAllowed, Endpoint::kAssociations},
      {"user", User(), "GET", "/v1/history", Verdict::kAllowed, Endpoint::kHistory},
      {"user", User(), "POST", "/v1/web/codes", Verdict::kAllowed, Endpoint::kWebCode},
      {"user", User(), "GET", "/v1/web/codes", Verdict::kNoRoute},
      {"user", User(), "POST", "/v1/associations", Verdict::kRefused},
      {"operator", Operator(), "POST", "/v1/associations", Verdict::kAllowed,
       Endpoint::kChangeAssociations},
      {"user", User(), "GET", "/v1", Verdict::kNoRoute},
      {"user", User(), "GET", "/v1/agents", Verdict::kNoRoute},
      {"user", User(), "POST", "/v1/agents/join", Verdict::kRefused},
      {"user", User(), "GET", "/v1/agents/join", Verdict::kRefused},
      {"user", User(), "POST", "/v1/agents/register", Verdict::kRefused},
      {"user", User(), "GET", "/v1/agents/n1/commands", Verdict::kRefused},
      {"user", User(), "GET", "/v1/agents/n1/whatever/else", Verdict::kRefused},
      {"user", User(), "GET", "/v1/agents/n1/streams/ab12", Verdict::kRefused},
      {"user", User(), "GET", "/nothing", Verdict::kOutsideApi},
  });
}

TEST(RoutesTest, OperatorsActAsAnyAgentAndJoinNodes) {
  Check({
      {"operator", Operator(), "POST", "/v1/agents/join", Verdict::kAllowed, Endpoint::kJoinNode},
      {"operator", Operator(), "GET", "/v1/agents/join", Verdict::kAllowed, Endpoint::kAgentOther},
      {"operator", Operator(), "POST", "/v1/agents/register", Verdict::kAllowed,
       Endpoint::kRegisterAgent},
      {"operator", Operator(), "GET", "/v1/agents/n7/commands", Verdict::kAllowed,
       Endpoint::kAgentCommands},
      {"operator", Operator(), "POST", "/v1/agents/n7/status", Verdict::kAllowed,
       Endpoint::kAgentStatus},
      {"operator", Operator(), "GET", "/v1/agents/n7", Verdict::kAllowed, Endpoint::kAgentOther},
      {"operator", Operator(), "GET", "/v1/jobs", Verdict::kAllowed, Endpoint::kListJobs},
  });
}

TEST(RoutesTest, ANodeCredentialActsForItsOwnAgentOnly) {
  Check({
      {"node", Node("n1"), "POST", "/v1/agents/register", Verdict::kAllowed,
       Endpoint::kRegisterAgent},
      {"node", Node("n1"), "GET", "/v1/agents/register", Verdict::kAllowed, Endpoint::kAgentOther},
      {"node", Node("n1"), "GET", "/v1/agents/n1/commands", Verdict::kAllowed,
       Endpoint::kAgentCommands},
      {"node", Node("n1"), "POST", "/v1/agents/n1/status", Verdict::kAllowed,
       Endpoint::kAgentStatus},
      {"node", Node("n1"), "GET", "/v1/agents/n1/other", Verdict::kAllowed, Endpoint::kAgentOther},
      {"node", Node("n1"), "POST", "/v1/web/codes", Verdict::kOutOfScope},
      {"node", Node("n1"), "GET", "/v1/history", Verdict::kOutOfScope},
      {"node", Node("n1"), "GET", "/v1/agents/n1/streams/ab12", Verdict::kAllowed,
       Endpoint::kAgentStream},
      {"node", Node("n1"), "GET", "/v1/agents/n2/streams/ab12", Verdict::kOutOfScope},
      {"node", Node("n1"), "GET", "/v1/agents/n2/commands", Verdict::kOutOfScope},
      {"node", Node("n1"), "POST", "/v1/agents/n2/status", Verdict::kOutOfScope},
      {"node", Node("n1"), "POST", "/v1/agents/join", Verdict::kOutOfScope},
      {"node", Node("n1"), "GET", "/v1/agents", Verdict::kOutOfScope},
      {"node", Node("n1"), "GET", "/v1/jobs", Verdict::kOutOfScope},
      {"node", Node("n1"), "POST", "/v1/tokens", Verdict::kOutOfScope},
      {"node", Node("n1"), "GET", "/healthz", Verdict::kAllowed, Endpoint::kHealthz},
      {"node", Node("n1"), "GET", "/elsewhere", Verdict::kOutsideApi},
  });
}

TEST(RoutesTest, TheJoinTokenOnlyJoins) {
  Check({
      {"join", Join(), "POST", "/v1/agents/join", Verdict::kAllowed, Endpoint::kJoinNode},
      {"join", Join(), "GET", "/v1/agents/join", Verdict::kOutOfScope},
      {"join", Join(), "POST", "/v1/agents/register", Verdict::kOutOfScope},
      {"join", Join(), "POST", "/v1/tokens", Verdict::kOutOfScope},
      {"join", Join(), "GET", "/v1/no/such/thing", Verdict::kOutOfScope},
      {"join", Join(), "GET", "/metrics", Verdict::kAllowed, Endpoint::kMetrics},
  });
}

TEST(RoutesTest, AStepTokenActsOnItsJobsStepsOnly) {
  Check({
      {"step", Step(12), "POST", "/v1/jobs/12/steps", Verdict::kAllowed, Endpoint::kJobSteps},
      {"step", Step(12), "GET", "/v1/jobs/12/steps/4", Verdict::kAllowed, Endpoint::kJobSteps},
      {"step", Step(12), "POST", "/v1/jobs/012/steps/4/signal", Verdict::kAllowed,
       Endpoint::kJobSteps},
      {"step", Step(12), "POST", "/v1/jobs/13/steps", Verdict::kOutOfScope},
      {"step", Step(12), "GET", "/v1/jobs/12", Verdict::kOutOfScope},
      {"step", Step(12), "DELETE", "/v1/jobs/12", Verdict::kOutOfScope},
      {"step", Step(12), "GET", "/v1/jobs", Verdict::kOutOfScope},
      {"step", Step(12), "GET", "/v1/agents/n1/commands", Verdict::kOutOfScope},
  });
}

TEST(RoutesTest, ParametersAndEmptySegments) {
  RouteMatch m = MatchRoute(ApiRoutes(), "POST", "//v1/nodes//n3/drain/", Operator());
  ASSERT_EQ(m.verdict, Verdict::kAllowed);
  EXPECT_EQ(m.route->endpoint, Endpoint::kNodeAction);
  EXPECT_EQ(m.Param("node"), "n3");
  EXPECT_EQ(m.Param("action"), "drain");
  EXPECT_EQ(m.Param("id"), "");
  EXPECT_EQ(m.parts, (std::vector<std::string>{"v1", "nodes", "n3", "drain"}));
}

TEST(RoutesTest, ScopeRefusalsNameWhatEachCredentialMayDo) {
  EXPECT_EQ(ScopeRefusal(Join()).message(),
            "the join token may only join a node (POST /v1/agents/join)");
  EXPECT_EQ(ScopeRefusal(Node("n1")).message(), "a node credential acts for its node's agent only");
  EXPECT_EQ(ScopeRefusal(Step(7)).message(),
            "a job's step token may only act on its steps (/v1/jobs/7/steps)");
  EXPECT_EQ(ScopeRefusal(Node("n1")).code(), StatusCode::kPermissionDenied);
}

TEST(RoutesTest, ParseIdTakesPositiveDecimalIdsOnly) {
  EXPECT_EQ(ParseId("12"), 12u);
  EXPECT_EQ(ParseId("0"), std::nullopt);
  EXPECT_EQ(ParseId("-1"), std::nullopt);
  EXPECT_EQ(ParseId("12a"), std::nullopt);
  EXPECT_EQ(ParseId(""), std::nullopt);
  EXPECT_EQ(ParseId("4294967296"), std::nullopt);
}

}  // namespace
}  // namespace berth::controller
