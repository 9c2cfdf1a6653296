#include "api/json_read.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace berth::api {
namespace {

using nlohmann::json;

TEST(JsonReadTest, KeyErrorNamesTheKey) {
  Status st = KeyError("nodes", "expected a count");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "\"nodes\": expected a count");
}

TEST(JsonReadTest, ShowJsonQuotesAndCuts) {
  EXPECT_EQ(ShowJson(json("abc")), "'\"abc\"'");
  EXPECT_EQ(ShowJson(json{{"a", 1}}), "'{\"a\":1}'");
  EXPECT_EQ(ShowJson(json("abcdefgh"), 4), "'\"abc...'");
  EXPECT_EQ(ShowJson(json(12)), "'12'");
}

TEST(JsonReadTest, GetIntTakesWholeNumbersInRange) {
  int64_t n = -1;
  EXPECT_TRUE(GetInt(json(5), "k", 0, 10, &n).ok());
  EXPECT_EQ(n, 5);
  EXPECT_TRUE(GetInt(json(3600.0), "k", 0, 10000, &n).ok());
  EXPECT_EQ(n, 3600);
  EXPECT_TRUE(GetInt(json(-3), "k", -5, 0, &n).ok());
  EXPECT_EQ(n, -3);
  EXPECT_TRUE(GetInt(json(kMaxJsonNumber), "k", 0, kMaxJsonNumber, &n).ok());
  EXPECT_EQ(n, kMaxJsonNumber);
}

TEST(JsonReadTest, GetIntMessages) {
  int64_t n = 7;
  EXPECT_EQ(GetInt(json("5"), "time", 0, 10, &n).message(),
            "\"time\": expected a whole number, got '\"5\"'");
  EXPECT_EQ(GetInt(json(1.5), "time", 0, 10, &n).message(),
            "\"time\": expected a whole number, got '1.5'");
  EXPECT_EQ(GetInt(json(11), "time", 0, 10, &n).message(),
            "\"time\": must be from 0 to 10, got 11");
  EXPECT_EQ(GetInt(json(kMaxJsonNumber + 1), "time", 0, 10, &n).message(),
            "\"time\": must be from 0 to 10, got '1000000000000001'");
  EXPECT_EQ(GetInt(json(std::string(50, 'x')), "time", 0, 10, &n, 10).message(),
            "\"time\": expected a whole number, got '\"xxxxxxxxx...'");
  EXPECT_EQ(n, 7);  // unchanged on error
}

TEST(JsonReadTest, GetIntAsNarrows) {
  int32_t n = 0;
  EXPECT_TRUE(GetIntAs(json(70000), "mem", 0, 1 << 20, &n).ok());
  EXPECT_EQ(n, 70000);
  EXPECT_FALSE(GetIntAs(json(-1), "mem", 0, 1 << 20, &n).ok());
  EXPECT_EQ(n, 70000);
}

TEST(JsonReadTest, GetStringAndBool) {
  std::string s;
  EXPECT_TRUE(GetString(json("x"), "name", &s).ok());
  EXPECT_EQ(s, "x");
  EXPECT_EQ(GetString(json(1), "name", &s).message(), "\"name\": expected a string, got '1'");
  bool b = false;
  EXPECT_TRUE(GetBool(json(true), "hold", &b).ok());
  EXPECT_TRUE(b);
  EXPECT_EQ(GetBool(json("yes"), "hold", &b).message(),
            "\"hold\": expected true or false, got '\"yes\"'");
}

}  // namespace
}  // namespace berth::api
