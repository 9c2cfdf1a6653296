#include "slurm/reservation.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "common/hostlist.h"
#include "common/slurm_time.h"
#include "common/strings.h"
#include "slurm/job_view.h"

namespace berth::slurm {
namespace {

using nlohmann::json;

// Slurm reads Duration=UNLIMITED (and an end of INFINITE) as a year from the start.
constexpr Duration kYear = 365 * 86400;

// Whether `key` is `name` or an abbreviation of it of at least `min` letters (case-insensitive).
bool KeyIs(const std::string& key, std::string_view name, size_t min) {
  if (key.size() < min || key.size() > name.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    if (ToLowerAscii(key[i]) != ToLowerAscii(name[i])) return false;
  }
  return true;
}

Result<Time> ParseWhen(const std::string& key, const std::string& value, Time now,
                       const config::UtcOffset& zone) {
  int pos = 0;
  Result<Time> t = config::ParseSlurmDateTime(value, now, zone, &pos);
  if (!t.ok()) return Status::InvalidArgument("Invalid " + key + " specification: " + value);
  return *t;
}

json Names(const std::string& value) {
  json out = json::array();
  for (std::string& s : SplitNonEmpty(value)) out.push_back(std::move(s));
  return out;
}

std::string Text(const json& r, const char* key) {
  if (!r.contains(key) || !r.at(key).is_string()) return "";
  return r.at(key).get<std::string>();
}

std::string List(const json& r, const char* key) {
  std::string out;
  if (!r.contains(key) || !r.at(key).is_array()) return out;
  for (const json& v : r.at(key)) {
    if (!out.empty()) out += ',';
    out += v.get<std::string>();
  }
  return out;
}

Time EndOf(const json& r) {
  const json& e = r.value("end", json());
  return e.is_number() ? e.get<Time>() : r.value("start", Time{0}) + kYear;
}

std::string NodesText(const json& r) {
  std::vector<std::string> names = r.value("nodes", std::vector<std::string>{});
  return names.empty() ? "" : hostlist::Compress(names);
}

}  // namespace

Result<ReservationRequest> ParseReservationWords(const std::vector<std::string>& words, bool create,
                                                 Time now, const config::UtcOffset& zone) {
  ReservationRequest out;
  out.body = json::object();
  std::string start_text, end_text, duration_text;
  for (const std::string& w : words) {
    size_t eq = w.find('=');
    if (eq == std::string::npos) {
      return Status::InvalidArgument("Unknown parameter " + w + ".  Request aborted");
    }
    std::string key = w.substr(0, eq);
    std::string value = w.substr(eq + 1);
    if (KeyIs(key, "ReservationName", 3)) {
      out.name = value;
    } else if (KeyIs(key, "StartTime", 1)) {
      start_text = value;
    } else if (KeyIs(key, "EndTime", 1)) {
      end_text = value;
    } else if (KeyIs(key, "Duration", 3)) {
      duration_text = value;
    } else if (KeyIs(key, "Nodes", 5)) {
      out.body["nodes"] = ToLower(value) == "all" ? "ALL" : value;
    } else if (KeyIs(key, "NodeCnt", 5)) {
      int64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n < 1) {
        return Status::InvalidArgument("Invalid node count " + value);
      }
      out.body["node_count"] = n;
    } else if (KeyIs(key, "Users", 1)) {
      out.body["users"] = Names(value);
    } else if (KeyIs(key, "Accounts", 1)) {
      out.body["accounts"] = Names(value);
    } else if (KeyIs(key, "Flags", 2)) {
      out.body["flags"] = value;
    } else if (KeyIs(key, "PartitionName", 9)) {
      out.body["partition"] = value;
    } else {
      return Status::InvalidArgument("Unknown parameter " + w + ".  Request aborted");
    }
  }
  if (create && out.name.empty()) {
    // The controller names it (USER_N) as Slurm's slurmctld does.
  } else if (!create && out.name.empty()) {
    return Status::InvalidArgument("Reservation must be given.  No reservation update.");
  }
  if (create) out.body["name"] = out.name;
  if (!start_text.empty()) {
    BERTH_ASSIGN_OR_RETURN(Time start, ParseWhen("StartTime", start_text, now, zone));
    out.body["start"] = start;
  }
  if (!end_text.empty()) {
    if (ToLower(end_text) == "infinite" || ToLower(end_text) == "unlimited") {
      out.body["duration"] = kYear;
    } else {
      BERTH_ASSIGN_OR_RETURN(Time end, ParseWhen("EndTime", end_text, now, zone));
      out.body["end"] = end;
    }
  }
  if (!duration_text.empty()) {
    Result<Duration> d = ParseTimeLimit(duration_text);
    if (!d.ok()) return Status::InvalidArgument("Invalid duration " + duration_text);
    out.body["duration"] = *d >= kInfinite ? kYear : *d;
  }
  if (create) {
    if (!out.body.contains("start")) {
      return Status::InvalidArgument("A start time must be specified.  No reservation created.");
    }
    if (!out.body.contains("end") && !out.body.contains("duration")) {
      return Status::InvalidArgument(
          "An end time or duration must be specified.  No reservation created.");
    }
    if (!out.body.contains("nodes") && !out.body.contains("node_count")) {
      return Status::InvalidArgument(
          "Nodes, NodeCnt, CoreCnt, TRES or Watts must be specified.  No reservation created.");
    }
    if (!out.body.contains("users") && !out.body.contains("accounts")) {
      return Status::InvalidArgument(
          "Either Users/Groups and/or Accounts must be specified.  No reservation created.");
    }
  }
  return out;
}

