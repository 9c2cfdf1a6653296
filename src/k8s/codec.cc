#include "k8s/codec.h"

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

// Splits at commas outside parentheses.
std::vector<std::string_view> SplitTerms(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      std::string_view term = Trim(text.substr(start, i - start));
      if (!term.empty()) out.push_back(term);
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return out;
}

bool ValidKey(std::string_view key) {
  if (key.empty() || key.size() > 316) return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

Status BadTerm(std::string_view what, std::string_view term) {
  return Status::InvalidArgument("unable to parse requirement: " + std::string(what) + " \"" +
                                 std::string(term) + "\"");
}

// "key in (a,b)" / "key notin (a,b)"; false when the term is not of that form.
bool ParseSetTerm(std::string_view term, Requirement* r) {
  for (auto [word, op] : {std::pair{std::string_view(" in "), Requirement::Op::kIn},
                          std::pair{std::string_view(" notin "), Requirement::Op::kNotIn}}) {
    size_t at = term.find(word);
    if (at == std::string_view::npos) continue;
    std::string_view rest = Trim(term.substr(at + word.size()));
    if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return false;
    r->key = std::string(Trim(term.substr(0, at)));
    r->op = op;
    rest = rest.substr(1, rest.size() - 2);
    size_t start = 0;
    for (size_t i = 0; i <= rest.size(); ++i) {
      if (i == rest.size() || rest[i] == ',') {
        r->values.emplace_back(Trim(rest.substr(start, i - start)));
        start = i + 1;
      }
    }
    return true;
  }
  return false;
}

// "a==b", "a=b", "a!=b"; false when the term has none of those.
bool ParseEqualityTerm(std::string_view term, Requirement* r) {
  size_t at = term.find("!=");
  size_t len = 2;
  r->op = Requirement::Op::kNotEquals;
  if (at == std::string_view::npos) {
    r->op = Requirement::Op::kEquals;
    at = term.find("==");
    if (at == std::string_view::npos) {
      at = term.find('=');
      len = 1;
    }
  }
  if (at == std::string_view::npos) return false;
  r->key = std::string(Trim(term.substr(0, at)));
  r->values = {std::string(Trim(term.substr(at + len)))};
  return true;
}

uint64_t Fnv1a(std::string_view data, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

json StatusBody(int code, std::string_view reason, const std::string& message,
                const json& details) {
  json s = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
            {"status", "Failure"}, {"message", message}, {"reason", std::string(reason)},
            {"code", code}};
  if (!details.is_null()) s["details"] = details;
  return s;
}

namespace {
json Details(const std::string& resource, const std::string& name) {
  size_t dot = resource.find('.');
  json d = {{"name", name}, {"kind", resource.substr(0, dot)}};
  if (dot != std::string::npos) d["group"] = resource.substr(dot + 1);
  return d;
}
}  // namespace

json NotFoundStatus(const std::string& resource, const std::string& name) {
  return StatusBody(404, "NotFound", resource + " \"" + name + "\" not found",
                    Details(resource, name));
}

json AlreadyExistsStatus(const std::string& resource, const std::string& name) {
  return StatusBody(409, "AlreadyExists", resource + " \"" + name + "\" already exists",
                    Details(resource, name));
}

json InvalidStatus(const std::string& kind, const std::string& name, const std::string& field,
                   const std::string& value, const std::string& detail) {
  std::string cause = "Invalid value: " + json(value).dump() + ": " + detail;
  json details = {
      {"name", name},
      {"kind", kind},
      {"causes",
       json::array({{{"reason", "FieldValueInvalid"}, {"message", cause}, {"field", field}}})}};
  return StatusBody(422, "Invalid", kind + " \"" + name + "\" is invalid: " + field + ": " + cause,
                    details);
}

json ForbiddenStatus(const std::string& resource, const std::string& name,
                     const std::string& detail) {
  std::string subject = name.empty() ? resource : resource + " \"" + name + "\"";
  return StatusBody(403, "Forbidden", subject + " is forbidden: " + detail,
                    Details(resource, name));
}

json UnauthorizedStatus() {
  return StatusBody(401, "Unauthorized", "Unauthorized", nullptr);
}

json SuccessStatus(const std::string& resource, const std::string& name, const std::string& uid) {
  json d = Details(resource, name);
  d["uid"] = uid;
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", json::object()},
          {"status", "Success"},
          {"details", d}};
}

