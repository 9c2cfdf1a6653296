// slurm.conf's power-saving keys (slurm.conf(5), "Power Saving"): what berth's autoscaling
// acts on (docs/autoscaling.md).
#include <string>

#include "common/hostlist.h"
#include "common/strings.h"
#include "config/cluster_config_internal.h"

namespace berth::config::internal {
namespace {

constexpr const char* kPowerKeys[] = {
    "ResumeFailProgram", "ResumeProgram",  "ResumeRate",  "ResumeTimeout", "SuspendExcNodes",
    "SuspendExcParts",   "SuspendProgram", "SuspendRate", "SuspendTime",   "SuspendTimeout",
};

// Seconds, as slurm.conf gives these keys: a whole number; for SuspendTime also NONE, INFINITE
// or -1 (never).
Result<int64_t> Seconds(std::string_view key, std::string_view value, bool never_allowed) {
  if (never_allowed &&
      (EqualsIgnoreCase(value, "NONE") || EqualsIgnoreCase(value, "INFINITE") || value == "-1")) {
    return int64_t{-1};
  }
  Result<int64_t> n = ParseInteger(value, 0, 365LL * 24 * 3600);
  if (!n.ok()) return InvalidValue(key, value, Reason(n.status()));
  return *n;
}

Result<std::string> Program(std::string_view key, std::string_view value) {
  if (value.empty()) return InvalidValue(key, value, "empty program");
  if (value != "local" && value.front() != '/') {
    return InvalidValue(key, value, "expected an absolute path, or 'local' for berth's provider");
  }
  return std::string(value);
}

}  // namespace

bool IsPowerKey(std::string_view key) {
  for (const char* k : kPowerKeys) {
    if (EqualsIgnoreCase(k, key)) return true;
  }
  return false;
}

Status ApplyPowerKey(std::string_view key, std::string_view value, ClusterConfig& config) {
  PowerSaving& p = config.power;
  if (EqualsIgnoreCase(key, "ResumeProgram")) {
    BERTH_ASSIGN_OR_RETURN(p.resume_program, Program("ResumeProgram", value));
  } else if (EqualsIgnoreCase(key, "SuspendProgram")) {
    BERTH_ASSIGN_OR_RETURN(p.suspend_program, Program("SuspendProgram", value));
  } else if (EqualsIgnoreCase(key, "ResumeFailProgram")) {
    BERTH_ASSIGN_OR_RETURN(p.resume_fail_program, Program("ResumeFailProgram", value));
  } else if (EqualsIgnoreCase(key, "SuspendTime")) {
    BERTH_ASSIGN_OR_RETURN(p.suspend_time, Seconds("SuspendTime", value, true));
  } else if (EqualsIgnoreCase(key, "SuspendTimeout")) {
    BERTH_ASSIGN_OR_RETURN(p.suspend_timeout, Seconds("SuspendTimeout", value, false));
  } else if (EqualsIgnoreCase(key, "ResumeTimeout")) {
    BERTH_ASSIGN_OR_RETURN(p.resume_timeout, Seconds("ResumeTimeout", value, false));
  } else if (EqualsIgnoreCase(key, "ResumeRate") || EqualsIgnoreCase(key, "SuspendRate")) {
    const bool resume = EqualsIgnoreCase(key, "ResumeRate");
    Result<int64_t> n = ParseInteger(value, 0, 1000000);
    if (!n.ok())
      return InvalidValue(resume ? "ResumeRate" : "SuspendRate", value, Reason(n.status()));
    (resume ? p.resume_rate : p.suspend_rate) = static_cast<int32_t>(*n);
  } else if (EqualsIgnoreCase(key, "SuspendExcNodes")) {
    // LIST or LIST:N (keep N of LIST up).
    std::string_view list = value;
    int32_t keep = 0;
    if (size_t colon = value.rfind(':'); colon != std::string_view::npos) {
      Result<int64_t> n = ParseInteger(value.substr(colon + 1), 1, 1000000);
      if (!n.ok())
        return InvalidValue("SuspendExcNodes", value, "after ':': " + Reason(n.status()));
      keep = static_cast<int32_t>(*n);
      list = value.substr(0, colon);
    }
    Result<std::vector<std::string>> nodes = hostlist::Expand(list);
    if (!nodes.ok()) return InvalidValue("SuspendExcNodes", value, Reason(nodes.status()));
    p.suspend_exc_nodes = std::move(*nodes);
    p.suspend_exc_nodes_keep = keep;
  } else if (EqualsIgnoreCase(key, "SuspendExcParts")) {
    std::vector<std::string> parts;
    for (std::string_view part : Split(value, ',')) {
      if (part.empty()) return InvalidValue("SuspendExcParts", value, "empty partition name");
      parts.emplace_back(part);
    }
    p.suspend_exc_parts = std::move(parts);
  }
  return Status::Ok();
}

}  // namespace berth::config::internal
