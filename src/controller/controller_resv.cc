// The controller's advance reservations (scontrol create|update|delete|show reservation): the
// commands, their store records (meta keys "resv/NAME", one JSON record each), recovery, and the
// tick that moves repeating reservations on and forgets ended ones. docs/api.md, "Reservations".
#include <algorithm>

#include "api/json_read.h"
#include "common/hostlist.h"
#include "controller/controller_internal.h"

namespace berth::controller {
namespace {

using nlohmann::json;

constexpr std::string_view kResvPrefix = "resv/";

json EncodeResv(const core::ResvSpec& s) {
  return {{"name", s.name},
          {"start", s.start},
          {"end", s.end >= kInfinite ? json(nullptr) : json(s.end)},
          {"nodes", s.nodes},
          {"users", s.users},
          {"accounts", s.accounts},
          {"partition", s.partition},
          {"flags", core::ResvFlagsText(s.flags)}};
}

Result<core::ResvSpec> DecodeStoredResv(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("not a JSON object");
  try {
    core::ResvSpec s;
    s.name = j.at("name").get<std::string>();
    s.start = j.at("start").get<Time>();
    s.end = j.at("end").is_null() ? kInfinite : j.at("end").get<Time>();
    s.nodes = j.value("nodes", std::vector<std::string>{});
    s.users = j.value("users", std::vector<std::string>{});
    s.accounts = j.value("accounts", std::vector<std::string>{});
    s.partition = j.value("partition", "");
    BERTH_ASSIGN_OR_RETURN(s.flags, core::ParseResvFlags(j.value("flags", "")));
    return s;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(e.what());
  }
}

Status GetStrings(const json& body, std::string_view key, std::vector<std::string>* out) {
  const json& v = body.at(std::string(key));
  if (v.is_string()) {
    out->clear();
    std::string s = v.get<std::string>();
    size_t pos = 0;
    while (pos <= s.size()) {
      size_t comma = s.find(',', pos);
      if (comma == std::string::npos) comma = s.size();
      if (comma > pos) out->push_back(s.substr(pos, comma - pos));
      pos = comma + 1;
    }
    return Status::Ok();
  }
  if (!v.is_array()) return api::KeyError(key, "must be a list of names");
  out->clear();
  for (const json& e : v) {
    if (!e.is_string()) return api::KeyError(key, "must be a list of names");
    out->push_back(e.get<std::string>());
  }
  return Status::Ok();
}

// Applies a create or update request's fields to `s`. `node_count` gets NodeCnt (0: none).
Status ApplyResvRequest(const json& body, bool create, core::ResvSpec* s, int32_t* node_count) {
  if (!body.is_object()) return Status::InvalidArgument("the request body must be a JSON object");
  static const char* const kKeys[] = {"name",  "start",    "end",       "duration", "nodes",
                                      "users", "accounts", "partition", "flags",    "node_count"};
  for (const auto& [key, v] : body.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      return api::KeyError(key, "is not a reservation field");
    }
  }
  if (create && body.contains("name"))
    BERTH_RETURN_IF_ERROR(api::GetString(body.at("name"), "name", &s->name));
  if (create && !body.contains("start")) {
    return Status::InvalidArgument("A start time must be specified.  No reservation created.");
  }
  if (create && !body.contains("end") && !body.contains("duration")) {
    return Status::InvalidArgument(
        "An end time or duration must be specified.  No reservation created.");
  }
  if (body.contains("start")) {
    Duration length = s->end >= kInfinite ? kInfinite : s->end - s->start;
    BERTH_RETURN_IF_ERROR(
        api::GetInt(body.at("start"), "start", 0, api::kMaxJsonNumber, &s->start));
    // A new start keeps the duration, as Slurm's update does.
    if (!create) s->end = length >= kInfinite ? kInfinite : s->start + length;
  }
  if (body.contains("end")) {
    if (body.at("end").is_null()) {
      s->end = kInfinite;
    } else {
      BERTH_RETURN_IF_ERROR(api::GetInt(body.at("end"), "end", 0, api::kMaxJsonNumber, &s->end));
    }
  }
  if (body.contains("duration")) {
    int64_t d = 0;
    BERTH_RETURN_IF_ERROR(
        api::GetInt(body.at("duration"), "duration", -1, api::kMaxJsonNumber, &d));
    s->end = d < 0 ? kInfinite : s->start + d;
  }
  if (body.contains("nodes")) {
    std::string expr;
    BERTH_RETURN_IF_ERROR(api::GetString(body.at("nodes"), "nodes", &expr));
    if (expr.empty()) {
      s->nodes.clear();
    } else if (expr == "ALL" || expr == "all") {
      s->nodes = {"ALL"};  // every node (of the partition): resolved against the cluster
    } else {
      Result<std::vector<std::string>> names = hostlist::Expand(expr);
      if (!names.ok()) return Status::InvalidArgument("Invalid node name specified");
      s->nodes = std::move(*names);
    }
    s->flags |= core::kResvSpecNodes;
  }
  if (body.contains("node_count")) {
    BERTH_RETURN_IF_ERROR(
        api::GetIntAs(body.at("node_count"), "node_count", 1, 1 << 20, node_count));
    if (!body.contains("nodes")) {
      s->nodes.clear();
      s->flags &= ~core::kResvSpecNodes;
    }
  }
  if (body.contains("users")) BERTH_RETURN_IF_ERROR(GetStrings(body, "users", &s->users));
  if (body.contains("accounts")) BERTH_RETURN_IF_ERROR(GetStrings(body, "accounts", &s->accounts));
  if (body.contains("partition")) {
    BERTH_RETURN_IF_ERROR(api::GetString(body.at("partition"), "partition", &s->partition));
  }
  if (body.contains("flags")) {
    std::string flags;
    BERTH_RETURN_IF_ERROR(api::GetString(body.at("flags"), "flags", &flags));
    BERTH_ASSIGN_OR_RETURN(uint32_t parsed, core::ParseResvFlags(flags));
    // SPEC_NODES says how the nodes were chosen, not what an operator sets.
    s->flags = (parsed & ~core::kResvSpecNodes) | (s->flags & core::kResvSpecNodes);
  }
  return Status::Ok();
}

}  // namespace

