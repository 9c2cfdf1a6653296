// A job record's JSON text written and read without a tree of the whole (job_record.h:
// WriteJobRecordText, DecodeJobRecordText): the controller writes one for every change of a job
// and reads every one back at a start.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "api/job_json.h"
#include "api/json_scan.h"
#include "common/hostlist.h"
#include "controller/job_record.h"
#include "controller/json_text.h"

namespace berth::controller {

using nlohmann::json;

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
    if (r.run->cancelled_by >= 0) {
      w.Key("cancelled_by");
      w.Int(r.run->cancelled_by);
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
    if (!r.run->message.empty()) {
      w.Key("message");
      w.String(r.run->message);
    }
    w.Key("partition");
    w.String(j.partition);
    if (running && r.run->preempt_end != kNoTime) {
      w.Key("preempt_end_time");
      w.Int(r.run->preempt_end);
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
  WriteFacts(w, *r.slurm);
  w.Key("start_time");
  w.Int(j.start_time);
  w.Key("state");
  w.String(core::JobStateName(j.state));
  if (!r.run->steps.empty()) {
    w.Key("steps");
    w.OpenArray();
    for (const api::StepRecord& s : r.run->steps) {
      w.Next();
      w.Value(api::EncodeStepRecord(s));
    }
    w.CloseArray();
  }
  if (r.run->steps_dropped > 0) {
    w.Key("steps_dropped");
    w.Int(r.run->steps_dropped);
  }
  w.Key("submit_host");
  w.String(r.submit_host);
  w.Key("submit_time");
  w.Int(j.spec->submit_time);
  w.Key("term_signal");
  w.Int(j.outcome.term_signal);
  w.Key("time_limit");
  w.Int(j.time_limit);
  if (j.start_time != kNoTime) {
    w.Key("usage");
    w.Open();
    w.Key("cpu_seconds");
    w.Double(r.run->cpu_seconds);
    w.Key("gpu_utilization");
    w.Double(r.run->gpu_utilization);
    w.Key("max_rss_mib");
    w.Int(r.run->max_rss_mib);
    w.Close();
  }
}

// The job's request: the bytes of api::EncodeJob(spec, nullptr).dump() (the keys that differ
// from a default spec's, in sorted order), without the tree, which was about two fifths of
// writing a record (JobRecordTest.TheWrittenTextIsTheDumpOfTheTree pins the two).
void WriteRequest(std::string* out, const core::JobSpec& s) {
  static const core::JobSpec d;
  JsonText w(out);
  w.Open();
  // A key whose value differs from the default spec's, as EncodeJob's put() writes it.
  auto put = [&w](const char* key, const auto& v, const auto& dv) {
    if (v == dv) return;
    w.Key(key);
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::string>) {
      w.String(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      w.Bool(v);
    } else {
      w.Int(v);
    }
  };
  auto limit = [&w](const char* key, Duration v, Duration dv) {
    if (v == dv) return;
    w.Key(key);
    if (v >= kInfinite) {
      w.String("UNLIMITED");
    } else {
      w.Int(v);
    }
  };
  // A key written only when `present`, its text made then.
  auto given = [&w](const char* key, bool present, const auto& text) {
    if (!present) return;
    w.Key(key);
    w.String(text());
  };
  put("account", s.account, d.account);
  given("array", !s.array.empty(),
        [&] { return core::FormatArrayTaskIds(s.array.task_ids, s.array.max_running); });
  put("begin", s.begin_time, d.begin_time);
  given("constraint", !s.constraint.empty(), [&] { return s.constraint.text(); });
  put("cpus_per_gpu", s.cpus_per_gpu, d.cpus_per_gpu);
  put("cpus_per_task", s.cpus_per_task, d.cpus_per_task);
  put("deadline", s.deadline, d.deadline);
  given("dependency", !s.dependency.empty(), [&] { return core::FormatDependency(s.dependency); });
  given("exclude", !s.exclude.empty(), [&] { return hostlist::Compress(s.exclude); });
  given("exclusive", s.exclusive != core::ExclusiveMode::kNo,
        [&] { return s.exclusive == core::ExclusiveMode::kUser ? "user" : "node"; });
  put("gid", s.gid, d.gid);
  put("gpu_milli", s.gpu_milli, d.gpu_milli);
  put("gpu_mps", s.gpu_mps, d.gpu_mps);
  put("gpu_type", s.gpu_type, d.gpu_type);
  put("gpus", s.gpus, d.gpus);
  put("gpus_per_node", s.gpus_per_node, d.gpus_per_node);
  put("gpus_per_task", s.gpus_per_task, d.gpus_per_task);
  if (!s.gres.empty()) {
    w.Key("gres");
    WriteCounts(w, s.gres);
  }
  given("hold", s.hold != core::HoldKind::kNone,
        [&] { return s.hold == core::HoldKind::kAdmin ? "admin" : "user"; });
  put("kill_on_invalid_dep", s.kill_on_invalid_dep, d.kill_on_invalid_dep);
  if (!s.licenses.empty()) {
    w.Key("licenses");
    WriteCounts(w, s.licenses);
  }
  put("mem_per_cpu", s.mem_per_cpu_mib, d.mem_per_cpu_mib);
  put("mem_per_gpu", s.mem_per_gpu_mib, d.mem_per_gpu_mib);
  put("mem_per_node", s.mem_per_node_mib, d.mem_per_node_mib);
  put("name", s.name, d.name);
  put("nice", s.nice, d.nice);
  given("nodelist", !s.nodelist.empty(), [&] { return hostlist::Compress(s.nodelist); });
  if (s.min_nodes != d.min_nodes || s.max_nodes != d.max_nodes) {
    w.Key("nodes");
    if (s.max_nodes > s.min_nodes) {
      w.String(std::to_string(s.min_nodes) + "-" + std::to_string(s.max_nodes));
    } else {
      w.Int(s.min_nodes);
    }
  }
  put("ntasks", s.ntasks, d.ntasks);
  put("ntasks_per_core", s.ntasks_per_core, d.ntasks_per_core);
  put("ntasks_per_gpu", s.ntasks_per_gpu, d.ntasks_per_gpu);
  put("ntasks_per_node", s.ntasks_per_node, d.ntasks_per_node);
  put("ntasks_per_socket", s.ntasks_per_socket, d.ntasks_per_socket);
  put("overcommit", s.overcommit, d.overcommit);
  put("oversubscribe", s.oversubscribe, d.oversubscribe);
  if (!s.partitions.empty()) {
    w.Key("partition");
    w.OpenArray();
    for (const std::string& p : s.partitions) {
      w.Next();
      w.String(p);
    }
    w.CloseArray();
  }
  put("priority", s.admin_priority, d.admin_priority);
  put("qos", s.qos, d.qos);
  put("requeue", s.requeue, d.requeue);
  put("reservation", s.reservation, d.reservation);
  limit("time_limit", s.time_limit, d.time_limit);
  limit("time_min", s.time_min, d.time_min);
  put("uid", s.uid, d.uid);
  put("user", s.user, d.user);
  put("wait_if_infeasible", s.wait_if_infeasible, d.wait_if_infeasible);
  w.Close();
}

// A job event's text around the record's keys: {"job":{KEYS},"type":"job"}.
constexpr std::string_view kEventStart = "{\"job\":{";
constexpr std::string_view kEventEnd = "},\"type\":\"job\"}";

}  // namespace

size_t WriteJobRecordText(const JobRecord& r, std::string* stored) {
  // {BEFORE,"request":REQUEST,AFTER}; the event is {"job":{BEFORE,AFTER},"type":"job"}.
  stored->clear();
  stored->reserve(1024);
  stored->push_back('{');
  JsonText w(stored);
  WriteRecordKeys(w, r, true);  // never empty: "attained_service" is always there
  const size_t request_start = stored->size();
  stored->append(",\"request\":");
  WriteRequest(stored, r.job.spec);
  const size_t request_size = stored->size() - request_start;
  WriteRecordKeys(w, r, false);  // each of its keys after a comma
  stored->push_back('}');
  return stored->size() - 2 - request_size + kEventStart.size() + kEventEnd.size();
}

std::string JobRecordEventText(const JobRecord& r) {
  // {"job":{BEFORE,AFTER},"type":"job"}, as nlohmann dumps that object.
  std::string event;
  event.reserve(768);
  event.append(kEventStart);
  JsonText w(&event);
  WriteRecordKeys(w, r, true);
  WriteRecordKeys(w, r, false);
  event.append(kEventEnd);
  return event;
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

// The members DecodeJobRecordText reads, by key (one look-up per member: a chain of comparisons
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
    for (const Name& n : names) {  // the same length: the first letter, then the rest
      if (n.text[0] == key[0] && n.text == key) return n.field;
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
}  // namespace

std::optional<JobRecord> DecodeJobRecordText(std::string_view text, RequestMemo* memo) {
  RequestMemo* const facts_memo = memo;  // `memo` is dropped for the request in some orders
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
    return api::ForEachMember(v, [&](std::string_view k, std::string_view x) -> Status {
      const std::optional<Field> f = FieldOf(k);
      return !f || read(*f, x) ? Status::Ok() : Status::InvalidArgument("slow");
    });
  };
  SlurmFacts facts_read;
  auto facts = [&](Field f, std::string_view x) {
    SlurmFacts& s = facts_read;
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
        return ReadDouble(x, &r.run.Mut().cpu_seconds);
      case Field::kMaxRssMib:
        return ReadInt(x, &r.run.Mut().max_rss_mib);
      case Field::kGpuUtilization:
        return ReadDouble(x, &r.run.Mut().gpu_utilization);
      default:
        return true;
    }
  };
  // Whether j.spec is the memo's request: the memo then takes the record's whole spec (with its
  // submit time), which the next records with this request share when they were submitted in
  // the same second.
  bool memo_spec = false;
  auto request = [&](std::string_view v) {
    // j.spec is a fresh JobSpec until "submit_time" (which the record always has, after this:
    // a shared spec's submit time is then set, and it is copied only when that differs).
    if (seen >> static_cast<int>(Field::kSubmitTime) & 1) memo = nullptr;
    if (memo != nullptr && memo->valid && v == memo->text) {
      j.spec = memo->spec;
      memo_spec = true;
      return true;
    }
    const json tree = json::parse(v, nullptr, /*allow_exceptions=*/false);
    if (!api::DecodeJob(tree, &j.spec.Mut(), exec.get()).ok()) return false;
    // Remembered only when it held no part of the run specification (the older form).
    if (memo != nullptr && *exec == core::JobExecSpec{}) {
      memo->valid = true;
      memo->text.assign(v);
      memo_spec = true;
    }
    return true;
  };
  std::string state;
  const Status walked =
      api::ForEachMember(text, [&](std::string_view k, std::string_view v) -> Status {
        const std::optional<Field> f = FieldOf(k);
        if (!f) return Status::Ok();  // a key the tree does not read either
        bool ok = first(*f);
        try {
          switch (*f) {
            case Field::kId:
              ok = ok && ReadInt(v, &j.id);
              break;
            case Field::kState:
              ok = ok && api::JsonStringValue(v, &state);
              break;
            case Field::kRequest:
              ok = ok && request(v);
              break;
            case Field::kSubmitTime: {
              Time submitted = 0;
              ok = ok && ReadInt(v, &submitted);
              if (ok && j.spec->submit_time != submitted) j.spec.Mut().submit_time = submitted;
              break;
            }
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
              ok = ok && api::JsonStringValue(v, &j.partition);
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
              ok = ok && api::JsonStringValue(v, &r.submit_host);
              break;
            case Field::kPriority:
              ok = ok && ReadInt(v, &r.priority);
              break;
            case Field::kAllocation:
              ok = ok && DecodeAllocation(json::parse(v), r).ok();
              break;
            case Field::kCancelRequested:
              ok = ok && ReadBool(v, &r.cancel_requested);
              break;
            case Field::kCancelledBy:
              ok = ok && ReadInt(v, &r.run.Mut().cancelled_by);
              break;
            case Field::kPreemptEnd:
              ok = ok && ReadInt(v, &r.run.Mut().preempt_end);
              break;
            case Field::kSteps: {
              const json steps = json::parse(v);
              if (ok && steps.is_array()) {
                for (const json& step : steps) {
                  Result<api::StepRecord> one = api::DecodeStepRecord(step);
                  ok = ok && one.ok();
                  if (ok) r.run.Mut().steps.push_back(std::move(*one));
                }
              }
              break;
            }
            case Field::kStepsDropped:
              ok = ok && ReadInt(v, &r.run.Mut().steps_dropped);
              break;
            case Field::kUsage:
              ok = ok && nested(v, usage).ok();
              break;
            case Field::kMessage:
              ok = ok && api::JsonStringValue(v, &r.run.Mut().message);
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
  if (memo_spec) memo->spec = j.spec;
  if (facts_read != SlurmFacts{}) {
    CopyOnWrite<SlurmFacts> no_memo;
    r.slurm = ShareWithLast(std::move(facts_read), facts_memo ? facts_memo->facts : no_memo);
  }
  j.outcome.state = j.state;
  j.outcome.start_time = j.start_time;
  j.outcome.end_time = j.end_time;
  return r;
}

}  // namespace berth::controller
