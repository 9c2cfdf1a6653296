// A Slurm site's slurm.conf + gres.conf (see slurm_site.h).
#include "config/slurm_site.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "common/hostlist.h"
#include "common/strings.h"
#include "config/cluster_config_internal.h"

namespace berth::config {
namespace {

using internal::Pairs;

// The logical lines of a Slurm configuration file: comments dropped, '\' continuations joined,
// each with the number of its first physical line.
std::vector<std::pair<int, std::string>> LogicalLines(std::string_view text) {
  std::vector<std::pair<int, std::string>> lines;
  std::string current;
  int first = 0;
  int number = 0;
  std::istringstream in{std::string(text)};
  std::string raw;
  while (std::getline(in, raw)) {
    ++number;
    size_t hash = raw.find('#');
    if (hash != std::string::npos) raw.resize(hash);
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r')) {
      raw.pop_back();
    }
    if (current.empty()) first = number;
    bool more = !raw.empty() && raw.back() == '\\';
    if (more) raw.pop_back();
    current += raw;
    if (more) continue;
    if (current.find_first_not_of(" \t") != std::string::npos) lines.emplace_back(first, current);
    current.clear();
  }
  if (current.find_first_not_of(" \t") != std::string::npos) lines.emplace_back(first, current);
  return lines;
}

Result<int64_t> Count(std::string_view text) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v < 0 || v > 64) {
    return Status::InvalidArgument("invalid Count value '" + std::string(text) + "'");
  }
  return v;
}

struct GresLine {
  std::string nodes;  // hostlist; "" = every node
  std::string name;
  std::string type;
  int64_t count = 1;
};

Result<GresLine> ReadGresLine(const Pairs& pairs, ClusterConfig& config) {
  GresLine g;
  bool counted = false;
  for (const auto& [key, value] : pairs) {
    std::string k = ToLower(key);
    if (k == "nodename") {
      g.nodes = value;
    } else if (k == "name") {
      g.name = value;
    } else if (k == "type") {
      g.type = value;
    } else if (k == "file") {
      BERTH_ASSIGN_OR_RETURN(std::vector<std::string> files, hostlist::Expand(value));
      g.count = static_cast<int64_t>(files.size());
      counted = true;
    } else if (k == "count") {
      Result<int64_t> n = Count(value);
      if (!n.ok()) return n.status();
      if (!counted) g.count = *n;
    } else if (k == "autodetect") {
      if (ToLower(value) != "off") internal::NoteIgnored(config, "gres.conf:AutoDetect=" + value);
    } else {
      internal::NoteIgnored(config, "gres.conf:" + key);
    }
  }
  return g;
}

// Gives each named node the line's devices: GPUs typed as the line says (unless slurm.conf typed
// them), other generic resources where slurm.conf has none of that name.
void ApplyToNode(const GresLine& g, bool typed_in_slurm_conf, bool first_gpu_line,
                 core::NodeSpec& n) {
  if (g.name == "gpu") {
    if (typed_in_slurm_conf) return;
    if (first_gpu_line) n.gpus.clear();
    for (int64_t i = 0; i < g.count && n.gpus.size() < 64; ++i) n.gpus.push_back(g.type);
    return;
  }
  bool present = std::any_of(n.gres.begin(), n.gres.end(),
                             [&](const core::NamedCount& c) { return c.name == g.name; });
  if (!present) n.gres.push_back({g.name, g.count});
}

}  // namespace

Status ApplyGresConf(std::string_view text, std::string_view name, ClusterConfig& config) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < config.cluster.nodes.size(); ++i) index[config.cluster.nodes[i].name] = i;
  std::vector<bool> gpu_line_seen(config.cluster.nodes.size(), false);
  std::vector<bool> typed(config.cluster.nodes.size(), false);
  for (size_t i = 0; i < config.cluster.nodes.size(); ++i) {
    const std::vector<std::string>& gpus = config.cluster.nodes[i].gpus;
    typed[i] =
        std::any_of(gpus.begin(), gpus.end(), [](const std::string& t) { return !t.empty(); });
  }
  for (const auto& [number, line] : LogicalLines(text)) {
    auto where = [&, number = number](const Status& st) {
      return Status::InvalidArgument(std::string(name) + ":" + std::to_string(number) + ": " +
                                     st.message());
    };
    Result<Pairs> pairs = internal::Tokenize(line);
    if (!pairs.ok()) return where(pairs.status());
    Result<GresLine> g = ReadGresLine(*pairs, config);
    if (!g.ok()) return where(g.status());
    if (g->name.empty()) continue;  // AutoDetect= alone, or a line of ignored keys
    std::vector<size_t> targets;
    if (g->nodes.empty()) {
      for (size_t i = 0; i < config.cluster.nodes.size(); ++i) targets.push_back(i);
    } else {
      Result<std::vector<std::string>> names = hostlist::Expand(g->nodes);
      if (!names.ok()) return where(names.status());
      for (const std::string& n : *names) {
        auto it = index.find(n);
        if (it == index.end()) {
          return where(Status::InvalidArgument("node " + n + " is not in slurm.conf"));
        }
        targets.push_back(it->second);
      }
    }
    for (size_t i : targets) {
      bool first = g->name == "gpu" && !gpu_line_seen[i];
      ApplyToNode(*g, typed[i], first, config.cluster.nodes[i]);
      if (g->name == "gpu") gpu_line_seen[i] = true;
    }
  }
  return Status::Ok();
}

void ReadSlurmAccounting(std::string_view text, ClusterConfig& config) {
  std::string type, tres;
  for (const auto& [number, line] : LogicalLines(text)) {
    Result<Pairs> pairs = internal::Tokenize(line);
    if (!pairs.ok()) continue;  // ReadClusterConfig reports bad lines
    for (const auto& [key, value] : *pairs) {
      std::string k = ToLower(key);
      if (k == "accountingstoragetype") type = ToLower(value);
      if (k == "accountingstoragetres") tres = ToLower(value);
    }
  }
  config.slurm_accounting.enabled = !type.empty() && type != "accounting_storage/none";
  // Without an accounting database Slurm keeps no QoS list: any --qos name is accepted.
  config.cluster.accept_unknown_qos = !config.slurm_accounting.enabled;
  config.slurm_accounting.gpus_in_tres = false;
  std::istringstream list(tres);
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item == "gres/gpu" || item.rfind("gres/gpu:", 0) == 0) {
      config.slurm_accounting.gpus_in_tres = true;
    }
  }
}

Result<ClusterConfig> ReadSlurmSiteConfig(const std::string& path) {
  BERTH_ASSIGN_OR_RETURN(ClusterConfig config, ReadClusterConfig(path));
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ReadSlurmAccounting(text, config);
  // Acted on here, so no longer ignored.
  std::erase_if(config.ignored_keys, [](const std::string& k) {
    return k == "AccountingStorageType" || k == "AccountingStorageTRES";
  });
  size_t slash = path.rfind('/');
  std::string gres_path =
      (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + "gres.conf";
  std::ifstream gres(gres_path, std::ios::binary);
  if (gres) {
    std::string gres_text((std::istreambuf_iterator<char>(gres)), std::istreambuf_iterator<char>());
    BERTH_RETURN_IF_ERROR(ApplyGresConf(gres_text, gres_path, config));
  }
  return config;
}

}  // namespace berth::config
