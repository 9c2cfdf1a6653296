// berth images [list|pull|import|prune]: this machine's image cache (src/image/store.h), the one
// its agent uses ($BERTH_HOME/agent/images unless --store says otherwise).
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "image/reference.h"
#include "image/store.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr const char* kUsage = R"(Usage: berth images [list] [--store DIR] [--json]
       berth images list --nodes [--node NAME] [--json]
       berth images pull REF [--store DIR] [--authfile F] [--cert-dir D] [--insecure]
                         [--always]
       berth images import PATH [--store DIR]
       berth images prune (--all | --limit SIZE) [--store DIR]

This machine's image cache, shared by the jobs its agent runs (docs/containers.md).
  list      the images: REPOSITORY TAG DIGEST SIZE LAST USED (--json: the records)
            --nodes: every node's cache as its agent last reported it, from the controller:
            NODE REPOSITORY TAG DIGEST SIZE LAST USED IN USE (--node NAME: that node's only)
  pull      pull REF from its registry (Docker's or pyxis's form, e.g. busybox:1.36,
            nvcr.io#nvidia/pytorch:24.05-py3); --authfile: a Docker config.json or
            containers auth.json with the registry's credentials; --cert-dir: CA certificates
            (*.crt) for the registry; --insecure: no TLS checks (loopback registries never have).
            As Kubernetes' default pull policy: ":latest" (or no tag) asks the registry again,
            another tag is pulled only when missing; --always asks the registry in any case
  import    load an OCI archive (.tar) or OCI layout folder; names come from its index's
            org.opencontainers.image.ref.name annotations (localhost/NAME:TAG); a `docker save`
            archive is read too (its RepoTags as Docker names them)
  prune     remove images no job uses, least recently used first: --all, or until the cache
            is at most SIZE (bytes, or with K, M, G, T: powers of 1024)
  --store DIR  the cache's folder (default: $BERTH_HOME/agent/images, the agent's)
)";

int Error(const std::string& message) {
  std::fprintf(stderr, "berth images: %s\n", message.c_str());
  return 1;
}

Result<int64_t> ParseSize(const std::string& text) {
  size_t i = 0;
  int64_t n = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (n > (INT64_MAX / 10)) return Status::InvalidArgument("size too large: '" + text + "'");
    n = n * 10 + (text[i++] - '0');
  }
  if (i == 0) return Status::InvalidArgument("bad size '" + text + "' (e.g. 500M, 20G)");
  std::string unit = text.substr(i);
  int shift = 0;
  if (!unit.empty()) {
    const std::string units = "KMGT";
    size_t u = units.find(static_cast<char>(unit[0] & ~0x20));
    std::string rest = unit.substr(1);
    if (u == std::string::npos || !(rest.empty() || rest == "B" || rest == "iB" || rest == "b")) {
      return Status::InvalidArgument("bad size '" + text + "' (e.g. 500M, 20G)");
    }
    shift = 10 * static_cast<int>(u + 1);
  }
  if (shift && n > (INT64_MAX >> shift)) {
    return Status::InvalidArgument("size too large: '" + text + "'");
  }
  return n << shift;
}

std::string HumanSize(int64_t bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof(buf), "%lldB", static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof(buf), v < 10 ? "%.2f%s" : v < 100 ? "%.1f%s" : "%.0f%s", v, units[u]);
  }
  return buf;
}

std::string Ago(int64_t when, int64_t now) {
  if (when <= 0) return "never";
  int64_t s = std::max<int64_t>(0, now - when);
  auto unit = [](int64_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s") + " ago";
  };
  if (s < 60) return unit(s, "second");
  if (s < 3600) return unit(s / 60, "minute");
  if (s < 86400) return unit(s / 3600, "hour");
  return unit(s / 86400, "day");
}

json RecordJson(const image::ImageRecord& r) {
  return json{{"digest", r.digest},
              {"names", r.names},
              {"layers", r.layers},
              {"size_bytes", r.size_bytes},
              {"unpacked_bytes", r.unpacked_bytes},
              {"pulled_at", r.pulled_at},
              {"last_used", r.last_used},
              {"pulled_by_uid", r.pulled_by_uid},
              {"config",
               {{"entrypoint", r.config.entrypoint},
                {"cmd", r.config.cmd},
                {"env", r.config.env},
                {"working_dir", r.config.working_dir},
                {"user", r.config.user}}}};
}

struct Args {
  std::string verb = "list";
  std::vector<std::string> positional;
  std::string store;
  std::string authfile, cert_dir, limit;
  std::string node;
  bool insecure = false, json = false, all = false, help = false, always = false, nodes = false;
};