std::string FormatScontrolReservation(const json& r, bool one_liner) {
  const std::string sep = one_liner ? " " : "\n   ";
  auto or_null = [](const std::string& s) { return s.empty() ? std::string("(null)") : s; };
  Time start = r.value("start", Time{0});
  Time end = EndOf(r);
  std::string out;
  out += "ReservationName=" + Text(r, "name") + " StartTime=" + SlurmTimeText(start) +
         " EndTime=" + SlurmTimeText(end) + " Duration=" + FormatTimeLimit(end - start) + sep;
  out += "Nodes=" + or_null(NodesText(r)) + " NodeCnt=" + std::to_string(r.value("node_count", 0)) +
         " CoreCnt=" + std::to_string(r.value("core_count", 0)) +
         " Features=(null) PartitionName=" + or_null(Text(r, "partition")) +
         " Flags=" + Text(r, "flags") + sep;
  out += "TRES=cpu=" + std::to_string(r.value("core_count", 0)) + sep;
  out += "Users=" + or_null(List(r, "users")) +
         " Groups=(null) Accounts=" + or_null(List(r, "accounts")) +
         " Licenses=(null) State=" + Text(r, "state") + " BurstBuffer=(null) Watts=n/a" + sep;
  out += "MaxStartDelay=(null)";
  out += one_liner ? "\n" : "\n\n";
  return out;
}

std::string FormatSinfoReservations(const json& list, bool no_header) {
  // The name column is as wide as the longest name (at least the header's), as sinfo prints it.
  int width = 9;
  for (const json& r : list) width = std::max<int>(width, static_cast<int>(Text(r, "name").size()));
  std::string out;
  char line[1024];
  if (!no_header) {
    std::snprintf(line, sizeof line, "%-*s  %8s  %19s  %19s  %11s  %s\n", width, "RESV_NAME",
                  "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST");
    out += line;
  }
  for (const json& r : list) {
    Time start = r.value("start", Time{0});
    Time end = EndOf(r);
    std::snprintf(line, sizeof line, "%-*s  %8s  %19s  %19s  %11s  %s\n", width,
                  Text(r, "name").c_str(), Text(r, "state").c_str(), SlurmTimeText(start).c_str(),
                  SlurmTimeText(end).c_str(), FormatTimeLimit(end - start).c_str(),
                  NodesText(r).c_str());
    out += line;
  }
  return out;
}

}  // namespace berth::slurm
