// The Kubernetes face's request machinery (face_http.h).
#include "k8s/face_http.h"

#include <pwd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <random>

#include "k8s/codec.h"
#include "k8s/jobs.h"
#include "k8s/objects.h"
#include "k8s/patch.h"
#include "k8s/pods.h"
#include "k8s/protobuf.h"
#include "k8s/status.h"

namespace berth::k8s::http {

net::HttpResponse JsonResponse(int status, const nlohmann::json& body, std::string content_type) {
  net::HttpResponse r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = body.dump();
  r.body += '\n';
  r.headers.emplace_back("Cache-Control", "no-cache, private");
  return r;
}

net::HttpResponse MethodNotAllowed() {
  return JsonResponse(405,
                      StatusBody(405, "MethodNotAllowed",
                                 "the server does not allow this method on the requested resource",
                                 nlohmann::json::object()));
}

using nlohmann::json;

std::string Query(const net::HttpRequest& req, const char* key) {
  auto it = req.query.find(key);
  return it == req.query.end() ? "" : it->second;
}

net::HttpResponse BadRequest(const std::string& message) {
  return JsonResponse(400, StatusBody(400, "BadRequest", message, nullptr));
}

Result<json> WorkloadCreateBody(const net::HttpRequest& req, const std::string& ns) {
  json body = json::parse(req.body, nullptr, false);
  if (req.Header("content-type").starts_with("application/vnd.kubernetes.protobuf")) {
    BERTH_ASSIGN_OR_RETURN(body, DecodeProtobufWorkload(req.body));  // kubectl create job|cronjob
  }
  if (!body.is_object()) return Status::InvalidArgument("the body is not a JSON object");
  if (body.contains("metadata") && body["metadata"].is_object() &&
      body["metadata"].contains("namespace") && body["metadata"]["namespace"] != ns) {
    return Status::InvalidArgument(
        "the namespace of the provided object does not match the namespace sent on the "
        "request");
  }
  return body;
}

net::HttpResponse MethodNotAllowedHere() {
  return JsonResponse(405, StatusBody(405, "MethodNotAllowed",
                                      "the server does not allow this method on the "
                                      "requested resource",
                                      nullptr));
}

net::HttpResponse NotFoundPath() {
  return JsonResponse(
      404, StatusBody(404, "NotFound", "the server could not find the requested resource",
                      json::object()));
}

net::HttpResponse PatchFailure(const Status& st) {
  const bool unsupported = IsUnsupportedPatchType(st);
  return JsonResponse(
      unsupported ? 415 : 422,
      StatusBody(unsupported ? 415 : 422, unsupported ? "UnsupportedMediaType" : "Invalid",
                 st.message(), nullptr));
}

const ResourceShape& NamespaceShape() {
  static const ResourceShape kShape{
      "namespaces",         "NamespaceList", "v1", NamespaceTableColumns(),
      &NamespaceTableCells, &MetadataField};
  return kShape;
}

const ResourceShape& NodeShape() {
  static const ResourceShape kShape{"nodes",         "NodeList",    "v1", NodeTableColumns(),
                                    &NodeTableCells, &MetadataField};
  return kShape;
}

const ResourceShape& PodShape() {
  static const ResourceShape kShape{"pods",         "PodList", "v1", PodTableColumns(),
                                    &PodTableCells, &PodField};
  return kShape;
}

const ResourceShape& EventShape() {
  static const ResourceShape kShape{"events",         "EventList", "v1", EventTableColumns(),
                                    &EventTableCells, &EventField};
  return kShape;
}

const ResourceShape& JobShape() {
  static const ResourceShape kShape{"jobs",         "JobList", "batch/v1", JobTableColumns(),
                                    &JobTableCells, &JobField};
  return kShape;
}

std::string SelectedField(const net::HttpRequest& req, const ResourceShape& shape,
                          std::string_view key) {
  std::string value;
  if (Result<Selectors> s = ParseSelectors(req, shape); s.ok()) {
    for (const Requirement& r : s->fields) {
      if (r.key == key && r.op == Requirement::Op::kEquals && r.values.size() == 1) {
        value = r.values[0];
      }
    }
  }
  return value;
}

std::optional<std::string> MetadataField(const json& object, const std::string& field) {
  const json& meta = object["metadata"];
  if (field == "metadata.name") return meta.value("name", "");
  if (field == "metadata.namespace") return meta.value("namespace", "");
  return std::nullopt;
}

Result<Selectors> ParseSelectors(const net::HttpRequest& req, const ResourceShape& shape) {
  Selectors s;
  BERTH_ASSIGN_OR_RETURN(s.labels, ParseLabelSelector(Query(req, "labelSelector")));
  BERTH_ASSIGN_OR_RETURN(s.fields, ParseFieldSelector(Query(req, "fieldSelector")));
  const json probe = {{"metadata", json::object()}};
  for (const Requirement& r : s.fields) {
    if (!shape.field(probe, r.key)) {
      return Status::InvalidArgument("field label not supported: " + r.key);
    }
  }
  return s;
}

bool Matches(const Selectors& s, const ResourceShape& shape, const json& object) {
  const json& meta = object["metadata"];
  return LabelsMatch(s.labels, meta.value("labels", json::object())) &&
         FieldsMatch(s.fields, [&](const std::string& key) -> std::optional<std::string> {
           return shape.field(object, key);
         });
}

std::optional<net::HttpResponse> Select(const net::HttpRequest& req, const ResourceShape& shape,
                                        Objects* objects) {
  Result<Selectors> s = ParseSelectors(req, shape);
  if (!s.ok()) return BadRequest(s.status().message());
  for (auto it = objects->begin(); it != objects->end();) {
    it = Matches(*s, shape, it->second) ? std::next(it) : objects->erase(it);
  }
  return std::nullopt;
}

json TableOf(const ResourceShape& shape, const std::vector<const json*>& objects,
             const std::string& rv, int64_t now) {
  json rows = json::array();
  for (const json* o : objects) rows.push_back(TableRow(shape.cells(*o, now), *o));
  return Table(shape.columns, std::move(rows), rv);
}

net::HttpResponse ListResponse(const net::HttpRequest& req, const ResourceShape& shape,
                               const Objects& objects, const std::string& rv, int64_t now) {
  std::vector<const json*> all;
  for (const auto& [name, o] : objects) all.push_back(&o);
  if (AcceptsTable(req.Header("accept"))) {
    return JsonResponse(200, TableOf(shape, all, rv, now), std::string(kTableContentType));
  }
  json items = json::array();
  for (const json* o : all) items.push_back(*o);
  return JsonResponse(200, {{"kind", shape.list_kind},
                            {"apiVersion", shape.api_version},
                            {"metadata", {{"resourceVersion", rv}}},
                            {"items", std::move(items)}});
}

net::HttpResponse ObjectResponse(const net::HttpRequest& req, const ResourceShape& shape,
                                 const json& object, int status, int64_t now) {
  if (AcceptsTable(req.Header("accept"))) {
    std::string rv = object["metadata"].value("resourceVersion", "");
    return JsonResponse(status, TableOf(shape, {&object}, rv, now), std::string(kTableContentType));
  }
  return JsonResponse(status, object);
}

namespace {

// What a watch compares to decide that an object changed: everything but the resourceVersion and
// heartbeat times.
std::string Comparable(json object) {
  object["metadata"].erase("resourceVersion");
  if (object.contains("status") && object["status"].contains("conditions")) {
    for (json& c : object["status"]["conditions"]) c.erase("lastHeartbeatTime");
  }
  return object.dump();
}

// An object's metadata.resourceVersion as a number (0 when it has none).
uint64_t ObjectVersion(const json& object) {
  const std::string v = object["metadata"].value("resourceVersion", "");
  uint64_t n = 0;
  std::from_chars(v.data(), v.data() + v.size(), n);
  return n;
}

}  // namespace

int64_t NextBookmarkMs(int64_t start_ms, int64_t after_ms, int64_t deadline_ms) {
  const int64_t periodic =
      start_ms + ((after_ms - start_ms) / kBookmarkEveryMs + 1) * kBookmarkEveryMs;
  int64_t next = periodic;
  if (deadline_ms > 0) {
    const int64_t last_call = deadline_ms - kBookmarkBeforeDeadlineMs;
    if (last_call > after_ms && last_call < next) next = last_call;
    if (next >= deadline_ms) return INT64_MAX;
  }
  return next;
}

Result<WatchOptions> ParseWatchOptions(const net::HttpRequest& req) {
  WatchOptions o;
  if (std::string t = Query(req, "timeoutSeconds"); !t.empty()) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size()) {
      return Status::InvalidArgument("invalid value for timeoutSeconds: \"" + t +
                                     "\": must be an integer");
    }
    o.timeout_s = std::max<int64_t>(0, v);
  }
  for (const char* key : {"allowWatchBookmarks", "sendInitialEvents"}) {
    std::string t = Query(req, key);
    if (t.empty()) continue;
    std::optional<bool> v = ParseBool(t);
    if (!v) {
      return Status::InvalidArgument(std::string("invalid value for ") + key + ": \"" + t +
                                     "\": must be a boolean");
    }
    (std::string_view(key) == "allowWatchBookmarks" ? o.bookmarks : o.send_initial_events) = *v;
  }
  return o;
}

