// Follows Slurm 22.05 slurmctld/job_scheduler.c (update_job_dependency,
// _parse_dependency_jobid_new/_old, _xlate_array_dep, _depend_list2str). Where Slurm accepts
// text by accident, berth rejects it with a message instead:
//  * trailing text after a "+MIN" or a job id (Slurm stops parsing and ignores the rest),
//  * "123,afterok:4"-style mixes that Slurm also rejects, and ',' mixed with '?' (Slurm quietly
//    makes the whole list OR),
//  * state annotations "(unfulfilled)" and blanks, signs or empty numbers in ids.
// A "+MIN" belongs to the id it follows. (Slurm 22.05 carries it on to the later ids of the same
// type: "after:1+5:2" delays job 2 as well.)
#include "core/model/dependency.h"

#include <algorithm>
#include <array>
#include <set>
#include <tuple>

#include "common/strings.h"

namespace berth::core {
namespace {

constexpr int64_t kMaxDelayMinutes = 35791394;  // Slurm multiplies minutes by 60 in an int
constexpr int64_t kMaxArrayTask = 4000000;      // Slurm's largest MaxArraySize is 4000001
// The most array tasks one dependency may name in `_[...]` lists (each becomes an entry of its
// own): a bound on what one submission makes the controller hold. A whole array is `JOB`.
constexpr int64_t kMaxListedTasks = 100000;

std::string Quote(std::string_view s) {
  return "'" + std::string(s) + "'";
}

constexpr std::array<std::pair<std::string_view, DependencyType>, 6> kTypes = {{
    {"after", DependencyType::kAfter},
    {"afterany", DependencyType::kAfterAny},
    {"afterok", DependencyType::kAfterOk},
    {"afternotok", DependencyType::kAfterNotOk},
    {"aftercorr", DependencyType::kAfterCorr},
    {"singleton", DependencyType::kSingleton},
}};

// A task number in an array list: up to 7 digits, or -1.
int64_t TaskNumber(std::string_view s) {
  if (s.empty() || s.size() > 7 || !std::all_of(s.begin(), s.end(), IsDigit)) return -1;
  int64_t v = 0;
  for (char d : s) v = v * 10 + (d - '0');
  return v;
}

// How many tasks a list such as "1-3,5" names, counted without expanding it (0 when malformed;
// overlaps count twice: this is a bound, not the answer).
int64_t ListedTasks(std::string_view list) {
  int64_t n = 0;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string_view item = list.substr(start, comma - start);
    size_t dash = item.find('-');
    int64_t lo = TaskNumber(item.substr(0, dash));
    int64_t hi = dash == std::string_view::npos ? lo : TaskNumber(item.substr(dash + 1));
    if (lo >= 0 && hi >= lo) n += hi - lo + 1;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return n;
}

// "1-3,5" -> {1, 2, 3, 5} (Slurm's bit_unfmt()); false when malformed or empty.
bool ParseTaskList(std::string_view list, std::set<int64_t>* tasks) {
  if (list.empty()) return false;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string_view item = list.substr(start, comma - start);
    size_t dash = item.find('-');
    int64_t lo = TaskNumber(item.substr(0, dash));
    int64_t hi = dash == std::string_view::npos ? lo : TaskNumber(item.substr(dash + 1));
    if (lo < 0 || hi < lo || hi > kMaxArrayTask) return false;
    for (int64_t t = lo; t <= hi; ++t) tasks->insert(t);
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
}

// Slurm's _xlate_array_dep(): "afterok:123_[1-2,5]" -> "afterok:123_1:123_2:123_5".
Result<std::string> ExpandArrayLists(std::string_view text) {
  std::string out;
  int64_t listed = 0;                         // tasks named so far, over every list
  size_t run_start = std::string_view::npos;  // start of the current run of digits
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool array_list = c == '_' && i + 1 < text.size() && text[i + 1] == '[' &&
                      run_start != std::string_view::npos;
    if (!array_list) {
      out += c;
      if (!IsDigit(c)) run_start = std::string_view::npos;
      if (IsDigit(c) && run_start == std::string_view::npos) run_start = i;
      continue;
    }
    std::string_view job = text.substr(run_start, i - run_start);
    size_t close = text.find(']', i);
    std::string_view list =
        text.substr(i + 2, close == std::string_view::npos ? close : close - i - 2);
    std::set<int64_t> tasks;
    if (close != std::string_view::npos && (listed += ListedTasks(list)) > kMaxListedTasks) {
      return Status::InvalidArgument("dependency " + Quote(text) + " names more than " +
                                     std::to_string(kMaxListedTasks) +
                                     " array tasks; to wait for a whole array, name its job id");
    }
    if (close == std::string_view::npos || !ParseTaskList(list, &tasks)) {
      return Status::InvalidArgument("bad array task list '_[" + std::string(list) +
                                     (close == std::string_view::npos ? "" : "]") +
                                     "' in dependency " + Quote(text));
    }
    out += '_';
    bool first = true;
    for (int64_t t : tasks) {
      if (!first) out += ":" + std::string(job) + "_";
      out += std::to_string(t);
      first = false;
    }
    i = close;
    run_start = std::string_view::npos;
  }
  return out;
}

class Parser {
 public:
  Parser(std::string_view original, std::string_view text) : original_(original), s_(text) {}

