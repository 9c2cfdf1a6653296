// `berth status`: the controller, or an HA group of controllers (docs/ha.md): its members, which
// one leads and with what epoch, and how each etcd endpoint is. Any controller of the group
// answers (a standby too), so this works while the group fails over.
#include <cstdio>
#include <ctime>
#include <string>

#include "cli/client.h"
#include "cli/commands.h"

namespace berth::cli {
namespace {

constexpr const char* kStatusUsage =
    R"(Usage: berth status [--json]

Shows the controller: alone with its store, or the HA group it belongs to (docs/ha.md): each
member (name, address, pid, leader or standby), the leader's epoch, and each etcd endpoint's
health, version and database size. Any member answers, a standby too. With a list of
controllers (BERTH_SOCKET=a.sock,b.sock or BERTH_SERVER=https://h1:6443,https://h2:6443) the
first that answers is asked.

  --json   the answer as the controller gives it: mode, self, role, store, lease_ttl_s, epoch,
           leader, members (name, address, pid, since, leader), etcd (endpoint, ok, version,
           db_size, leader, error)
)";

std::string Since(int64_t unix_s) {
  if (unix_s <= 0) return "-";
  time_t t = static_cast<time_t>(unix_s);
  struct tm tm_buf;
  char text[32];
  localtime_r(&t, &tm_buf);
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm_buf);
  return text;
}

std::string Text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

void PrintGroup(const nlohmann::json& g) {
  std::printf("Mode:     HA group on %s (lease %llds)\n", Text(g, "store").c_str(),
              static_cast<long long>(g.value("lease_ttl_s", 0)));
  const nlohmann::json& leader = g.value("leader", nlohmann::json());
  if (leader.is_object()) {
    std::printf("Leader:   %s at %s (epoch %lld, since %s)\n", Text(leader, "name").c_str(),
                Text(leader, "address").c_str(), static_cast<long long>(g.value("epoch", 0)),
                Since(leader.value("since", int64_t{0})).c_str());
  } else {
    std::printf("Leader:   none (an election is under way, or etcd cannot be read)\n");
  }
  std::printf("Answered: %s (%s)\n\n", Text(g, "self").c_str(), Text(g, "role").c_str());
  std::printf("%-20s %-32s %8s  %-8s %s\n", "MEMBER", "ADDRESS", "PID", "ROLE", "SINCE");
  for (const nlohmann::json& m : g.value("members", nlohmann::json::array())) {
    std::printf("%-20s %-32s %8lld  %-8s %s\n", Text(m, "name").c_str(), Text(m, "address").c_str(),
                static_cast<long long>(m.value("pid", int64_t{0})),
                m.value("leader", false) ? "leader" : "standby",
                Since(m.value("since", int64_t{0})).c_str());
  }
  std::printf("\n%-24s %-8s %-8s %10s  %s\n", "ETCD", "HEALTH", "VERSION", "DB_SIZE", "RAFT");
  for (const nlohmann::json& e : g.value("etcd", nlohmann::json::array())) {
    if (e.value("ok", false)) {
      std::printf("%-24s %-8s %-8s %10lld  %s\n", Text(e, "endpoint").c_str(), "ok",
                  Text(e, "version").c_str(),
                  static_cast<long long>(e.value("db_size", int64_t{0})),
                  e.value("leader", false) ? "leader" : "follower");
    } else {
      std::printf("%-24s %-8s %s\n", Text(e, "endpoint").c_str(), "down", Text(e, "error").c_str());
    }
  }
  if (g.contains("error")) std::printf("\nerror: %s\n", Text(g, "error").c_str());
}

}  // namespace

int StatusMain(int argc, char** argv) {
  bool as_json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kStatusUsage, stdout);
      return 0;
    }
    if (a != "--json") {
      std::fprintf(stderr, "berth status: unrecognized argument '%s'\n%s", a.c_str(), kStatusUsage);
      return 2;
    }
    as_json = true;
  }
  Result<std::unique_ptr<Client>> client = Client::Connect();
  if (!client.ok()) return Fail("berth status", client.status());
  Result<nlohmann::json> g = (*client)->Call("GET", "/v1/ha");
  if (!g.ok()) return Fail("berth status", g.status());
  if (as_json) {
    std::printf("%s\n", g->dump(2).c_str());
  } else if (Text(*g, "mode") == "ha") {
    PrintGroup(*g);
  } else {
    std::printf("Mode:     a single controller (store: %s)\n", Text(*g, "store").c_str());
  }
  return 0;
}

}  // namespace berth::cli
