#include "net/spdy.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace berth::net::spdy {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(SpdyTest, DictionaryIsTheSpecificationsOne) {
  const std::string_view d = Dictionary();
  EXPECT_EQ(d.size(), 1423u);
  EXPECT_EQ(d.substr(0, 11), Bytes({0, 0, 0, 7, 'o', 'p', 't', 'i', 'o', 'n', 's'}));
  EXPECT_EQ(d.substr(d.size() - 6), "enq=0.");
}

TEST(SpdyTest, DecodesEachFrameType) {
  struct Case {
    const char* name;
    std::string bytes;
    Type kind;
    uint8_t flags;
    uint32_t stream;
    uint32_t value;
    std::string data;
  };
  const Case cases[] = {
      {"data with FIN", Bytes({0, 0, 0, 5, 1, 0, 0, 3, 'a', 'b', 'c'}), Type::kData, 1, 5, 0,
       "abc"},
      {"empty data", Bytes({0, 0, 0, 7, 0, 0, 0, 0}), Type::kData, 0, 7, 0, ""},
      {"SYN_STREAM", Bytes({0x80, 3, 0, 1, 2, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0, 0x60, 0, 'h', 'b'}),
       Type::kSynStream, 2, 1, 0, "hb"},
      {"SYN_REPLY", Bytes({0x80, 3, 0, 2, 0, 0, 0, 5, 0, 0, 0, 3, 'x'}), Type::kSynReply, 0, 3, 0,
       "x"},
      {"RST_STREAM", Bytes({0x80, 3, 0, 3, 0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0, 5}), Type::kRstStream,
       0, 9, 5, ""},
      {"SETTINGS, one entry",
       Bytes({0x80, 3, 0, 4, 0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 7, 0, 1, 0, 0}), Type::kSettings, 0,
       0, 1, Bytes({0, 0, 0, 7, 0, 1, 0, 0})},
      {"PING", Bytes({0x80, 3, 0, 6, 0, 0, 0, 4, 0, 0, 0, 42}), Type::kPing, 0, 0, 42, ""},
      {"GOAWAY", Bytes({0x80, 3, 0, 7, 0, 0, 0, 8, 0, 0, 0, 11, 0, 0, 0, 0}), Type::kGoAway, 0, 11,
       0, ""},
      {"HEADERS", Bytes({0x80, 3, 0, 8, 0, 0, 0, 4, 0, 0, 0, 1}), Type::kHeaders, 0, 1, 0, ""},
      {"WINDOW_UPDATE of the session", Bytes({0x80, 3, 0, 9, 0, 0, 0, 8, 0, 0, 0, 0, 0, 1, 0, 0}),
       Type::kWindowUpdate, 0, 0, 65536, ""},
      {"an unknown type is kept whole", Bytes({0x80, 3, 0, 10, 0, 0, 0, 2, 'z', 'z'}),
       static_cast<Type>(10), 0, 0, 0, "zz"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Frame f;
    size_t used = 0;
    std::string error;
    ASSERT_EQ(DecodeFrame(c.bytes + "next", 1 << 20, &f, &used, &error), DecodeResult::kFrame)
        << error;
    EXPECT_EQ(used, c.bytes.size());
    EXPECT_EQ(f.kind(), c.kind);
    EXPECT_EQ(f.flags, c.flags);
    EXPECT_EQ(f.stream_id, c.stream);
    EXPECT_EQ(f.value, c.value);
    EXPECT_EQ(f.data, c.data);
    EXPECT_EQ(EncodeFrame(f), c.bytes);
    // Every shorter prefix asks for more.
    for (size_t n = 0; n < c.bytes.size(); ++n) {
      EXPECT_EQ(DecodeFrame(c.bytes.substr(0, n), 1 << 20, &f, &used, &error),
                DecodeResult::kIncomplete);
    }
  }
}

TEST(SpdyTest, RejectsMalformedFrames) {
  struct Case {
    const char* name;
    std::string bytes;
    const char* error;
  };
  const Case cases[] = {
      {"over the limit", Bytes({0, 0, 0, 1, 0, 0, 0x10, 1}), "over the limit of 4096"},
      {"data on stream 0", Bytes({0, 0, 0, 0, 0, 0, 0, 0}), "data frame on stream 0"},
      {"SPDY/2", Bytes({0x80, 2, 0, 6, 0, 0, 0, 4, 0, 0, 0, 1}), "version 2 is not spoken"},
      {"short SYN_STREAM", Bytes({0x80, 3, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1}),
       "SYN_STREAM frame of 4 bytes (at least 10 expected)"},
      {"long PING", Bytes({0x80, 3, 0, 6, 0, 0, 0, 5, 0, 0, 0, 1, 0}),
       "PING frame of 5 bytes (4 expected)"},
      {"RST_STREAM on stream 0", Bytes({0x80, 3, 0, 3, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1}),
       "RST_STREAM frame on stream 0"},
      {"SETTINGS count that does not fit",
       Bytes({0x80, 3, 0, 4, 0, 0, 0, 12, 0, 0, 0, 9, 0, 0, 0, 7, 0, 1, 0, 0}),
       "SETTINGS frame of 12 bytes for 9 entries"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Frame f;
    size_t used = 0;
    std::string error;
    EXPECT_EQ(DecodeFrame(c.bytes, 4096, &f, &used, &error), DecodeResult::kError);
    EXPECT_NE(error.find(c.error), std::string::npos) << error;
  }
}

TEST(SpdyTest, FrameHelpers) {
  Frame f;
  size_t used = 0;
  std::string error;
  ASSERT_EQ(DecodeFrame(DataFrame(3, "hi", true), 100, &f, &used, &error), DecodeResult::kFrame);
  EXPECT_TRUE(f.fin());
  EXPECT_EQ(f.data, "hi");
  ASSERT_EQ(DecodeFrame(RstStreamFrame(3, kRstCancel), 100, &f, &used, &error),
            DecodeResult::kFrame);
  EXPECT_EQ(f.kind(), Type::kRstStream);
  EXPECT_EQ(f.value, kRstCancel);
  ASSERT_EQ(DecodeFrame(GoAwayFrame(9, 0), 100, &f, &used, &error), DecodeResult::kFrame);
  EXPECT_EQ(f.kind(), Type::kGoAway);
  EXPECT_EQ(f.stream_id, 9u);
  ASSERT_EQ(DecodeFrame(PingFrame(7), 100, &f, &used, &error), DecodeResult::kFrame);
  EXPECT_EQ(f.value, 7u);
  ASSERT_EQ(DecodeFrame(SynReplyFrame(5, "blk", false), 100, &f, &used, &error),
            DecodeResult::kFrame);
  EXPECT_EQ(f.kind(), Type::kSynReply);
  EXPECT_EQ(f.data, "blk");
  EXPECT_FALSE(f.fin());
}

TEST(SpdyTest, HeaderBlocks) {
  const Headers h = {{"streamtype", "data"}, {"port", "8080"}, {"requestid", "0"}};
  Result<Headers> back = ParseHeaderBlock(SerializeHeaderBlock(h));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, h);
  EXPECT_EQ(FindHeader(*back, "StreamType"), "data");
  EXPECT_EQ(FindHeader(*back, "missing"), "");
  // Names arrive lower case whatever the sender did.
  back = ParseHeaderBlock(SerializeHeaderBlock({{"Port", "1"}}));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)[0].first, "port");

  struct Case {
    const char* name;
    std::string block;
    const char* error;
  };
  const Case cases[] = {
      {"short count", Bytes({0, 0}), "truncated"},
      {"count beyond the bytes", Bytes({0x7f, 0xff, 0xff, 0xff}), "truncated"},
      {"name beyond the bytes", Bytes({0, 0, 0, 1, 0, 0, 0, 9, 'a', 0, 0, 0, 0}), "truncated"},
      {"empty name", Bytes({0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}), "empty name"},
      {"trailing bytes", SerializeHeaderBlock({{"a", "b"}}) + "x", "after a SPDY header block"},
      {"duplicate", SerializeHeaderBlock({{"a", "b"}, {"A", "c"}}), "\"a\" given twice"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Headers> r = ParseHeaderBlock(c.block);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(c.error), std::string::npos) << r.status().message();
  }
}

