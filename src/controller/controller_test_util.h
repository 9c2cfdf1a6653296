// For the controller's tests that go through its API without daemons: a request handled in
// process, as the controller's own user on its Unix socket (an operator).
#ifndef BERTH_CONTROLLER_CONTROLLER_TEST_UTIL_H_
#define BERTH_CONTROLLER_CONTROLLER_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "config/cluster_config.h"
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

// A controller on `config_text` in a fresh temporary folder, started (no Kubernetes port), its
// folder removed with it. `tweak` changes the options before it is made.
class TestController {
 public:
  explicit TestController(const std::string& config_text,
                          const std::function<void(ControllerOptions&)>& tweak = {}) {
    char tmpl[] = "/tmp/controller_test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    Result<config::ClusterConfig> cfg = config::ParseClusterConfig(config_text, "t.conf");
    EXPECT_TRUE(cfg.ok()) << cfg.status().message();
    if (!cfg.ok()) return;
    ControllerOptions o;
    o.state_dir = dir_;
    o.socket_path = dir_ + "/api.sock";
    o.config = std::move(*cfg);
    o.k8s_listen = "";
    if (tweak) tweak(o);
    Result<std::unique_ptr<Controller>> c = Controller::Create(std::move(o));
    EXPECT_TRUE(c.ok()) << c.status().message();
    if (!c.ok()) return;
    controller_ = std::move(*c);
    EXPECT_TRUE(controller_->Start().ok());
  }
  ~TestController() {
    if (controller_) controller_->Stop();
    controller_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  TestController(const TestController&) = delete;
  TestController& operator=(const TestController&) = delete;

  bool ok() const { return controller_ != nullptr; }
  std::pair<int, nlohmann::json> Api(const std::string& method, const std::string& target,
                                     const nlohmann::json& body = nullptr) {
    return CallApi(*controller_, method, target, body);
  }

 private:
  std::string dir_;
  std::unique_ptr<Controller> controller_;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_CONTROLLER_TEST_UTIL_H_
