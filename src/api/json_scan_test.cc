#include "api/json_scan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::api {
namespace {

Result<std::vector<std::string>> Items(std::string_view doc, std::string_view key = "jobs") {
  std::vector<std::string> out;
  Status st = ForEachArrayItem(doc, key, [&](std::string_view item) {
    out.emplace_back(item);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

TEST(JsonScanTest, HandsOnEachItemOfTheKeysArray) {
  const std::string doc =
      " {\"other\": [1, {\"jobs\": [9]}, \"]}\"], \"jobs\" : [ {\"id\":1,\"s\":\"a}]\\\"{\"} ,"
      "{\"id\":2,\"n\":{\"x\":[1,2]}}, 7, \"text\", null, [3] ], \"after\": true }\n";
  Result<std::vector<std::string>> r = Items(doc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<std::string>{"{\"id\":1,\"s\":\"a}]\\\"{\"}",
                                          "{\"id\":2,\"n\":{\"x\":[1,2]}}", "7", "\"text\"", "null",
                                          "[3]"}));
}

TEST(JsonScanTest, NoKeyOrAnEmptyArrayCallsNothing) {
  for (const char* doc : {"{}", "{\"jobs\":[]}", "{ \"nodes\": [1,2] }", " { \"jobs\" : [ ] } "}) {
    Result<std::vector<std::string>> r = Items(doc);
    ASSERT_TRUE(r.ok()) << doc << ": " << r.status().ToString();
    EXPECT_TRUE(r->empty()) << doc;
  }
}

TEST(JsonScanTest, AKeyWrittenWithEscapesIsFound) {
  Result<std::vector<std::string>> r = Items("{\"j\\u006fbs\":[1]}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, std::vector<std::string>{"1"});
}

TEST(JsonScanTest, BrokenStructureIsRefusedWithItsOffset) {
  for (const char* doc :
       {"", "[]", "{\"jobs\":{}}", "{\"jobs\":[{\"id\":1}", "{\"jobs\":[{\"id\":1]}]}",
        "{\"jobs\":[1 2]}", "{\"jobs\":[\"abc]}", "{\"jobs\":[1]} x", "{\"jobs\" [1]}",
        "{jobs:[1]}", "{\"a\":1 \"jobs\":[1]}", "{\"jobs\":[1,]}"}) {
    Result<std::vector<std::string>> r = Items(doc);
    ASSERT_FALSE(r.ok()) << doc;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << doc;
    EXPECT_NE(r.status().message().find("at byte"), std::string::npos) << r.status().message();
  }
}

TEST(JsonScanTest, AnErrorFromTheCallerStopsTheWalk) {
  int calls = 0;
  Status st = ForEachArrayItem("{\"jobs\":[1,2,3]}", "jobs", [&](std::string_view) {
    return ++calls == 2 ? Status::Internal("enough") : Status::Ok();
  });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(st.message(), "enough");
}

}  // namespace
}  // namespace berth::api
