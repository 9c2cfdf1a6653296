// Lines and tokens follow Slurm's src/common/parse_config.c: comments and continuations per
// physical line, then escapes, then Key=Value pairs. Records follow src/common/read_config.c.
#include "config/cluster_config.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <system_error>

#include "common/strings.h"
#include "common/units.h"
#include "config/cluster_config_internal.h"
#include "config/value_text.h"

namespace berth::config {
namespace internal {
namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

bool IsKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

Status TokenError(std::string_view line, size_t at, std::string_view what) {
  return Status::InvalidArgument(std::string(what) + " at '" + std::string(line.substr(at)) + "'");
}

// Reads the value that starts at `i` (after '=' and blanks); advances `i` past it.
Result<std::string> ReadValue(std::string_view line, size_t& i, const std::string& key) {
  if (i < line.size() && line[i] == '"') {
    size_t close = line.find('"', i + 1);
    if (close == std::string_view::npos) return TokenError(line, i, "unterminated quote");
    std::string value(line.substr(i + 1, close - i - 1));
    i = close + 1;
    if (i < line.size() && !IsBlank(line[i])) {
      return TokenError(line, i, "text after the closing quote of " + key);
    }
    return value;
  }
  size_t start = i;
  while (i < line.size() && !IsBlank(line[i])) ++i;
  return std::string(line.substr(start, i - start));
}

}  // namespace

Result<Pairs> Tokenize(std::string_view line) {
  Pairs pairs;
  size_t i = 0;
  while (true) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i == line.size()) return pairs;
    size_t key_start = i;
    while (i < line.size() && IsKeyChar(line[i])) ++i;
    if (i == key_start) return TokenError(line, key_start, "expected Key=Value");
    std::string key(line.substr(key_start, i - key_start));
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i + 1 < line.size() && std::strchr("+-*/", line[i]) != nullptr && line[i + 1] == '=') {
      return TokenError(line, key_start, "operators such as '+=' are for scontrol, not files");
    }
    if (i == line.size() || line[i] != '=')
      return TokenError(line, key_start, "expected Key=Value");
    ++i;
    while (i < line.size() && IsBlank(line[i])) ++i;
    BERTH_ASSIGN_OR_RETURN(std::string value, ReadValue(line, i, key));
    pairs.emplace_back(std::move(key), std::move(value));
  }
}

void NoteIgnored(ClusterConfig& config, std::string key) {
  for (const std::string& k : config.ignored_keys) {
    if (k == key) return;
  }
  config.ignored_keys.push_back(std::move(key));
}

void NoteIgnored(ClusterConfig& config, const std::vector<std::string>& keys) {
  for (const std::string& k : keys) NoteIgnored(config, k);
}

}  // namespace internal

namespace {

using internal::Pairs;

enum class Record { kNone, kNode, kPartition, kQos, kAccount, kUser, kIgnored };

// The record keys. FrontendName, DownNodes and NodeSet are Slurm records berth does not model.
constexpr internal::KeyName<Record> kRecordKeys[] = {
    {"NodeName", Record::kNode},     {"PartitionName", Record::kPartition},
    {"QOS", Record::kQos},           {"Account", Record::kAccount},
    {"User", Record::kUser},         {"FrontendName", Record::kIgnored},
    {"DownNodes", Record::kIgnored}, {"NodeSet", Record::kIgnored},
};

// Everything after a '#' that an even number of backslashes precedes (Slurm's _strip_comments).
std::string_view StripComment(std::string_view line) {
  int backslashes = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && backslashes % 2 == 0) return line.substr(0, i);
    backslashes = line[i] == '\\' ? backslashes + 1 : 0;
  }
  return line;
}

// "\x" -> "x", so "\\" is one backslash and "\#" a '#' (Slurm's _strip_escapes).
std::string StripEscapes(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\') {
      ++i;
      if (i == line.size()) break;
    }
    out += line[i];
  }
  return out;
}

