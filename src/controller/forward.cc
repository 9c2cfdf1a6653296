#include "controller/forward.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "api/errors.h"
#include "common/strings.h"
#include "net/socket_io.h"

namespace berth::controller {
namespace {

// Headers of one hop (RFC 9110 7.6.1), and those the client sets itself.
bool HopByHop(std::string_view name) {
  for (std::string_view h :
       {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
        "upgrade", "host", "content-length", "content-type", "expect"}) {
    if (name == h) return true;
  }
  return false;
}

net::HttpResponse Unreachable(const std::string& self, const std::string& leader,
                              const std::string& upstream, const Status& why) {
  net::HttpResponse r;
  r.status = 503;
  r.body = api::ErrorBody(Status::Unavailable("this controller (" + self +
                                              ") is a standby and could not reach the leader " +
                                              leader + " at " + upstream + ": " + why.message()))
               .dump();
  r.headers.push_back({"Retry-After", "1"});
  r.headers.push_back({"X-Berth-Leader", upstream});
  return r;
}

// The leader's answer as the standby's: its status, content type and end-to-end headers.
net::HttpResponse AnswerOf(const net::ClientResponse& in, bool keep_upgrade) {
  net::HttpResponse r;
  r.status = in.status;
  auto type = in.headers.find("content-type");
  r.content_type = type == in.headers.end() ? "" : type->second;
  for (const auto& [name, value] : in.headers) {
    if (keep_upgrade && name == "upgrade") {
      r.headers.push_back({"Upgrade", value});
      continue;
    }
    if (HopByHop(name) || name == "date") continue;
    r.headers.push_back({name, value});
  }
  return r;
}

// Writes all of `data` (net::SendAll, which waits out a full socket); false when the peer went
// away or stopped reading for 30 s.
bool WriteAll(int fd, std::string_view data) {
  iovec iov{const_cast<char*>(data.data()), data.size()};
  return data.empty() || net::SendAll(fd, &iov, 1, net::SteadyNowMs() + 30000);
}

// Copies bytes both ways between the caller's upgraded connection and the leader's until either
// side closes or the standby stops.
void Relay(int down, int up, const std::atomic<bool>* stopping) {
  char buf[16384];
  pollfd fds[2] = {{down, POLLIN, 0}, {up, POLLIN, 0}};
  while (stopping == nullptr || !*stopping) {
    int n = ::poll(fds, 2, 200);
    if (n < 0 && errno != EINTR) return;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t got = ::recv(fds[i].fd, buf, sizeof(buf), 0);
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (got <= 0) {
        // One side is done: let the other see the end of what it sent, and stop.
        ::shutdown(fds[1 - i].fd, SHUT_WR);
        return;
      }
      if (!WriteAll(fds[1 - i].fd, std::string_view(buf, static_cast<size_t>(got)))) {
        return;
      }
    }
  }
}

}  // namespace

Forwarder::Forwarder(Options options) : opt_(std::move(options)) {}

Forwarder::~Forwarder() {
  AbortAll();
}

std::string Forwarder::UpstreamOf(const std::string& advertised) {
  std::string_view a = advertised;
  while (!a.empty() && a.back() == '/') a.remove_suffix(1);
  if (a.starts_with("https://")) return "tls:" + std::string(a.substr(8));
  if (a.starts_with("http://")) return "tcp:" + std::string(a.substr(7));
  if (a.starts_with("tls:") || a.starts_with("tcp:")) return std::string(a);
  return "";
}

void Forwarder::Add(net::HttpClient* c) {
  MutexLock<Mutex> l(mu_);
  if (aborted_) c->Abort();
  active_.insert(c);
}

void Forwarder::Remove(net::HttpClient* c) {
  MutexLock<Mutex> l(mu_);
  active_.erase(c);
}

void Forwarder::AbortAll() {
  MutexLock<Mutex> l(mu_);
  aborted_ = true;
  for (net::HttpClient* c : active_) c->Abort();
}

