// The web console's sign-in on the HTTPS port (docs/security.md, "The web console"): sign-in
// codes for `berth web` (POST /v1/web/codes), their exchange for a session cookie (GET
// /ui/login), sign-out (POST /ui/logout), and the session cookie as a user's credential on /v1,
// with its CSRF and Origin checks. The sessions themselves: web_sessions.h.
#include <cstdio>
#include <string>

#include "common/markup.h"
#include "controller/controller_internal.h"
#include "controller/web_sessions.h"

namespace berth::controller {

using nlohmann::json;

namespace {

net::HttpResponse PlainPage(int status, const std::string& title, const std::string& text) {
  net::HttpResponse r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + title +
           "</title></head>\n<body><h1>" + title + "</h1>\n<p>" + text + "</p></body></html>\n";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("Content-Security-Policy", "default-src 'none'");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  return r;
}

}  // namespace

std::vector<std::string> Controller::Impl::OwnOrigins() const {
  std::vector<std::string> out;
  if (k8s && k8s->serving()) out.push_back(k8s->server_url());
  return out;
}

net::HttpResponse Controller::Impl::ServeHttps(const net::HttpRequest& req) {
  if (req.path == "/ui/login") return WebLogin(req);
  if (req.path == "/ui/logout") return WebLogout(req);
  // A bearer token (or MUNGE credential) wins; one that is sent and wrong is refused, never
  // passed over for a cookie.
  if (std::optional<Caller> caller = auth.IdentifyToken(req)) return ServeAs(req, *caller);
  // The console's pages need no credential (their data comes from /v1 with one).
  if (req.path == "/ui" || req.path.starts_with("/ui/")) return ServeAs(req, Caller{});
  std::optional<std::string> secret = CookieValue(req, kSessionCookie);
  if (!req.Header("authorization").empty() || !secret) {
    return Unauthorized("a valid bearer token is required (berth token)");
  }
  std::optional<WebSession> session = web_sessions.Find(*secret, Now());
  if (!session) return Unauthorized("the web session has ended: sign in again (berth web)");
  if (Status st = CheckCookieRequest(req, *session, OwnOrigins()); !st.ok()) return Error(st);
  // The handlers that mint credentials (tokens, kubeconfigs, sign-in codes) refuse it.
  Caller who = auth.UserCaller(session->uid);
  who.web_session = true;
  return ServeAs(req, who);
}

std::optional<Caller> Controller::Impl::WebSessionReader(const net::HttpRequest& req) {
  if (req.method != "GET" && req.method != "HEAD") return std::nullopt;
  if (!req.Header("authorization").empty()) return std::nullopt;
  std::optional<std::string> secret = CookieValue(req, kSessionCookie);
  if (!secret) return std::nullopt;
  std::optional<WebSession> session = web_sessions.Find(*secret, Now());
  if (!session) return std::nullopt;
  Caller who = auth.UserCaller(session->uid);
  who.web_session = true;
  return who;
}

net::HttpResponse Controller::Impl::WebLogin(const net::HttpRequest& req) {
  if (req.method != "GET") {
    return PlainPage(405, "Not allowed", "Sign in with the link that berth web prints.");
  }
  auto code = req.query.find("code");
  if (code == req.query.end() || code->second.empty()) {
    return PlainPage(401, "Not signed in",
                     "This address needs a sign-in code: run <code>berth web</code> and open the "
                     "link it prints.");
  }
  Result<NewWebSession> s = web_sessions.Redeem(code->second, Now());
  if (!s.ok()) {
    return PlainPage(
        401, "Sign-in refused",
        EscapeMarkup(s.status().message()) + ". Run <code>berth web</code> again for a new link.");
  }
  std::fprintf(stderr, "berth controller: web session for uid %u from %s\n", s->uid,
               req.remote.c_str());
  net::HttpResponse r = PlainPage(303, "Signed in", "Go on to <a href=\"/ui/\">the console</a>.");
  r.headers.emplace_back("Location", "/ui/");
  for (auto& h : SessionCookies(*s)) r.headers.push_back(std::move(h));
  return r;
}

net::HttpResponse Controller::Impl::WebLogout(const net::HttpRequest& req) {
  if (req.method != "POST") {
    return Error(Status::InvalidArgument("sign out with POST /ui/logout"));
  }
  std::optional<std::string> secret = CookieValue(req, kSessionCookie);
  std::optional<WebSession> session;
  if (secret) session = web_sessions.Find(*secret, Now());
  if (!session) {
    // Gone already (idle, or a restart): the browser's cookies go all the same.
    net::HttpResponse r = Unauthorized("no web session to end");
    for (auto& h : ClearedCookies()) r.headers.push_back(std::move(h));
    return r;
  }
  if (Status st = CheckCookieRequest(req, *session, OwnOrigins()); !st.ok()) return Error(st);
  web_sessions.End(*secret);
  net::HttpResponse r = JsonResponse(200, {{"signed_out", true}});
  for (auto& h : ClearedCookies()) r.headers.push_back(std::move(h));
  return r;
}

net::HttpResponse Controller::Impl::WebCodeRoute(const ApiCall& c) {
  if (c.who.web_session)
    return Error(Status::PermissionDenied(std::string(kWebSessionMintsNothing)));
  if (!c.who.known) {
    return Error(Status::PermissionDenied("a sign-in code is only for a user's own credential"));
  }
  if (!k8s || !k8s->serving()) {
    return Error(Status::Unavailable(
        "this controller serves no HTTPS port for the web console (berth controller "
        "--k8s-listen HOST:PORT)"));
  }
  const std::string code = web_sessions.IssueCode(c.who.uid, Now());
  return JsonResponse(201, {{"code", code},
                            {"expires_in", web_sessions.options().code_ttl_s},
                            {"user", c.who.user},
                            {"url", k8s->server_url() + "/ui/login?code=" + code}});
}

}  // namespace berth::controller