// When `line` ends (trailing blanks aside) in an odd number of backslashes, removes the last
// backslash and what follows it and returns true: the next line continues this one.
bool StripContinuation(std::string& line) {
  size_t end = line.size();
  while (end > 0 && (line[end - 1] == ' ' || line[end - 1] == '\t' || line[end - 1] == '\r')) {
    --end;
  }
  size_t backslashes = 0;
  while (backslashes < end && line[end - 1 - backslashes] == '\\') ++backslashes;
  if (backslashes % 2 == 0) return false;
  line.resize(end - 1);
  return true;
}

bool IsIncludeDirective(std::string_view text) {
  size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos || text.size() < start + 8) return false;
  return EqualsIgnoreCase(text.substr(start, 7), "include") &&
         (text[start + 7] == ' ' || text[start + 7] == '\t');
}

Status ApplyEnforce(std::string_view value, ClusterConfig& config) {
  bool enforce = false;
  if (!value.empty()) {
    for (std::string_view tok : Split(value, ',')) {
      std::string t = ToLower(tok);
      if (t == "1" || t == "2" || t == "associations" || t == "limits" || t == "safe" ||
          t == "wckeys" || t == "qos" || t == "all") {
        enforce = true;
      } else if (t != "nojobs" && t != "nosteps") {
        return InvalidValue("AccountingStorageEnforce", value,
                            "unknown flag '" + std::string(tok) +
                                "' (expected associations, limits, qos, safe, wckeys, all, "
                                "nojobs or nosteps)");
      }
    }
  }
  config.cluster.enforce_associations = enforce;
  return Status::Ok();
}

Status ApplyTopLevelKey(const std::string& key, const std::string& value, ClusterConfig& config) {
  core::ClusterSpec& c = config.cluster;
  if (EqualsIgnoreCase(key, "ClusterName")) {
    if (value.empty()) return InvalidValue("ClusterName", value, "empty name");
    c.name = ToLower(value);  // as slurmctld does, for the accounting database
  } else if (EqualsIgnoreCase(key, "DefMemPerCPU")) {
    Result<int64_t> mib = ParseMemoryMiB(value);
    if (!mib.ok()) return InvalidValue("DefMemPerCPU", value, Reason(mib.status()));
    c.def_mem_per_cpu_mib = *mib;
  } else if (EqualsIgnoreCase(key, "MaxArraySize")) {
    Result<int64_t> n = ParseInteger(value, 0, 4000001);  // Slurm's ceiling
    if (!n.ok()) return InvalidValue("MaxArraySize", value, n.status().message());
    c.max_array_size = static_cast<int32_t>(*n);
  } else if (EqualsIgnoreCase(key, "AccountingStorageEnforce")) {
    return ApplyEnforce(value, config);
  } else if (EqualsIgnoreCase(key, "ImageCacheSize")) {
    Result<int64_t> mib = ParseMemoryMiB(value);
    if (!mib.ok()) return InvalidValue("ImageCacheSize", value, Reason(mib.status()));
    config.image_cache_mib = *mib;
  } else if (EqualsIgnoreCase(key, "KillWait")) {
    Result<int64_t> n = ParseInteger(value, 0, 65533);  // Slurm's ceiling (a uint16)
    if (!n.ok()) return InvalidValue("KillWait", value, n.status().message());
    config.kill_wait_s = static_cast<int32_t>(*n);
  } else if (EqualsIgnoreCase(key, "MinJobAge")) {
    Result<int64_t> n = ParseInteger(value, 0, 4294967294LL);  // Slurm's: a uint32
    if (!n.ok()) return InvalidValue("MinJobAge", value, n.status().message());
    config.min_job_age_s = *n;
  } else if (EqualsIgnoreCase(key, "Licenses")) {
    Result<std::vector<core::NamedCount>> lic = ParseLicenses(value, 0);
    if (!lic.ok()) return InvalidValue("Licenses", value, lic.status().message());
    c.licenses = std::move(*lic);
  } else if (internal::IsSchedulerKey(key)) {
    return internal::ApplySchedulerKey(key, value, config);
  } else if (internal::IsPowerKey(key)) {
    return internal::ApplyPowerKey(key, value, config);
  } else if (const char* name = internal::FindIgnoredSlurmKey(key)) {
    internal::NoteIgnored(config, name);
  } else if (internal::FindKey(kRecordKeys, key) != nullptr) {
    return Status::InvalidArgument("'" + key + "' must start its line");
  } else {
    return Status::InvalidArgument("unknown key '" + key + "'");
  }
  return Status::Ok();
}