net::HttpResponse Forwarder::Forward(const net::HttpRequest& request,
                                     const std::string& leader_name, const std::string& upstream) {
  net::ClientOptions co;
  co.timeout_ms = opt_.timeout_ms;
  co.tls_ca_file = opt_.ca_file;
  Result<std::unique_ptr<net::HttpClient>> connected = net::HttpClient::Connect(upstream, co);
  if (!connected.ok()) return Unreachable(opt_.self, leader_name, upstream, connected.status());
  std::shared_ptr<net::HttpClient> client = std::move(*connected);
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [name, value] : request.headers) {
    if (!HopByHop(name)) headers.emplace_back(name, value);
  }
  headers.emplace_back("X-Forwarded-For", request.remote);
  const std::string upgrade = request.Header("upgrade");
  if (!upgrade.empty()) {
    headers.emplace_back("Upgrade", upgrade);
    int fd = -1;
    std::string already;
    Add(client.get());
    Result<net::ClientResponse> r =
        client->Upgrade(request.target, headers, &fd, &already, request.method);
    Remove(client.get());
    if (!r.ok()) return Unreachable(opt_.self, leader_name, upstream, r.status());
    net::HttpResponse out = AnswerOf(*r, /*keep_upgrade=*/r->status == 101);
    if (r->status != 101) {
      out.body = r->body;
      return out;
    }
    out.upgrade = [this, client, fd, already](net::UpgradedConnection& conn) {
      Add(client.get());
      if (WriteAll(conn.fd, already) && WriteAll(fd, conn.already_read)) {
        Relay(conn.fd, fd, conn.stopping);
      }
      Remove(client.get());
    };
    return out;
  }
  for (const auto& [name, value] : headers) client->SetHeader(name, value);
  Add(client.get());
  const std::string type = request.Header("content-type");
  Result<net::ClientResponse> head = client->OpenStream(
      request.method, request.target, request.body, type.empty() ? "application/json" : type);
  if (!head.ok()) {
    Remove(client.get());
    return Unreachable(opt_.self, leader_name, upstream, head.status());
  }
  net::HttpResponse out = AnswerOf(*head, false);
  auto te = head->headers.find("transfer-encoding");
  const bool chunked =
      te != head->headers.end() && ToLower(te->second).find("chunked") != std::string::npos;
  if (request.method == "HEAD") {  // an answer without a body, whatever its headers say
    Remove(client.get());
    return out;
  }
  if (!chunked) {
    // A whole answer: read it here.
    Status st = client->ReadStream([&out](std::string_view data) {
      out.body.append(data);
      return true;
    });
    Remove(client.get());
    if (!st.ok()) return Unreachable(opt_.self, leader_name, upstream, st);
    return out;
  }
  // A stream (a watch, a followed log): passed on chunk by chunk until either side ends it.
  Remove(client.get());
  out.stream = [this, client](net::ResponseStream& stream) {
    Add(client.get());
    PassOn(*client, stream);
    Remove(client.get());
  };
  return out;
}

void Forwarder::PassOn(net::HttpClient& upstream, net::ResponseStream& stream) {
  // The leader's chunks are read on a thread of their own, so that this one can notice a caller
  // who left while the leader sends nothing (a quiet watch) and end the relay then.
  struct Chunks {
    Mutex mu;
    std::condition_variable cv;  // waits on mu.native()
    std::deque<std::string> queue GUARDED_BY(mu);
    bool done GUARDED_BY(mu) = false;     // the leader's stream ended
    bool stopped GUARDED_BY(mu) = false;  // the caller's side is done
  };
  constexpr size_t kMaxQueued = 256;  // chunks: a slow caller holds the leader back
  auto chunks = std::make_shared<Chunks>();
  std::thread reader([&upstream, chunks] {
    (void)upstream.ReadStream([&](std::string_view data) {
      UniqueLock l(chunks->mu);
      chunks->cv.wait(l.get(), [&]() REQUIRES(chunks->mu) {
        return chunks->stopped || chunks->queue.size() < kMaxQueued;
      });
      if (chunks->stopped) return false;
      chunks->queue.emplace_back(data);
      chunks->cv.notify_all();
      return true;
    });
    MutexLock<Mutex> l(chunks->mu);
    chunks->done = true;
    chunks->cv.notify_all();
  });
  while (true) {
    std::deque<std::string> got;
    bool done = false;
    {
      UniqueLock l(chunks->mu);
      chunks->cv.wait_for(l.get(), std::chrono::milliseconds(500), [&]() REQUIRES(chunks->mu) {
        return chunks->done || !chunks->queue.empty();
      });
      got.swap(chunks->queue);
      done = chunks->done;
      chunks->cv.notify_all();
    }
    bool gone = false;
    for (const std::string& c : got) {
      if (!stream.Write(c)) {
        gone = true;
        break;
      }
    }
    if (gone || (done && got.empty()) || stream.Closed()) break;
  }
  {
    MutexLock<Mutex> l(chunks->mu);
    chunks->stopped = true;
    chunks->cv.notify_all();
  }
  upstream.Abort();  // a reader still waiting on a quiet leader returns
  reader.join();
}

}  // namespace berth::controller
