#include "net/websocket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "net/http.h"
#include "net/http_test_util.h"
#include "net/tls_pki.h"

namespace berth::net::ws {
namespace {

DecodeResult Decode(std::string_view in, Role reader, Frame* f, size_t* used, std::string* error,
                    uint16_t* code, size_t max = 1 << 20) {
  return DecodeFrame(in, reader, max, f, used, code, error);
}

TEST(WebSocketTest, AcceptKeyOfTheRfcExample) {
  EXPECT_EQ(AcceptKey("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_EQ(NewClientKey().size(), 24u);
  EXPECT_NE(NewClientKey(), NewClientKey());
}

TEST(WebSocketTest, DecodesTheRfcMaskedHello) {
  const std::string bytes("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11);
  Frame f;
  size_t used = 0;
  std::string error;
  uint16_t code = 0;
  ASSERT_EQ(Decode(bytes, Role::kServer, &f, &used, &error, &code), DecodeResult::kFrame);
  EXPECT_EQ(f.payload, "Hello");
  EXPECT_EQ(f.opcode, Opcode::kText);
  EXPECT_TRUE(f.fin);
  EXPECT_EQ(used, bytes.size());
  // The same frame masked with the RFC's key encodes to the same bytes.
  EXPECT_EQ(EncodeFrame(Opcode::kText, "Hello", true, true, 0x37fa213d), bytes);
  // Unmasked, as a server sends it.
  EXPECT_EQ(EncodeFrame(Opcode::kText, "Hello", true, false, 0), std::string("\x81\x05Hello"));
}

TEST(WebSocketTest, RoundTripsEveryLengthForm) {
  for (size_t n : {0u, 1u, 125u, 126u, 127u, 65535u, 65536u, 300000u}) {
    for (bool masked : {false, true}) {
      std::string payload(n, '\0');
      for (size_t i = 0; i < n; ++i) payload[i] = static_cast<char>(i * 7);
      std::string bytes = EncodeFrame(Opcode::kBinary, payload, true, masked, 0xdeadbeef);
      Frame f;
      size_t used = 0;
      std::string error;
      uint16_t code = 0;
      Role reader = masked ? Role::kServer : Role::kClient;
      // Every prefix is incomplete, never an error.
      for (size_t cut : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
        if (cut >= bytes.size()) continue;
        EXPECT_EQ(Decode(std::string_view(bytes).substr(0, cut), reader, &f, &used, &error, &code),
                  DecodeResult::kIncomplete)
            << n << " cut at " << cut;
      }
      ASSERT_EQ(Decode(bytes, reader, &f, &used, &error, &code), DecodeResult::kFrame) << error;
      EXPECT_EQ(f.payload, payload) << n;
      EXPECT_EQ(used, bytes.size());
    }
  }
}

struct BadFrame {
  const char* name;
  std::string bytes;
  Role reader;
  uint16_t code;
};

TEST(WebSocketTest, RefusesWhatTheRfcForbids) {
  const std::string mask("\x01\x02\x03\x04", 4);
  const BadFrame cases[] = {
      {"unmasked to a server", std::string("\x82\x01x"), Role::kServer, kCloseProtocolError},
      {"masked to a client", std::string("\x82\x81") + mask + "x", Role::kClient,
       kCloseProtocolError},
      {"reserved bit", std::string("\xc2\x80") + mask, Role::kServer, kCloseProtocolError},
      {"reserved opcode", std::string("\x83\x80") + mask, Role::kServer, kCloseProtocolError},
      {"fragmented ping", std::string("\x09\x80") + mask, Role::kServer, kCloseProtocolError},
      {"long ping", std::string("\x89\xfe\x00\x7e") + mask + std::string(126, 'p'), Role::kServer,
       kCloseProtocolError},
      {"16-bit length under 126", std::string("\x82\xfe\x00\x05", 4) + mask + "hello",
       Role::kServer, kCloseProtocolError},
      {"64-bit length under 65536", std::string("\x82\xff\0\0\0\0\0\0\0\x05", 10) + mask,
       Role::kServer, kCloseProtocolError},
      {"64-bit length top bit", std::string("\x82\xff\x80\0\0\0\0\0\0\0", 10) + mask, Role::kServer,
       kCloseProtocolError},
      {"over the limit", std::string("\x82\xff\0\0\0\0\x7f\0\0\0", 10) + mask, Role::kServer,
       kCloseTooBig},
  };
  for (const BadFrame& c : cases) {
    Frame f;
    size_t used = 0;
    std::string error;
    uint16_t code = 0;
    EXPECT_EQ(Decode(c.bytes, c.reader, &f, &used, &error, &code), DecodeResult::kError) << c.name;
    EXPECT_EQ(code, c.code) << c.name;
    EXPECT_FALSE(error.empty()) << c.name;
  }
}

TEST(WebSocketTest, AssemblesFragmentsAroundAPing) {
  std::string in = EncodeFrame(Opcode::kBinary, "ab", false, true, 1) +
                   EncodeFrame(Opcode::kPing, "hi", true, true, 2) +
                   EncodeFrame(Opcode::kContinuation, "cd", false, true, 3) +
                   EncodeFrame(Opcode::kContinuation, "ef", true, true, 4);
  MessageAssembler assembler(Role::kServer, 100);
  Frame out;
  uint16_t code = 0;
  std::string error;
  ASSERT_EQ(assembler.Next(&in, &out, &code, &error), DecodeResult::kFrame);
  EXPECT_EQ(out.opcode, Opcode::kPing);
  EXPECT_EQ(out.payload, "hi");
  ASSERT_EQ(assembler.Next(&in, &out, &code, &error), DecodeResult::kFrame);
  EXPECT_EQ(out.opcode, Opcode::kBinary);
  EXPECT_EQ(out.payload, "abcdef");
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(assembler.Next(&in, &out, &code, &error), DecodeResult::kIncomplete);
}

TEST(WebSocketTest, AssemblerRefusesBrokenSequences) {
  struct Case {
    const char* name;
    std::string in;
    uint16_t code;
  } cases[] = {
      {"continuation first", EncodeFrame(Opcode::kContinuation, "x", true, true, 1),
       kCloseProtocolError},
      {"message inside a message",
       EncodeFrame(Opcode::kBinary, "x", false, true, 1) +
           EncodeFrame(Opcode::kBinary, "y", true, true, 1),
       kCloseProtocolError},
      {"fragments over the limit",
       EncodeFrame(Opcode::kBinary, std::string(60, 'x'), false, true, 1) +
           EncodeFrame(Opcode::kContinuation, std::string(60, 'y'), true, true, 1),
       kCloseTooBig},
      {"text not UTF-8", EncodeFrame(Opcode::kText, "\xc3\x28", true, true, 1), kCloseInvalidData},
      {"close of one byte", EncodeFrame(Opcode::kClose, "x", true, true, 1), kCloseProtocolError},
  };
  for (Case& c : cases) {
    MessageAssembler assembler(Role::kServer, 100);
    Frame out;
    uint16_t code = 0;
    std::string error;
    EXPECT_EQ(assembler.Next(&c.in, &out, &code, &error), DecodeResult::kError) << c.name;
    EXPECT_EQ(code, c.code) << c.name;
  }
}

// Reads one frame a client would receive from fd.
Frame ReadServerFrame(int fd) {
  std::string in;
  char buf[4096];
  for (;;) {
    Frame f;
    size_t used = 0;
    uint16_t code = 0;
    std::string error;
    if (DecodeFrame(in, Role::kClient, 1 << 20, &f, &used, &code, &error) == DecodeResult::kFrame) {
      return f;
    }
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return Frame{true, Opcode::kContinuation, "EOF"};
    in.append(buf, static_cast<size_t>(n));
  }
}

void SendRaw(int fd, const std::string& bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
}

TEST(WsConnectionTest, AnswersPingsDeliversMessagesAndClosesCleanly) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  // Bytes already read past the handshake are the first frame.
  WsConnection server(sv[0], true, Role::kServer, WsLimits{},
                      EncodeFrame(Opcode::kPing, "p1", true, true, 9));
  SendRaw(sv[1], EncodeFrame(Opcode::kBinary, "\x01hello", true, true, 5));
  Frame m;
  std::string error;
  ASSERT_EQ(server.Receive(&m, SteadyNowMs() + 5000, nullptr, &error), WsConnection::Got::kMessage);
  EXPECT_EQ(m.payload, "\x01hello");
  Frame pong = ReadServerFrame(sv[1]);
  EXPECT_EQ(pong.opcode, Opcode::kPong);
  EXPECT_EQ(pong.payload, "p1");
  // Nothing more: the deadline passes.
  EXPECT_EQ(server.Receive(&m, SteadyNowMs() + 50, nullptr, &error), WsConnection::Got::kTimeout);
  ASSERT_TRUE(server.Send(Opcode::kBinary, "\x02out").ok());
  EXPECT_EQ(ReadServerFrame(sv[1]).payload, "\x02out");
  SendRaw(sv[1], EncodeFrame(Opcode::kClose, ClosePayload(kCloseNormal, "bye"), true, true, 7));
  EXPECT_EQ(server.Receive(&m, SteadyNowMs() + 5000, nullptr, &error), WsConnection::Got::kClosed);
  Frame close = ReadServerFrame(sv[1]);
  EXPECT_EQ(close.opcode, Opcode::kClose);
  EXPECT_EQ(close.payload.substr(0, 2), std::string("\x03\xe8", 2));
  EXPECT_FALSE(server.Send(Opcode::kBinary, "late").ok());
  ::close(sv[1]);
}

TEST(WsConnectionTest, ProtocolErrorsAndIdlePeersAreClosedWithACode) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  WsConnection server(sv[0], true, Role::kServer, WsLimits{.max_message = 16});
  SendRaw(sv[1], EncodeFrame(Opcode::kBinary, std::string(17, 'x'), true, true, 1));
  Frame m;
  std::string error;
  EXPECT_EQ(server.Receive(&m, -1, nullptr, &error), WsConnection::Got::kClosed);
  Frame close = ReadServerFrame(sv[1]);
  ASSERT_EQ(close.opcode, Opcode::kClose);
  EXPECT_EQ(close.payload.substr(0, 2), std::string("\x03\xf1", 2));  // 1009
  ::close(sv[1]);

  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  WsConnection idle(sv[0], true, Role::kServer, WsLimits{.idle_timeout_ms = 100});
  int64_t start = SteadyNowMs();
  EXPECT_EQ(idle.Receive(&m, -1, nullptr, &error), WsConnection::Got::kClosed);
  EXPECT_GE(SteadyNowMs() - start, 90);
  EXPECT_NE(error.find("idle"), std::string::npos);
  ::close(sv[1]);

  // A peer that goes away without a close frame ends the wait too.
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  WsConnection gone(sv[0], true, Role::kClient, WsLimits{});
  ::close(sv[1]);
  EXPECT_EQ(gone.Receive(&m, SteadyNowMs() + 5000, nullptr, &error), WsConnection::Got::kClosed);
}

// A server that upgrades /echo and answers each message with "echo:" + it.
HttpResponse EchoHandler(const HttpRequest& req) {
  HttpResponse r;
  if (req.path != "/echo" || req.Header("Upgrade") != "websocket") {
    r.status = 400;
    r.body = "no upgrade";
    return r;
  }
  r.status = 101;
  r.headers = {{"Upgrade", "websocket"},
               {"Sec-WebSocket-Accept", AcceptKey(req.Header("Sec-WebSocket-Key"))}};
  r.upgrade = [](UpgradedConnection& c) {
    WsConnection ws(c.fd, false, Role::kServer, WsLimits{}, c.already_read);
    Frame m;
    std::string error;
    while (ws.Receive(&m, -1, c.stopping, &error) == WsConnection::Got::kMessage) {
      if (!ws.Send(m.opcode, "echo:" + m.payload).ok()) return;
    }
  };
  return r;
}

void EchoOver(const std::string& address, const ClientOptions& options) {
  Result<std::unique_ptr<HttpClient>> client = HttpClient::Connect(address, options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  // A plain request first: the connection is kept alive, then upgraded.
  Result<ClientResponse> plain = (*client)->Request("GET", "/other");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->status, 400);
  int fd = -1;
  std::string already;
  const std::string key = NewClientKey();
  Result<ClientResponse> up = (*client)->Upgrade(
      "/echo",
      {{"Upgrade", "websocket"}, {"Sec-WebSocket-Key", key}, {"Sec-WebSocket-Version", "13"}}, &fd,
      &already);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  ASSERT_EQ(up->status, 101);
  EXPECT_EQ(up->headers["sec-websocket-accept"], AcceptKey(key));
  WsConnection ws(fd, false, Role::kClient, WsLimits{}, already);
  for (std::string text : {std::string("a"), std::string(70000, 'b')}) {
    ASSERT_TRUE(ws.Send(Opcode::kBinary, text).ok());
    Frame m;
    std::string error;
    ASSERT_EQ(ws.Receive(&m, SteadyNowMs() + 10000, nullptr, &error), WsConnection::Got::kMessage)
        << error;
    EXPECT_EQ(m.payload, "echo:" + text);
  }
  ws.SendClose(kCloseNormal, "done");
  Frame m;
  std::string error;
  EXPECT_EQ(ws.Receive(&m, SteadyNowMs() + 10000, nullptr, &error), WsConnection::Got::kClosed);
}

TEST(WsUpgradeTest, UpgradesOverTcpAndTls) {
  HttpServer server(EchoHandler);
  ASSERT_TRUE(server.ListenTcp("127.0.0.1", 0).ok());
  ASSERT_TRUE(server.Start().ok());
  EchoOver("tcp:127.0.0.1:" + std::to_string(server.port()), ClientOptions{});

  testing::TempDir dir;
  Result<PkiFiles> pki = EnsurePki(dir.File("pki"), {"localhost"}, {"127.0.0.1"});
  ASSERT_TRUE(pki.ok()) << pki.status().ToString();
  HttpServer tls(EchoHandler);
  ASSERT_TRUE(tls.ListenTls("127.0.0.1", 0, pki->cert, pki->key).ok());
  ASSERT_TRUE(tls.Start().ok());
  ClientOptions options;
  options.tls_ca_file = pki->ca_cert;
  EchoOver("tls:127.0.0.1:" + std::to_string(tls.port()), options);
}

TEST(WsUpgradeTest, StopEndsAnOpenWebSocket) {
  auto server = std::make_unique<HttpServer>(EchoHandler);
  ASSERT_TRUE(server->ListenTcp("127.0.0.1", 0).ok());
  ASSERT_TRUE(server->Start().ok());
  Result<std::unique_ptr<HttpClient>> client =
      HttpClient::Connect("tcp:127.0.0.1:" + std::to_string(server->port()));
  ASSERT_TRUE(client.ok());
  int fd = -1;
  std::string already;
  Result<ClientResponse> up = (*client)->Upgrade(
      "/echo", {{"Upgrade", "websocket"}, {"Sec-WebSocket-Key", NewClientKey()}}, &fd, &already);
  ASSERT_TRUE(up.ok());
  ASSERT_EQ(up->status, 101);
  const int64_t start = SteadyNowMs();
  server->Stop();
  EXPECT_LT(SteadyNowMs() - start, 3000);
  WsConnection ws(fd, false, Role::kClient, WsLimits{}, already);
  Frame m;
  std::string error;
  EXPECT_EQ(ws.Receive(&m, SteadyNowMs() + 5000, nullptr, &error), WsConnection::Got::kClosed);
}

}  // namespace
}  // namespace berth::net::ws
