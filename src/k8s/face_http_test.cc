// The watch options as the API server reads them, and when its watch cache sends BOOKMARKs.
#include "k8s/face_http.h"

#include <gtest/gtest.h>

namespace berth::k8s::http {
namespace {

net::HttpRequest WithQuery(std::map<std::string, std::string> query) {
  net::HttpRequest req;
  req.method = "GET";
  req.path = "/api/v1/pods";
  for (auto& [k, v] : query) req.query[k] = v;
  return req;
}

TEST(WatchOptionsTest, ReadsTimeoutBookmarksAndInitialEvents) {
  Result<WatchOptions> o = ParseWatchOptions(WithQuery(
      {{"timeoutSeconds", "30"}, {"allowWatchBookmarks", "true"}, {"sendInitialEvents", "1"}}));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->timeout_s, 30);
  EXPECT_TRUE(o->bookmarks);
  EXPECT_TRUE(o->send_initial_events);
  o = ParseWatchOptions(WithQuery({{"timeoutSeconds", "-5"}, {"allowWatchBookmarks", "False"}}));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->timeout_s, 0);  // none
  EXPECT_FALSE(o->bookmarks);
  o = ParseWatchOptions(WithQuery({}));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->timeout_s, 0);
  EXPECT_FALSE(o->bookmarks);
}

TEST(WatchOptionsTest, RefusesWhatIsNoNumberOrBoolean) {
  EXPECT_FALSE(ParseWatchOptions(WithQuery({{"timeoutSeconds", "5s"}})).ok());
  EXPECT_FALSE(
      ParseWatchOptions(WithQuery({{"timeoutSeconds", ""}, {"allowWatchBookmarks", "yes"}})).ok());
}

TEST(BookmarkTest, EveryMinuteAndTwoSecondsBeforeTheDeadline) {
  EXPECT_EQ(NextBookmarkMs(0, 0, 0), 60'000);
  EXPECT_EQ(NextBookmarkMs(0, 60'000, 0), 120'000);
  EXPECT_EQ(NextBookmarkMs(0, 61'000, 0), 120'000);
  EXPECT_EQ(NextBookmarkMs(0, 0, 10'000), 8'000);          // a short watch: once, before it ends
  EXPECT_EQ(NextBookmarkMs(0, 8'000, 10'000), INT64_MAX);  // and no more
  EXPECT_EQ(NextBookmarkMs(0, 0, 300'000), 60'000);
  EXPECT_EQ(NextBookmarkMs(0, 240'000, 300'000), 298'000);
  EXPECT_EQ(NextBookmarkMs(0, 298'000, 300'000), INT64_MAX);
}

TEST(BookmarkTest, OnlyKindApiVersionAndResourceVersion) {
  nlohmann::json b = BookmarkObject(JobShape(), "42", false);
  EXPECT_EQ(b, nlohmann::json::parse(R"({"kind":"Job","apiVersion":"batch/v1",
      "metadata":{"resourceVersion":"42","creationTimestamp":null}})"));
  b = BookmarkObject(PodShape(), "7", true);
  EXPECT_EQ(b["kind"], "Pod");
  EXPECT_EQ(b["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
}

}  // namespace
}  // namespace berth::k8s::http
