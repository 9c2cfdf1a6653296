// The route table of the controller's REST face (docs/api.md): /v1, /healthz, /readyz and
// /metrics. Each route is a method, a path pattern, the credential kinds allowed (auth.h) and the
// endpoint that answers; the access rules live here, as data, and MatchRoute applies them. The
// controller binds each Endpoint to its handler (controller_http.cc).
//
// Patterns are path segments: a literal ("jobs"), a parameter ("{id}": one segment) or, last, the
// rest ("{...}": zero or more segments). Empty segments do not count ("/v1//jobs/" is
// "/v1/jobs"). The first route whose method and pattern match decides.
//
// Thread safety: the table is immutable; MatchRoute is a pure function.
#ifndef BERTH_CONTROLLER_ROUTES_H_
#define BERTH_CONTROLLER_ROUTES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/path_pattern.h"
#include "common/status.h"
#include "controller/auth.h"

namespace berth::controller {

// What answers a route (bound to a handler by the controller).
enum class Endpoint : uint8_t {
  kHealthz,
  kReadyz,
  kMetrics,
  kJoinNode,
  kIssueToken,
  kListJobs,
  kSqueueView,   // POST /v1/views/squeue: squeue's lines, made where the jobs are
  kScancelView,  // POST /v1/views/scancel: the jobs a filtered scancel would act on
  kSacctView,    // POST /v1/views/sacct: sacct's report, made where the records are
  kSubmitJobs,   // and ?test_only=1
  kJobsOther,    // /v1/jobs with another method: refused as a bad job id, as always
  kCancelJobs,
  kGetJob,
  kJobSteps,
  kJobAction,  // cancel, signal, hold, release, requeue, update
  kListNodes,
  kGetNode,
  kNodeAction,
  kPower,
  kPartitions,
  kWatch,
  kPriorities,
  kFairshare,  // GET /v1/fairshare: sshare's tree
  kJobUsage,   // GET /v1/usage/jobs: sstat's measurements of running jobs
  kConfig,
  kKubeconfig,
  kAccounting,
  kAssociations,        // GET /v1/associations: sacctmgr's accounts, users and QoS
  kChangeAssociations,  // POST /v1/associations: sacctmgr's add, modify, delete (operators)
  kStats,
  kGroup,
  kImages,
  kRegisterAgent,
  kAgentCommands,
  kAgentStatus,
  kAgentStream,   // GET /v1/agents/{node}/streams/{id}: a pod stream's agent side (ADR 0006)
  kAgentOther,    // anything else under /v1/agents: 404
  kReservations,  // /v1/reservations[/{name}]: list, create, update, delete (operators change)
  kHistory,       // GET /v1/history: the cluster's series (history.h)
  kWebCode,       // POST /v1/web/codes: a web console sign-in code (web_sessions.h)
  kWhoami,        // GET /v1/whoami: who the credential names (the web console)
  kUiPage,        // GET /ui/ and /ui/assets/NAME: the web console's files (src/web)
  kUsageReport,   // GET /v1/reports/usage: `berth report usage`'s figures
  kAdviceReport,  // GET /v1/reports/advice: `berth report advice`, or seff's for one job
};

// Who a route serves: a set of these bits.
enum Allow : uint16_t {
  kAllowNobody = 1 << 0,
  kAllowUsers = 1 << 1,      // every user, operators included
  kAllowOperators = 1 << 2,  // operators only (with kAllowUsers unset)
  kAllowAnyNode = 1 << 3,    // any node's credential
  kAllowOwnNode = 1 << 4,    // a node's credential when the {node} parameter is its node
  kAllowJoinToken = 1 << 5,
  kAllowOwnSteps = 1 << 6,  // a step token when the {id} parameter is its job
};

struct Route {
  std::string_view method;  // "GET", "POST", ...; "*": any
  std::string_view pattern;
  uint16_t allow;
  Endpoint endpoint;
  // A user this route refuses is told this (403); for the other kinds, ScopeRefusal.
  std::string_view refusal = {};
};

// The /v1 face, /healthz, /readyz, /metrics and the web console's pages (/ui), in match order.
std::span<const Route> ApiRoutes();

// What the table says of one request.
enum class Verdict : uint8_t {
  kAllowed,          // route is set: call its endpoint
  kOutsideApi,       // no route, and the path is not under /v1: 404 "no such endpoint: PATH"
  kUnauthenticated,  // nobody asked for a /v1 endpoint: 401
  kOutOfScope,       // a node, step or join credential outside its rights: 403 (ScopeRefusal)
  kRefused,          // a user the route refuses: 403 with route->refusal
  kNoRoute,          // a user asked for no /v1 endpoint there is: 404 "no such endpoint: M PATH"
};

struct RouteMatch {
  Verdict verdict = Verdict::kNoRoute;
  const Route* route = nullptr;    // the matched route, if any
  std::vector<std::string> parts;  // the path's segments
  PathParams params;               // "{id}" -> "12" (as "id")

  // A parameter's segment; "" when the route has no such parameter.
  const std::string& Param(std::string_view name) const;
};

// A job id from a path segment ("12"; not 0, no sign, no blanks).
std::optional<core::JobId> ParseId(std::string_view s);

// PathParts and PatternMatches (common/path_pattern.h) split and match the paths.

// Applies `routes` to a request from `who`.
RouteMatch MatchRoute(std::span<const Route> routes, std::string_view method, std::string_view path,
                      const Caller& who);

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_ROUTES_H_
