// The agent's link to its controller (agent_internal.h, "the controller, the credential, the
// fence"): connecting to the controller in use or the next of an HA group's list, standbys' and
// deposed leaders' answers, the leader epochs heard, the node's credential (joining with the
// join token over TLS), and the fence that stops the node's jobs when the controller is silent.
#include <csignal>
#include <string>

#include "agent/agent_internal.h"
#include "agent/file_util.h"

namespace berth::agent {

using nlohmann::json;

Result<std::unique_ptr<net::HttpClient>> Agent::Impl::Connect(int timeout_ms,
                                                              const std::string& bearer) {
  net::ClientOptions o = client_options;
  o.timeout_ms = timeout_ms;
  o.bearer_token = bearer;
  // The controller in use first, then each other one of the list once (controller_choice.h:
  // one that went silent lately only when every other one failed too).
  Result<std::unique_ptr<net::HttpClient>> c = Status::Unavailable("no controller address");
  for (size_t tried = 0; tried < choice->size(); ++tried) {
    c = net::HttpClient::Connect(choice->Current(), o);
    if (c.ok()) return c;
    NoteFailure(c.status());
    choice->Failed(!Refused(c.status()), SteadyMs());
  }
  return c;
}

void Agent::Impl::NextController() {
  choice->Next(SteadyMs());
}

bool Agent::Impl::IsStandbyAnswer(const net::ClientResponse& r) {
  return r.status == 503 && r.headers.contains("x-berth-leader");
}

bool Agent::Impl::MovedOnFromStandby(const net::ClientResponse& r) {
  if (!IsStandbyAnswer(r)) return false;
  auto leader = r.headers.find("x-berth-leader");
  choice->FollowLeader(leader == r.headers.end() ? "" : leader->second, SteadyMs());
  return true;
}

bool Agent::Impl::FromCurrentLeader(const json& reply) {
  const int64_t epoch = reply.is_object() ? reply.value("epoch", int64_t{0}) : 0;
  if (epochs.Admit(epoch)) return true;
  Log("%s", "refusing a deposed leader's answer (its epoch " + std::to_string(epoch) +
                ", a later leader's " + std::to_string(epochs.seen()) + " seen)");
  NextController();
  return false;
}

Result<std::unique_ptr<net::HttpClient>> Agent::Impl::Connect(int timeout_ms) {
  std::string bearer;
  if (Tls()) {
    MutexLock<Mutex> l(credential_mu);
    bearer = credential;
  }
  return Connect(timeout_ms, bearer);
}

// The controller answered: the fence clock starts again.
void Agent::Impl::NoteContact() {
  last_contact_ms = SteadyMs();
  fenced = false;
}

// A controller that is not running (its port refuses, its socket is gone) cannot be declaring
// this node down: a restarted controller gives every node its node timeout afresh. Only
// silence (timeouts, unreachable networks) counts towards the fence.
void Agent::Impl::NoteFailure(const Status& st) {
  // In an HA group another controller may lead (and call this node down) while this one is
  // gone: silence is silence then (docs/ha.md).
  if (choice->size() > 1) return;
  if (Refused(st)) last_contact_ms = SteadyMs();
}

// The controller's port refused or its socket is gone (at once), rather than silence.
bool Agent::Impl::Refused(const Status& st) {
  const std::string& m = st.message();
  return m.find("Connection refused") != std::string::npos ||
         m.find("No such file or directory") != std::string::npos;
}

std::string Agent::Impl::CredentialPath() const {
  return opt.credential_file.empty() ? opt.state_dir + "/credential" : opt.credential_file;
}

// For a tls: controller: the node's credential from its file, or by joining with the join
// token (then kept in the file). PERMISSION_DENIED when the controller refuses the join token
// or there is neither; UNAVAILABLE to try again.
Status Agent::Impl::EnsureCredential() {
  if (!Tls()) return Status::Ok();
  {
    MutexLock<Mutex> l(credential_mu);
    if (!credential.empty()) return Status::Ok();
  }
  if (Result<std::string> saved = ReadFile(CredentialPath()); saved.ok()) {
    std::string c = *saved;
    while (!c.empty() && (c.back() == '\n' || c.back() == ' ')) c.pop_back();
    if (!c.empty()) {
      MutexLock<Mutex> l(credential_mu);
      credential = c;
      return Status::Ok();
    }
  }
  if (opt.join_token.empty()) {
    return Status::PermissionDenied("no credential in " + CredentialPath() +
                                    " and no join token (berth agent --join-token)");
  }
  Result<std::unique_ptr<net::HttpClient>> connected = Connect(10000, opt.join_token);
  if (!connected.ok()) {
    // A certificate the CA does not sign: say so, and try again (the CA file may be fixed).
    if (connected.status().code() == StatusCode::kPermissionDenied) {
      Log("%s", connected.status().message());
      return Status::Unavailable(connected.status().message());
    }
    return connected.status();
  }
  std::unique_ptr<net::HttpClient> c = std::move(*connected);
  BERTH_ASSIGN_OR_RETURN(net::ClientResponse r,
                         c->Request("POST", "/v1/agents/join", json{{"node", node}}.dump()));
  NoteContact();
  if (r.status == 401 || r.status == 403) {
    return Status::PermissionDenied("the controller refused the join token: " + r.body);
  }
  if (r.status != 200) return Status::Unavailable("join refused: " + r.body);
  json reply = json::parse(r.body, nullptr, false);
  if (!reply.is_object() || !reply.contains("credential") || !reply["credential"].is_string()) {
    return Status::Unavailable("join: the controller sent no credential");
  }
  std::string c2 = reply["credential"].get<std::string>();
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(CredentialPath(), c2 + "\n", 0600));
  Log("joined the cluster; credential in %s", CredentialPath());
  MutexLock<Mutex> l(credential_mu);
  credential = c2;
  return Status::Ok();
}

// The controller does not know this credential (its secret changed): join again if we can.
Status Agent::Impl::ForgetCredential() {
  if (opt.join_token.empty()) {
    return Status::PermissionDenied("the controller refuses this node's credential (" +
                                    CredentialPath() + ") and there is no join token");
  }
  ::unlink(CredentialPath().c_str());
  MutexLock<Mutex> l(credential_mu);
  credential.clear();
  return Status::Ok();
}

// Kills every job here at once when the controller has been silent for the fence time, so that
// none still runs when the controller, which calls the node down at twice that, requeues it.
void Agent::Impl::CheckFence() {
  const int f = opt.fence_s >= 0 ? opt.fence_s : fence_s.load();
  if (f <= 0 || fenced || !registered) return;
  const int64_t silent_ms = SteadyMs() - last_contact_ms;
  if (silent_ms <= int64_t{f} * 1000) return;
  fenced = true;
  const std::string why = "fenced: the node lost the controller for " +
                          std::to_string(silent_ms / 1000) + " s (fence time " + std::to_string(f) +
                          " s)";
  int n = 0;
  for (const std::string& dir : ListJobDirs(jobs_dir)) {
    if (!SupervisorRunning(dir) || ReadResult(dir)) continue;
    (void)WriteFileAtomic(dir + "/fenced", why + "\n", 0644);
    (void)SignalJob(dir, SIGKILL, {false, true});
    ++n;
  }
  Log("%s", why + "; killed " + std::to_string(n) + " job(s)");
}

}  // namespace berth::agent
