#include "controller/job_record.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "api/job_json.h"
#include "api/json_scan.h"
#include "controller/json_text.h"
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

Status DecodeAlloc(const json& a, JobRecord& r) {
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

json EncodeJobRecord(const JobRecord& r, bool with_exec) {
  const core::Job& j = r.job;
  json out = {
      {"id", j.id},
      {"state", std::string(core::JobStateName(j.state))},
      {"request", api::EncodeJob(j.spec, with_exec ? j.exec.get() : nullptr)},
      {"submit_time", j.spec.submit_time},
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
    if (r.preempt_end != kNoTime) out["preempt_end_time"] = r.preempt_end;
  }
  if (j.start_time != kNoTime) {
    out["usage"] = {{"cpu_seconds", r.cpu_seconds},
                    {"max_rss_mib", r.max_rss_mib},
                    {"gpu_utilization", r.gpu_utilization}};
  }
  if (!r.message.empty()) out["message"] = r.message;
  if (r.cancelled_by >= 0) out["cancelled_by"] = r.cancelled_by;
  if (!r.steps.empty()) {
    json steps = json::array();
    for (const api::StepRecord& s : r.steps) steps.push_back(api::EncodeStepRecord(s));
    out["steps"] = std::move(steps);
  }
  if (r.steps_dropped > 0) out["steps_dropped"] = r.steps_dropped;
  out["slurm"] = EncodeFacts(r.slurm);
  if (r.k8s) out["k8s"] = *r.k8s;
  if (r.k8s_deleted > 0) out["k8s_deleted"] = r.k8s_deleted;
  return out;
}

namespace {

// Named counts as a JSON object: keys sorted, the last of equal names winning (as assigning them
// to a json object one by one does).
void WriteCounts(JsonText& w, const std::vector<core::NamedCount>& counts) {
  std::vector<const core::NamedCount*> sorted;
  sorted.reserve(counts.size());
  for (const core::NamedCount& c : counts) sorted.push_back(&c);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return a->name < b->name; });
  w.Open();
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i + 1 < sorted.size() && sorted[i + 1]->name == sorted[i]->name) continue;
    w.Key(sorted[i]->name);
    w.Int(sorted[i]->count);
  }
  w.Close();
}

void WriteAlloc(JsonText& w, const JobRecord& r) {
  w.Open();
  w.Key("licenses");
  WriteCounts(w, r.job.alloc.licenses);
  w.Key("nodes");
  w.OpenArray();
  for (size_t i = 0; i < r.job.alloc.nodes.size(); ++i) {
    const core::NodeAllocation& a = r.job.alloc.nodes[i];
    w.Next();
    w.Open();
    w.Key("cpus");
    w.Int(a.cpus);
    if (!a.gpu_shares.empty()) {
      w.Key("gpu_shares");
      w.OpenArray();
      for (const core::GpuShare& g : a.gpu_shares) {
        w.Next();
        w.Open();
        w.Key("device");
        w.Int(g.device);
        w.Key("milli");
        w.Int(g.milli);
        w.Close();
      }
      w.CloseArray();
    }
    w.Key("gpus");
    w.OpenArray();
    for (int g = 0; g < 64; ++g) {
      if (a.gpu_mask >> g & 1) {
        w.Next();
        w.Int(g);
      }
    }
    w.CloseArray();
    if (!a.gres.empty()) {
      w.Key("gres");
      WriteCounts(w, a.gres);
    }
    w.Key("mem_mib");
    w.Int(a.mem_mib);
    w.Key("node");
    w.String(i < r.node_names.size() ? r.node_names[i] : "");
    w.Key("tasks");
    w.Int(a.tasks);
    w.Close();
  }
  w.CloseArray();
  w.Close();
}

void WriteFacts(JsonText& w, const SlurmFacts& f) {
  w.Open();
  w.Key("account_given");
  w.Bool(f.account_given);
  w.Key("accounting");
  w.Bool(f.accounting);
  w.Key("def_mem_per_cpu_mib");
  w.Int(f.def_mem_per_cpu_mib);
  w.Key("def_mem_per_node_mib");
  w.Int(f.def_mem_per_node_mib);
  w.Key("default_time_limit");
  w.Int(f.default_time_limit);
  w.Key("gpus_in_tres");
  w.Bool(f.gpus_in_tres);
  w.Key("node_cpus");
  w.Int(f.node_cpus);
  w.Key("node_mem_mib");
  w.Int(f.node_mem_mib);
  w.Close();
}

