#include "controller/standby.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::controller {
namespace {

net::HttpRequest Req(std::string method, std::string path) {
  net::HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.target = r.path;
  r.peer = net::PeerCredentials{};  // a caller on the Unix socket (forwarding: forward_test.cc)
  return r;
}

std::string Header(const net::HttpResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "<none>";
}

TEST(StandbyTest, AStandbyAnswersHealthAndItsGroupAndNamesTheLeaderForTheRest) {
  StandbyOptions so;
  so.name = "b";
  so.socket_path = "/unused.sock";
  so.group_status = [] { return nlohmann::json{{"mode", "ha"}}; };
  StandbyServer s(so);
  EXPECT_EQ(s.Handle(Req("GET", "/healthz")).status, 200);
  net::HttpResponse group = s.Handle(Req("GET", "/v1/ha"));
  EXPECT_EQ(group.status, 200);
  EXPECT_EQ(nlohmann::json::parse(group.body)["mode"], "ha");

  // No leader yet: 503, the header present but empty.
  net::HttpResponse r = s.Handle(Req("POST", "/v1/jobs"));
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(Header(r, "X-Berth-Leader"), "");
  EXPECT_EQ(Header(r, "Retry-After"), "1");
  EXPECT_NE(r.body.find("no leader is elected yet"), std::string::npos) << r.body;

  s.SetLeader("a", "tcp:10.0.0.1:6817");
  for (const char* path : {"/readyz", "/v1/jobs", "/v1/agents/n1/commands"}) {
    r = s.Handle(Req("GET", path));
    EXPECT_EQ(r.status, 503) << path;
    EXPECT_EQ(Header(r, "X-Berth-Leader"), "tcp:10.0.0.1:6817") << path;
    nlohmann::json body = nlohmann::json::parse(r.body);
    EXPECT_EQ(body["error"]["code"], "UNAVAILABLE");
    EXPECT_NE(body["error"]["message"].get<std::string>().find(
                  "this controller (b) is a standby of its group; the leader is a at "
                  "tcp:10.0.0.1:6817"),
              std::string::npos)
        << r.body;
  }
}

TEST(StandbyTest, ADeposedLeaderServesReadsOnly) {
  EXPECT_TRUE(ServedWhileDeposed(Req("GET", "/v1/jobs")));
  EXPECT_TRUE(ServedWhileDeposed(Req("GET", "/v1/jobs/12")));
  EXPECT_TRUE(ServedWhileDeposed(Req("GET", "/healthz")));
  EXPECT_TRUE(ServedWhileDeposed(Req("POST", "/v1/views/squeue")));
  EXPECT_FALSE(ServedWhileDeposed(Req("GET", "/readyz")));
  EXPECT_FALSE(ServedWhileDeposed(Req("POST", "/v1/jobs")));
  EXPECT_FALSE(ServedWhileDeposed(Req("DELETE", "/v1/jobs/12")));
  EXPECT_FALSE(ServedWhileDeposed(Req("POST", "/v1/jobs/cancel")));
  EXPECT_FALSE(ServedWhileDeposed(Req("GET", "/v1/agents/n1/commands")));
  EXPECT_FALSE(ServedWhileDeposed(Req("POST", "/v1/agents/register")));
  net::HttpResponse r = DeposedAnswer();
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(Header(r, "X-Berth-Leader"), "");
  EXPECT_NE(r.body.find("no longer its group's leader"), std::string::npos);
}

}  // namespace
}  // namespace berth::controller