json BookmarkObject(const ResourceShape& shape, const std::string& rv, bool initial_events_end) {
  std::string kind = shape.list_kind.substr(0, shape.list_kind.size() - 4);  // "PodList" -> "Pod"
  json meta = {{"resourceVersion", rv}, {"creationTimestamp", nullptr}};
  if (initial_events_end) meta["annotations"] = {{"k8s.io/initial-events-end", "true"}};
  return {{"kind", kind}, {"apiVersion", shape.api_version}, {"metadata", std::move(meta)}};
}

net::HttpResponse WatchResponse(const net::HttpRequest& req, const ResourceShape& shape,
                                ControllerPort& port,
                                std::function<Objects(std::string* rv)> snapshot) {
  const std::string from = Query(req, "resourceVersion");
  Result<WatchOptions> options = ParseWatchOptions(req);
  if (!options.ok()) return BadRequest(options.status().message());
  // sendInitialEvents=true asks for every object first (as ADDED), whatever resourceVersion.
  const bool initial = from.empty() || from == "0" || options->send_initial_events;
  // A watch that resumes from a list's resourceVersion must also deliver what changed between
  // that list and its first snapshot: the objects whose own resourceVersion is newer.
  uint64_t resumed_from = 0;
  if (!from.empty()) {
    auto [end, ec] = std::from_chars(from.data(), from.data() + from.size(), resumed_from);
    if (ec != std::errc() || end != from.data() + from.size()) {
      return JsonResponse(
          400, StatusBody(400, "BadRequest", "invalid resourceVersion \"" + from + "\"", nullptr));
    }
  }
  const bool table = AcceptsTable(req.Header("accept"));
  Result<Selectors> selectors = ParseSelectors(req, shape);
  if (!selectors.ok()) return BadRequest(selectors.status().message());
  net::HttpResponse r;
  r.content_type = table ? std::string(kTableContentType) : "application/json";
  r.stream = [=, &port, sel = *selectors, opts = *options](net::ResponseStream& out) {
    using Clock = std::chrono::steady_clock;
    auto ms_since = [start = Clock::now()] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    };
    const int64_t deadline_ms = opts.timeout_s * 1000;  // 0: none
    int64_t next_bookmark_ms = opts.bookmarks ? NextBookmarkMs(0, 0, deadline_ms) : INT64_MAX;
    uint64_t next = port.WatchNext();
    // key -> (Comparable(), the object as last sent)
    std::map<std::string, std::pair<std::string, json>> seen;
    auto send = [&](const char* type, const json& object) {
      json e = {
          {"type", type},
          {"object", table ? TableOf(shape, {&object},
                                     object["metadata"].value("resourceVersion", ""), port.Now())
                           : object}};
      return out.Write(e.dump() + "\n");
    };
    auto bookmark = [&](const std::string& rv, bool initial_events_end) {
      json object = BookmarkObject(shape, rv, initial_events_end);
      if (table) object = Table(shape.columns, json::array(), rv);
      return out.Write(json{{"type", "BOOKMARK"}, {"object", std::move(object)}}.dump() + "\n");
    };
    bool first = true;
    while (!out.Closed()) {
      std::string rv;
      Objects objects = snapshot(&rv);
      for (auto it = objects.begin(); it != objects.end();) {
        it = Matches(sel, shape, it->second) ? std::next(it) : objects.erase(it);
      }
      for (const auto& [key, o] : objects) {
        std::string c = Comparable(o);
        auto it = seen.find(key);
        if (it == seen.end()) {
          seen[key] = {c, o};
          if (!first || initial) {
            if (!send("ADDED", o)) return;
          } else if (ObjectVersion(o) > resumed_from && !send("MODIFIED", o)) {
            return;
          }
        } else if (it->second.first != c) {
          it->second = {c, o};
          if (!send("MODIFIED", o)) return;
        }
      }
      for (auto it = seen.begin(); it != seen.end();) {
        if (objects.count(it->first)) {
          ++it;
          continue;
        }
        json gone = it->second.second;
        gone["metadata"]["resourceVersion"] = rv;
        if (!send("DELETED", gone)) return;
        it = seen.erase(it);
      }
      // The end of the initial events, as the API server marks it for a watch list.
      if (first && opts.send_initial_events && opts.bookmarks && !bookmark(rv, true)) return;
      first = false;
      int64_t now_ms = ms_since();
      if (now_ms >= next_bookmark_ms) {
        if (!bookmark(rv, false)) return;
        next_bookmark_ms = NextBookmarkMs(0, now_ms, deadline_ms);
      }
      if (deadline_ms > 0 && now_ms >= deadline_ms) return;  // the stream ends cleanly
      int64_t wait_ms = 1000;
      if (deadline_ms > 0) wait_ms = std::min(wait_ms, deadline_ms - now_ms);
      if (next_bookmark_ms != INT64_MAX) wait_ms = std::min(wait_ms, next_bookmark_ms - now_ms);
      next = port.WatchWait(next, static_cast<int>(std::max<int64_t>(1, wait_ms)));
    }
  };
  return r;
}