// The record's keys from "allocation" up to "request" (`before`), or from after it to the end
// (!before), without the object's braces: EncodeJobRecord's keys in its dump's order.
void WriteRecordKeys(JsonText& w, const JobRecord& r, bool before) {
  const core::Job& j = r.job;
  const bool running = !core::IsTerminal(j.state) && j.state != core::JobState::kPending;
  if (before) {
    if (!j.alloc.empty()) {
      w.Key("allocation");
      WriteAlloc(w, r);
    }
    if (j.array_job_id != core::kNoJob) {
      w.Key("array_job_id");
      w.Int(j.array_job_id);
      w.Key("array_task_id");
      w.Int(j.array_task_id);
    }
    w.Key("attained_service");
    w.Double(j.attained_service);
    if (running) {
      w.Key("cancel_requested");
      w.Bool(r.cancel_requested);
    }
    if (r.cancelled_by >= 0) {
      w.Key("cancelled_by");
      w.Int(r.cancelled_by);
    }
    w.Key("eligible_time");
    w.Int(j.eligible_time);
    w.Key("end_time");
    w.Int(j.end_time);
    w.Key("exit_code");
    w.Int(j.outcome.exit_code);
    if (r.expected_start != kNoTime) {
      w.Key("expected_start");
      w.Int(r.expected_start);
    }
    w.Key("id");
    w.Int(j.id);
    if (r.k8s) {
      w.Key("k8s");
      w.Value(*r.k8s);
    }
    if (r.k8s_deleted > 0) {
      w.Key("k8s_deleted");
      w.Int(r.k8s_deleted);
    }
    w.Key("last_run");
    w.Int(j.last_run);
    if (!r.message.empty()) {
      w.Key("message");
      w.String(r.message);
    }
    w.Key("partition");
    w.String(j.partition);
    if (running && r.preempt_end != kNoTime) {
      w.Key("preempt_end_time");
      w.Int(r.preempt_end);
    }
    w.Key("priority");
    w.Int(r.priority);
    if (r.reason != core::PendingReason::kNone) {
      w.Key("reason");
      w.String(core::PendingReasonName(r.reason));
      w.Key("reason_detail");
      w.String(r.reason_detail);
    }
    return;
  }
  w.Key("restart_count");
  w.Int(j.restart_count);
  w.Key("slurm");
  WriteFacts(w, r.slurm);
  w.Key("start_time");
  w.Int(j.start_time);
  w.Key("state");
  w.String(core::JobStateName(j.state));
  if (!r.steps.empty()) {
    w.Key("steps");
    w.OpenArray();
    for (const api::StepRecord& s : r.steps) {
      w.Next();
      w.Value(api::EncodeStepRecord(s));
    }
    w.CloseArray();
  }
  if (r.steps_dropped > 0) {
    w.Key("steps_dropped");
    w.Int(r.steps_dropped);
  }
  w.Key("submit_host");
  w.String(r.submit_host);
  w.Key("submit_time");
  w.Int(j.spec.submit_time);
  w.Key("term_signal");
  w.Int(j.outcome.term_signal);
  w.Key("time_limit");
  w.Int(j.time_limit);
  if (j.start_time != kNoTime) {
    w.Key("usage");
    w.Open();
    w.Key("cpu_seconds");
    w.Double(r.cpu_seconds);
    w.Key("gpu_utilization");
    w.Double(r.gpu_utilization);
    w.Key("max_rss_mib");
    w.Int(r.max_rss_mib);
    w.Close();
  }
}

}  // namespace