Result<Args> Parse(int argc, char** argv) {
  Args a;
  int i = 1;
  if (i < argc && argv[i][0] != '-') a.verb = argv[i++];
  if (a.verb != "list" && a.verb != "pull" && a.verb != "import" && a.verb != "prune") {
    return Status::InvalidArgument("unknown subcommand '" + a.verb +
                                   "' (list, pull, import, prune; --help)");
  }
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto take = [&](std::string* out) -> Status {
      if (!has_value) {
        if (i + 1 >= argc) return Status::InvalidArgument(arg + " needs a value");
        value = argv[++i];
      }
      *out = value;
      return Status::Ok();
    };
    if (arg == "-h" || arg == "--help") {
      a.help = true;
    } else if (arg == "--store") {
      BERTH_RETURN_IF_ERROR(take(&a.store));
    } else if (arg == "--authfile" && a.verb == "pull") {
      BERTH_RETURN_IF_ERROR(take(&a.authfile));
    } else if (arg == "--cert-dir" && a.verb == "pull") {
      BERTH_RETURN_IF_ERROR(take(&a.cert_dir));
    } else if (arg == "--insecure" && a.verb == "pull") {
      a.insecure = true;
    } else if (arg == "--always" && a.verb == "pull") {
      a.always = true;
    } else if (arg == "--json" && a.verb == "list") {
      a.json = true;
    } else if (arg == "--nodes" && a.verb == "list") {
      a.nodes = true;
    } else if (arg == "--node" && a.verb == "list") {
      BERTH_RETURN_IF_ERROR(take(&a.node));
      a.nodes = true;
    } else if (arg == "--all" && a.verb == "prune") {
      a.all = true;
    } else if (arg == "--limit" && a.verb == "prune") {
      BERTH_RETURN_IF_ERROR(take(&a.limit));
    } else if (!arg.starts_with("-")) {
      a.positional.push_back(arg);
    } else {
      return Status::InvalidArgument("unknown option '" + arg + "' for '" + a.verb + "' (--help)");
    }
  }
  return a;
}

// An image's names as (repository, tag) rows, as `docker images` shows them.
std::vector<std::pair<std::string, std::string>> NameRows(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const std::string& n : names) {
    std::string repo = n.substr(0, n.find('@'));
    size_t slash = repo.rfind('/');
    size_t colon = repo.find(':', slash == std::string::npos ? 0 : slash);
    std::string tag = colon == std::string::npos ? "<none>" : repo.substr(colon + 1);
    rows.emplace_back(repo.substr(0, colon), tag);
  }
  if (rows.empty()) rows.emplace_back("<none>", "<none>");
  return rows;
}

