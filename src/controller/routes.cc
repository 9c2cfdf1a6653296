#include "controller/routes.h"

#include <charconv>

namespace berth::controller {

namespace {

constexpr uint16_t kEveryone = kAllowUsers;  // users and operators
constexpr uint16_t kAgents = kAllowOperators | kAllowOwnNode;
constexpr uint16_t kAnyCaller =
    kAllowNobody | kEveryone | kAllowAnyNode | kAllowJoinToken | kAllowOwnSteps;
constexpr std::string_view kAgentRefusal =
    "only root or a node's credential may act as a node agent";

// Match order matters where patterns overlap: POST /v1/jobs/cancel before the job routes, the
// agents' own endpoints before the rest of /v1/agents.
constexpr Route kApiRoutes[] = {
    {"*", "/healthz", kAllowNobody | kEveryone | kAllowAnyNode | kAllowJoinToken | kAllowOwnSteps,
     Endpoint::kHealthz},
    {"*", "/readyz", kAllowNobody | kEveryone | kAllowAnyNode | kAllowJoinToken | kAllowOwnSteps,
     Endpoint::kReadyz},
    {"GET", "/metrics", kAllowNobody | kEveryone | kAllowAnyNode | kAllowJoinToken | kAllowOwnSteps,
     Endpoint::kMetrics},
    {"POST", "/v1/agents/join", kAllowJoinToken | kAllowOperators, Endpoint::kJoinNode,
     "joining a node needs the cluster's join token"},
    {"POST", "/v1/tokens", kEveryone, Endpoint::kIssueToken},
    {"GET", "/v1/jobs", kEveryone, Endpoint::kListJobs},
    {"POST", "/v1/views/squeue", kEveryone, Endpoint::kSqueueView},
    {"POST", "/v1/views/scancel", kEveryone, Endpoint::kScancelView},
    {"POST", "/v1/views/sacct", kEveryone, Endpoint::kSacctView},
    {"POST", "/v1/jobs", kEveryone, Endpoint::kSubmitJobs},
    {"*", "/v1/jobs", kEveryone, Endpoint::kJobsOther},
    {"POST", "/v1/jobs/cancel", kEveryone, Endpoint::kCancelJobs},
    {"GET", "/v1/jobs/{id}", kEveryone, Endpoint::kGetJob},
    {"*", "/v1/jobs/{id}/steps/{...}", kEveryone | kAllowOwnSteps, Endpoint::kJobSteps},
    {"DELETE", "/v1/jobs/{id}", kEveryone, Endpoint::kJobAction},
    {"PATCH", "/v1/jobs/{id}", kEveryone, Endpoint::kJobAction},
    {"POST", "/v1/jobs/{id}/cancel", kEveryone, Endpoint::kJobAction},
    {"POST", "/v1/jobs/{id}/signal", kEveryone, Endpoint::kJobAction},
    {"POST", "/v1/jobs/{id}/hold", kEveryone, Endpoint::kJobAction},
    {"POST", "/v1/jobs/{id}/release", kEveryone, Endpoint::kJobAction},
    {"POST", "/v1/jobs/{id}/requeue", kEveryone, Endpoint::kJobAction},
    {"GET", "/v1/nodes", kEveryone, Endpoint::kListNodes},
    {"GET", "/v1/nodes/{node}", kEveryone, Endpoint::kGetNode},
    {"POST", "/v1/nodes/{node}/{action}", kEveryone, Endpoint::kNodeAction},
    {"GET", "/v1/power", kEveryone, Endpoint::kPower},
    {"GET", "/v1/partitions", kEveryone, Endpoint::kPartitions},
    {"GET", "/v1/watch", kEveryone, Endpoint::kWatch},
    {"GET", "/v1/priorities", kEveryone, Endpoint::kPriorities},
    {"GET", "/v1/fairshare", kEveryone, Endpoint::kFairshare},
    {"GET", "/v1/usage/jobs", kEveryone, Endpoint::kJobUsage},
    {"GET", "/v1/config", kEveryone, Endpoint::kConfig},
    {"GET", "/v1/kubeconfig", kEveryone, Endpoint::kKubeconfig},
    {"GET", "/v1/accounting/jobs", kEveryone, Endpoint::kAccounting},
    {"GET", "/v1/associations", kEveryone, Endpoint::kAssociations},
    {"POST", "/v1/associations", kAllowOperators, Endpoint::kChangeAssociations,
     "Access/permission denied: only operators may change accounts, users and QOS"},
    {"GET", "/v1/stats", kEveryone, Endpoint::kStats},
    {"GET", "/v1/ha", kAnyCaller, Endpoint::kGroup},
    {"GET", "/v1/images", kEveryone, Endpoint::kImages},
    {"GET", "/v1/history", kEveryone, Endpoint::kHistory},
    {"POST", "/v1/web/codes", kEveryone, Endpoint::kWebCode},
    // Everyone may read; the commands refuse changes by non-operators with Slurm's words.
    {"GET", "/v1/reservations", kEveryone, Endpoint::kReservations},
    {"POST", "/v1/reservations", kEveryone, Endpoint::kReservations},
    {"GET", "/v1/reservations/{name}", kEveryone, Endpoint::kReservations},
    {"PATCH", "/v1/reservations/{name}", kEveryone, Endpoint::kReservations},
    {"DELETE", "/v1/reservations/{name}", kEveryone, Endpoint::kReservations},
    {"POST", "/v1/agents/register", kAllowOperators | kAllowAnyNode, Endpoint::kRegisterAgent,
     kAgentRefusal},
    {"GET", "/v1/agents/{node}/commands", kAgents, Endpoint::kAgentCommands, kAgentRefusal},
    {"POST", "/v1/agents/{node}/status", kAgents, Endpoint::kAgentStatus, kAgentRefusal},
    {"GET", "/v1/agents/{node}/streams/{id}", kAgents, Endpoint::kAgentStream, kAgentRefusal},
    {"*", "/v1/agents/join", kAllowOperators, Endpoint::kAgentOther, kAgentRefusal},
    {"*", "/v1/agents/register/{...}", kAllowOperators | kAllowAnyNode, Endpoint::kAgentOther,
     kAgentRefusal},
    {"*", "/v1/agents/{node}/{...}", kAgents, Endpoint::kAgentOther, kAgentRefusal},
    {"GET", "/v1/whoami", kEveryone, Endpoint::kWhoami},
    {"GET", "/v1/reports/usage", kEveryone, Endpoint::kUsageReport},
    {"GET", "/v1/reports/advice", kEveryone, Endpoint::kAdviceReport},
    // The console's pages are static and need no credential: their data comes from /v1.
    {"GET", "/ui", kAnyCaller, Endpoint::kUiPage},
    {"GET", "/ui/assets/{name}", kAnyCaller, Endpoint::kUiPage},
};

bool Allows(const Route& r, const RouteMatch& m, const Caller& who) {
  switch (KindOf(who)) {
    case CredentialKind::kNobody:
      return r.allow & kAllowNobody;
    case CredentialKind::kUser:
      return r.allow & kAllowUsers;
    case CredentialKind::kOperator:
      return r.allow & (kAllowUsers | kAllowOperators);
    case CredentialKind::kNode:
      return (r.allow & kAllowAnyNode) ||
             ((r.allow & kAllowOwnNode) && m.Param("node") == who.agent_node);
    case CredentialKind::kJoinToken:
      return r.allow & kAllowJoinToken;
    case CredentialKind::kStepToken:
      return (r.allow & kAllowOwnSteps) && ParseId(m.Param("id")) == who.step_job;
  }
  return false;
}

}  // namespace

std::optional<core::JobId> ParseId(std::string_view s) {
  core::JobId id = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  if (ec != std::errc() || p != s.data() + s.size() || id == 0) return std::nullopt;
  return id;
}

std::span<const Route> ApiRoutes() {
  return kApiRoutes;
}

const std::string& RouteMatch::Param(std::string_view name) const {
  return PathParam(params, name);
}

RouteMatch MatchRoute(std::span<const Route> routes, std::string_view method, std::string_view path,
                      const Caller& who) {
  RouteMatch m;
  m.parts = PathParts(path);
  for (const Route& r : routes) {
    if ((r.method == "*" || r.method == method) && PatternMatches(r.pattern, m.parts, m.params)) {
      m.route = &r;
      break;
    }
  }
  if (m.route == nullptr) m.params.clear();
  if (m.route != nullptr && Allows(*m.route, m, who)) {
    m.verdict = Verdict::kAllowed;
    return m;
  }
  const CredentialKind kind = KindOf(who);
  if (m.parts.empty() || m.parts[0] != "v1") {
    m.verdict = Verdict::kOutsideApi;
  } else if (kind == CredentialKind::kNobody) {
    m.verdict = Verdict::kUnauthenticated;
  } else if (kind != CredentialKind::kUser && kind != CredentialKind::kOperator) {
    m.verdict = Verdict::kOutOfScope;
  } else {
    m.verdict = m.route != nullptr ? Verdict::kRefused : Verdict::kNoRoute;
  }
  return m;
}

}  // namespace berth::controller