void WriteJobRecordText(const JobRecord& r, std::string* stored, std::string* event) {
  // {BEFORE,"request":REQUEST,AFTER}; the event's view is {BEFORE,AFTER}.
  stored->clear();
  stored->reserve(1024);
  stored->push_back('{');
  JsonText w(stored);
  WriteRecordKeys(w, r, true);  // never empty: "attained_service" is always there
  const size_t before_end = stored->size();
  stored->append(",\"request\":");
  stored->append(api::EncodeJob(r.job.spec, nullptr).dump());
  const size_t after_start = stored->size();
  WriteRecordKeys(w, r, false);  // each of its keys after a comma
  stored->push_back('}');
  if (event == nullptr) return;
  // As JobEventText(view): {"job":VIEW,"type":"job"}.
  const std::string_view text(*stored);
  event->clear();
  event->reserve(before_end + (text.size() - after_start) + 24);
  event->append("{\"job\":");
  event->append(text.substr(0, before_end));
  event->append(text.substr(after_start));
  event->append(",\"type\":\"job\"}");
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
  f.cancelled_by = r.cancelled_by;
  f.priority = r.priority;
  if (r.reason != core::PendingReason::kNone) {
    f.reason = std::string(core::PendingReasonName(r.reason));
  }
  f.restart_count = j.restart_count;
  f.exit_code = j.outcome.exit_code;
  f.term_signal = j.outcome.term_signal;
  f.message = r.message;
  f.submit_time = j.spec.submit_time;
  f.eligible_time = j.eligible_time;
  f.expected_start = r.expected_start;
  f.start_time = j.start_time;
  f.end_time = j.end_time;
  if (!core::IsTerminal(j.state) && j.state != core::JobState::kPending) {
    f.preempt_end = r.preempt_end;
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
    f.cpu_seconds = r.cpu_seconds;
    f.max_rss_mib = r.max_rss_mib;
    f.gpu_utilization = r.gpu_utilization;
  }
  f.cluster = r.slurm;
  return f;
}

std::string JobEventText(const json& view) {
  // An object's keys come out sorted: "job" before "type".
  std::string text = "{\"job\":";
  text += view.dump();
  text += ",\"type\":\"job\"}";
  return text;
}

std::string StoredRecordText(const json& list_form, const std::string& exec_text) {
  store::JobRow row;
  row.record = list_form.dump();
  if (exec_text.empty()) return std::move(row.record);
  row.exec = std::make_shared<const std::string>(exec_text);
  return store::JoinedRecord(row);
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

namespace {

// Readers of one plain scalar's JSON text: false when the text is anything else (the record is
// then decoded from its tree, whose errors are the ones to give).

// Whether the text starts as a JSON number does ('-', then a digit; no leading zero).
bool NumberStart(std::string_view v) {
  const size_t d = !v.empty() && v[0] == '-' ? 1 : 0;
  if (d >= v.size() || v[d] < '0' || v[d] > '9') return false;
  return !(v[d] == '0' && d + 1 < v.size() && v[d + 1] >= '0' && v[d + 1] <= '9');
}

template <typename T>
bool ReadInt(std::string_view v, T* out) {
  if (!NumberStart(v)) return false;
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, *out);
  return ec == std::errc() && p == end;
}

bool ReadDouble(std::string_view v, double* out) {
  if (!NumberStart(v) || v.back() == '.') return false;
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, *out, std::chars_format::general);
  return ec == std::errc() && p == end && std::isfinite(*out);
}

bool ReadBool(std::string_view v, bool* out) {
  if (v != "true" && v != "false") return false;
  *out = v == "true";
  return true;
}

bool ReadString(std::string_view v, std::string* out) {
  return api::JsonStringValue(v, out);
}

// The members DecodeRecordFast reads, by key (one look-up per member: a chain of comparisons
// through every key was a fifth of a restart).
enum class Field {
  kId,
  kState,
  kRequest,
  kSubmitTime,
  kEligibleTime,
  kStartTime,
  kEndTime,
  kTimeLimit,
  kPartition,
  kRestartCount,
  kExitCode,
  kTermSignal,  // the required ones: bits 0-11
  kAttainedService,
  kLastRun,
  kArrayJobId,
  kArrayTaskId,
  kSubmitHost,
  kPriority,
  kAllocation,
  kCancelRequested,
  kCancelledBy,
  kPreemptEnd,
  kSteps,
  kStepsDropped,
  kUsage,
  kMessage,
  kSlurm,
  kK8s,
  kK8sDeleted,
  kExec,
  kNodeMemMib,
  kNodeCpus,
  kDefMemPerCpu,
  kDefMemPerNode,
  kDefaultTimeLimit,
  kGpusInTres,
  kAccounting,
  kAccountGiven,  // "slurm"'s
  kCpuSeconds,
  kMaxRssMib,
  kGpuUtilization,  // "usage"'s
};