  Result<Dependency> Run() {
    while (true) {
      BERTH_RETURN_IF_ERROR(ParseElement());
      if (pos_ == s_.size()) break;
      char sep = s_[pos_++];  // ParseElement stops only at ',', '?' or the end
      (sep == ',' ? saw_comma_ : saw_question_) = true;
      if (saw_comma_ && saw_question_) {
        return Error("',' (all) and '?' (any) cannot be mixed");
      }
      if (pos_ == s_.size()) return Error("nothing after the last '" + std::string(1, sep) + "'");
    }
    dep_.any = saw_question_;
    return dep_;
  }

 private:
  Status Error(const std::string& why) const {
    return Status::InvalidArgument("invalid dependency " + Quote(original_) + ": " + why);
  }

  bool AtSeparatorOrEnd() const { return pos_ == s_.size() || s_[pos_] == ',' || s_[pos_] == '?'; }

  // What follows an id: ':' (more ids), ',' or '?' (next condition), or the end.
  Status CheckAfterId(bool more_ids_allowed) const {
    if (AtSeparatorOrEnd() || (more_ids_allowed && s_[pos_] == ':')) return Status::Ok();
    if (s_[pos_] == '(') return Error("state annotations like '(unfulfilled)' are not accepted");
    return Error("unexpected " + Quote(s_.substr(pos_)) + " after a job id");
  }

  Status ParseElement() {
    std::string_view rest = s_.substr(pos_);
    if (rest.size() >= 9 && EqualsIgnoreCase(rest.substr(0, 9), "singleton")) {
      pos_ += 9;
      if (!AtSeparatorOrEnd()) return Error("unexpected " + Quote(s_.substr(pos_)));
      dep_.conditions.push_back({DependencyType::kSingleton, {}});
      return Status::Ok();
    }
    size_t colon = rest.find(':');
    if (!rest.empty() && IsDigit(rest[0])) {
      if (colon != std::string_view::npos) {  // Slurm rejects this as well
        return Error(
            "a plain job id (old format) cannot come before 'type:id' dependencies; "
            "write afterany:ID");
      }
      return ParseOldStyle();
    }
    if (rest.empty() || rest[0] == ',' || rest[0] == '?') return Error("empty condition");
    std::string_view type = rest.substr(0, colon);
    size_t end = type.find_first_of(",?");
    if (end != std::string_view::npos) type = type.substr(0, end);
    BERTH_ASSIGN_OR_RETURN(DependencyType t, ParseType(type, colon == std::string_view::npos ||
                                                                 end != std::string_view::npos));
    pos_ += colon + 1;
    return ParseTargets(t);
  }

  // "123" or "123_4": one afterany target per id, joined by ','.
  Status ParseOldStyle() {
    BERTH_ASSIGN_OR_RETURN(DependencyTarget target, ParseJobId());
    BERTH_RETURN_IF_ERROR(CheckAfterId(/*more_ids_allowed=*/false));
    if (pos_ < s_.size() && s_[pos_] == '?') {
      return Error("plain job ids (old format) can only be joined with ','");
    }
    dep_.conditions.push_back({DependencyType::kAfterAny, {target}});
    return Status::Ok();
  }

  Result<DependencyType> ParseType(std::string_view type, bool missing_ids) const {
    for (const auto& [name, t] : kTypes) {
      if (t != DependencyType::kSingleton && EqualsIgnoreCase(type, name)) {
        if (missing_ids) return Error("dependency type " + Quote(type) + " needs job ids");
        return t;
      }
    }
    if (EqualsIgnoreCase(type, "afterburstbuffer") || EqualsIgnoreCase(type, "expand")) {
      return Status::InvalidArgument("dependency type " + Quote(type) + " in " + Quote(original_) +
                                     " is not supported by berth");
    }
    return Status::InvalidArgument("invalid dependency type " + Quote(type) + " in " +
                                   Quote(original_));
  }