Status ApplyPairs(const Pairs& pairs, ClusterConfig& config) {
  const internal::KeyName<Record>* record = internal::FindKey(kRecordKeys, pairs[0].first);
  switch (record != nullptr ? record->id : Record::kNone) {
    case Record::kNode:
      return internal::ApplyNodeRecord(pairs, config);
    case Record::kPartition:
      return internal::ApplyPartitionRecord(pairs, config);
    case Record::kQos:
      return internal::ApplyQosRecord(pairs, config);
    case Record::kAccount:
      return internal::ApplyAccountRecord(pairs, config);
    case Record::kUser:
      return internal::ApplyUserRecord(pairs, config);
    case Record::kIgnored:
      internal::NoteIgnored(config, record->name);
      return Status::Ok();
    case Record::kNone:
      break;
  }
  for (const auto& [key, value] : pairs)
    BERTH_RETURN_IF_ERROR(ApplyTopLevelKey(key, value, config));
  return Status::Ok();
}

}  // namespace

Status ApplyConfigLine(std::string_view line, ClusterConfig& config) {
  std::string text = StripEscapes(StripComment(line));
  if (IsIncludeDirective(text)) {
    return Status::InvalidArgument("Include is not supported: put the included lines in this file");
  }
  BERTH_ASSIGN_OR_RETURN(Pairs pairs, internal::Tokenize(text));
  if (pairs.empty()) return Status::Ok();
  return ApplyPairs(pairs, config);
}

}  // namespace berth::config

namespace berth::config {
namespace {

// The line that declared each partition, QoS, account and user, for whole-file messages.
struct DeclaredAt {
  std::vector<int> partitions;
  std::vector<int> qos;
  std::vector<int> accounts;
  std::vector<int> users;
};

Status AtLine(std::string_view name, int line, const Status& s) {
  return s.WithContext(std::string(name) + ":" + std::to_string(line));
}

Status Unknown(std::string_view what, std::string_view who, std::string_view verb,
               std::string_view kind, std::string_view name) {
  return Status::InvalidArgument(std::string(what) + " '" + std::string(who) + "' " +
                                 std::string(verb) + " unknown " + std::string(kind) + " '" +
                                 std::string(name) + "'");
}

Status CheckPartitions(const core::ClusterSpec& c, const DeclaredAt& at, std::string_view file) {
  std::set<std::string_view> nodes, accounts{core::kRootAccount}, qos{core::kDefaultQos};
  for (const core::NodeSpec& n : c.nodes) nodes.insert(n.name);
  for (const core::AccountSpec& a : c.accounts) accounts.insert(a.name);
  for (const core::QosSpec& q : c.qos) qos.insert(q.name);
  for (size_t i = 0; i < c.partitions.size(); ++i) {
    const core::PartitionSpec& p = c.partitions[i];
    for (const std::string& n : p.nodes) {
      if (!nodes.count(n))
        return AtLine(file, at.partitions[i], Unknown("partition", p.name, "lists", "node", n));
    }
    for (const std::string& a : p.allow_accounts) {
      if (!accounts.count(a))
        return AtLine(file, at.partitions[i], Unknown("partition", p.name, "allows", "account", a));
    }
    for (const std::string& q : p.allow_qos) {
      if (!qos.count(q))
        return AtLine(file, at.partitions[i], Unknown("partition", p.name, "allows", "QoS", q));
    }
  }
  for (size_t i = 0; i < c.qos.size(); ++i) {
    for (const std::string& q : c.qos[i].preempt) {
      if (!qos.count(q))
        return AtLine(file, at.qos[i], Unknown("QoS", c.qos[i].name, "preempts", "QoS", q));
    }
  }
  return Status::Ok();
}

Status CheckAccounts(const core::ClusterSpec& c, const DeclaredAt& at, std::string_view file) {
  std::map<std::string_view, std::string_view> parent;
  for (const core::AccountSpec& a : c.accounts) parent[a.name] = a.parent;
  for (size_t i = 0; i < c.accounts.size(); ++i) {
    const core::AccountSpec& a = c.accounts[i];
    if (a.name == core::kRootAccount) continue;
    std::string_view up = a.parent;
    for (size_t steps = 0; up != core::kRootAccount; ++steps) {
      auto it = parent.find(up);
      if (it == parent.end()) {
        return AtLine(file, at.accounts[i], Unknown("account", a.name, "has", "parent", up));
      }
      if (steps > c.accounts.size() || up == a.name) {
        return AtLine(file, at.accounts[i],
                      Status::InvalidArgument("account '" + a.name + "' is its own ancestor"));
      }
      up = it->second;
    }
  }
  for (size_t i = 0; i < c.users.size(); ++i) {
    const core::UserSpec& u = c.users[i];
    if (u.account != core::kRootAccount && !parent.count(u.account)) {
      return AtLine(file, at.users[i], Unknown("user", u.name, "is in", "account", u.account));
    }
  }
  return Status::Ok();
}

// Applies one logical line and notes where new partitions, QoS, accounts and users came from.
Status ApplyNumbered(const std::string& record, int line, ClusterConfig& config, DeclaredAt& at) {
  BERTH_RETURN_IF_ERROR(ApplyConfigLine(record, config));
  const core::ClusterSpec& c = config.cluster;
  at.partitions.resize(c.partitions.size(), line);
  at.qos.resize(c.qos.size(), line);
  at.accounts.resize(c.accounts.size(), line);
  at.users.resize(c.users.size(), line);
  return Status::Ok();
}

}  // namespace

Result<ClusterConfig> ParseClusterConfig(std::string_view text, std::string_view name) {
  ClusterConfig config;
  DeclaredAt at;
  std::string record;
  int record_line = 0;
  bool continued = false;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string physical(StripComment(text.substr(pos, end - pos)));
    pos = end + 1;
    ++line_no;
    if (!continued) {
      record.clear();
      record_line = line_no;
    }
    continued = StripContinuation(physical);
    record += physical;
    if (continued) continue;
    Status s = ApplyNumbered(record, record_line, config, at);
    if (!s.ok()) return AtLine(name, record_line, s);
  }
  if (continued) {  // a '\' on the last line: Slurm parses what it has
    Status s = ApplyNumbered(record, record_line, config, at);
    if (!s.ok()) return AtLine(name, record_line, s);
  }
  BERTH_RETURN_IF_ERROR(CheckPartitions(config.cluster, at, name));
  BERTH_RETURN_IF_ERROR(CheckAccounts(config.cluster, at, name));
  return config;
}

