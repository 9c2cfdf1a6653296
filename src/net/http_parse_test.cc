#include "net/http_parse.h"

#include <gtest/gtest.h>

namespace berth::net {
namespace {

constexpr size_t kMaxHead = 8192;

struct RequestCase {
  std::string text;
  ParseResult result;
  int error_status;  // when kError
};

TEST(HttpParseTest, RequestHeadResults) {
  const RequestCase cases[] = {
      {"GET / HTTP/1.1\r\n\r\n", ParseResult::kOk, 0},
      {"GET / HTTP/1.0\r\nHost: x\r\n\r\n", ParseResult::kOk, 0},
      {"\r\n\r\nGET / HTTP/1.1\r\n\r\n", ParseResult::kOk, 0},
      {"GET / HTTP/1.1\r\nHost: x\r\n", ParseResult::kIncomplete, 0},
      {"GET / HT", ParseResult::kIncomplete, 0},
      {"", ParseResult::kIncomplete, 0},
      {"GE", ParseResult::kIncomplete, 0},
      {"GARBAGE\r\n\r\n", ParseResult::kError, 400},
      {"GARBAGE\r\n", ParseResult::kError, 400},  // answered before the head is whole
      {"G\x01T / HTTP/1.1", ParseResult::kError, 400},
      {"GET / HTTP/1.1\n\n", ParseResult::kError, 400},  // bare LF
      {"GET  / HTTP/1.1\r\n\r\n", ParseResult::kError, 400},
      {"GET / HTTP/1.1 \r\n\r\n", ParseResult::kError, 400},
      {"GET nopath HTTP/1.1\r\n\r\n", ParseResult::kError, 400},
      {"GET http://x/ HTTP/1.1\r\n\r\n", ParseResult::kError, 400},
      {"GET / HTTP/2.0\r\n\r\n", ParseResult::kError, 505},
      {"GET / HTTP/1.2\r\n\r\n", ParseResult::kError, 505},
      {"GET / HTTX/1.1\r\n\r\n", ParseResult::kError, 400},
      {"GET /a%zz HTTP/1.1\r\n\r\n", ParseResult::kError, 400},
      {"GET /a%00b HTTP/1.1\r\n\r\n", ParseResult::kError, 400},
      {"GET /?a=%4 HTTP/1.1\r\n\r\n", ParseResult::kError, 400},
      {"GET / HTTP/1.1\r\nNo colon\r\n\r\n", ParseResult::kError, 400},
      {"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", ParseResult::kError, 400},
      {"GET / HTTP/1.1\r\nName : x\r\n\r\n", ParseResult::kError, 400},
      {"GET / HTTP/1.1\r\nA: x\r\n folded\r\n\r\n", ParseResult::kError, 400},
      {"GET / HTTP/1.1\r\nA: x\x01y\r\n\r\n", ParseResult::kError, 400},
      {"GET / HTTP/1.1\r\n: x\r\n\r\n", ParseResult::kError, 400},
      {"POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", ParseResult::kError, 400},
      {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", ParseResult::kError, 400},
      {"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", ParseResult::kError,
       400},
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n", ParseResult::kOk, 0},
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
       ParseResult::kError, 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", ParseResult::kError, 501},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", ParseResult::kError, 501},
      {"GET / HTTP/1.1\r\nA: " + std::string(kMaxHead, 'x') + "\r\n\r\n", ParseResult::kError, 431},
      {"GET / HTTP/1.1\r\nA: " + std::string(kMaxHead, 'x'), ParseResult::kError, 431},
  };
  for (const RequestCase& c : cases) {
    HttpRequest req;
    RequestHead head;
    int error = -1;
    ParseResult r = ParseRequestHead(c.text, kMaxHead, &req, &head, &error);
    EXPECT_EQ(r, c.result) << testing::PrintToString(c.text);
    if (r == ParseResult::kError) {
      EXPECT_EQ(error, c.error_status) << c.text;
    }
  }
}

TEST(HttpParseTest, RequestHeadFields) {
  std::string text =
      "POST /v1/jobs%20x/a%2Fb?user=alice&name=a+b%26c&flag&user=bob&=v&x= HTTP/1.1\r\n"
      "Host: localhost\r\n"
      "Content-TYPE:  application/json \r\n"
      "X-Multi: 1\r\n"
      "x-multi: 2\r\n"
      "Content-Length: 12\r\n"
      "\r\n"
      "{\"a\":1}xxxxx";
  HttpRequest req;
  RequestHead head;
  int error = 0;
  ASSERT_EQ(ParseRequestHead(text, kMaxHead, &req, &head, &error), ParseResult::kOk);
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.target, "/v1/jobs%20x/a%2Fb?user=alice&name=a+b%26c&flag&user=bob&=v&x=");
  EXPECT_EQ(req.path, "/v1/jobs x/a/b");  // '+' in a path is not a space; %2F decodes
  std::map<std::string, std::string> want_query = {
      {"user", "bob"}, {"name", "a b&c"}, {"flag", ""}, {"", "v"}, {"x", ""}};
  EXPECT_EQ(req.query, want_query);
  EXPECT_EQ(req.headers.at("content-type"), "application/json");
  EXPECT_EQ(req.headers.at("x-multi"), "1, 2");
  EXPECT_EQ(req.Header("CONTENT-type"), "application/json");
  EXPECT_EQ(req.Header("absent"), "");
  EXPECT_EQ(head.head_bytes, text.size() - 12);
  EXPECT_EQ(head.body, BodyKind::kLength);
  EXPECT_EQ(head.content_length, 12u);
  EXPECT_TRUE(head.keep_alive);
  EXPECT_TRUE(head.http11);
}

TEST(HttpParseTest, KeepAliveRules) {
  struct Case {
    std::string text;
    bool keep_alive;
  };
  const Case cases[] = {
      {"GET / HTTP/1.1\r\n\r\n", true},
      {"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", false},
      {"GET / HTTP/1.1\r\nConnection: Keep-Alive, CLOSE\r\n\r\n", false},
      {"GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n", true},
      {"GET / HTTP/1.0\r\n\r\n", false},
      {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false},
  };
  for (const Case& c : cases) {
    HttpRequest req;
    RequestHead head;
    int error = 0;
    ASSERT_EQ(ParseRequestHead(c.text, kMaxHead, &req, &head, &error), ParseResult::kOk);
    EXPECT_EQ(head.keep_alive, c.keep_alive) << c.text;
  }
}

TEST(HttpParseTest, ChunkedAndExpect) {
  HttpRequest req;
  RequestHead head;
  int error = 0;
  std::string text =
      "PUT /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\nExpect: 100-continue\r\n\r\n";
  ASSERT_EQ(ParseRequestHead(text, kMaxHead, &req, &head, &error), ParseResult::kOk);
  EXPECT_EQ(head.body, BodyKind::kChunked);
  EXPECT_TRUE(head.expect_continue);
}

TEST(HttpParseTest, Chunks) {
  struct Case {
    std::string text;
    ParseResult result;
    std::string payload;
    size_t consumed;
    bool last;
  };
  const Case cases[] = {
      {"5\r\nhello\r\n", ParseResult::kOk, "hello", 10, false},
      {"5\r\nhello\r\nmore", ParseResult::kOk, "hello", 10, false},
      {"A;ext=1\r\n0123456789\r\n", ParseResult::kOk, "0123456789", 21, false},
      {"a \r\n0123456789\r\n", ParseResult::kOk, "0123456789", 16, false},
      {"0\r\n\r\n", ParseResult::kOk, "", 5, true},
      {"0\r\nTrailer: x\r\n\r\nnext", ParseResult::kOk, "", 17, true},
      {"5\r\nhel", ParseResult::kIncomplete, "", 0, false},
      {"5\r\nhello", ParseResult::kIncomplete, "", 0, false},
      {"5\r\nhello\r", ParseResult::kIncomplete, "", 0, false},
      {"5", ParseResult::kIncomplete, "", 0, false},
      {"0\r\n", ParseResult::kIncomplete, "", 0, false},
      {"0\r\nTrailer: x\r\n", ParseResult::kIncomplete, "", 0, false},
      {"5\r\nhelloXX", ParseResult::kError, "", 0, false},
      {"x\r\n", ParseResult::kError, "", 0, false},
      {"\r\n", ParseResult::kError, "", 0, false},
      {"-5\r\n", ParseResult::kError, "", 0, false},
      {"5x\r\n", ParseResult::kError, "", 0, false},
      {"1000000000000000\r\n", ParseResult::kError, "", 0, false},
      {std::string(2000, '1'), ParseResult::kError, "", 0, false},
  };
  for (const Case& c : cases) {
    Chunk chunk;
    ParseResult r = ParseChunk(c.text, 1 << 20, 1024, &chunk);
    EXPECT_EQ(r, c.result) << testing::PrintToString(c.text);
    if (r != ParseResult::kOk) continue;
    EXPECT_EQ(chunk.payload, c.payload) << c.text;
    EXPECT_EQ(chunk.consumed, c.consumed) << c.text;
    EXPECT_EQ(chunk.last, c.last) << c.text;
  }
  Chunk chunk;
  EXPECT_EQ(ParseChunk("11\r\n", 16, 1024, &chunk), ParseResult::kError);
  EXPECT_TRUE(chunk.too_large);
  EXPECT_EQ(ParseChunk("10\r\n", 16, 1024, &chunk), ParseResult::kIncomplete);
  EXPECT_EQ(ParseChunk("0\r\n" + std::string(100, 'x'), 16, 64, &chunk), ParseResult::kError);
}

TEST(HttpParseTest, ResponseHead) {
  struct Case {
    std::string text;
    bool head_request;
    ParseResult result;
    int status;
    BodyKind body;
    bool keep_alive;
  };
  const Case cases[] = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", false, ParseResult::kOk, 200,
       BodyKind::kLength, true},
      {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", true, ParseResult::kOk, 200, BodyKind::kNone,
       true},
      {"HTTP/1.1 204\r\n\r\n", false, ParseResult::kOk, 204, BodyKind::kNone, true},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false, ParseResult::kOk, 200,
       BodyKind::kChunked, true},
      {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false, ParseResult::kOk,
       200, BodyKind::kNone, false},
      {"HTTP/1.0 200 OK\r\n\r\n", false, ParseResult::kOk, 200, BodyKind::kUntilClose, false},
      {"HTTP/1.1 200 OK\r\n", false, ParseResult::kIncomplete, 0, BodyKind::kNone, false},
      {"HTTP/1.1 2x0 OK\r\n\r\n", false, ParseResult::kError, 0, BodyKind::kNone, false},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, ParseResult::kError, 0,
       BodyKind::kNone, false},
      {"SMTP ready\r\n\r\n", false, ParseResult::kError, 0, BodyKind::kNone, false},
  };
  for (const Case& c : cases) {
    ClientResponse resp;
    ResponseHead head;
    ParseResult r = ParseResponseHead(c.text, kMaxHead, c.head_request, &resp, &head);
    EXPECT_EQ(r, c.result) << c.text;
    if (r != ParseResult::kOk) continue;
    EXPECT_EQ(resp.status, c.status) << c.text;
    EXPECT_EQ(head.body, c.body) << c.text;
    EXPECT_EQ(head.keep_alive, c.keep_alive) << c.text;
  }
}