std::optional<Field> FieldOf(std::string_view key) {
  // By length first, then among the few names of that length.
  struct Name {
    std::string_view text;
    Field field;
  };
  auto among = [&](std::initializer_list<Name> names) -> std::optional<Field> {
    for (const Name& n : names) {
      if (n.text == key) return n.field;
    }
    return std::nullopt;
  };
  switch (key.size()) {
    case 2:
      return among({{"id", Field::kId}});
    case 3:
      return among({{"k8s", Field::kK8s}});
    case 4:
      return among({{"exec", Field::kExec}});
    case 5:
      return among({{"state", Field::kState},
                    {"steps", Field::kSteps},
                    {"usage", Field::kUsage},
                    {"slurm", Field::kSlurm}});
    case 7:
      return among({{"request", Field::kRequest}, {"message", Field::kMessage}});
    case 8:
      return among({{"end_time", Field::kEndTime},
                    {"last_run", Field::kLastRun},
                    {"priority", Field::kPriority}});
    case 9:
      return among({{"partition", Field::kPartition},
                    {"exit_code", Field::kExitCode},
                    {"node_cpus", Field::kNodeCpus}});
    case 10:
      return among({{"start_time", Field::kStartTime},
                    {"time_limit", Field::kTimeLimit},
                    {"allocation", Field::kAllocation},
                    {"accounting", Field::kAccounting}});
    case 11:
      return among({{"submit_time", Field::kSubmitTime},
                    {"term_signal", Field::kTermSignal},
                    {"submit_host", Field::kSubmitHost},
                    {"k8s_deleted", Field::kK8sDeleted},
                    {"cpu_seconds", Field::kCpuSeconds},
                    {"max_rss_mib", Field::kMaxRssMib}});
    case 12:
      return among({{"array_job_id", Field::kArrayJobId},
                    {"cancelled_by", Field::kCancelledBy},
                    {"node_mem_mib", Field::kNodeMemMib},
                    {"gpus_in_tres", Field::kGpusInTres}});
    case 13:
      return among({{"eligible_time", Field::kEligibleTime},
                    {"restart_count", Field::kRestartCount},
                    {"array_task_id", Field::kArrayTaskId},
                    {"steps_dropped", Field::kStepsDropped},
                    {"account_given", Field::kAccountGiven}});
    case 15:
      return among({{"gpu_utilization", Field::kGpuUtilization}});
    case 16:
      return among({{"attained_service", Field::kAttainedService},
                    {"cancel_requested", Field::kCancelRequested},
                    {"preempt_end_time", Field::kPreemptEnd}});
    case 18:
      return among({{"default_time_limit", Field::kDefaultTimeLimit}});
    case 19:
      return among({{"def_mem_per_cpu_mib", Field::kDefMemPerCpu}});
    case 20:
      return among({{"def_mem_per_node_mib", Field::kDefMemPerNode}});
    default:
      return std::nullopt;
  }
}