bool IsWatch(const net::HttpRequest& req) {
  return ParseBool(Query(req, "watch")).value_or(false);
}

net::HttpResponse ListOrWatch(const net::HttpRequest& req, const ResourceShape& shape,
                              ControllerPort& port,
                              std::function<Objects(std::string* rv)> snapshot) {
  if (IsWatch(req)) return WatchResponse(req, shape, port, std::move(snapshot));
  std::string rv;
  Objects objects = snapshot(&rv);
  if (auto bad = Select(req, shape, &objects)) return *bad;
  return ListResponse(req, shape, objects, rv, port.Now());
}

std::optional<net::HttpResponse> UnavailableResponse(const Status& st) {
  if (st.code() != StatusCode::kUnavailable) return std::nullopt;
  return StatusResponse(StatusOf(st));
}

net::HttpResponse StatusResponse(const json& status) {
  return JsonResponse(status.value("code", 500), status);
}

std::string ObjectKey(const std::string& ns, const std::string& name) {
  return ns + "/" + name;
}

std::string GenerateNameSuffix() {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string s;
  for (int i = 0; i < 5; ++i) s += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return s;
}

std::string HomeOf(uint32_t uid) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found && found->pw_dir) {
    return found->pw_dir;
  }
  return "/";
}

uint32_t PodJobId(const nlohmann::json& pod) {
  return static_cast<uint32_t>(std::stoul(pod["metadata"]["labels"].value("berth.io/job-id", "0")));
}

std::string ContainerName(const nlohmann::json& pod) {
  const nlohmann::json& cs = pod["spec"]["containers"];
  if (cs.is_array() && !cs.empty()) return cs[0].value("name", "main");
  return "main";
}

bool Owns(const User& who, uint32_t owner_uid) {
  return who.admin || (who.known && owner_uid == who.uid);
}

}  // namespace berth::k8s::http
