#include "api/accounting_json.h"

#include "api/json_read.h"

namespace berth::api {
namespace {

using nlohmann::json;

json LimitsToJson(const core::TresLimits& l) {
  json j = json::object();
  if (l.cpus >= 0) j["cpu"] = l.cpus;
  if (l.mem_mib >= 0) j["mem_mib"] = l.mem_mib;
  if (l.gpus >= 0) j["gpus"] = l.gpus;
  if (l.nodes >= 0) j["nodes"] = l.nodes;
  return j;
}

core::TresLimits LimitsFromJson(const json& j) {
  core::TresLimits l;
  if (!j.is_object()) return l;
  l.cpus = j.value("cpu", core::kNoLimit);
  l.mem_mib = j.value("mem_mib", core::kNoLimit);
  l.gpus = j.value("gpus", core::kNoLimit);
  l.nodes = j.value("nodes", core::kNoLimit);
  return l;
}

// Runs a decoder that may meet a value of the wrong type.
template <typename T, typename F>
Result<T> Decode(std::string_view what, F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Status::InvalidArgument("bad " + std::string(what) + " record: " + e.what());
  }
}

}  // namespace

json QosToJson(const core::QosSpec& q) {
  json j = {{"name", q.name},
            {"priority", q.priority},
            {"preempt", q.preempt},
            {"preempt_mode", std::string(core::PreemptModeName(q.preempt_mode))},
            {"usage_factor", q.usage_factor},
            {"max_tres_per_user", LimitsToJson(q.max_tres_per_user)},
            {"max_tres_per_account", LimitsToJson(q.max_tres_per_account)},
            {"max_tres_per_job", LimitsToJson(q.max_tres_per_job)},
            {"max_jobs_per_user", q.max_jobs_per_user},
            {"max_jobs_per_account", q.max_jobs_per_account}};
  if (q.max_wall < kInfinite) j["max_wall"] = q.max_wall;
  return j;
}

json AccountToJson(const core::AccountSpec& a) {
  return {{"name", a.name},
          {"parent", a.parent},
          {"fairshare", a.shares},
          {"grp_tres", LimitsToJson(a.grp_tres)},
          {"grp_jobs", a.grp_jobs}};
}

json UserToJson(const core::UserSpec& u) {
  return {{"user", u.name},          {"account", u.account},
          {"default", u.is_default}, {"fairshare", u.shares},
          {"max_jobs", u.max_jobs},  {"max_tres_per_job", LimitsToJson(u.max_tres_per_job)}};
}

Result<core::QosSpec> QosFromJson(const json& j) {
  return Decode<core::QosSpec>("QoS", [&] {
    core::QosSpec q;
    q.name = j.at("name").get<std::string>();
    q.priority = j.value("priority", 0);
    q.preempt = j.value("preempt", std::vector<std::string>{});
    std::string mode = j.value("preempt_mode", std::string("OFF"));
    q.preempt_mode = mode == "CANCEL"    ? core::PreemptMode::kCancel
                     : mode == "REQUEUE" ? core::PreemptMode::kRequeue
                                         : core::PreemptMode::kOff;
    q.usage_factor = j.value("usage_factor", 1.0);
    q.max_tres_per_user = LimitsFromJson(j.value("max_tres_per_user", json::object()));
    q.max_tres_per_account = LimitsFromJson(j.value("max_tres_per_account", json::object()));
    q.max_tres_per_job = LimitsFromJson(j.value("max_tres_per_job", json::object()));
    q.max_jobs_per_user = j.value("max_jobs_per_user", -1);
    q.max_jobs_per_account = j.value("max_jobs_per_account", -1);
    q.max_wall = j.value("max_wall", kInfinite);
    return q;
  });
}

Result<core::AccountSpec> AccountFromJson(const json& j) {
  return Decode<core::AccountSpec>("account", [&] {
    core::AccountSpec a;
    a.name = j.at("name").get<std::string>();
    a.parent = j.value("parent", std::string(core::kRootAccount));
    a.shares = j.value("fairshare", 1);
    a.grp_tres = LimitsFromJson(j.value("grp_tres", json::object()));
    a.grp_jobs = j.value("grp_jobs", -1);
    return a;
  });
}

Result<core::UserSpec> UserFromJson(const json& j) {
  return Decode<core::UserSpec>("user", [&] {
    core::UserSpec u;
    u.name = j.at("user").get<std::string>();
    u.account = j.at("account").get<std::string>();
    u.is_default = j.value("default", false);
    u.shares = j.value("fairshare", 1);
    u.max_jobs = j.value("max_jobs", -1);
    u.max_tres_per_job = LimitsFromJson(j.value("max_tres_per_job", json::object()));
    return u;
  });
}

}  // namespace berth::api
