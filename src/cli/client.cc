#include "cli/client.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "api/errors.h"
#include "common/strings.h"
#include "net/munge_cred.h"

namespace berth::cli {
namespace {

std::string HomeDir() {
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &found) == 0 && found) return found->pw_dir;
  return "/tmp";
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string BerthHome() {
  if (const char* h = std::getenv("BERTH_HOME"); h && *h) return h;
  return HomeDir() + "/.local/share/berth";
}

std::string FindSocket() {
  if (const char* s = std::getenv("BERTH_SOCKET"); s && *s) return s;
  // A home given is that cluster's: never another's socket because this one is not there yet
  // (the connection then fails naming this path).
  if (const char* h = std::getenv("BERTH_HOME"); h && *h)
    return std::string(h) + "/controller.sock";
  for (const std::string& p :
       {BerthHome() + "/controller.sock", HomeDir() + "/.local/share/berth/controller.sock",
        std::string("/run/berth/controller.sock")}) {
    if (Exists(p)) return p;
  }
  return BerthHome() + "/controller.sock";
}

namespace {

// How long a request waits for an HA group that has no leader (a failover): long enough for a
// lease to run out and the next leader to load.
constexpr int kNoLeaderWaitMs = 20000;

}  // namespace

Result<std::unique_ptr<Client>> Client::Connect(const std::string& address) {
  auto c = std::unique_ptr<Client>(new Client());
  // One address, or an HA group's controllers (docs/ha.md): a comma list, tried in turn.
  if (!address.empty()) {
    c->addresses_ = SplitList(address);
  } else {
    for (const std::string& path : SplitList(FindSocket())) c->addresses_.push_back("unix:" + path);
  }
  c->options_.timeout_ms = 60000;
  // A controller on another host (docs/security.md): its HTTPS API with a bearer token, or,
  // with BERTH_AUTH=munge, HTTPS or plain HTTP with a fresh MUNGE credential per request.
  const char* server = std::getenv("BERTH_SERVER");
  const char* auth = std::getenv("BERTH_AUTH");
  const bool munge = auth != nullptr && std::string_view(auth) == "munge";
  if (address.empty() && server != nullptr && *server != '\0') {
    c->addresses_.clear();
    bool plain = false;  // any of them
    for (std::string s : SplitList(server)) {
      const bool http = s.starts_with("http://");
      plain = plain || http;
      if (s.starts_with("https://")) s = s.substr(8);
      if (http) s = s.substr(7);
      while (s.ends_with("/")) s.pop_back();
      c->addresses_.push_back((http ? "tcp:" : "tls:") + s);
    }
    const char* token = std::getenv("BERTH_TOKEN");
    // Inside a job on a node that reaches the controller over TLS, the agent gives the job its
    // step token: good for srun's steps of that job only (docs/security.md).
    if (token == nullptr || *token == '\0') token = std::getenv("BERTH_JOB_TOKEN");
    if (!munge && (token == nullptr || *token == '\0')) {
      return Status::PermissionDenied(
          "BERTH_SERVER is set but BERTH_TOKEN is not (get one with `berth token` on the "
          "controller's host, or set BERTH_AUTH=munge where munged runs)");
    }
    if (plain && !munge) {
      return Status::InvalidArgument(
          "a bearer token goes only over https:// (BERTH_SERVER), or use BERTH_AUTH=munge");
    }
    if (!munge) c->options_.bearer_token = token;
    if (const char* ca = std::getenv("BERTH_CA_FILE"); ca != nullptr) c->options_.tls_ca_file = ca;
  }
  if (c->addresses_.empty()) return Status::InvalidArgument("no controller address");
  if (munge) {
    const char* socket = std::getenv("BERTH_MUNGE_SOCKET");
    c->munge_socket_ = socket != nullptr ? socket : "";
    c->munge_ = true;
  }
  Status st = c->ConnectNext(c->addresses_.size());
  if (!st.ok()) {
    std::string from;  // where the address came from
    if (address.empty() && c->addresses_.front().starts_with("unix:")) {
      const char* sock = std::getenv("BERTH_SOCKET");
      from = sock && *sock
                 ? ", from BERTH_SOCKET"
                 : (std::getenv("BERTH_HOME") && *std::getenv("BERTH_HOME") ? ", from BERTH_HOME"
                                                                            : "");
    }
    std::string where;
    for (const std::string& a : c->addresses_) where += (where.empty() ? "" : ",") + a;
    return Status::Unavailable("cannot reach the berth controller at " + where + from +
                               " (is `berth up` running? " + st.message() + ")");
  }
  return c;
}

Status Client::ConnectNext(size_t tries) {
  Status last = Status::Unavailable("no controller address");
  for (size_t i = 0; i < tries; ++i) {
    const std::string& where = addresses_[current_ % addresses_.size()];
    Result<std::unique_ptr<net::HttpClient>> http = net::HttpClient::Connect(where, options_);
    if (http.ok()) {
      http_ = std::move(*http);
      return Status::Ok();
    }
    last = http.status();
    current_ = (current_ + 1) % addresses_.size();
  }
  return last;
}

Result<nlohmann::json> Client::Call(const std::string& method, const std::string& target,
                                    const nlohmann::json& body) {
  Result<std::string> text = CallText(method, target, body);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::Internal("the controller sent something that is not JSON");
  return j;
}

Result<std::string> Client::CallText(const std::string& method, const std::string& target,
                                     const nlohmann::json& body) {
  return Exchange(method, target, body, nullptr);
}

Status Client::CallTo(const std::string& method, const std::string& target,
                      const nlohmann::json& body,
                      const std::function<void(std::string_view)>& sink) {
  return Exchange(method, target, body, &sink).status();
}

Result<std::string> Client::Exchange(const std::string& method, const std::string& target,
                                     const nlohmann::json& body,
                                     const std::function<void(std::string_view)>* sink) {
  std::string text;
  try {
    text = body.is_null() ? "" : body.dump();
  } catch (const nlohmann::json::type_error&) {
    // JSON carries UTF-8 only: a script or value with other bytes (Latin-1 text, say) is refused
    // here, before anything reaches the controller.
    return Status::InvalidArgument(
        "the request holds text that is not UTF-8 (a script, path or option value with other "
        "bytes); convert it, e.g. iconv -f latin1 -t utf-8");
  }
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kNoLeaderWaitMs);
  size_t standbys = 0;  // answers in a row from standbys
  while (true) {
    if (munge_) {  // a credential is good once: a fresh one for each request
      Result<std::string> cred = net::MungeEncode(munge_socket_);
      if (!cred.ok()) return cred.status();
      http_->SetHeader("Authorization", "Munge " + *cred);
    }
    bool sunk = false;  // part of the body went to the sink: not to be asked again
    Result<net::ClientResponse> r = sink == nullptr
                                        ? http_->Request(method, target, text)
                                        : http_->RequestTo(method, target, text, "application/json",
                                                           [&](std::string_view data) {
                                                             sunk = true;
                                                             (*sink)(data);
                                                           });
    if (!r.ok()) {
      // A read that lost its answer (a standby's server closes as it becomes the leader) is
      // asked again of the group; a change is not: it may have been done.
      if (method == "GET" && !sunk && addresses_.size() > 1 &&
          std::chrono::steady_clock::now() < give_up && ConnectNext(addresses_.size()).ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      return Status::Unavailable("the berth controller did not answer: " + r.status().message());
    }
    // A standby of an HA group did nothing: ask the next controller of the list; when every
    // one is a standby (no leader yet: a failover), wait a little and ask again.
    if (r->status == 503 && r->headers.contains("x-berth-leader") && addresses_.size() > 1 &&
        std::chrono::steady_clock::now() < give_up) {
      if (++standbys % addresses_.size() == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
      current_ = (current_ + 1) % addresses_.size();
      if (ConnectNext(addresses_.size()).ok()) continue;
    }
    Status st = api::StatusFromHttp(r->status, r->body);
    if (!st.ok()) return st;
    return std::move(r->body);
  }
}

Status Client::Upgrade(const std::string& target, const std::string& protocol, int* fd,
                       std::string* already_read) {
  if (munge_) {
    Result<std::string> cred = net::MungeEncode(munge_socket_);
    if (!cred.ok()) return cred.status();
    http_->SetHeader("Authorization", "Munge " + *cred);
  }
  Result<net::ClientResponse> r = http_->Upgrade(target, {{"Upgrade", protocol}}, fd, already_read);
  if (!r.ok()) {
    return Status::Unavailable("the berth controller did not answer: " + r.status().message());
  }
  if (r->status == 101) return Status::Ok();
  Status st = api::StatusFromHttp(r->status, r->body);
  return st.ok() ? Status::Internal("the controller did not switch protocols (HTTP " +
                                    std::to_string(r->status) + ")")
                 : st;
}

int ExitCodeOf(const Status& status) {
  return api::ExitCodeOf(status.code());
}

int Fail(const char* prog, const Status& status) {
  std::fprintf(stderr, "%s: error: %s\n", prog, status.message().c_str());
  return ExitCodeOf(status);
}

std::string ClusterName(Client& client) {
  Result<nlohmann::json> r = client.Call("GET", "/v1/config");
  if (r.ok() && r->contains("config") && r->at("config").is_array()) {
    for (const nlohmann::json& row : r->at("config")) {
      if (row.is_array() && row.size() == 2 && row[0] == "ClusterName" && row[1].is_string()) {
        return row[1].get<std::string>();
      }
    }
  }
  return "berth";
}

}  // namespace berth::cli
