// `berth kubeconfig`: prints a kubeconfig for the calling user (the controller's Kubernetes API,
// its CA, and a bearer token naming this user), so that `berth kubeconfig > ~/.kube/config` is
// all kubectl needs. The controller knows the user from the Unix socket's credentials.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/client.h"
#include "cli/commands.h"

namespace berth::cli {
namespace {

constexpr const char* kKubeconfigUsage = R"(Usage: berth kubeconfig

Prints a kubeconfig (JSON, which kubectl reads as it reads YAML) for you: the controller's
Kubernetes API (https://127.0.0.1:6443 by default), the CA that signed its certificate, and a
bearer token that names your user. Then:

    berth kubeconfig > ~/.kube/config
    kubectl get nodes

The token is a secret: anyone holding it acts as you. See docs/kubernetes.md.
)";

}  // namespace

int KubeconfigMain(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::fputs(kKubeconfigUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "berth kubeconfig: unexpected argument '%s'\n%s", argv[i],
                 kKubeconfigUsage);
    return 2;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("berth kubeconfig", c.status());
  Result<nlohmann::json> config = (*c)->Call("GET", "/v1/kubeconfig");
  if (!config.ok()) return Fail("berth kubeconfig", config.status());
  std::printf("%s\n", config->dump(2).c_str());
  return 0;
}

}  // namespace berth::cli