json Controller::Impl::ReservationJson(const core::ResvInfo& r, Time now) const {
  json j = EncodeResv(r.spec);
  int64_t cores = 0;
  const core::ClusterState& state = *cs;  // the lambda below runs here, on the state thread
  r.nodes.ForEach([&](size_t n) {
    cores += state.node(static_cast<uint32_t>(n)).spec.cpus;
    return true;
  });
  j["node_count"] = r.spec.nodes.size();
  j["core_count"] = cores;
  j["state"] = r.spec.ActiveAt(now) ? "ACTIVE" : "INACTIVE";
  return j;
}

json Controller::Impl::ReservationsView(const std::string& only) const {
  const Time now = Now();
  json list = json::array();
  for (const auto& [name, r] : cs->reservations()) {
    if (!only.empty() && name != only) continue;
    list.push_back(ReservationJson(r, now));
  }
  return {{"reservations", list}};
}

void Controller::Impl::WriteReservation(const std::string& name, Txn& t) {
  const std::string key = std::string(kResvPrefix) + name;
  if (const core::ResvInfo* r = cs->FindReservation(name)) {
    t.writes.push_back({store::Write::Kind::kPutMeta, {}, key, EncodeResv(r->spec).dump()});
  } else {
    t.writes.push_back({store::Write::Kind::kDeleteMeta, {}, key, ""});
  }
  t.nodes_changed = true;
  t.reschedule = true;
  dirty = true;
}

namespace {

// Nodes=ALL: every node of the reservation's partition, or of the cluster.
Status ResolveAllNodes(const core::ClusterState& cs, core::ResvSpec* s) {
  if (s->nodes.size() != 1 || s->nodes[0] != "ALL") return Status::Ok();
  std::optional<int16_t> p;
  if (!s->partition.empty()) {
    p = cs.FindPartition(s->partition);
    if (!p) return Status::InvalidArgument("Invalid partition name specified");
  }
  s->nodes.clear();
  for (uint32_t n = 0; n < cs.num_nodes(); ++n) {
    if (!p || cs.partitions()[*p].nodes.Test(n)) s->nodes.push_back(cs.node(n).spec.name);
  }
  return Status::Ok();
}

}  // namespace