  Status ParseTargets(DependencyType type) {
    DependencyCondition cond{type, {}};
    while (true) {
      BERTH_ASSIGN_OR_RETURN(DependencyTarget target, ParseJobId());
      if (pos_ < s_.size() && s_[pos_] == '+') {
        ++pos_;
        BERTH_ASSIGN_OR_RETURN(int64_t minutes, ParseNumber(9, "delay in minutes"));
        if (minutes <= 0 || minutes > kMaxDelayMinutes) {
          return Error("delay +" + std::to_string(minutes) + " must be 1 to " +
                       std::to_string(kMaxDelayMinutes) + " minutes");
        }
        target.delay = minutes * 60;
      }
      BERTH_RETURN_IF_ERROR(CheckAfterId(/*more_ids_allowed=*/true));
      cond.targets.push_back(target);
      if (pos_ == s_.size() || s_[pos_] != ':') break;
      ++pos_;
    }
    dep_.conditions.push_back(std::move(cond));
    return Status::Ok();
  }

  Result<int64_t> ParseNumber(size_t max_digits, std::string_view what) {
    size_t start = pos_;
    while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    if (pos_ == start || pos_ - start > max_digits) {
      size_t end = s_.find_first_of(":,?+", start);
      std::string_view bad = s_.substr(start, end == std::string_view::npos ? end : end - start);
      return Status::InvalidArgument("invalid " + std::string(what) + " " + Quote(bad) +
                                     " in dependency " + Quote(original_));
    }
    int64_t v = 0;
    for (size_t i = start; i < pos_; ++i) v = v * 10 + (s_[i] - '0');
    return v;
  }

  // "123", "123_4" or "123_*".
  Result<DependencyTarget> ParseJobId() {
    DependencyTarget target;
    BERTH_ASSIGN_OR_RETURN(int64_t id, ParseNumber(10, "job id"));
    if (id == 0 || id > UINT32_MAX) return Error("job id " + std::to_string(id) + " is invalid");
    target.job_id = static_cast<uint32_t>(id);
    if (pos_ < s_.size() && s_[pos_] == '_') {
      ++pos_;
      if (pos_ < s_.size() && s_[pos_] == '*') {
        ++pos_;
      } else {
        BERTH_ASSIGN_OR_RETURN(int64_t task, ParseNumber(7, "array task id"));
        if (task > kMaxArrayTask) {
          return Error("array task id " + std::to_string(task) + " is too large");
        }
        target.array_task = static_cast<int32_t>(task);
      }
    }
    return target;
  }

  std::string_view original_;
  std::string_view s_;
  size_t pos_ = 0;
  bool saw_comma_ = false;
  bool saw_question_ = false;
  Dependency dep_;
};

std::string TargetText(const DependencyTarget& t, bool whole_array_star) {
  std::string s = std::to_string(t.job_id);
  if (t.array_task != kAllArrayTasks) {
    s += "_" + std::to_string(t.array_task);
  } else if (whole_array_star) {
    s += "_*";
  }
  if (t.delay > 0) s += "+" + std::to_string((t.delay + 59) / 60);
  return s;
}

}  // namespace

std::string_view DependencyTypeName(DependencyType t) {
  for (const auto& [name, type] : kTypes) {
    if (type == t) return name;
  }
  return "unknown";
}

Result<Dependency> ParseDependency(std::string_view text) {
  if (text.empty() || text == "0") return Dependency{};  // Slurm: clears the dependency
  BERTH_ASSIGN_OR_RETURN(std::string expanded, ExpandArrayLists(text));
  return Parser(text, expanded).Run();
}

std::string FormatDependency(const Dependency& d) {
  std::string out;
  for (const DependencyCondition& c : d.conditions) {
    if (!out.empty()) out += d.any ? "?" : ",";
    out += DependencyTypeName(c.type);
    if (c.type == DependencyType::kSingleton) continue;
    for (size_t i = 0; i < c.targets.size(); ++i) {
      out += ":" + TargetText(c.targets[i], /*whole_array_star=*/false);
    }
  }
  return out;
}

std::string FormatDependencyForScontrol(const Dependency& d,
                                        const std::vector<uint32_t>& array_job_ids) {
  std::string out;
  std::set<std::tuple<DependencyType, uint32_t, int32_t>> seen;
  auto add = [&](const std::string& entry) {
    if (!out.empty()) out += d.any ? "?" : ",";
    out += entry + "(unfulfilled)";
  };
  for (const DependencyCondition& c : d.conditions) {
    if (c.type == DependencyType::kSingleton) {
      if (seen.insert({c.type, 0, 0}).second) add("singleton");
      continue;
    }
    for (const DependencyTarget& t : c.targets) {
      if (!seen.insert({c.type, t.job_id, t.array_task}).second) continue;
      bool is_array =
          std::find(array_job_ids.begin(), array_job_ids.end(), t.job_id) != array_job_ids.end();
      add(std::string(DependencyTypeName(c.type)) + ":" + TargetText(t, is_array));
    }
  }
  return out.empty() ? "(null)" : out;
}

}  // namespace berth::core
