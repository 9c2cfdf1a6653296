#include "controller/requests.h"

#include <pwd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "api/job_json.h"
#include "api/json_scan.h"
#include "common/slices.h"
#include "image/container_spec.h"
#include "net/tls_token.h"

namespace berth::controller {

using nlohmann::json;

namespace {

// Fills the job's user from the caller: users submit as themselves; root may submit for a named
// user.
Status SetOwner(const Caller& who, core::JobSpec& spec) {
  if (!who.admin || spec.user.empty()) {
    if (!who.admin && !spec.user.empty() && spec.user != who.user) {
      return Status::PermissionDenied("you may submit only as yourself (" + who.user + ")");
    }
    spec.user = who.user;
    spec.uid = who.uid;
    spec.gid = who.gid;
    return Status::Ok();
  }
  if (spec.uid == 0 && spec.user != "root") {
    struct passwd pw, *found = nullptr;
    char buf[4096];
    if (getpwnam_r(spec.user.c_str(), &pw, buf, sizeof(buf), &found) == 0 && found) {
      spec.uid = found->pw_uid;
      spec.gid = found->pw_gid;
    }
  }
  return Status::Ok();
}

// One job of a submission: decoded, owned by the caller, with something to run.
Result<JobSubmission> DecodeSubmission(const Caller& who, const json& item) {
  JobSubmission out{{}, std::make_shared<core::JobExecSpec>()};
  core::JobSpec& spec = out.spec;
  BERTH_RETURN_IF_ERROR(api::DecodeJob(item, &spec, out.exec.get()));
  BERTH_RETURN_IF_ERROR(SetOwner(who, spec));
  if (!who.admin) {
    // What only operators may ask for, as in Slurm.
    if (spec.admin_priority >= 0) {
      return Status::PermissionDenied("only operators may set a job's priority (--priority)");
    }
    if (spec.nice < 0) {
      return Status::PermissionDenied("only operators may set a negative nice value");
    }
    if (spec.hold == core::HoldKind::kAdmin) {
      return Status::PermissionDenied("only operators may submit with an operator hold");
    }
  }
  bool image_decides = false;  // a Pod's container: the image's ENTRYPOINT/CMD may be the command
  if (!out.exec->container.empty()) {
    Result<image::ContainerSpec> c =
        image::DecodeContainerSpec(json::parse(out.exec->container, nullptr, false));
    if (!c.ok()) return c.status();
    if (c->run_as_root && !who.admin) {
      return Status::PermissionDenied("only operators may run a container as root");
    }
    image_decides = c->entry == image::EntryMode::kKubernetes;
  }
  if (out.exec->script.empty() && out.exec->argv.empty() && !image_decides) {
    return Status::InvalidArgument("nothing to run (give \"script\" or \"argv\")");
  }
  return out;
}

const std::string* QueryValue(const std::map<std::string, std::string>& query, const char* key) {
  auto it = query.find(key);
  return it == query.end() ? nullptr : &it->second;
}

}  // namespace

Status GuardJson(const std::function<Status()>& decode) {
  try {
    return decode();
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("bad request: ") + e.what());
  }
}

namespace {

// The most threads a submission's jobs are decoded on.
constexpr size_t kDecodeSlices = 4;

// The jobs of a submission in order, each decoded by `decode(k, i)`, k the slice (< kDecodeSlices,
// one thread each, consecutive jobs) for a large batch; the first that fails, counting from the
// start, names the whole request's error.
Result<std::vector<JobSubmission>> DecodeJobs(
    size_t n, const std::function<Result<JobSubmission>(size_t k, size_t i)>& decode) {
  std::vector<std::optional<Result<JobSubmission>>> decoded(n);
  ForEachSlice(n, SliceCount(n, 128, kDecodeSlices), [&](size_t k, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) decoded[i] = decode(k, i);
  });
  std::vector<JobSubmission> jobs;
  jobs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Result<JobSubmission>& job = *decoded[i];
    if (!job.ok()) {
      return n == 1 ? job.status() : job.status().WithContext("job " + std::to_string(i + 1));
    }
    jobs.push_back(std::move(*job));
  }
  return jobs;
}