// The record decoded from its text without a tree of the whole: each member read from its own
// text (the request, the allocation, steps and the Pod from small trees of their own; a request
// equal to the last one `memo` decoded is copied from it). nullopt for anything it does not read
// exactly as the tree does (a value of another type, a key twice, the older forms with the run
// specification inside): the caller decodes those the slow way (DecodeJobRecordTree).
// JobRecordTest.TheFastDecodeIsTheTreeDecode holds the two equal. Only a record broken inside a
// member that neither reads (the scheduler's word: "reason", "expected_start") decodes here and
// not there.
std::optional<JobRecord> DecodeRecordFast(std::string_view text, RequestMemo* memo) {
  JobRecord r;
  core::Job& j = r.job;
  auto exec = std::make_shared<core::JobExecSpec>();
  uint64_t seen = 0;
  // Whether the field's key comes for the first time.
  auto first = [&](Field f) {
    const uint64_t bit = uint64_t{1} << static_cast<int>(f);
    if (seen & bit) return false;
    seen |= bit;
    return true;
  };
  // The members of an object nested in the record ("slurm", "usage"): known keys read by `read`,
  // others skipped.
  auto nested = [&](std::string_view v, const auto& read) {
    return api::ForEachMember(v, [&](const std::string& k, std::string_view x) -> Status {
      const std::optional<Field> f = FieldOf(k);
      return !f || read(*f, x) ? Status::Ok() : Status::InvalidArgument("slow");
    });
  };
  auto facts = [&](Field f, std::string_view x) {
    SlurmFacts& s = r.slurm;
    switch (f) {
      case Field::kNodeMemMib:
        return ReadInt(x, &s.node_mem_mib);
      case Field::kNodeCpus:
        return ReadInt(x, &s.node_cpus);
      case Field::kDefMemPerCpu:
        return ReadInt(x, &s.def_mem_per_cpu_mib);
      case Field::kDefMemPerNode:
        return ReadInt(x, &s.def_mem_per_node_mib);
      case Field::kDefaultTimeLimit:
        return ReadInt(x, &s.default_time_limit);
      case Field::kGpusInTres:
        return ReadBool(x, &s.gpus_in_tres);
      case Field::kAccounting:
        return ReadBool(x, &s.accounting);
      case Field::kAccountGiven:
        return ReadBool(x, &s.account_given);
      default:
        return true;
    }
  };
  auto usage = [&](Field f, std::string_view x) {
    switch (f) {
      case Field::kCpuSeconds:
        return ReadDouble(x, &r.cpu_seconds);
      case Field::kMaxRssMib:
        return ReadInt(x, &r.max_rss_mib);
      case Field::kGpuUtilization:
        return ReadDouble(x, &r.gpu_utilization);
      default:
        return true;
    }
  };
  auto request = [&](std::string_view v) {
    // The memo holds a request decoded into a fresh JobSpec: j.spec is one until "submit_time".
    if (seen >> static_cast<int>(Field::kSubmitTime) & 1) memo = nullptr;
    if (memo != nullptr && memo->valid && v == memo->text) {
      j.spec = memo->spec;
      return true;
    }
    const json tree = json::parse(v, nullptr, /*allow_exceptions=*/false);
    if (!api::DecodeJob(tree, &j.spec, exec.get()).ok()) return false;
    // Remembered only when it held no part of the run specification (the older form).
    if (memo != nullptr && *exec == core::JobExecSpec{}) {
      memo->valid = true;
      memo->text.assign(v);
      memo->spec = j.spec;
    }
    return true;
  };
  std::string state;
  const Status walked =
      api::ForEachMember(text, [&](const std::string& k, std::string_view v) -> Status {
        const std::optional<Field> f = FieldOf(k);
        if (!f) return Status::Ok();  // a key the tree does not read either
        bool ok = first(*f);
        try {
          switch (*f) {
            case Field::kId:
              ok = ok && ReadInt(v, &j.id);
              break;
            case Field::kState:
              ok = ok && ReadString(v, &state);
              break;
            case Field::kRequest:
              ok = ok && request(v);
              break;
            case Field::kSubmitTime:
              ok = ok && ReadInt(v, &j.spec.submit_time);
              break;
            case Field::kEligibleTime:
              ok = ok && ReadInt(v, &j.eligible_time);
              break;
            case Field::kStartTime:
              ok = ok && ReadInt(v, &j.start_time);
              break;
            case Field::kEndTime:
              ok = ok && ReadInt(v, &j.end_time);
              break;
            case Field::kTimeLimit:
              ok = ok && ReadInt(v, &j.time_limit);
              break;
            case Field::kPartition:
              ok = ok && ReadString(v, &j.partition);
              break;
            case Field::kRestartCount:
              ok = ok && ReadInt(v, &j.restart_count);
              break;
            case Field::kExitCode:
              ok = ok && ReadInt(v, &j.outcome.exit_code);
              break;
            case Field::kTermSignal:
              ok = ok && ReadInt(v, &j.outcome.term_signal);
              break;
            case Field::kAttainedService:
              ok = ok && ReadDouble(v, &j.attained_service);
              break;
            case Field::kLastRun:
              ok = ok && ReadInt(v, &j.last_run);
              break;
            case Field::kArrayJobId:
              ok = ok && ReadInt(v, &j.array_job_id);
              break;
            case Field::kArrayTaskId:
              ok = ok && ReadInt(v, &j.array_task_id);
              break;
            case Field::kSubmitHost:
              ok = ok && ReadString(v, &r.submit_host);
              break;
            case Field::kPriority:
              ok = ok && ReadInt(v, &r.priority);
              break;
            case Field::kAllocation:
              ok = ok && DecodeAlloc(json::parse(v), r).ok();
              break;
            case Field::kCancelRequested:
              ok = ok && ReadBool(v, &r.cancel_requested);
              break;
            case Field::kCancelledBy:
              ok = ok && ReadInt(v, &r.cancelled_by);
              break;
            case Field::kPreemptEnd:
              ok = ok && ReadInt(v, &r.preempt_end);
              break;
            case Field::kSteps: {
              const json steps = json::parse(v);
              if (ok && steps.is_array()) {
                for (const json& step : steps) {
                  Result<api::StepRecord> one = api::DecodeStepRecord(step);
                  ok = ok && one.ok();
                  if (ok) r.steps.push_back(std::move(*one));
                }
              }
              break;
            }
            case Field::kStepsDropped:
              ok = ok && ReadInt(v, &r.steps_dropped);
              break;
            case Field::kUsage:
              ok = ok && nested(v, usage).ok();
              break;
            case Field::kMessage:
              ok = ok && ReadString(v, &r.message);
              break;
            case Field::kSlurm:
              ok = ok && nested(v, facts).ok();
              break;
            case Field::kK8s: {
              json pod = json::parse(v);
              if (ok && pod.is_object()) r.k8s = std::make_shared<const json>(std::move(pod));
              break;
            }
            case Field::kK8sDeleted:
              ok = ok && ReadInt(v, &r.k8s_deleted);
              break;
            case Field::kExec:
              ok = false;
              break;  // the specification inside: the tree merges it
            default:
              break;  // a key of a nested object, at the top: not the record's
          }
        } catch (const std::exception&) {
          ok = false;
        }
        return ok ? Status::Ok() : Status::InvalidArgument("slow");
      });
  constexpr uint64_t kRequired = (uint64_t{1} << 12) - 1;  // kId ... kTermSignal
  if (!walked.ok() || (seen & kRequired) != kRequired) return std::nullopt;
  std::optional<core::JobState> parsed = core::ParseJobState(state);
  if (!parsed) return std::nullopt;
  j.state = *parsed;
  j.exec = std::move(exec);
  j.outcome.state = j.state;
  j.outcome.start_time = j.start_time;
  j.outcome.end_time = j.end_time;
  return r;
}

}  // namespace

