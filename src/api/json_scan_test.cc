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

TEST(JsonScanTest, StringsEndEscapeAndRefuseWhereverTheBytesFall) {
  // Strings are read 16 or 8 bytes at a time where they can be: each special byte at every
  // offset of two blocks of each.
  for (size_t at = 0; at < 40; ++at) {
    const std::string pad(at, 'a');
    const std::string tail = "\u00e9bcdefghijkl";  // UTF-8 bytes are plain
    std::vector<std::string> seen;
    const std::string text = "[\"" + pad + "\\\"" + tail + "\", \"" + pad + "\", 1]";
    ASSERT_TRUE(ForEachElement(text,
                               [&](std::string_view item) {
                                 seen.emplace_back(item);
                                 return Status::Ok();
                               })
                    .ok())
        << text;
    EXPECT_EQ(seen, (std::vector<std::string>{"\"" + pad + "\\\"" + tail + "\"", "\"" + pad + "\"",
                                              "1"}));
    for (const char bad : {'\n', '\x01', '\x1f'}) {
      const std::string broken = "[\"" + pad + bad + tail + "\"]";
      EXPECT_EQ(ForEachElement(broken, [](std::string_view) { return Status::Ok(); }).code(),
                StatusCode::kInvalidArgument)
          << at;
    }
    EXPECT_EQ(
        ForEachElement("[\"" + pad + tail, [](std::string_view) { return Status::Ok(); }).code(),
        StatusCode::kInvalidArgument);
  }
}

TEST(JsonScanTest, MembersAndElementsWithTheirTexts) {
  std::vector<std::string> seen;
  ASSERT_TRUE(ForEachMember(R"( {"a": 1, "b\u0021" : {"c": [1, "]"]}, "d": "x,y"} )",
                            [&](std::string_view key, std::string_view value) {
                              seen.push_back(std::string(key) + "=" + std::string(value));
                              return Status::Ok();
                            })
                  .ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"a=1", R"(b!={"c": [1, "]"]})", R"(d="x,y")"}));
  seen.clear();
  ASSERT_TRUE(ForEachElement(R"([ {"x": "[1,2]"}, 3 ,[4]])", [&](std::string_view item) {
                seen.emplace_back(item);
                return Status::Ok();
              }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{R"({"x": "[1,2]"})", "3", "[4]"}));
  auto none = [](std::string_view) { return Status::Ok(); };
  auto no_member = [](std::string_view, std::string_view) { return Status::Ok(); };
  EXPECT_TRUE(ForEachElement("[]", none).ok());
  EXPECT_TRUE(ForEachMember("{}", no_member).ok());
  for (const char* broken : {"[1,", "[1] 2", "{\"a\": 1}", "[1 2]", ""}) {
    EXPECT_EQ(ForEachElement(broken, none).code(), StatusCode::kInvalidArgument) << broken;
  }
  for (const char* broken : {"{\"a\" 1}", "{\"a\": 1} x", "[]", "{\"a\": }", "{a: 1}"}) {
    EXPECT_EQ(ForEachMember(broken, no_member).code(), StatusCode::kInvalidArgument) << broken;
  }
}

}  // namespace
}  // namespace berth::api