Result<ClusterConfig> ReadClusterConfig(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int err = errno;
    std::string msg = path + ": cannot read: " + std::generic_category().message(err);
    return err == ENOENT ? Status::NotFound(msg) : Status::InvalidArgument(msg);
  }
  std::string text;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  int err = std::ferror(f) ? (errno != 0 ? errno : EIO) : 0;
  std::fclose(f);
  if (err != 0) {
    return Status::InvalidArgument(path + ": cannot read: " + std::generic_category().message(err));
  }
  return ParseClusterConfig(text, path);
}

std::string NodeNameOfHost(const ClusterConfig& config, const std::string& hostname,
                           const std::vector<std::string>& addresses) {
  const std::string short_name = hostname.substr(0, hostname.find('.'));
  // The one node whose value is among `wanted`; "" when none or several.
  auto only = [](const std::map<std::string, std::string>& values,
                 const std::vector<std::string>& wanted) {
    std::string found;
    for (const auto& [node, value] : values) {
      if (std::find(wanted.begin(), wanted.end(), value) == wanted.end()) continue;
      if (!found.empty()) return std::string();
      found = node;
    }
    return found;
  };
  // NodeHostname, which is the node's name where not given; then NodeAddr.
  if (std::string n = only(config.node_hostnames, {hostname, short_name}); !n.empty()) return n;
  for (const core::NodeSpec& n : config.cluster.nodes) {
    if ((n.name == hostname || n.name == short_name) && !config.node_hostnames.count(n.name)) {
      return n.name;
    }
  }
  std::vector<std::string> addr_wanted = addresses;
  addr_wanted.push_back(hostname);
  addr_wanted.push_back(short_name);
  return only(config.node_addrs, addr_wanted);
}

}  // namespace berth::config