Result<JobRecord> DecodeJobRecord(std::string_view text, ExecCache* cache) {
  constexpr std::string_view kExecFirst = "{\"exec\":";
  if (cache != nullptr && text.substr(0, kExecFirst.size()) == kExecFirst) {
    const std::string_view rest = text.substr(kExecFirst.size());
    const size_t n = ValueLength(rest);
    if (n > 0 && n < rest.size() && rest[n] == ',') {
      std::string exec_text(rest.substr(0, n));
      if (auto it = cache->by_text.find(exec_text); it != cache->by_text.end()) {
        // Only the rest of the record is parsed: it has no run specification of its own.
        std::string without = "{";
        without.append(rest.substr(n + 1));
        BERTH_ASSIGN_OR_RETURN(JobRecord r, DecodeJobRecord(without, nullptr));
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
  if (std::optional<JobRecord> fast = DecodeRecordFast(text, cache ? &cache->request : nullptr)) {
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
    BERTH_RETURN_IF_ERROR(api::DecodeJob(*request, &j.spec, exec.get()));
    j.exec = std::move(exec);
    j.spec.submit_time = in.at("submit_time").get<Time>();
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
    if (in.contains("allocation")) BERTH_RETURN_IF_ERROR(DecodeAlloc(in.at("allocation"), r));
    r.cancel_requested = in.value("cancel_requested", false);
    r.cancelled_by = in.value("cancelled_by", int64_t{-1});
    r.preempt_end = in.value("preempt_end_time", kNoTime);
    if (in.contains("steps") && in.at("steps").is_array()) {
      for (const json& s : in.at("steps")) {
        Result<api::StepRecord> step = api::DecodeStepRecord(s);
        if (!step.ok()) return Status::InvalidArgument("bad step: " + step.status().message());
        r.steps.push_back(std::move(*step));
      }
    }
    r.steps_dropped = in.value("steps_dropped", int64_t{0});
    if (in.contains("usage")) {
      const json& u = in.at("usage");
      r.cpu_seconds = u.value("cpu_seconds", 0.0);
      r.max_rss_mib = u.value("max_rss_mib", int64_t{0});
      r.gpu_utilization = u.value("gpu_utilization", -1.0);
    }
    r.message = in.value("message", "");
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
  t.gpu_type = r.job.spec.gpu_type;
  return t.ToString(t.cpus);
}

}  // namespace berth::controller
