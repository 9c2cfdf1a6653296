// `berth token`: a bearer token for berth's HTTPS API (docs/security.md). The controller knows the
// caller from the Unix socket's credentials and signs a token naming them; operators may ask for
// another user's token, a node's credential, or the cluster's join token.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/client.h"
#include "cli/commands.h"

namespace berth::cli {
namespace {

constexpr const char* kTokenUsage =
    R"(Usage: berth token [--user USER | --node NODE | --join] [--json | --ca]

Prints a bearer token for berth's API over HTTPS (the controller's --k8s-listen port), for use
from another host:

    export BERTH_SERVER=https://ctl.example:6443 BERTH_CA_FILE=ca.crt
    export BERTH_TOKEN=$(berth token)      # then every berth command works from there

  --user USER   a token for USER (operators only; default: you)
  --node NODE   NODE's agent credential (operators only)
  --join        the cluster's join token, for `berth agent --join-token` (operators only)
  --json        print the whole answer: token, user, server URL, CA certificate
  --ca          print the controller's CA certificate (PEM) instead of a token

A token is a secret: anyone holding it acts as its user (or node). Deleting the controller's
HOME/token.secret and restarting it revokes every token.
)";

}  // namespace

int TokenMain(int argc, char** argv) {
  nlohmann::json request = nlohmann::json::object();
  bool as_json = false, ca = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "berth token: %s needs a value\n%s", name, kTokenUsage);
        return nullptr;
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kTokenUsage, stdout);
      return 0;
    } else if (a == "--user" || a == "--node") {
      const char* v = value(a.c_str());
      if (v == nullptr) return 2;
      request[a.substr(2)] = v;
    } else if (a == "--join") {
      request["join"] = true;
    } else if (a == "--json") {
      as_json = true;
    } else if (a == "--ca") {
      ca = true;
    } else {
      std::fprintf(stderr, "berth token: unexpected argument '%s'\n%s", argv[i], kTokenUsage);
      return 2;
    }
  }
  if (request.size() > 1) {
    std::fprintf(stderr, "berth token: give one of --user, --node, --join\n");
    return 2;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("berth token", c.status());
  Result<nlohmann::json> r = (*c)->Call("POST", "/v1/tokens", request);
  if (!r.ok()) return Fail("berth token", r.status());
  if (as_json) {
    std::printf("%s\n", r->dump(2).c_str());
  } else if (ca) {
    std::string pem = r->value("ca", "");
    if (pem.empty()) {
      return Fail("berth token",
                  Status::NotFound("the controller has no CA of its own (it serves the site's "
                                   "certificate, or no HTTPS port)"));
    }
    std::fputs(pem.c_str(), stdout);
  } else {
    std::printf("%s\n", r->value("token", "").c_str());
  }
  return 0;
}

}  // namespace berth::cli
