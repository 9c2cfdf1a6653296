// Typed requests of the /v1 face: each request body decoded and checked on the API thread, into a
// struct the state thread's commands take, so that no command reads request JSON (and none can
// throw part-way through a transaction). The errors are the ones the commands gave before.
//
// Thread safety: pure functions (DecodeSubmit reads the passwd database).
// Used by the routes' handlers (controller_http.cc) and the commands (controller_jobs.cc,
// controller_auth.cc).
#ifndef BERTH_CONTROLLER_REQUESTS_H_
#define BERTH_CONTROLLER_REQUESTS_H_

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "controller/auth.h"
#include "core/model/job.h"

namespace berth::controller {

// Runs `decode`; the JSON library's exception (a value of the wrong type) becomes the error the
// API always gave for it: INVALID_ARGUMENT "bad request: ...".
Status GuardJson(const std::function<Status()>& decode);

// One job of a submission: decoded, owned by the caller, with something to run.
struct JobSubmission {
  core::JobSpec spec;
  std::shared_ptr<core::JobExecSpec> exec;
};

// POST /v1/jobs: one job object, or {"jobs": [...], "submit_host": H}.
struct SubmitRequest {
  std::vector<JobSubmission> jobs;
  std::string submit_host;
};
Result<SubmitRequest> DecodeSubmit(const Caller& who, const nlohmann::json& body);
// The same from the body's text when it is a batch ({"jobs": [...], ...}): each job is parsed
// and decoded from its own text, on a few threads for a large batch (a tree of the whole batch,
// made and freed on one thread, was most of a batch's time). nullopt for any other body, or one
// that is not JSON: DecodeSubmit of its tree says the same as before.
std::optional<Result<SubmitRequest>> DecodeSubmitText(const Caller& who, std::string_view body);
// POST /v1/jobs?test_only=1: one job (its "submit_host" ignored).
Result<JobSubmission> DecodeTestSubmit(const Caller& who, const nlohmann::json& body);

// POST /v1/jobs/cancel: {"ids": ["12", "13_4", 14], "signal": "TERM", "batch_only": false,
// "full": false}. A signal goes, as Slurm's scancel sends it, to the job's steps (the processes
// its srun launched) unless batch_only (the batch shell alone) or full (every process).
struct CancelManyRequest {
  std::vector<std::string> ids;  // as given ("" for an id of another type)
  int signal = 0;                // 0: cancel
  bool batch_only = false;
  bool full = false;
};
Result<CancelManyRequest> DecodeCancelMany(const nlohmann::json& body);

// PATCH /v1/jobs/ID (scontrol update): the fields to change, each of a known name and type.
// What depends on the job (who may raise a limit, whether it still pends, whether the new
// request is valid) UpdateJob checks.
struct JobUpdate {
  std::optional<Duration> time_limit;  // seconds, > 0
  std::optional<int32_t> nice;
  std::optional<std::string> comment;
  // The fields only a pending job may change, by their API name ("partition", "num_nodes",
  // "features", ...), with their values as sbatch's option would take them ("time_min" already
  // in minutes); in the body's order. An empty "features" or "dependency" clears it.
  std::vector<std::pair<std::string, std::string>> request;
};
Result<JobUpdate> DecodeJobUpdate(const nlohmann::json& body);
// The sbatch option of a pending-only field ("num_nodes" -> "nodes"); null for other names.
const char* JobUpdateOption(const std::string& field);

// DELETE /v1/jobs/ID (?signal=S), PATCH /v1/jobs/ID, POST /v1/jobs/ID/ACTION.
enum class JobActionKind { kCancel, kHold, kRelease, kRequeue, kUpdate };
struct JobActionRequest {
  JobActionKind kind = JobActionKind::kCancel;
  int signal = 0;           // kCancel: 0 cancels, else the signal to send
  bool batch_only = false;  // the signal to the batch shell alone
  bool full = false;        // the signal to every process (else: the job's steps)
  bool admin_hold = false;  // kHold: an operator's hold
  JobUpdate update;         // kUpdate: the fields to change
};
// `action` is the path's last segment ("cancel", "signal", ...) or "" for DELETE and PATCH.
Result<JobActionRequest> DecodeJobAction(const std::string& method, const std::string& action,
                                         const std::map<std::string, std::string>& query,
                                         const nlohmann::json& body);

// POST /v1/nodes/NAME/ACTION {"reason": R}.
struct NodeActionRequest {
  std::string node;
  std::string action;  // drain, resume, down (NodeAction refuses others)
  std::string reason;
};
Result<NodeActionRequest> DecodeNodeAction(const std::string& node, const std::string& action,
                                           const nlohmann::json& body);

// POST /v1/agents/join {"node": NAME}: the name, or why the body names none (given when the
// controller can issue a credential at all: JoinNode says so first).
struct JoinRequest {
  Status error;
  std::string node;
};
JoinRequest DecodeJoin(const nlohmann::json& body);

// POST /v1/tokens: {} (the caller's own), {"user": NAME|UID}, {"node": NAME} or {"join": true}.
// The errors wait in the struct, as IssueToken checks rights before it reads a name.
struct TokenRequest {
  Status shape;  // not an object (nor empty), or "join" not a boolean
  bool join = false;
  bool has_node = false;
  Status node_error;  // "node" not a string
  std::string node;
  bool has_user = false;
  Status user_error;  // "user" neither a string nor a uid
  std::string user;   // a name, or a uid as digits
};
TokenRequest DecodeToken(const nlohmann::json& body);

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_REQUESTS_H_