Result<json> Controller::Impl::ChangeReservation(const Caller& who, const std::string& method,
                                                 const std::string& name, const json& body,
                                                 Txn& t) {
  if (!who.admin) return Status::PermissionDenied("Access/permission denied");
  const Time now = Now();
  if (method == "DELETE") {
    BERTH_RETURN_IF_ERROR(cs->DeleteReservation(name));
    WriteReservation(name, t);
    return json{{"name", name}};
  }
  int32_t node_count = 0;
  if (method == "POST") {
    core::ResvSpec s;
    BERTH_RETURN_IF_ERROR(ApplyResvRequest(body, true, &s, &node_count));
    BERTH_RETURN_IF_ERROR(ResolveAllNodes(*cs, &s));
    BERTH_ASSIGN_OR_RETURN(std::string created, cs->AddReservation(std::move(s), node_count, now));
    WriteReservation(created, t);
    return ReservationJson(*cs->FindReservation(created), now);
  }
  const core::ResvInfo* old = cs->FindReservation(name);
  if (old == nullptr) return Status::NotFound("Requested reservation is invalid");
  core::ResvSpec s = old->spec;
  BERTH_RETURN_IF_ERROR(ApplyResvRequest(body, false, &s, &node_count));
  BERTH_RETURN_IF_ERROR(ResolveAllNodes(*cs, &s));
  BERTH_RETURN_IF_ERROR(cs->UpdateReservation(std::move(s), node_count, now));
  WriteReservation(name, t);
  return ReservationJson(*cs->FindReservation(name), now);
}

net::HttpResponse Controller::Impl::ReservationsRoute(const ApiCall& c) {
  const std::string name = c.match.Param("name");
  const std::string method = c.req.method;
  if (method == "GET") {
    return CallResponse(
        [this, name](Txn&, Reply* out) {
          state_thread.AssertHeld();  // a command: on the state thread
          out->body = ReservationsView(name);
          if (!name.empty() && out->body["reservations"].empty()) {
            out->status = Status::NotFound("Reservation " + name + " not found");
          }
        },
        200);
  }
  json body = c.body.is_null() ? json::object() : c.body;
  const Caller who = c.who;
  return CallResponse(
      [this, who, method, name, body = std::move(body)](Txn& t, Reply* out) {
        state_thread.AssertHeld();  // a command: on the state thread
        Result<json> r = ChangeReservation(who, method, name, body, t);
        if (r.ok()) {
          out->body = std::move(*r);
        } else {
          out->status = r.status();
        }
      },
      method == "POST" ? 201 : 200);
}

void Controller::Impl::ReservationTick(Txn& t) {
  const Time now = Now();
  for (const std::string& name : cs->ExpireReservations(now)) WriteReservation(name, t);
  // Node states (maint, resv) follow the reservations that are active now.
  std::vector<std::string> active;
  for (const auto& [name, r] : cs->reservations()) {
    if (r.spec.ActiveAt(now)) active.push_back(name);
  }
  if (active != active_reservations) {
    active_reservations = std::move(active);
    t.nodes_changed = true;
  }
}

void Controller::Impl::RecoverReservations() {
  Status st = store->ScanMeta(
      std::string(kResvPrefix), [&](const std::string& key, const std::string& value) {
        state_thread.AssertHeld();  // the scan calls back on this thread
        Result<core::ResvSpec> s = DecodeStoredResv(value);
        Status rs = s.ok() ? cs->RestoreReservation(std::move(*s)) : s.status();
        if (!rs.ok()) {
          std::fprintf(stderr, "berth controller: skipping reservation record %s: %s\n",
                       key.c_str(), rs.message().c_str());
        }
      });
  if (!st.ok()) {
    std::fprintf(stderr, "berth controller: cannot read reservations: %s\n", st.message().c_str());
  }
}

// The reservation state of each node as sinfo shows it: MAINT or RESERVED while an active
// reservation holds it.
std::string Controller::Impl::NodeResvState(uint32_t node, Time now) const {
  std::string state;
  for (const auto& [name, r] : cs->reservations()) {
    if (!r.nodes.Test(node) || !r.spec.ActiveAt(now)) continue;
    if (r.spec.Has(core::kResvMaint)) return "MAINT";
    state = "RESERVED";
  }
  return state;
}

}  // namespace berth::controller
