// The CLI's way to the controller: finding its socket without configuration, requests with
// berth's error mapping, and the exit codes that go with each error.
#ifndef BERTH_CLI_CLIENT_H_
#define BERTH_CLI_CLIENT_H_

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "net/http.h"

namespace berth::cli {

// $BERTH_HOME, else ~/.local/share/berth.
std::string BerthHome();

// Where the controller listens (a comma list: an HA group's controllers, docs/ha.md):
// $BERTH_SOCKET; else, when $BERTH_HOME is set,
// $BERTH_HOME/controller.sock whether it exists or not; else ~/.local/share/berth/controller.sock
// or /run/berth/controller.sock, whichever exists.
std::string FindSocket();

class Client {
 public:
  // Connects to FindSocket() (or `address` when given: "unix:/path" or "tcp:host:port"), or,
  // with BERTH_SERVER set, to a controller on another host: BERTH_TOKEN over HTTPS (BERTH_CA_FILE
  // its CA; inside a job, BERTH_JOB_TOKEN when BERTH_TOKEN is not set), or BERTH_AUTH=munge with
  // MUNGE credentials (BERTH_MUNGE_SOCKET: munged's socket). Each of these may be a comma list
  // (an HA group's controllers, docs/ha.md): the first that accepts a connection is used, and a
  // request a standby answered (503 with X-Berth-Leader) goes to the next, waiting up to 20 s
  // for a leader while none is elected.
  static Result<std::unique_ptr<Client>> Connect(const std::string& address = "");
  // A request; non-2xx answers come back as the Status the controller sent.
  Result<nlohmann::json> Call(const std::string& method, const std::string& target,
                              const nlohmann::json& body = nullptr);
  // The same, with the answer's body as it came (for lists read one item at a time, without a
  // tree of the whole answer: api/json_scan.h).
  Result<std::string> CallText(const std::string& method, const std::string& target,
                               const nlohmann::json& body = nullptr);
  // The same, with a successful answer's body given to `sink` a piece at a time as it arrives
  // (a long list printed as it comes is never held whole). An answer that fails is the Status
  // it carries, and nothing reaches `sink`; a body cut short is UNAVAILABLE after part of it did.
  Status CallTo(const std::string& method, const std::string& target, const nlohmann::json& body,
                const std::function<void(std::string_view)>& sink);
  // GET `target` upgraded to another protocol (an "Upgrade" header names it), with the same
  // credentials as Call; on "101" *fd is the connection (valid while this Client lives) and
  // *already_read what came after the answer's head. Other answers: the Status they carry.
  Status Upgrade(const std::string& target, const std::string& protocol, int* fd,
                 std::string* already_read);
  net::HttpClient& http() { return *http_; }

 private:
  // Connects to the address in use, else each next one, `tries` in all; the last error.
  Status ConnectNext(size_t tries);
  // CallText's and CallTo's exchange: the body to `sink` when there is one.
  Result<std::string> Exchange(const std::string& method, const std::string& target,
                               const nlohmann::json& body,
                               const std::function<void(std::string_view)>* sink);

  std::vector<std::string> addresses_;
  size_t current_ = 0;
  net::ClientOptions options_;
  std::unique_ptr<net::HttpClient> http_;
  bool munge_ = false;
  std::string munge_socket_;
};

// The cluster's name from GET /v1/config ("berth" when the controller does not say).
std::string ClusterName(Client& client);

// Exit codes: 0 ok; 1 the request failed (Slurm's commands exit 1); 2 usage errors are the
// commands' own.
int ExitCodeOf(const Status& status);
// Prints "prog: error: message" to stderr and returns ExitCodeOf(status).
int Fail(const char* prog, const Status& status);

}  // namespace berth::cli

#endif  // BERTH_CLI_CLIENT_H_
