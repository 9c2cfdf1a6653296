// --export, --export-file, and the options that only say how a job runs (sbatch_job.h).
#include <algorithm>

#include "api/job_json.h"
#include "common/strings.h"
#include "config/value_text.h"
#include "slurm/sbatch_job.h"

namespace berth::slurm {
namespace {

bool IsSlurmVariable(const std::string& name) {
  return name.rfind("SLURM_", 0) == 0;
}

void Put(EnvironmentList& env, const std::string& name, const std::string& value, bool replace) {
  for (auto& [n, v] : env) {
    if (n == name) {
      if (replace) v = value;
      return;
    }
  }
  env.emplace_back(name, value);
}

const std::string* Find(const EnvironmentList& env, const std::string& name) {
  const std::string* found = nullptr;
  for (const auto& [n, v] : env) {
    if (n == name) found = &v;
  }
  return found;
}

}  // namespace

EnvironmentList ExportEnvironment(const std::string& value, const EnvironmentList& env,
                                  const EnvironmentList& from_file) {
  EnvironmentList out = from_file;
  auto merge_all = [&] {
    for (const auto& [n, v] : env) Put(out, n, v, true);
  };
  auto merge_slurm = [&] {
    for (const auto& [n, v] : env) {
      if (IsSlurmVariable(n)) Put(out, n, v, true);
    }
  };
  if (value.empty() || EqualsIgnoreCase(value, "ALL")) {
    merge_all();
    return out;
  }
  merge_slurm();
  if (EqualsIgnoreCase(value, "NONE")) return out;
  // "[ALL,]NAME[=value],...": with ALL the caller's environment wins over values given here.
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    items.push_back(value.substr(start, comma - start));
    start = comma + 1;
  }
  bool all = std::any_of(items.begin(), items.end(),
                         [](const std::string& i) { return EqualsIgnoreCase(i, "ALL"); });
  if (all) merge_all();
  for (const std::string& item : items) {
    if (item.empty() || EqualsIgnoreCase(item, "ALL") || EqualsIgnoreCase(item, "NONE")) {
      continue;
    }
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      if (eq > 0) Put(out, item.substr(0, eq), item.substr(eq + 1), !all);
    } else if (const std::string* v = Find(env, item)) {
      Put(out, item, *v, true);
    }
  }
  return out;
}

EnvironmentList ParseExportFile(std::string_view text) {
  char sep = text.find('\0') != std::string_view::npos ? '\0' : '\n';
  EnvironmentList out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view entry = text.substr(start, end - start);
    start = end + 1;
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    Put(out, std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)), true);
  }
  return out;
}

Status ApplyExecOption(std::string_view name, const std::string& value, core::JobExecSpec& e) {
  if (name == "output") {
    e.stdout_pattern = value;
  } else if (name == "error") {
    e.stderr_pattern = value;
  } else if (name == "input") {
    e.stdin_path = value;
  } else if (name == "chdir") {
    e.work_dir = value;
  } else if (name == "comment") {
    e.comment = value;
  } else if (name == "open-mode") {
    if (value != "append" && value != "truncate") {
      return Status::InvalidArgument("invalid --open-mode value '" + value + "'");
    }
    e.open_append = value == "append";
  } else if (name == "signal") {
    return api::ParseSignalSpec(value, &e);
  } else if (name == "mail-type") {
    e.mail_type = value;
  } else if (name == "mail-user") {
    e.mail_user = value;
  } else if (name == "gpu-bind") {
    e.gpu_bind = value;
  } else {
    return Status::NotFound(std::string(name));
  }
  return Status::Ok();
}

}  // namespace berth::slurm