TEST(SpdyTest, CompressionIsOneStreamPerDirection) {
  HeaderCompressor out;
  HeaderDecompressor in;
  for (int i = 0; i < 50; ++i) {
    const Headers h = {{"streamtype", i % 2 ? "data" : "error"},
                       {"port", std::to_string(8000 + i)},
                       {"requestid", std::to_string(i / 2)}};
    const std::string block = out.Compress(h);
    Result<Headers> got = in.Decompress(block);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, h);
  }
  // Later blocks refer back to earlier ones: the shared window makes them small.
  EXPECT_LT(out.Compress({{"streamtype", "data"}, {"port", "8001"}, {"requestid", "0"}}).size(),
            20u);
  // An empty block (a SYN_REPLY's) is a valid block too.
  HeaderCompressor c2;
  HeaderDecompressor d2;
  Result<Headers> empty = d2.Decompress(c2.Compress({}));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

// A block compressed as zlib compresses with the dictionary (the peer's side, written here
// with zlib's own API the way a Go or Python peer does) decompresses.
TEST(SpdyTest, DecompressesAPeersBlockWithTheDictionary) {
  const std::string plain = SerializeHeaderBlock({{"streamtype", "error"}, {"port", "80"}});
  z_stream z{};
  ASSERT_EQ(deflateInit(&z, 9), Z_OK);
  const std::string_view d = Dictionary();
  ASSERT_EQ(deflateSetDictionary(&z, reinterpret_cast<const Bytef*>(d.data()),
                                 static_cast<uInt>(d.size())),
            Z_OK);
  std::string in = plain;
  char buf[1024];
  z.next_in = reinterpret_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(buf);
  z.avail_out = sizeof(buf);
  ASSERT_EQ(deflate(&z, Z_SYNC_FLUSH), Z_OK);
  const std::string block(buf, sizeof(buf) - z.avail_out);
  deflateEnd(&z);
  // The zlib header names the dictionary by its Adler-32.
  EXPECT_EQ(static_cast<uint8_t>(block[1]) & 0x20, 0x20);
  HeaderDecompressor dec;
  Result<Headers> got = dec.Decompress(block);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(FindHeader(*got, "port"), "80");
}

TEST(SpdyTest, RejectsBombsAndCorruptStreams) {
  // 1 MiB of one repeated header value compresses to about a kilobyte.
  HeaderCompressor c;
  const std::string bomb = c.Compress({{"x", std::string(1 << 20, 'a')}});
  EXPECT_LT(bomb.size(), 8192u);
  HeaderDecompressor d(64 << 10);
  Result<Headers> r = d.Decompress(bomb);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than 65536 bytes"), std::string::npos);
  // The session cannot go on after that.
  r = d.Decompress(HeaderCompressor().Compress({}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("broke earlier"), std::string::npos);

  HeaderDecompressor garbage;
  r = garbage.Decompress("not zlib at all");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("corrupt SPDY header block"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace berth::net::spdy
