// `berth web`: prints a link that signs the caller in to the web console (docs/security.md, "The
// web console"). The controller knows the caller from the Unix socket (or their token, from
// another host) and hands out a single-use sign-in code that lives 60 s.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli/client.h"
#include "cli/commands.h"

namespace berth::cli {
namespace {

constexpr const char* kWebUsage = R"(Usage: berth web [--json]

Prints a link that signs you in to berth's web console, served by the controller on its HTTPS
port (https://127.0.0.1:6443 by default):

    berth web        # then open the link in a browser on a machine that trusts the controller's CA

The link holds a sign-in code that works once, within 60 seconds; the browser then keeps a
session cookie that acts as you (what your `berth token` may do, except issuing credentials)
until you sign out or stay away 12 hours. Anyone who opens the link first is signed in as you:
do not share it. From another host, set BERTH_SERVER, BERTH_CA_FILE and BERTH_TOKEN (berth
token): the link then names BERTH_SERVER.

  --json   print the controller's answer: code, expires_in, user, url
)";

}  // namespace

int WebMain(int argc, char** argv) {
  bool as_json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::fputs(kWebUsage, stdout);
      return 0;
    }
    if (std::strcmp(argv[i], "--json") == 0) {
      as_json = true;
      continue;
    }
    std::fprintf(stderr, "berth web: unexpected argument '%s'\n%s", argv[i], kWebUsage);
    return 2;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("berth web", c.status());
  Result<nlohmann::json> r = (*c)->Call("POST", "/v1/web/codes", nlohmann::json::object());
  if (!r.ok()) return Fail("berth web", r.status());
  std::string url = r->value("url", "");
  // From another host the controller's own idea of its address may be a loopback one: the
  // address this client reached it at is the one that works here.
  const char* server = std::getenv("BERTH_SERVER");
  if (server != nullptr && std::strncmp(server, "https://", 8) == 0) {
    std::string base = server;
    while (!base.empty() && base.back() == '/') base.pop_back();
    url = base + "/ui/login?code=" + r->value("code", "");
    (*r)["url"] = url;
  }
  if (as_json) {
    std::printf("%s\n", r->dump(2).c_str());
  } else {
    std::printf("%s\n", url.c_str());
  }
  return 0;
}

}  // namespace berth::cli
