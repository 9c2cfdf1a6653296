#include "controller/job_record.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "api/job_json.h"
#include "core/model/resources.h"

namespace berth::controller {
namespace {

using nlohmann::json;

json EncodeAlloc(const JobRecord& r) {
  json nodes = json::array();
  for (size_t i = 0; i < r.job.alloc.nodes.size(); ++i) {
    const core::NodeAllocation& a = r.job.alloc.nodes[i];
    json n = {{"node", i < r.node_names.size() ? r.node_names[i] : ""},
              {"cpus", a.cpus},
              {"mem_mib", a.mem_mib},
              {"tasks", a.tasks}};
    json gpus = json::array();
    for (int g = 0; g < 64; ++g) {
      if (a.gpu_mask >> g & 1) gpus.push_back(g);
    }
    n["gpus"] = gpus;
    if (!a.gpu_shares.empty()) {
      json shares = json::array();
      for (const core::GpuShare& g : a.gpu_shares) {
        shares.push_back({{"device", g.device}, {"milli", g.milli}});
      }
      n["gpu_shares"] = shares;
    }
    if (!a.gres.empty()) {
      json gres = json::object();
      for (const core::NamedCount& c : a.gres) gres[c.name] = c.count;
      n["gres"] = gres;
    }
    nodes.push_back(n);
  }
  json licenses = json::object();
  for (const core::NamedCount& l : r.job.alloc.licenses) licenses[l.name] = l.count;
  return {{"nodes", nodes}, {"licenses", licenses}};
}

json EncodeFacts(const SlurmFacts& f) {
  return {{"node_mem_mib", f.node_mem_mib},
          {"node_cpus", f.node_cpus},
          {"def_mem_per_cpu_mib", f.def_mem_per_cpu_mib},
          {"def_mem_per_node_mib", f.def_mem_per_node_mib},
          {"default_time_limit", f.default_time_limit},
          {"gpus_in_tres", f.gpus_in_tres},
          {"accounting", f.accounting},
          {"account_given", f.account_given}};
}

// Records written before the facts existed decode with the defaults.
SlurmFacts DecodeFacts(const json& in) {
  SlurmFacts f;
  if (!in.contains("slurm")) return f;
  const json& s = in.at("slurm");
  f.node_mem_mib = s.value("node_mem_mib", f.node_mem_mib);
  f.node_cpus = s.value("node_cpus", f.node_cpus);
  f.def_mem_per_cpu_mib = s.value("def_mem_per_cpu_mib", f.def_mem_per_cpu_mib);
  f.def_mem_per_node_mib = s.value("def_mem_per_node_mib", f.def_mem_per_node_mib);
  f.default_time_limit = s.value("default_time_limit", f.default_time_limit);
  f.gpus_in_tres = s.value("gpus_in_tres", f.gpus_in_tres);
  f.accounting = s.value("accounting", f.accounting);
  f.account_given = s.value("account_given", f.account_given);
  return f;
}

}  // namespace

Status DecodeAllocation(const json& a, JobRecord& r) {
  for (const json& n : a.at("nodes")) {
    core::NodeAllocation na;
    na.cpus = n.at("cpus").get<int32_t>();
    na.mem_mib = n.at("mem_mib").get<int64_t>();
    na.tasks = n.value("tasks", 1);
    for (const json& g : n.at("gpus")) na.gpu_mask |= uint64_t{1} << g.get<int>();
    if (n.contains("gpu_shares")) {
      for (const json& g : n.at("gpu_shares")) {
        na.gpu_shares.push_back({g.at("device").get<int32_t>(), g.at("milli").get<int32_t>()});
      }
    }
    if (n.contains("gres")) {
      for (const auto& [name, count] : n.at("gres").items()) {
        na.gres.push_back({name, count.get<int64_t>()});
      }
    }
    r.node_names.push_back(n.at("node").get<std::string>());
    r.job.alloc.nodes.push_back(std::move(na));
  }
  if (a.contains("licenses")) {
    for (const auto& [name, count] : a.at("licenses").items()) {
      r.job.alloc.licenses.push_back({name, count.get<int64_t>()});
    }
  }
  return Status::Ok();
}

json EncodeJobRecord(const JobRecord& r, bool with_exec) {
  const core::Job& j = r.job;
  json out = {
      {"id", j.id},
      {"state", std::string(core::JobStateName(j.state))},
      {"request", api::EncodeJob(j.spec, with_exec ? j.exec.get() : nullptr)},
      {"submit_time", j.spec->submit_time},
      {"eligible_time", j.eligible_time},
      {"start_time", j.start_time},
      {"end_time", j.end_time},
      {"time_limit", j.time_limit},
      {"partition", j.partition},
      {"restart_count", j.restart_count},
      {"attained_service", j.attained_service},
      {"last_run", j.last_run},
      {"exit_code", j.outcome.exit_code},
      {"term_signal", j.outcome.term_signal},
      {"submit_host", r.submit_host},
      {"priority", r.priority},
  };
  if (j.array_job_id != core::kNoJob) {
    out["array_job_id"] = j.array_job_id;
    out["array_task_id"] = j.array_task_id;
  }
  if (!j.alloc.empty()) out["allocation"] = EncodeAlloc(r);
  if (r.reason != core::PendingReason::kNone) {
    out["reason"] = std::string(core::PendingReasonName(r.reason));
    out["reason_detail"] = r.reason_detail;
  }
  if (r.expected_start != kNoTime) out["expected_start"] = r.expected_start;
  if (!core::IsTerminal(j.state) && j.state != core::JobState::kPending) {
    out["cancel_requested"] = r.cancel_requested;
    if (r.run->preempt_end != kNoTime) out["preempt_end_time"] = r.run->preempt_end;
  }
  if (j.start_time != kNoTime) {
    out["usage"] = {{"cpu_seconds", r.run->cpu_seconds},
                    {"max_rss_mib", r.run->max_rss_mib},
                    {"gpu_utilization", r.run->gpu_utilization}};
  }
  if (!r.run->message.empty()) out["message"] = r.run->message;
  if (r.run->cancelled_by >= 0) out["cancelled_by"] = r.run->cancelled_by;
  if (!r.run->steps.empty()) {
    json steps = json::array();
    for (const api::StepRecord& s : r.run->steps) steps.push_back(api::EncodeStepRecord(s));
    out["steps"] = std::move(steps);
  }
  if (r.run->steps_dropped > 0) out["steps_dropped"] = r.run->steps_dropped;
  out["slurm"] = EncodeFacts(*r.slurm);
  if (r.k8s) out["k8s"] = *r.k8s;
  if (r.k8s_deleted > 0) out["k8s_deleted"] = r.k8s_deleted;
  return out;
}

namespace {

// The length of the JSON object or array that `s` starts with, its closing bracket included; 0
// when `s` does not hold a whole one.
size_t ValueLength(std::string_view s) {
  if (s.empty() || (s[0] != '{' && s[0] != '[')) return 0;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return 0;
}

// A joined record's run specification, its first key ("{\"exec\":{...},..."): the
// specification's text and the rest of the record as an object of its own; nullopt for a record
// that does not start so.
struct ExecFirst {
  std::string_view exec;
  std::string rest;
};
std::optional<ExecFirst> SplitExecFirst(std::string_view text) {
  constexpr std::string_view kExecFirst = "{\"exec\":";
  if (!text.starts_with(kExecFirst)) return std::nullopt;
  const std::string_view after = text.substr(kExecFirst.size());
  const size_t n = ValueLength(after);
  if (n == 0 || n >= after.size() || after[n] != ',') return std::nullopt;
  ExecFirst out{after.substr(0, n), "{"};
  out.rest.append(after.substr(n + 1));
  return out;
}

}  // namespace

slurm::JobRecordFacts SlurmFactsOf(const JobRecord& r) {
  const core::Job& j = r.job;
  slurm::JobRecordFacts f;
  f.id = j.id;
  if (j.array_job_id != core::kNoJob) {
    f.array_job_id = j.array_job_id;
    f.array_task_id = j.array_task_id;
  }
  f.state = j.state;
  f.cancelled_by = r.run->cancelled_by;
  f.priority = r.priority;
  if (r.reason != core::PendingReason::kNone) {
    f.reason = std::string(core::PendingReasonName(r.reason));
  }
  f.restart_count = j.restart_count;
  f.exit_code = j.outcome.exit_code;
  f.term_signal = j.outcome.term_signal;
  f.message = r.run->message;
  f.submit_time = j.spec->submit_time;
  f.eligible_time = j.eligible_time;
  f.expected_start = r.expected_start;
  f.start_time = j.start_time;
  f.end_time = j.end_time;
  if (!core::IsTerminal(j.state) && j.state != core::JobState::kPending) {
    f.preempt_end = r.run->preempt_end;
  }
  f.time_limit = j.time_limit;
  f.submit_host = r.submit_host;
  f.partition = j.partition;
  f.nodes.reserve(j.alloc.nodes.size());
  for (size_t i = 0; i < j.alloc.nodes.size(); ++i) {
    const core::NodeAllocation& a = j.alloc.nodes[i];
    slurm::JobRecordFacts::Node& n = f.nodes.emplace_back();
    n.name = i < r.node_names.size() ? r.node_names[i] : "";
    n.cpus = a.cpus;
    n.mem_mib = a.mem_mib;
    n.gpus = a.gpu_count();
    for (const core::GpuShare& g : a.gpu_shares) n.gpu_milli += g.milli;
  }
  if (j.start_time != kNoTime) {
    f.cpu_seconds = r.run->cpu_seconds;
    f.max_rss_mib = r.run->max_rss_mib;
    f.gpu_utilization = r.run->gpu_utilization;
  }
  f.cluster = *r.slurm;
  return f;
}

slurm::SacctJob SacctJobOf(const JobRecord& r, Time now) {
  slurm::SacctJob j;
  slurm::FillJobView(SlurmFactsOf(r), *r.job.spec, nullptr, now, slurm::kViewAllParts, &j.view);
  if (!r.job.alloc.nodes.empty()) {
    const core::NodeAllocation& first = r.job.alloc.nodes.front();
    j.batch_cpus = first.cpus;
    j.batch_mem_mib = first.mem_mib;
    j.batch_gpus = first.gpu_count();
  }
  j.gpu_type = r.job.spec->gpu_type;
  j.now = now;
  const bool ended = core::IsTerminal(j.view.state);
  j.steps.reserve(r.run->steps.size());
  for (const api::StepRecord& s : r.run->steps) {
    j.steps.push_back(ended ? api::StepAfterJobEnd(s, j.view.end_time) : s);
  }
  return j;
}

std::string ExecJsonText(const core::JobExecSpec& exec) {
  const core::JobSpec none;
  json keys = api::EncodeJob(none, &exec);
  const json spec_keys = api::EncodeJob(none, nullptr);
  for (const auto& item : spec_keys.items()) keys.erase(item.key());
  return keys.dump();
}

const std::string& JobRecord::ListJsonPrefix() const {
  return list_json_.Get([this] {
    json v = EncodeJobRecord(*this, false);
    for (const char* k : {"priority", "reason", "reason_detail", "expected_start", "steps"}) {
      v.erase(k);  // changing with every pass, or only for sacct (steps)
    }
    std::string text = v.dump();
    text.pop_back();  // the closing brace
    return text;
  });
}

namespace {
constexpr size_t kMaxCached = 4096;
}  // namespace

Result<JobRecord> DecodeJobRow(const store::JobRow& row, ExecCache* cache) {
  if (row.exec == nullptr) return DecodeJobRecord(row.record, cache);
  std::shared_ptr<const core::JobExecSpec> known;
  if (cache != nullptr) {
    if (cache->last_text == row.exec) {
      known = cache->last;
    } else if (auto it = cache->by_text.find(*row.exec); it != cache->by_text.end()) {
      known = it->second;
    }
  }
  if (known != nullptr) {
    // Only the record is parsed: it has no run specification of its own.
    BERTH_ASSIGN_OR_RETURN(JobRecord r, DecodeJobRecord(row.record, cache));
    r.job.exec = known;
    cache->last_text = row.exec;
    cache->last = std::move(known);
    return r;
  }
  BERTH_ASSIGN_OR_RETURN(JobRecord r, DecodeJobRecord(store::JoinedRecord(row), nullptr));
  if (cache != nullptr) {
    if (cache->by_text.size() < kMaxCached) cache->by_text.emplace(*row.exec, r.job.exec);
    cache->last_text = row.exec;
    cache->last = r.job.exec;
  }
  return r;
}

Result<JobRecord> DecodeJobRowWithoutExec(const store::JobRow& row, ExecCache* cache) {
  // A joined record (row.exec null: etcd's rows) has the specification as its first key.
  if (row.exec == nullptr) {
    if (std::optional<ExecFirst> split = SplitExecFirst(row.record)) {
      return DecodeJobRecord(split->rest, cache);
    }
  }
  return DecodeJobRecord(row.record, cache);
}

Result<JobRecord> DecodeJobRecord(std::string_view text, ExecCache* cache) {
  if (cache != nullptr) {
    if (std::optional<ExecFirst> split = SplitExecFirst(text)) {
      std::string exec_text(split->exec);
      if (auto it = cache->by_text.find(exec_text); it != cache->by_text.end()) {
        // Only the rest of the record is parsed: it has no run specification of its own.
        BERTH_ASSIGN_OR_RETURN(JobRecord r, DecodeJobRecord(split->rest, nullptr));
        r.job.exec = it->second;
        return r;
      }
      BERTH_ASSIGN_OR_RETURN(JobRecord r, DecodeJobRecord(text, nullptr));
      if (cache->by_text.size() < kMaxCached) {
        cache->by_text.emplace(std::move(exec_text), r.job.exec);
      }
      return r;
    }
  }
  if (std::optional<JobRecord> fast =
          DecodeJobRecordText(text, cache ? &cache->request : nullptr)) {
    return std::move(*fast);
  }
  return DecodeJobRecordTree(text);
}

Result<JobRecord> DecodeJobRecordTree(std::string_view text) {
  try {
    json in = json::parse(text);
    JobRecord r;
    core::Job& j = r.job;
    j.id = in.at("id").get<uint32_t>();
    std::optional<core::JobState> state = core::ParseJobState(in.at("state").get<std::string>());
    if (!state) return Status::InvalidArgument("bad state in job record");
    j.state = *state;
    auto exec = std::make_shared<core::JobExecSpec>();
    const json* request = &in.at("request");
    json merged;
    if (in.contains("exec")) {  // the store's form: the run specification beside the request
      merged = *request;
      for (const auto& item : in.at("exec").items()) merged[item.key()] = item.value();
      request = &merged;
    }
    BERTH_RETURN_IF_ERROR(api::DecodeJob(*request, &j.spec.Mut(), exec.get()));
    j.exec = std::move(exec);
    j.spec.Mut().submit_time = in.at("submit_time").get<Time>();
    j.eligible_time = in.at("eligible_time").get<Time>();
    j.start_time = in.at("start_time").get<Time>();
    j.end_time = in.at("end_time").get<Time>();
    j.time_limit = in.at("time_limit").get<Duration>();
    j.partition = in.at("partition").get<std::string>();
    j.restart_count = in.at("restart_count").get<int32_t>();
    j.attained_service = in.value("attained_service", 0.0);
    j.last_run = in.value("last_run", Duration{0});
    j.outcome.exit_code = in.at("exit_code").get<int32_t>();
    j.outcome.term_signal = in.at("term_signal").get<int32_t>();
    j.outcome.state = j.state;
    j.outcome.start_time = j.start_time;
    j.outcome.end_time = j.end_time;
    j.array_job_id = in.value("array_job_id", core::kNoJob);
    j.array_task_id = in.value("array_task_id", -1);
    r.submit_host = in.value("submit_host", "");
    r.priority = in.value("priority", int64_t{0});
    if (in.contains("allocation")) BERTH_RETURN_IF_ERROR(DecodeAllocation(in.at("allocation"), r));
    r.cancel_requested = in.value("cancel_requested", false);
    RunFacts run;
    run.cancelled_by = in.value("cancelled_by", int64_t{-1});
    run.preempt_end = in.value("preempt_end_time", kNoTime);
    if (in.contains("steps") && in.at("steps").is_array()) {
      for (const json& s : in.at("steps")) {
        Result<api::StepRecord> step = api::DecodeStepRecord(s);
        if (!step.ok()) return Status::InvalidArgument("bad step: " + step.status().message());
        run.steps.push_back(std::move(*step));
      }
    }
    run.steps_dropped = in.value("steps_dropped", int64_t{0});
    if (in.contains("usage")) {
      const json& u = in.at("usage");
      run.cpu_seconds = u.value("cpu_seconds", 0.0);
      run.max_rss_mib = u.value("max_rss_mib", int64_t{0});
      run.gpu_utilization = u.value("gpu_utilization", -1.0);
    }
    run.message = in.value("message", "");
    if (run != RunFacts{}) r.run = std::move(run);  // else the shared empty one
    r.slurm = DecodeFacts(in);
    if (in.contains("k8s") && in.at("k8s").is_object()) {
      r.k8s = std::make_shared<const json>(in.at("k8s"));
    }
    r.k8s_deleted = in.value("k8s_deleted", int64_t{0});
    return r;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("bad job record: ") + e.what());
  }
}

std::string AllocTresText(const JobRecord& r) {
  core::Tres t;
  int64_t milli = 0;
  for (const core::NodeAllocation& a : r.job.alloc.nodes) {
    t.cpus += a.cpus;
    t.mem_mib += a.mem_mib;
    t.gpus += a.gpu_count();
    for (const core::GpuShare& g : a.gpu_shares) milli += g.milli;
  }
  if (milli > 0) t.other.push_back({"gres/mps", (milli + 9) / 10});
  t.nodes = static_cast<int64_t>(r.job.alloc.nodes.size());
  t.gpu_type = r.job.spec->gpu_type;
  return t.ToString(t.cpus);
}

}  // namespace berth::controller
