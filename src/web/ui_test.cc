#include "web/ui.h"

#include <gtest/gtest.h>

#include <string>

#include "web/web_assets.h"

namespace berth::web {
namespace {

std::string HeaderOf(const net::HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

net::HttpRequest Get(std::string path) {
  net::HttpRequest req;
  req.method = "GET";
  req.path = std::move(path);
  return req;
}

TEST(WebUiTest, IndexIsTheConsolePageWithTheSecurityHeaders) {
  net::HttpResponse r = ServeAsset(Get("/ui/"), "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("<!doctype html>"), std::string::npos);
  EXPECT_EQ(HeaderOf(r, "Content-Security-Policy"), kContentSecurityPolicy);
  EXPECT_EQ(HeaderOf(r, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(HeaderOf(r, "Referrer-Policy"), "no-referrer");
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-cache");
  EXPECT_FALSE(HeaderOf(r, "ETag").empty());
}

TEST(WebUiTest, EachAssetHasItsTypeAndBody) {
  ASSERT_FALSE(WebAssets().empty());
  for (const WebAsset& a : WebAssets()) {
    SCOPED_TRACE(std::string(a.name));
    net::HttpResponse r = ServeAsset(Get("/ui/assets/" + std::string(a.name)), a.name);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, a.body);
    EXPECT_NE(r.content_type, "application/octet-stream");
    EXPECT_EQ(HeaderOf(r, "ETag"), a.etag);
  }
  EXPECT_EQ(ContentTypeOf("app.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("style.css"), "text/css; charset=utf-8");
}

TEST(WebUiTest, AMatchingETagIsNotModified) {
  net::HttpResponse first = ServeAsset(Get("/ui/"), "");
  net::HttpRequest again = Get("/ui/");
  again.headers["if-none-match"] = HeaderOf(first, "ETag");
  net::HttpResponse r = ServeAsset(again, "");
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  again.headers["if-none-match"] = "\"stale\"";
  EXPECT_EQ(ServeAsset(again, "").status, 200);
}

TEST(WebUiTest, AnUnknownAssetIs404WithTheHeadersToo) {
  net::HttpResponse r = ServeAsset(Get("/ui/assets/nope\".js"), "nope\".js");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("no such page: /ui/assets/nope\\\".js"), std::string::npos) << r.body;
  EXPECT_EQ(HeaderOf(r, "Content-Security-Policy"), kContentSecurityPolicy);
}

}  // namespace
}  // namespace berth::web
