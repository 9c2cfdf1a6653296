#include "controller/web_sessions.h"

#include <gtest/gtest.h>

#include <string>

namespace berth::controller {
namespace {

net::HttpRequest Request(const std::string& method, std::map<std::string, std::string> headers) {
  net::HttpRequest req;
  req.method = method;
  req.path = "/v1/jobs";
  req.headers = std::move(headers);
  return req;
}

TEST(WebSessionsTest, ACodeSignsInOnceAndOnlyBeforeItExpires) {
  WebSessions s({.code_ttl_s = 60, .idle_s = 3600, .max_sessions = 10});
  const std::string code = s.IssueCode(1000, 100);
  EXPECT_EQ(code.size(), 32u);
  Result<NewWebSession> first = s.Redeem(code, 159);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->uid, 1000u);
  EXPECT_EQ(first->secret.size(), 64u);  // 256 bits
  EXPECT_FALSE(first->csrf.empty());
  Result<NewWebSession> again = s.Redeem(code, 159);
  EXPECT_EQ(again.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(again.status().message().find("used already"), std::string::npos);

  const std::string late = s.IssueCode(1000, 200);
  Result<NewWebSession> expired = s.Redeem(late, 260);
  EXPECT_EQ(expired.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(expired.status().message().find("expired"), std::string::npos);
  EXPECT_FALSE(s.Redeem(late, 205).ok());  // an expired code is used up too
  EXPECT_FALSE(s.Redeem("", 100).ok());
  EXPECT_FALSE(s.Redeem("nonsense", 100).ok());
}

TEST(WebSessionsTest, SessionsNameTheirUserUntilIdleOrEnded) {
  WebSessions s({.code_ttl_s = 60, .idle_s = 100, .max_sessions = 10});
  Result<NewWebSession> n = s.Redeem(s.IssueCode(7, 0), 1);
  ASSERT_TRUE(n.ok());
  std::optional<WebSession> found = s.Find(n->secret, 50);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->uid, 7u);
  EXPECT_EQ(found->csrf, n->csrf);
  EXPECT_TRUE(s.Find(n->secret, 149));  // used at 50: idle 99 s
  EXPECT_FALSE(s.Find(n->secret + "0", 149));
  EXPECT_FALSE(s.Find(n->csrf, 149));    // the CSRF token is no credential
  EXPECT_FALSE(s.Find(n->secret, 249));  // idle 100 s: gone
  EXPECT_EQ(s.sessions(), 0u);

  Result<NewWebSession> m = s.Redeem(s.IssueCode(7, 300), 300);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(s.End(m->secret));
  EXPECT_FALSE(s.End(m->secret));
  EXPECT_FALSE(s.Find(m->secret, 301));
}

TEST(WebSessionsTest, CodesAndSessionsAreBounded) {
  WebSessions s({.code_ttl_s = 60, .idle_s = 1000, .max_sessions = 3});
  std::vector<std::string> codes;
  for (int i = 0; i < 40; ++i) codes.push_back(s.IssueCode(5, 10 + i / 10));
  EXPECT_EQ(s.codes(), WebSessions::kMaxCodesPerUser);
  EXPECT_FALSE(s.Redeem(codes.front(), 20).ok());  // the oldest gave way
  s.IssueCode(6, 20);                              // another user's does not crowd theirs out
  EXPECT_EQ(s.codes(), WebSessions::kMaxCodesPerUser + 1);
  EXPECT_TRUE(s.Redeem(codes.back(), 20).ok());

  std::vector<NewWebSession> made;
  for (int i = 0; i < 4; ++i) made.push_back(*s.Redeem(s.IssueCode(8, 100 + i), 100 + i));
  EXPECT_EQ(s.sessions(), 3u);
  EXPECT_FALSE(s.Find(made[0].secret, 110));  // the least recently used went
  EXPECT_TRUE(s.Find(made[3].secret, 110));
}

TEST(WebSessionsTest, CookiesAreParsed) {
  EXPECT_EQ(CookieValueIn("berth_session=abc", "berth_session"), "abc");
  EXPECT_EQ(CookieValueIn("a=1; berth_session=abc ;b=2", "berth_session"), "abc");
  EXPECT_EQ(CookieValueIn("x_berth_session=no; berth_session=\"q\"", "berth_session"), "q");
  EXPECT_EQ(CookieValueIn("berth_session=", "berth_session"), "");
  EXPECT_FALSE(CookieValueIn("", "berth_session"));
  EXPECT_FALSE(CookieValueIn("berth_sessionx=1; nothing", "berth_session"));
  EXPECT_FALSE(CookieValueIn(";;;", "berth_session"));
  net::HttpRequest req = Request("GET", {{"cookie", "berth_csrf=t; berth_session=s"}});
  EXPECT_EQ(CookieValue(req, kSessionCookie), "s");
  EXPECT_EQ(CookieValue(req, kCsrfCookie), "t");
}

TEST(WebSessionsTest, CookieMutationsNeedTheCsrfTokenAndTheOwnOrigin) {
  const WebSession session{7, "tok123"};
  const std::vector<std::string> own = {"https://ctl.example:6443"};
  EXPECT_TRUE(CheckCookieRequest(Request("GET", {}), session, own).ok());
  EXPECT_TRUE(CheckCookieRequest(Request("HEAD", {{"origin", "https://evil"}}), session, own).ok());
  Status missing = CheckCookieRequest(Request("POST", {}), session, own);
  EXPECT_EQ(missing.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(missing.message(), "CSRF token missing or wrong");
  EXPECT_FALSE(
      CheckCookieRequest(Request("DELETE", {{"x-csrf-token", "tok124"}}), session, own).ok());
  EXPECT_FALSE(CheckCookieRequest(Request("POST", {{"x-csrf-token", "tok12"}}), session, own).ok());
  EXPECT_TRUE(CheckCookieRequest(Request("POST", {{"x-csrf-token", "tok123"}}), session, own).ok());
  // Origin, when sent, must be this controller's: as the browser reached it, or a known address.
  EXPECT_TRUE(CheckCookieRequest(Request("POST", {{"x-csrf-token", "tok123"},
                                                  {"host", "127.0.0.1:6443"},
                                                  {"origin", "https://127.0.0.1:6443"}}),
                                 session, own)
                  .ok());
  EXPECT_TRUE(CheckCookieRequest(Request("PATCH", {{"x-csrf-token", "tok123"},
                                                   {"host", "10.0.0.1:6443"},
                                                   {"origin", "https://ctl.example:6443"}}),
                                 session, own)
                  .ok());
  Status foreign = CheckCookieRequest(Request("POST", {{"x-csrf-token", "tok123"},
                                                       {"host", "127.0.0.1:6443"},
                                                       {"origin", "https://evil.example"}}),
                                      session, own);
  EXPECT_EQ(foreign.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(foreign.message().find("https://evil.example"), std::string::npos);
  EXPECT_FALSE(CheckCookieRequest(Request("POST", {{"x-csrf-token", "tok123"},
                                                   {"host", "127.0.0.1:6443"},
                                                   {"origin", "http://127.0.0.1:6443"}}),
                                  session, own)
                   .ok());
  EXPECT_FALSE(CheckCookieRequest(Request("POST", {{"x-csrf-token", "tok123"}, {"origin", "null"}}),
                                  session, own)
                   .ok());
}

TEST(WebSessionsTest, SessionCookiesAreHttpOnlySecureAndStrict) {
  NewWebSession n{1, "sec", "csrf"};
  auto set = SessionCookies(n);
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set[0].second, "berth_session=sec; Path=/; HttpOnly; Secure; SameSite=Strict");
  EXPECT_EQ(set[1].second, "berth_csrf=csrf; Path=/; Secure; SameSite=Strict");
  for (const auto& [name, value] : ClearedCookies()) {
    EXPECT_EQ(name, "Set-Cookie");
    EXPECT_NE(value.find("Max-Age=0"), std::string::npos);
  }
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(SecretsEqual("abc", "abc"));
  EXPECT_FALSE(SecretsEqual("abc", "abd"));
  EXPECT_FALSE(SecretsEqual("abc", "ab"));
}

}  // namespace
}  // namespace berth::controller
