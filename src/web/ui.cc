#include "web/ui.h"

#include <nlohmann/json.hpp>
#include <string>

#include "web/web_assets.h"

namespace berth::web {

namespace {

void AddSecurityHeaders(net::HttpResponse& r) {
  r.headers.emplace_back("Content-Security-Policy", std::string(kContentSecurityPolicy));
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Cross-Origin-Opener-Policy", "same-origin");
}

const WebAsset* FindAsset(std::string_view name) {
  for (const WebAsset& a : WebAssets()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

}  // namespace

std::string_view ContentTypeOf(std::string_view name) {
  struct Type {
    std::string_view extension;
    std::string_view content_type;
  };
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".json", "application/json"},
  };
  for (const Type& t : kTypes) {
    if (name.ends_with(t.extension)) return t.content_type;
  }
  return "application/octet-stream";
}

net::HttpResponse ServeAsset(const net::HttpRequest& req, std::string_view name) {
  if (name.empty()) name = "index.html";
  net::HttpResponse r;
  AddSecurityHeaders(r);
  const WebAsset* asset = FindAsset(name);
  if (asset == nullptr) {
    r.status = 404;
    const nlohmann::json body = {
        {"error", {{"code", "NOT_FOUND"}, {"message", "no such page: " + req.path}}}};
    r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    return r;
  }
  r.content_type = std::string(ContentTypeOf(asset->name));
  // Names are not versioned: the browser keeps a copy but asks each time (a 304 is cheap).
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("ETag", std::string(asset->etag));
  if (req.Header("if-none-match") == asset->etag) {
    r.status = 304;
    return r;
  }
  r.body = std::string(asset->body);
  return r;
}

}  // namespace berth::web