int List(image::Store& store, bool as_json) {
  Result<std::vector<image::ImageRecord>> all = store.List();
  if (!all.ok()) return Error(all.status().message());
  if (as_json) {
    json out = json::array();
    for (const image::ImageRecord& r : *all) out.push_back(RecordJson(r));
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  const int64_t now = std::time(nullptr);
  std::printf("%-40s %-16s %-19s %-9s %s\n", "REPOSITORY", "TAG", "DIGEST", "SIZE", "LAST USED");
  for (const image::ImageRecord& r : *all) {
    std::string digest = r.digest.substr(0, 19);
    for (const auto& [repo, tag] : NameRows(r.names)) {
      std::printf("%-40s %-16s %-19s %-9s %s\n", repo.c_str(), tag.c_str(), digest.c_str(),
                  HumanSize(r.size_bytes).c_str(), Ago(r.last_used, now).c_str());
    }
  }
  return 0;
}

// The cluster's view: what each node's agent last reported (GET /v1/images).
int ListNodes(const Args& a) {
  Result<std::unique_ptr<Client>> client = Client::Connect();
  if (!client.ok()) return Fail("berth images", client.status());
  std::string target = "/v1/images";
  if (!a.node.empty()) target += "?node=" + net::UrlEncode(a.node);
  Result<json> r = (*client)->Call("GET", target);
  if (!r.ok()) return Fail("berth images", r.status());
  json images = r->value("images", json::array());
  if (a.json) {
    std::printf("%s\n", images.dump(2).c_str());
    return 0;
  }
  const int64_t now = std::time(nullptr);
  std::printf("%-16s %-40s %-16s %-19s %-9s %-16s %s\n", "NODE", "REPOSITORY", "TAG", "DIGEST",
              "SIZE", "LAST USED", "IN USE");
  for (const json& i : images) {
    std::string node = i.value("node", "");
    std::string digest = i.value("digest", "").substr(0, 19);
    std::string size = HumanSize(i.value("size_bytes", int64_t{0}));
    std::string used = Ago(i.value("last_used", int64_t{0}), now);
    const char* in_use = i.value("in_use", false) ? "yes" : "no";
    for (const auto& [repo, tag] : NameRows(i.value("names", std::vector<std::string>{}))) {
      std::printf("%-16s %-40s %-16s %-19s %-9s %-16s %s\n", node.c_str(), repo.c_str(),
                  tag.c_str(), digest.c_str(), size.c_str(), used.c_str(), in_use);
    }
  }
  return 0;
}

int Pull(image::Store& store, const Args& a) {
  if (a.positional.size() != 1) return Error("pull takes one image reference (--help)");
  Result<image::Reference> ref = image::ParseReference(a.positional[0]);
  if (!ref.ok()) return Error(ref.status().message());
  image::Credentials creds;
  if (!a.authfile.empty()) {
    if (access(a.authfile.c_str(), R_OK) != 0) {
      return Error("cannot read the auth file " + a.authfile);
    }
    creds.auth_file = a.authfile;
    creds.uid = getuid();
  }
  image::PullReport report;
  Result<image::ImageRecord> r = store.Ensure(
      *ref, a.always ? image::PullPolicy::kAlways : image::PullPolicy::kDefault, creds, &report);
  if (!r.ok()) return Error(r.status().message());
  if (report.pulled) {
    std::printf("pulled %s (%s) in %.1fs\n", ref->String().c_str(), r->digest.c_str(),
                report.seconds);
  } else {
    std::printf("%s is up to date (%s)\n", ref->String().c_str(), r->digest.c_str());
  }
  return 0;
}

int Import(image::Store& store, const Args& a) {
  if (a.positional.size() != 1) return Error("import takes one path (--help)");
  std::string path = a.positional[0];
  if (!path.starts_with("/")) {
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd))) path = std::string(cwd) + "/" + path;
  }
  Result<std::vector<image::ImageRecord>> r = store.Import(path);
  if (!r.ok()) return Error(r.status().message());
  for (const image::ImageRecord& rec : *r) {
    std::string names;
    for (const std::string& n : rec.names) names += (names.empty() ? "" : ", ") + n;
    std::printf("imported %s (%s)\n", names.empty() ? "<none>" : names.c_str(), rec.digest.c_str());
  }
  return 0;
}

int Prune(image::Store& store, const Args& a) {
  if (a.all == !a.limit.empty()) return Error("prune takes --all or --limit SIZE (--help)");
  int64_t limit = 0;
  if (!a.limit.empty()) {
    Result<int64_t> l = ParseSize(a.limit);
    if (!l.ok()) return Error(l.status().message());
    if (*l == 0) return Error("--limit 0: use --all");
    limit = *l;
  }
  Result<image::Store::PruneReport> r = store.Prune(limit);
  if (!r.ok()) return Error(r.status().message());
  for (const std::string& d : r->removed) std::printf("removed %s\n", d.c_str());
  std::printf("%zu image%s removed, %s freed\n", r->removed.size(),
              r->removed.size() == 1 ? "" : "s", HumanSize(r->freed_bytes).c_str());
  return 0;
}

}  // namespace

int ImagesMain(int argc, char** argv) {
  Result<Args> a = Parse(argc, argv);
  if (!a.ok()) return Error(a.status().message());
  if (a->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (a->nodes) {
    if (!a->store.empty()) return Error("--nodes asks the controller: no --store with it");
    if (!a->positional.empty()) return Error("list takes no arguments (--help)");
    return ListNodes(*a);
  }
  std::string root = a->store.empty() ? BerthHome() + "/agent/images" : a->store;
  if (!root.starts_with("/")) {
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd))) root = std::string(cwd) + "/" + root;
  }
  image::StoreOptions options;
  options.ca_dir = a->cert_dir;
  if (a->insecure && !a->positional.empty()) {
    Result<image::Reference> ref = image::ParseReference(a->positional[0]);
    if (ref.ok()) options.insecure.push_back(ref->registry);
  }
  Result<std::unique_ptr<image::Store>> store = image::Store::Open(root, options);
  if (!store.ok()) return Error(store.status().message());
  if (a->verb == "pull") return Pull(**store, *a);
  if (a->verb == "import") return Import(**store, *a);
  if (a->verb == "prune") return Prune(**store, *a);
  if (!a->positional.empty()) return Error("list takes no arguments (--help)");
  return List(**store, a->json);
}

}  // namespace berth::cli