TEST(HttpParseTest, UrlCoding) {
  EXPECT_EQ(UrlDecode("a%20b+c"), "a b+c");
  EXPECT_EQ(UrlDecode("%41%4a%4A"), "AJJ");
  EXPECT_EQ(UrlDecode("100%"), "100%");
  EXPECT_EQ(UrlDecode("%zz%2"), "%zz%2");
  EXPECT_EQ(UrlEncode("a b/c~d_e.f-g"), "a%20b%2Fc~d_e.f-g");
  EXPECT_EQ(UrlEncode("\xff\x01"), "%FF%01");
  for (const std::string& s : {std::string(), std::string("x"), std::string("a b&c=d/e?f#g%h+i"),
                               std::string("\x00\x7f\x80\xff", 4)}) {
    EXPECT_EQ(UrlDecode(UrlEncode(s)), s);
  }
  std::string out;
  EXPECT_TRUE(PercentDecode("a+b%2B", true, &out));
  EXPECT_EQ(out, "a b+");
  out.clear();
  EXPECT_FALSE(PercentDecode("a%2", false, &out));
}

TEST(HttpParseTest, HeaderTokensAndReasons) {
  EXPECT_TRUE(HeaderHasToken("keep-alive, Close", "close"));
  EXPECT_TRUE(HeaderHasToken(" close ", "close"));
  EXPECT_FALSE(HeaderHasToken("closed", "close"));
  EXPECT_FALSE(HeaderHasToken("", "close"));
  EXPECT_EQ(ReasonPhrase(200), "OK");
  EXPECT_EQ(ReasonPhrase(431), "Request Header Fields Too Large");
  EXPECT_EQ(ReasonPhrase(299), "Unknown");
}

}  // namespace
}  // namespace berth::net