// The members of the JSON object `object` as a tree, all but `key`, whose value's text (the
// last of several, as a parser keeps) goes to *kept. False when the text is not such an object.
bool TreeWithout(std::string_view object, std::string_view key, json* rest,
                 std::optional<std::string_view>* kept) {
  *rest = json::object();
  return api::ForEachMember(object,
                            [&](std::string_view k, std::string_view value) -> Status {
                              if (k == key) {
                                *kept = value;
                                return Status::Ok();
                              }
                              json v = json::parse(value, nullptr, /*allow_exceptions=*/false);
                              if (v.is_discarded()) return Status::InvalidArgument("not JSON");
                              (*rest)[std::string(k)] = std::move(v);
                              return Status::Ok();
                            })
      .ok();
}

// A job's text with its "environment" read apart: the other members as a tree, the
// environment straight from its text as GetEnvironment reads it from a tree (names in order,
// the last of equal names kept), or the one this thread read last when its text is the same
// (the jobs of one batch mostly come from one shell: then the same object). nullopt for
// anything else (another type, a bad name, text that is not JSON): the caller parses the job
// whole, and its errors are the ones to give.
using Environment = std::vector<std::pair<std::string, std::string>>;
struct SplitJob {
  json rest;
  std::shared_ptr<const Environment> environment;  // null: no "environment" member
};

