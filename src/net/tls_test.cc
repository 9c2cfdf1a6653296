// TLS through the real HttpServer over loopback: a generated PKI, a verifying OpenSSL client,
// keep-alive, a streamed (chunked) response, and a plain-HTTP client on the TLS port. Also the
// PKI files themselves and the bearer tokens.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "net/http.h"
#include "net/http_test_util.h"
#include "net/no_sigpipe.h"
#include "net/tls_pki.h"
#include "net/tls_token.h"

namespace berth::net {
namespace {

// As berth's daemons (cli/daemon_commands.cc): OpenSSL writes to its sockets with write(), so a
// peer that closes first (a plain-HTTP client answered and dropped, a test's client already gone)
// must give EPIPE, not kill the process. Under load the order of those closes varies.
const bool kSigpipeIgnored = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

using testing::RawConnectTcp;
using testing::RawReadAll;
using testing::RawSend;
using testing::TempDir;

// A blocking TLS client that trusts only `ca_path` and checks that the server's certificate
// names 127.0.0.1.
class TlsClient {
 public:
  TlsClient(uint16_t port, const std::string& ca_path) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_load_verify_locations(ctx_, ca_path.c_str(), nullptr) != 1) return;
    fd_ = RawConnectTcp(port);
    if (!fd_.valid()) return;
    ssl_ = SSL_new(ctx_);
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), "127.0.0.1");
    static constexpr unsigned char kAlpn[] = "\x02h2\x08http/1.1";
    SSL_set_alpn_protos(ssl_, kAlpn, sizeof(kAlpn) - 1);
    SSL_set_fd(ssl_, fd_.get());
    connected_ = SSL_connect(ssl_) == 1;
  }
  ~TlsClient() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }

  bool connected() const { return connected_; }
  std::string alpn() const {
    const unsigned char* p = nullptr;
    unsigned int n = 0;
    SSL_get0_alpn_selected(ssl_, &p, &n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  bool Send(std::string_view data) {
    return SSL_write(ssl_, data.data(), static_cast<int>(data.size())) ==
           static_cast<int>(data.size());
  }
  // Reads until `marker` has arrived (or the connection ends); returns everything read.
  std::string ReadUntil(std::string_view marker) {
    while (buffer_.find(marker) == std::string::npos) {
      char buf[4096];
      int n = SSL_read(ssl_, buf, sizeof(buf));
      if (n <= 0) break;
      buffer_.append(buf, static_cast<size_t>(n));
    }
    size_t at = buffer_.find(marker);
    size_t end = at == std::string::npos ? buffer_.size() : at + marker.size();
    std::string out = buffer_.substr(0, end);
    buffer_.erase(0, end);
    return out;
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  UniqueFd fd_;
  bool connected_ = false;
  std::string buffer_;
};

std::vector<std::string> LocalDns() {
  return {"localhost"};
}
std::vector<std::string> LocalIps() {
  return {"127.0.0.1", "::1"};
}

HttpResponse Handler(const HttpRequest& req) {
  HttpResponse r;
  r.content_type = "text/plain";
  if (req.path == "/stream") {
    r.stream = [](ResponseStream& out) {
      for (int i = 0; i < 3; ++i) {
        if (!out.Write("event " + std::to_string(i) + "\n")) return;
      }
    };
    return r;
  }
  r.body = req.method + " " + req.path + " peer=" + (req.peer ? "yes" : "no") +
           " auth=" + req.Header("Authorization");
  return r;
}

struct TlsServerFixture {
  TempDir dir;
  PkiFiles pki;
  HttpServer server{Handler};

  TlsServerFixture() {
    Result<PkiFiles> f = EnsurePki(dir.File("pki"), LocalDns(), LocalIps());
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    if (f.ok()) pki = *f;
    Status st = server.ListenTls("127.0.0.1", 0, pki.cert, pki.key);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(server.Start().ok());
  }
};

// With SIGPIPE's default action (as in the CLI), a write to a socket whose peer has gone is an
// EPIPE in a thread under the guard, and the process lives on; the guard takes the signal.
TEST(NoSigpipeTest, AWriteToAClosedPeerIsAnErrorNotDeath) {
  struct sigaction dfl = {}, old = {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, &old);
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  close(fds[1]);
  {
    NoSigpipeHere guard;
    EXPECT_EQ(write(fds[0], "x", 1), -1);
    EXPECT_EQ(errno, EPIPE);
  }
  sigset_t pending;
  sigpending(&pending);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
  close(fds[0]);
  sigaction(SIGPIPE, &old, nullptr);
}

TEST(TlsServerTest, RequestsOverOneKeptAliveConnection) {
  TlsServerFixture f;
  TlsClient client(f.server.port(), f.pki.ca_cert);
  ASSERT_TRUE(client.connected());
  EXPECT_EQ(client.alpn(), "http/1.1");  // never h2: HTTP/2 is not spoken
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(client.Send("GET /version HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n"));
    std::string response = client.ReadUntil("auth=Bearer t");
    EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
    EXPECT_NE(response.find("Connection: keep-alive"), std::string::npos) << response;
    // A TLS client never passes for a Unix-socket peer.
    EXPECT_NE(response.find("GET /version peer=no"), std::string::npos) << response;
  }
}

TEST(TlsServerTest, StreamedResponseIsChunked) {
  TlsServerFixture f;
  TlsClient client(f.server.port(), f.pki.ca_cert);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string response = client.ReadUntil("0\r\n\r\n");
  EXPECT_NE(response.find("Transfer-Encoding: chunked"), std::string::npos) << response;
  EXPECT_NE(response.find("8\r\nevent 0\n\r\n8\r\nevent 1\n\r\n8\r\nevent 2\n\r\n0\r\n\r\n"),
            std::string::npos)
      << response;
  // The connection is still usable after the stream.
  ASSERT_TRUE(client.Send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_NE(client.ReadUntil("auth=").find("GET /after"), std::string::npos);
}

TEST(TlsServerTest, PlainHttpOnTheTlsPortIsAnsweredAndClosed) {
  TlsServerFixture f;
  UniqueFd raw = RawConnectTcp(f.server.port());
  ASSERT_TRUE(raw.valid());
  ASSERT_TRUE(RawSend(raw.get(), "GET /version HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string answer = RawReadAll(raw.get());
  EXPECT_TRUE(answer.starts_with("HTTP/1.0 400 Bad Request")) << answer;
  EXPECT_NE(answer.find("HTTPS server"), std::string::npos);
  // The server goes on serving TLS.
  TlsClient client(f.server.port(), f.pki.ca_cert);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_NE(client.ReadUntil("auth=").find("GET /ok"), std::string::npos);
}

TEST(TlsServerTest, StopEndsSilentAndHandshakingClients) {
  TlsServerFixture f;
  UniqueFd silent = RawConnectTcp(f.server.port());
  ASSERT_TRUE(silent.valid());
  UniqueFd half = RawConnectTcp(f.server.port());
  ASSERT_TRUE(RawSend(half.get(), std::string("\x16\x03\x01\x00\x20", 5)));  // a record cut short
  f.server.Stop();  // returns: neither client holds a thread
  EXPECT_EQ(RawReadAll(silent.get()), "");
}

TEST(TlsServerTest, AClientThatTrustsAnotherCaFails) {
  TlsServerFixture f;
  TempDir other;
  Result<PkiFiles> theirs = EnsurePki(other.File("pki"), LocalDns(), LocalIps());
  ASSERT_TRUE(theirs.ok());
  TlsClient client(f.server.port(), theirs->ca_cert);
  EXPECT_FALSE(client.connected());
  ERR_clear_error();
}

TEST(TlsClientTest, HttpClientSpeaksHttpsWithABearerToken) {
  TlsServerFixture f;
  ClientOptions o;
  o.tls_ca_file = f.pki.ca_cert;
  o.bearer_token = "berth.0.abc";
  Result<std::unique_ptr<HttpClient>> c =
      HttpClient::Connect("tls:127.0.0.1:" + std::to_string(f.server.port()), o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (int i = 0; i < 3; ++i) {  // one kept-alive connection
    Result<ClientResponse> r = (*c)->Request("GET", "/x" + std::to_string(i));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->body, "GET /x" + std::to_string(i) + " peer=no auth=Bearer berth.0.abc");
  }
  std::string streamed;
  Result<int> st = (*c)->Stream("GET", "/stream", [&](std::string_view d) {
    streamed.append(d);
    return true;
  });
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(streamed, "event 0\nevent 1\nevent 2\n");
  // The connection serves on after a stream.
  Result<ClientResponse> after = (*c)->Request("POST", "/after", "{}");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->body, "POST /after peer=no auth=Bearer berth.0.abc");
}

TEST(TlsClientTest, AnUntrustedOrMisnamedServerIsRefused) {
  TlsServerFixture f;
  TempDir other;
  Result<PkiFiles> theirs = EnsurePki(other.File("pki"), LocalDns(), LocalIps());
  ASSERT_TRUE(theirs.ok());
  ClientOptions o;
  o.timeout_ms = 5000;
  o.tls_ca_file = theirs->ca_cert;
  Result<std::unique_ptr<HttpClient>> c =
      HttpClient::Connect("tls:127.0.0.1:" + std::to_string(f.server.port()), o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied) << c.status().ToString();
  EXPECT_NE(c.status().message().find("not trusted"), std::string::npos) << c.status().ToString();
  // The right CA, but a name the certificate does not carry.
  HttpServer elsewhere(Handler);
  ASSERT_TRUE(elsewhere.ListenTls("127.0.0.2", 0, f.pki.cert, f.pki.key).ok());
  ASSERT_TRUE(elsewhere.Start().ok());
  o.tls_ca_file = f.pki.ca_cert;
  c = HttpClient::Connect("tls:127.0.0.2:" + std::to_string(elsewhere.port()), o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied) << c.status().ToString();
  // A plain HTTP server on the other end is no TLS server.
  HttpServer plain(Handler);
  ASSERT_TRUE(plain.ListenTcp("127.0.0.1", 0).ok());
  ASSERT_TRUE(plain.Start().ok());
  c = HttpClient::Connect("tls:127.0.0.1:" + std::to_string(plain.port()), o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnavailable) << c.status().ToString();
  o.tls_ca_file = "/nonexistent";
  EXPECT_EQ(HttpClient::Connect("tls:127.0.0.1:1", o).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(TlsServerTest, BadCertificateFilesAreNamed) {
  TempDir dir;
  HttpServer server(Handler);
  Status st = server.ListenTls("127.0.0.1", 0, dir.File("nope.crt"), dir.File("nope.key"));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nope.crt"), std::string::npos) << st.ToString();
}

TEST(PkiTest, ServingCertificateVerifiesAndNamesTheLocalHost) {
  TempDir dir;
  Result<PkiFiles> f = EnsurePki(dir.File("pki"), {"localhost", "gpu-node-1"}, LocalIps());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(VerifyCertificate(f->ca_cert, f->cert).ok());
  EXPECT_FALSE(VerifyCertificate(f->cert, f->cert).ok());  // not self-signed, not a CA
  Result<std::vector<std::string>> sans = CertificateAltNames(f->cert);
  ASSERT_TRUE(sans.ok());
  EXPECT_EQ(*sans, (std::vector<std::string>{"DNS:localhost", "DNS:gpu-node-1", "IP:127.0.0.1",
                                             "IP:::1"}));
  for (const std::string& key : {f->ca_key, f->key}) {
    struct stat st {};
    ASSERT_EQ(::stat(key.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << key;
  }
}

TEST(PkiTest, ASecondStartReusesTheFilesAndAMissingServingCertIsReissued) {
  TempDir dir;
  Result<PkiFiles> first = EnsurePki(dir.File("pki"), LocalDns(), LocalIps());
  ASSERT_TRUE(first.ok());
  std::string ca = *ReadTextFile(first->ca_cert), cert = *ReadTextFile(first->cert);
  Result<PkiFiles> second = EnsurePki(dir.File("pki"), LocalDns(), LocalIps());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*ReadTextFile(second->ca_cert), ca);
  EXPECT_EQ(*ReadTextFile(second->cert), cert);
  ASSERT_EQ(::unlink(first->cert.c_str()), 0);
  Result<PkiFiles> third = EnsurePki(dir.File("pki"), LocalDns(), LocalIps());
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(*ReadTextFile(third->ca_cert), ca);
  EXPECT_NE(*ReadTextFile(third->cert), cert);
  EXPECT_TRUE(VerifyCertificate(third->ca_cert, third->cert).ok());
  // A name asked for that the certificate lacks: a new serving certificate, the same CA.
  std::vector<std::string> ips = LocalIps();
  ips.push_back("10.77.0.1");
  Result<PkiFiles> fourth = EnsurePki(dir.File("pki"), LocalDns(), ips);
  ASSERT_TRUE(fourth.ok());
  EXPECT_EQ(*ReadTextFile(fourth->ca_cert), ca);
  Result<std::vector<std::string>> names = CertificateAltNames(fourth->cert);
  ASSERT_TRUE(names.ok());
  EXPECT_NE(std::find(names->begin(), names->end(), "IP:10.77.0.1"), names->end());
  EXPECT_TRUE(VerifyCertificate(fourth->ca_cert, fourth->cert).ok());
}

TEST(TokenTest, IssuedTokensVerifyAndNothingElseDoes) {
  TokenSigner signer("0123456789abcdef0123456789abcdef");
  std::string token = signer.Issue(1000);
  EXPECT_TRUE(token.starts_with("berth.1000."));
  EXPECT_EQ(signer.Verify(token), std::optional<uint32_t>(1000));
  std::string forged = token;
  forged.replace(6, 4, "1001");  // another uid with the same MAC
  EXPECT_EQ(signer.Verify(forged), std::nullopt);
  std::string flipped = token;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  EXPECT_EQ(signer.Verify(flipped), std::nullopt);
  EXPECT_EQ(TokenSigner("another secret, another cluster").Verify(token), std::nullopt);
  for (const char* bad : {"", "berth.", "berth..", "berth.x.00", "berth.1000", "Bearer x",
                          "berth.99999999999999.00", "berth.-1.00"}) {
    EXPECT_EQ(signer.Verify(bad), std::nullopt) << bad;
  }
}

TEST(TokenTest, NodeCredentialsAndTheJoinTokenAreTheirOwnKinds) {
  TokenSigner signer("0123456789abcdef0123456789abcdef");
  std::string node = signer.IssueNode("gpu-a.rack1");
  EXPECT_TRUE(node.starts_with("berth-node.gpu-a.rack1."));
  EXPECT_EQ(signer.VerifyNode(node), std::optional<std::string>("gpu-a.rack1"));
  std::string other = node;
  other.replace(11, 5, "gpu-b");  // another node with the same MAC
  EXPECT_EQ(signer.VerifyNode(other), std::nullopt);
  std::string join = signer.IssueJoin();
  EXPECT_TRUE(join.starts_with("berth-join."));
  EXPECT_TRUE(signer.VerifyJoin(join));
  EXPECT_FALSE(TokenSigner("another secret, another cluster").VerifyJoin(join));
  // No kind is valid as another.
  EXPECT_EQ(signer.Verify(node), std::nullopt);
  EXPECT_EQ(signer.Verify(join), std::nullopt);
  EXPECT_EQ(signer.VerifyNode(join), std::nullopt);
  EXPECT_EQ(signer.VerifyNode(signer.Issue(0)), std::nullopt);
  EXPECT_FALSE(signer.VerifyJoin(node));
  EXPECT_FALSE(signer.VerifyJoin(signer.Issue(0)));
  for (const char* bad : {"berth-node.", "berth-node..", "berth-node.x", "berth-join.",
                          "berth-join.00", "berth-node.-x.00"}) {
    EXPECT_EQ(signer.VerifyNode(bad), std::nullopt) << bad;
    EXPECT_FALSE(signer.VerifyJoin(bad)) << bad;
  }
  EXPECT_TRUE(TokenSigner::ValidNodeName("node1"));
  EXPECT_FALSE(TokenSigner::ValidNodeName(""));
  EXPECT_FALSE(TokenSigner::ValidNodeName("a/b"));
  EXPECT_FALSE(TokenSigner::ValidNodeName(".hidden"));
  EXPECT_FALSE(TokenSigner::ValidNodeName(std::string(64, 'a')));
}

TEST(TokenTest, JobStepTokensNameOneAttemptAndNoOtherKind) {
  TokenSigner signer("0123456789abcdef0123456789abcdef");
  std::string job = signer.IssueJob(1234, 2);
  EXPECT_TRUE(job.starts_with("berth-job.1234.2."));
  EXPECT_EQ(signer.VerifyJob(job), std::make_optional(std::make_pair(1234u, 2)));
  std::string next_attempt = job;
  next_attempt.replace(15, 1, "3");  // the requeued run's attempt, with the old MAC
  EXPECT_EQ(signer.VerifyJob(next_attempt), std::nullopt);
  EXPECT_EQ(TokenSigner("another secret").VerifyJob(job), std::nullopt);
  EXPECT_EQ(signer.Verify(job), std::nullopt);
  EXPECT_EQ(signer.VerifyNode(job), std::nullopt);
  EXPECT_FALSE(signer.VerifyJoin(job));
  EXPECT_EQ(signer.VerifyJob(signer.Issue(1234)), std::nullopt);
  EXPECT_EQ(signer.VerifyJob(signer.IssueNode("n1")), std::nullopt);
  for (const char* bad : {"berth-job.", "berth-job.1.2", "berth-job..2.00", "berth-job.1..00",
                          "berth-job.1.-2.00", "berth-job.x.2.00"}) {
    EXPECT_EQ(signer.VerifyJob(bad), std::nullopt) << bad;
  }
}

TEST(TokenTest, TheSecretIsMadeOnceWithMode0600) {
  TempDir dir;
  std::string path = dir.File("token.secret");
  Result<TokenSigner> a = TokenSigner::LoadOrCreate(path);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Result<TokenSigner> b = TokenSigner::LoadOrCreate(path);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->Verify(a->Issue(42)), std::optional<uint32_t>(42));
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(TokenSigner::LoadOrCreate(path).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace berth::net