std::string Rfc3339(int64_t unix_seconds) {
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<int64_t> ParseRfc3339(std::string_view s) {
  // Exactly YYYY-MM-DDTHH:MM:SS, an optional fraction, then Z (the only zone berth writes or
  // needs), each field in range.
  auto digits = [&](size_t at, size_t n) -> std::optional<int> {
    if (at + n > s.size()) return std::nullopt;
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  std::optional<int> year = digits(0, 4), mon = digits(5, 2), day = digits(8, 2),
                     hour = digits(11, 2), min = digits(14, 2), sec = digits(17, 2);
  if (!year || !mon || !day || !hour || !min || !sec || *mon < 1 || *mon > 12 || *day < 1 ||
      *day > 31 || *hour > 23 || *min > 59 || *sec > 60) {
    return std::nullopt;
  }
  size_t i = 19;
  if (s[i] == '.') {
    const size_t start = ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == start) return std::nullopt;
  }
  if (i + 1 != s.size() || (s[i] != 'Z' && s[i] != 'z')) return std::nullopt;
  struct tm tm {};
  tm.tm_year = *year - 1900;
  tm.tm_mon = *mon - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *min;
  tm.tm_sec = *sec;
  return static_cast<int64_t>(timegm(&tm));
}

std::string HumanDuration(int64_t s) {
  auto two = [](int64_t a, const char* ua, int64_t b, const char* ub) {
    return std::to_string(a) + ua + (b == 0 ? "" : std::to_string(b) + ub);
  };
  if (s < -1) return "<invalid>";
  if (s < 0) return "0s";
  if (s < 120) return std::to_string(s) + "s";
  int64_t minutes = s / 60;
  if (minutes < 10) return two(minutes, "m", s % 60, "s");
  if (minutes < 180) return std::to_string(minutes) + "m";
  int64_t hours = s / 3600;
  if (hours < 8) return two(hours, "h", minutes % 60, "m");
  if (hours < 48) return std::to_string(hours) + "h";
  int64_t days = hours / 24;
  if (hours < 24 * 8) return two(days, "d", hours % 24, "h");
  if (hours < 24 * 365 * 2) return std::to_string(days) + "d";
  if (hours < 24 * 365 * 8) return two(days / 365, "y", days % 365, "d");
  return std::to_string(days / 365) + "y";
}

std::string MemoryQuantity(int64_t mib) {
  if (mib > 0 && mib % 1024 == 0) return std::to_string(mib / 1024) + "Gi";
  return std::to_string(mib) + "Mi";
}

std::string StableUid(std::string_view kind, std::string_view name) {
  std::string key = std::string(kind) + "/" + std::string(name);
  uint64_t a = Fnv1a(key, 14695981039346656037ULL);
  uint64_t b = Fnv1a(key, 0x6c62272e07bb0142ULL);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-5%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                static_cast<unsigned>(((b >> 48) & 0x3fff) | 0x8000),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

bool AcceptsTable(std::string_view accept) {
  for (std::string_view item : SplitTerms(accept)) {
    if (item.find("as=Table") != std::string_view::npos &&
        item.find("g=meta.k8s.io") != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

std::string AggregatedDiscoveryVersion(std::string_view accept) {
  for (std::string_view item : SplitTerms(accept)) {
    if (item.find("g=apidiscovery.k8s.io") == std::string_view::npos ||
        item.find("as=APIGroupDiscoveryList") == std::string_view::npos) {
      continue;
    }
    // Parameters are ';'-separated; find v=.
    size_t start = 0;
    while (start <= item.size()) {
      size_t end = std::min(item.find(';', start), item.size());
      std::string_view param = Trim(item.substr(start, end - start));
      if (param == "v=v2") return "v2";
      if (param == "v=v2beta1") return "v2beta1";
      start = end + 1;
    }
  }
  return "";
}

std::optional<bool> ParseBool(std::string_view t) {
  if (t == "1" || t == "t" || t == "T" || t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "0" || t == "f" || t == "F" || t == "false" || t == "False" || t == "FALSE") {
    return false;
  }
  return std::nullopt;
}

Result<std::vector<Requirement>> ParseLabelSelector(std::string_view text) {
  std::vector<Requirement> out;
  for (std::string_view term : SplitTerms(text)) {
    Requirement r;
    if (ParseSetTerm(term, &r)) {
      if (!ValidKey(r.key)) return BadTerm("invalid label key", term);
    } else if (ParseEqualityTerm(term, &r)) {
      if (!ValidKey(r.key)) return BadTerm("invalid label key", term);
    } else if (term.front() == '!') {
      r.key = std::string(Trim(term.substr(1)));
      r.op = Requirement::Op::kNotExists;
      if (!ValidKey(r.key)) return BadTerm("invalid label key", term);
    } else {
      r.key = std::string(term);
      r.op = Requirement::Op::kExists;
      if (!ValidKey(r.key)) return BadTerm("invalid label key", term);
    }
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<Requirement>> ParseFieldSelector(std::string_view text) {
  std::vector<Requirement> out;
  for (std::string_view term : SplitTerms(text)) {
    Requirement r;
    if (!ParseEqualityTerm(term, &r) || r.key.empty()) {
      return Status::InvalidArgument("invalid selector: '" + std::string(text) +
                                     "'; can't understand '" + std::string(term) + "'");
    }
    out.push_back(std::move(r));
  }
  return out;
}

bool LabelsMatch(const std::vector<Requirement>& selector, const json& labels) {
  for (const Requirement& r : selector) {
    const bool has = labels.is_object() && labels.contains(r.key) && labels[r.key].is_string();
    const std::string value = has ? labels[r.key].get<std::string>() : "";
    bool in = false;
    for (const std::string& v : r.values) in = in || (has && v == value);
    switch (r.op) {
      case Requirement::Op::kEquals:
      case Requirement::Op::kIn:
        if (!in) return false;
        break;
      case Requirement::Op::kNotEquals:
      case Requirement::Op::kNotIn:
        if (in) return false;
        break;
      case Requirement::Op::kExists:
        if (!has) return false;
        break;
      case Requirement::Op::kNotExists:
        if (has) return false;
        break;
    }
  }
  return true;
}

bool FieldsMatch(const std::vector<Requirement>& selector,
                 const std::function<std::optional<std::string>(const std::string&)>& field) {
  for (const Requirement& r : selector) {
    std::optional<std::string> v = field(r.key);
    if (!v) return false;
    const bool equal = !r.values.empty() && *v == r.values.front();
    if ((r.op == Requirement::Op::kEquals) != equal) return false;
  }
  return true;
}

json TableColumn(const std::string& name, const std::string& type, const std::string& format,
                 const std::string& description, int priority) {
  return {{"name", name},
          {"type", type},
          {"format", format},
          {"description", description},
          {"priority", priority}};
}

json TableRow(json cells, const json& object) {
  json meta = object.value("metadata", json::object());
  return {{"cells", std::move(cells)},
          {"object",
           {{"kind", "PartialObjectMetadata"},
            {"apiVersion", "meta.k8s.io/v1"},
            {"metadata", std::move(meta)}}}};
}

json Table(json columns, json rows, const std::string& resource_version) {
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"columnDefinitions", std::move(columns)},
          {"rows", std::move(rows)}};
}

}  // namespace berth::k8s
