// For the controller's tests that go through its API without daemons: a request handled in
// process, as the controller's own user on its Unix socket (an operator).
#ifndef BERTH_CONTROLLER_CONTROLLER_TEST_UTIL_H_
#define BERTH_CONTROLLER_CONTROLLER_TEST_UTIL_H_

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "controller/controller.h"
#include "net/http.h"

namespace berth::controller {

// `target` may carry a query ("/v1/images?node=n1"); its values are taken as written.
inline std::pair<int, nlohmann::json> CallApi(Controller& c, const std::string& method,
                                              const std::string& target,
                                              const nlohmann::json& body = nullptr) {
  net::HttpRequest req;
  req.method = method;
  req.target = target;
  req.path = target.substr(0, target.find('?'));
  if (size_t q = target.find('?'); q != std::string::npos) {
    std::string kv = target.substr(q + 1);
    while (!kv.empty()) {
      size_t amp = kv.find('&');
      std::string one = kv.substr(0, amp);
      req.query[one.substr(0, one.find('='))] = one.substr(one.find('=') + 1);
      kv = amp == std::string::npos ? "" : kv.substr(amp + 1);
    }
  }
  if (!body.is_null()) req.body = body.dump();
  req.peer = net::PeerCredentials{getpid(), getuid(), getgid()};
  req.remote = "unix";
  net::HttpResponse r = c.Handle(req);
  return {r.status, nlohmann::json::parse(r.body, nullptr, false)};
}

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_CONTROLLER_TEST_UTIL_H_
