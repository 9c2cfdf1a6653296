// Forwarder: how a standby of an HA group passes requests on to its leader (docs/ha.md,
// "Forwarding"), so that a client that knows one controller (kubectl, with one server in its
// kubeconfig) works against any member. The standby sends the request as it came (method, target,
// body, headers but the hop-by-hop ones, plus X-Forwarded-For) to the leader's advertised address
// and answers with the leader's answer: whole for plain requests, chunk by chunk for watches and
// followed logs, and as a byte relay for upgraded connections (exec, attach, port-forward).
//
// Only over TCP or TLS: the leader then knows the caller by the credential the request carries
// (a bearer token, a MUNGE credential) as it would directly. Never to a Unix socket, where the
// leader would take the standby's own peer credentials for the caller's.
//
// Thread safety: Forward may be called from any number of threads; AbortAll from any thread.
#ifndef BERTH_CONTROLLER_FORWARD_H_
#define BERTH_CONTROLLER_FORWARD_H_

#include <memory>
#include <set>
#include <string>

#include "common/thread_annotations.h"
#include "net/http.h"

namespace berth::controller {

class Forwarder {
 public:
  struct Options {
    std::string self;     // this controller's name (errors)
    std::string ca_file;  // the CA the leader's HTTPS certificate chains to ("" = the system's)
    int timeout_ms = 30000;
  };
  explicit Forwarder(Options options);
  ~Forwarder();  // AbortAll()

  // The client address of a leader's advertised address ("https://h:p" or "tls:h:p" -> "tls:h:p",
  // "http://h:p" or "tcp:h:p" -> "tcp:h:p"), or "" where requests may not be forwarded (a Unix
  // socket, nothing known).
  static std::string UpstreamOf(const std::string& advertised);

  // Sends `request` to the leader at `upstream` (UpstreamOf's) and returns its answer; 503 naming
  // the leader when it cannot be reached.
  net::HttpResponse Forward(const net::HttpRequest& request, const std::string& leader_name,
                            const std::string& upstream);

  // Ends every stream and relay in progress (the standby's servers are stopping).
  void AbortAll();

 private:
  // Passes the leader's stream on until either side ends it (the caller leaving included, even
  // while the leader is quiet).
  static void PassOn(net::HttpClient& upstream, net::ResponseStream& stream);
  void Add(net::HttpClient* c);
  void Remove(net::HttpClient* c);

  const Options opt_;
  Mutex mu_;
  std::set<net::HttpClient*> active_ GUARDED_BY(mu_);
  bool aborted_ GUARDED_BY(mu_) = false;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_FORWARD_H_