std::optional<SplitJob> SplitEnvironment(std::string_view text) {
  struct Memo {
    std::string text;
    std::shared_ptr<const Environment> environment;
  };
  thread_local Memo memo;
  SplitJob out;
  std::optional<std::string_view> env_text;
  if (!TreeWithout(text, "environment", &out.rest, &env_text)) return std::nullopt;
  if (!env_text) return out;
  if (memo.environment && *env_text == memo.text) {
    out.environment = memo.environment;
    return out;
  }
  Environment env;
  const Status read =
      api::ForEachMember(*env_text, [&](std::string_view name, std::string_view value) -> Status {
        std::string v;
        if (name.empty() || name.find('=') != std::string_view::npos ||
            !api::JsonStringValue(value, &v)) {
          return Status::InvalidArgument("slow");
        }
        env.emplace_back(name, std::move(v));
        return Status::Ok();
      });
  if (!read.ok()) return std::nullopt;
  std::stable_sort(env.begin(), env.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Of equal names the last given stays (a parser's object keeps the last).
  auto kept = std::make_shared<Environment>();
  kept->reserve(env.size());
  for (size_t i = 0; i < env.size(); ++i) {
    if (i + 1 < env.size() && env[i + 1].first == env[i].first) continue;
    kept->push_back(std::move(env[i]));
  }
  memo.text.assign(*env_text);
  memo.environment = kept;
  out.environment = std::move(kept);
  return out;
}

// A slice of a batch's jobs decoded one after another: a job whose environment (the same
// object, SplitEnvironment's) and other run settings are those of the last job given its
// environment here gets that job's run specification itself, neither copied nor hashed again
// when interned.
class ExecSharing {
 public:
  // Gives `job` its environment, or the previous job's whole specification.
  void Complete(JobSubmission& job, std::shared_ptr<const Environment> environment) {
    if (exec_ && environment == environment_ && *job.exec == rest_) {
      job.exec = exec_;
      return;
    }
    rest_ = *job.exec;
    environment_ = std::move(environment);
    job.exec->environment = *environment_;
    exec_ = job.exec;
  }

 private:
  std::shared_ptr<const Environment> environment_;
  core::JobExecSpec rest_;  // exec_ but for its environment
  std::shared_ptr<core::JobExecSpec> exec_;
};

}  // namespace

std::optional<Result<SubmitRequest>> DecodeSubmitText(const Caller& who, std::string_view body) {
  // The members besides "jobs" make a small tree (checked as DecodeSubmit checks them); each
  // job's text is kept to be parsed alone.
  json top;
  std::optional<std::string_view> jobs_text;
  if (!TreeWithout(body, "jobs", &top, &jobs_text) || !jobs_text.has_value()) return std::nullopt;
  std::vector<std::string_view> items;
  const Status elements = api::ForEachElement(*jobs_text, [&](std::string_view item) {
    items.push_back(item);
    return Status::Ok();
  });
  if (!elements.ok()) return std::nullopt;  // not an array (DecodeSubmit says so), or broken
  // Each job parsed and decoded in one go, its tree freed at once. An element that is not JSON
  // makes the whole body not JSON, which the body's own parse reports (before any other error).
  std::atomic<bool> all_json{true};
  std::vector<ExecSharing> sharing(kDecodeSlices);  // each slice's, as it goes through its jobs
  Result<std::vector<JobSubmission>> jobs =
      DecodeJobs(items.size(), [&](size_t k, size_t i) -> Result<JobSubmission> {
        if (std::optional<SplitJob> split = SplitEnvironment(items[i])) {
          Result<JobSubmission> job = DecodeSubmission(who, split->rest);
          if (job.ok() && split->environment) {
            sharing[k].Complete(*job, std::move(split->environment));
          }
          return job;
        }
        const json tree = json::parse(items[i], nullptr, /*allow_exceptions=*/false);
        if (tree.is_discarded()) {
          all_json = false;
          return Status::InvalidArgument("not JSON");
        }
        return DecodeSubmission(who, tree);
      });
  if (!all_json) return std::nullopt;
  SubmitRequest out;
  BERTH_RETURN_IF_ERROR(GuardJson([&] {
    out.submit_host = top.value("submit_host", "");
    return Status::Ok();
  }));
  if (items.empty()) return Status::InvalidArgument("no jobs to submit");
  if (!jobs.ok()) return jobs.status();
  out.jobs = std::move(*jobs);
  return out;
}

Result<SubmitRequest> DecodeSubmit(const Caller& who, const json& body) {
  SubmitRequest out;
  std::vector<const json*> items;
  json single;
  BERTH_RETURN_IF_ERROR(GuardJson([&] {
    if (body.is_object() && body.contains("jobs")) {
      if (!body.at("jobs").is_array()) return Status::InvalidArgument("\"jobs\" must be an array");
      for (const json& j : body.at("jobs")) items.push_back(&j);
      out.submit_host = body.value("submit_host", "");
    } else if (body.is_object() && body.contains("submit_host")) {
      // One job may say where it was submitted from too (sbatch does): not a key of the job.
      single = body;
      out.submit_host = single.value("submit_host", "");
      single.erase("submit_host");
      items.push_back(&single);
    } else {
      items.push_back(&body);
    }
    return Status::Ok();
  }));
  if (items.empty()) return Status::InvalidArgument("no jobs to submit");
  Result<std::vector<JobSubmission>> jobs =
      DecodeJobs(items.size(), [&](size_t, size_t i) { return DecodeSubmission(who, *items[i]); });
  if (!jobs.ok()) return jobs.status();
  out.jobs = std::move(*jobs);
  return out;
}

Result<JobSubmission> DecodeTestSubmit(const Caller& who, const json& body) {
  json item = body;
  if (item.is_object()) item.erase("submit_host");
  return DecodeSubmission(who, item);
}

Result<CancelManyRequest> DecodeCancelMany(const json& body) {
  if (!body.is_object() || !body.contains("ids") || !body.at("ids").is_array()) {
    return Status::InvalidArgument("expected {\"ids\": [\"12\", \"13_4\", ...]}");
  }
  if (body.contains("signal") && !body.at("signal").is_string()) {
    return Status::InvalidArgument("\"signal\" must be a name or number as a string");
  }
  CancelManyRequest out;
  const std::string sig = body.value("signal", "");
  if (!sig.empty()) {
    out.signal = api::SignalNumber(sig);
    if (out.signal == 0) return Status::InvalidArgument("Invalid signal specified: " + sig);
  }
  BERTH_RETURN_IF_ERROR(GuardJson([&] {
    out.batch_only = body.value("batch_only", false);
    out.full = body.value("full", false);
    return Status::Ok();
  }));
  for (const json& item : body.at("ids")) {
    out.ids.push_back(item.is_string() ? item.get<std::string>()
                                       : (item.is_number_unsigned() ? item.dump() : std::string()));
  }
  return out;
}

Result<JobActionRequest> DecodeJobAction(const std::string& method, const std::string& action,
                                         const std::map<std::string, std::string>& query,
                                         const json& body) {
  JobActionRequest out;
  const std::string* query_signal = QueryValue(query, "signal");
  Status st = GuardJson([&] {
    if (action == "signal") {
      out.signal = api::SignalNumber(body.value("signal", query_signal ? *query_signal : ""));
      out.batch_only = body.value("batch_only", false);
      out.full = body.value("full", false);
      if (out.signal == 0) return Status::InvalidArgument("Invalid signal specified");
    } else if (action == "cancel" || (action.empty() && method == "DELETE")) {
      if (query_signal) {
        out.signal = api::SignalNumber(*query_signal);
        if (out.signal == 0) return Status::InvalidArgument("Invalid signal specified");
      }
    } else if (action == "hold" || action == "release") {
      out.kind = action == "hold" ? JobActionKind::kHold : JobActionKind::kRelease;
      out.admin_hold = body.value("admin", false);
    } else if (action == "requeue") {
      out.kind = JobActionKind::kRequeue;
    } else if (action.empty() && method == "PATCH") {
      out.kind = JobActionKind::kUpdate;
      BERTH_ASSIGN_OR_RETURN(out.update, DecodeJobUpdate(body));
    } else {
      return Status::NotFound("no such endpoint: " + method + " " + action);
    }
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

const char* JobUpdateOption(const std::string& field) {
  static const std::map<std::string, const char*, std::less<>> kOption = {
      {"partition", "partition"},    {"num_nodes", "nodes"},
      {"features", "constraint"},    {"qos", "qos"},
      {"account", "account"},        {"time_min", "time-min"},
      {"num_tasks", "ntasks"},       {"name", "job-name"},
      {"licenses", "licenses"},      {"dependency", "dependency"},
      {"reservation", "reservation"}};
  auto it = kOption.find(field);
  return it == kOption.end() ? nullptr : it->second;
}

Result<JobUpdate> DecodeJobUpdate(const json& body) {
  if (!body.is_object() || body.empty()) {
    return Status::InvalidArgument("expected an object of fields to change");
  }
  JobUpdate out;
  for (const auto& [key, value] : body.items()) {
    if (key == "time_limit") {
      if (!value.is_number_integer() || value.get<int64_t>() <= 0) {
        return Status::InvalidArgument("Invalid time limit specification");
      }
      out.time_limit = value.get<Duration>();
    } else if (key == "nice") {
      if (!value.is_number_integer() || std::abs(value.get<int64_t>()) > 2147483645) {
        return Status::InvalidArgument("Invalid nice value");
      }
      out.nice = value.get<int32_t>();
    } else if (key == "comment") {
      if (!value.is_string()) return Status::InvalidArgument("\"comment\": expected a string");
      out.comment = value.get<std::string>();
    } else if (JobUpdateOption(key) == nullptr) {
      return Status::InvalidArgument(
          "cannot update \"" + key +
          "\" (time_limit, nice, comment, partition, num_nodes, num_tasks, time_min, features, "
          "qos, account, name, licenses, dependency and reservation can change)");
    } else if (value.is_string()) {
      out.request.emplace_back(key, value.get<std::string>());
    } else if (key == "partition") {
      out.request.emplace_back(key, "");  // refused by the option as an empty partition name
    } else if (value.is_number_integer()) {
      const int64_t n = value.get<int64_t>();
      // time_min comes in seconds like time_limit; sbatch's --time-min counts minutes.
      out.request.emplace_back(key, std::to_string(key == "time_min" ? (n + 59) / 60 : n));
    } else {
      return Status::InvalidArgument("\"" + key + "\": expected a string or a number");
    }
  }
  return out;
}

Result<NodeActionRequest> DecodeNodeAction(const std::string& node, const std::string& action,
                                           const json& body) {
  NodeActionRequest out{node, action, ""};
  BERTH_RETURN_IF_ERROR(GuardJson([&] {
    out.reason = body.value("reason", "");
    return Status::Ok();
  }));
  return out;
}

JoinRequest DecodeJoin(const json& body) {
  JoinRequest out;
  if (!body.is_object() || !body.contains("node") || !body.at("node").is_string()) {
    out.error = Status::InvalidArgument("expected {\"node\": NAME}");
    return out;
  }
  out.node = body.at("node").get<std::string>();
  if (!net::TokenSigner::ValidNodeName(out.node)) {
    out.error = Status::InvalidArgument("bad node name '" + out.node +
                                        "': 1 to 63 of letters, digits, '.', '_' and '-'");
  }
  return out;
}

TokenRequest DecodeToken(const json& body) {
  TokenRequest out;
  if (!body.is_null() && !body.is_object()) {
    out.shape = Status::InvalidArgument(
        "expected {} or {\"user\": NAME} or {\"node\": NAME} or {\"join\": true}");
    return out;
  }
  const json b = body.is_object() ? body : json::object();
  out.shape = GuardJson([&] {
    out.join = b.value("join", false);
    return Status::Ok();
  });
  out.has_node = b.contains("node");
  out.node_error = GuardJson([&] {
    if (out.has_node) out.node = b.at("node").get<std::string>();
    return Status::Ok();
  });
  out.has_user = b.contains("user");
  out.user_error = GuardJson([&] {
    if (!out.has_user) return Status::Ok();
    const json& u = b.at("user");
    out.user = u.is_number_unsigned() ? std::to_string(u.get<uint32_t>()) : u.get<std::string>();
    return Status::Ok();
  });
  return out;
}

}  // namespace berth::controller
