// squeue's lines, filters and sort order (Slurm 22.05 src/squeue/print.c, opts.c, sort.c).
#include "slurm/squeue_view.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "api/json_scan.h"
#include "common/hostlist.h"
#include "common/strings.h"
#include "core/model/array_spec.h"

namespace berth::slurm {
namespace {

using nlohmann::json;

std::optional<int64_t> ParseNonNegative(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// "0-3,8,10-11%2" or "500-16500:1000%26" (as FormatArrayTaskIds writes them) -> the ids.
std::vector<int32_t> ParseTaskSet(std::string_view text) {
  std::vector<int32_t> ids;
  text = text.substr(0, text.find('%'));
  for (const std::string& item : SplitNonEmpty(text)) {
    std::string_view part = item;
    std::optional<int64_t> step = 1;
    if (size_t colon = part.find(':'); colon != std::string_view::npos) {
      step = ParseNonNegative(part.substr(colon + 1));
      part = part.substr(0, colon);
    }
    size_t dash = part.find('-');
    std::optional<int64_t> lo = ParseNonNegative(part.substr(0, dash));
    std::optional<int64_t> hi =
        dash == std::string::npos ? lo : ParseNonNegative(part.substr(dash + 1));
    if (!lo || !hi || !step || *step < 1 || *hi < *lo || *hi - *lo > 1'000'000) continue;
    for (int64_t i = *lo; i <= *hi; i += *step) ids.push_back(static_cast<int32_t>(i));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string SchedNodes(const json& record) {
  if (!record.contains("sched_nodes")) return "";
  const json& s = record.at("sched_nodes");
  if (s.is_string()) return s.get<std::string>();
  if (!s.is_array()) return "";
  std::vector<std::string> names;
  for (const json& n : s) {
    if (n.is_string()) names.push_back(n.get<std::string>());
  }
  return hostlist::Compress(names);
}

bool IsPendingMaster(const JobView& j) {
  return j.state == core::JobState::kPending && !j.array_pending_tasks.empty() &&
         j.array_task_id < 0;
}

// One line for one task of a master's pending tasks.
SqueueRow TaskRow(const SqueueRow& master, int32_t task) {
  SqueueRow r = master;
  r.task_set.clear();
  r.job.array_task_id = task;
  r.job.display_id = std::to_string(r.job.array_job_id) + "_" + std::to_string(task);
  return r;
}

// squeue's _merge_job_reason: the master's reason, then each differing task reason once.
void MergeReason(SqueueRow& master, const JobView& task) {
  if (master.job.reason == task.reason) return;
  if (master.state_desc.empty()) master.state_desc = master.job.reason;
  if (master.state_desc.find(task.reason) != std::string::npos) return;
  master.state_desc += "," + task.reason;
}

// squeue's _combine_pending_array_tasks: pending tasks split off an array (after an update) go
// back into the master's line when they still share its name and partition.
void CombinePendingTasks(std::vector<SqueueRow>& rows) {
  for (SqueueRow& master : rows) {
    if (master.task_set.empty()) continue;
    std::vector<int32_t> ids = ParseTaskSet(master.task_set);
    int merged = 0;
    for (SqueueRow& task : rows) {
      const JobView& t = task.job;
      if (&task == &master || task.job.job_id == 0 || t.state != core::JobState::kPending ||
          t.array_task_id < 0 || t.array_job_id != master.job.array_job_id ||
          t.name != master.job.name || t.partition != master.job.partition) {
        continue;
      }
      ids.push_back(t.array_task_id);
      MergeReason(master, t);
      task.job.job_id = 0;  // marks it folded
      ++merged;
    }
    if (merged == 0) continue;
    std::sort(ids.begin(), ids.end());
    // Slurm rebuilds the string from a bitmap, which drops the "%N" throttle.
    master.task_set = core::FormatArrayTaskIds(ids);
  }
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [](const SqueueRow& r) { return r.job.job_id == 0; }),
             rows.end());
}

}  // namespace

namespace {

// The last row of `rows`, its view set: the line of one job, or with -r one line per pending task
// of an array (pending array tasks are not yet combined).
void FinishLastRow(bool one_per_task, std::vector<SqueueRow>& rows) {
  if (!IsPendingMaster(rows.back().job)) return;
  rows.back().task_set = rows.back().job.array_pending_tasks;
  if (!one_per_task) return;
  SqueueRow master = std::move(rows.back());
  rows.pop_back();
  for (int32_t task : ParseTaskSet(master.task_set)) rows.push_back(TaskRow(master, task));
}

// The lines of one job record.
void AddRecordRows(const json& record, Time now, bool one_per_task, std::vector<SqueueRow>& rows,
                   int* skipped) {
  Result<JobView> view = JobViewFromJson(record, now);
  if (!view.ok()) {
    if (skipped != nullptr) ++*skipped;
    return;
  }
  SqueueRow& row = rows.emplace_back();
  row.job = std::move(view).value();
  row.sched_nodes = SchedNodes(record);
  FinishLastRow(one_per_task, rows);
}

}  // namespace

std::vector<SqueueRow> SqueueRows(const json& jobs, Time now, bool one_per_task, int* skipped) {
  std::vector<SqueueRow> rows;
  if (skipped != nullptr) *skipped = 0;
  if (!jobs.is_array()) return rows;
  rows.reserve(jobs.size());
  for (const json& record : jobs) AddRecordRows(record, now, one_per_task, rows, skipped);
  if (!one_per_task) CombinePendingTasks(rows);
  return rows;
}

Result<std::vector<SqueueRow>> SqueueRowsFromList(std::string_view list, Time now,
                                                  bool one_per_task, int* skipped) {
  std::vector<SqueueRow> rows;
  if (skipped != nullptr) *skipped = 0;
  // Rows are large (about 1.7 KB): counted first, so that the vector is allocated once and never
  // moved (growing it touched twice the memory, and page faults were most of squeue's time).
  BERTH_ASSIGN_OR_RETURN(size_t count, api::CountArrayItems(list, "jobs"));
  rows.reserve(count);
  // An element that is not JSON comes as a discarded value, which no job decodes from.
  BERTH_RETURN_IF_ERROR(api::ForEachArrayValue(list, "jobs", [&](const json& record) {
    AddRecordRows(record, now, one_per_task, rows, skipped);
  }));
  if (!one_per_task) CombinePendingTasks(rows);
  return rows;
}

std::map<std::string, int64_t> PartitionTiersOf(const json& partitions) {
  std::map<std::string, int64_t> tiers;
  if (!partitions.is_array()) return tiers;
  for (const json& p : partitions) {
    if (p.is_object() && p.contains("name") && p.at("name").is_string()) {
      tiers[p.at("name").get<std::string>()] = p.value("priority_tier", int64_t{1});
    }
  }
  return tiers;
}

std::vector<SqueueRow> SplitByPartition(std::vector<SqueueRow> rows,
                                        const std::map<std::string, int64_t>& tiers) {
  std::vector<SqueueRow> out;
  for (SqueueRow& row : rows) {
    std::vector<std::string> parts = SplitNonEmpty(row.job.partition);
    if (parts.empty()) parts.push_back(row.job.partition);
    for (const std::string& p : parts) {
      SqueueRow r = row;
      r.job.partition = p;
      auto it = tiers.find(p);
      r.partition_priority = it == tiers.end() ? 1 : it->second;
      out.push_back(std::move(r));
    }
  }
  return out;
}

Result<std::vector<JobIdFilter>> ParseJobIdList(std::string_view text) {
  std::vector<JobIdFilter> out;
  for (const std::string& item : SplitNonEmpty(text)) {
    std::string_view s = item;
    size_t us = s.find('_');
    std::optional<int64_t> id = ParseNonNegative(s.substr(0, us));
    std::optional<int64_t> task = us == std::string_view::npos ? std::optional<int64_t>(-1)
                                                               : ParseNonNegative(s.substr(us + 1));
    if (!id || *id <= 0 || *id > UINT32_MAX || !task || *task > INT32_MAX) {
      return Status::InvalidArgument("Invalid job id: " + item);
    }
    out.push_back({static_cast<uint32_t>(*id), static_cast<int32_t>(*task)});
  }
  return out;
}

Result<std::vector<core::JobState>> ParseJobStateList(std::string_view text) {
  std::vector<core::JobState> out;
  if (EqualsIgnoreCase(text, "all")) {
    for (int i = 0; i < core::kNumJobStates; ++i) out.push_back(static_cast<core::JobState>(i));
    return out;
  }
  for (const std::string& name : SplitNonEmpty(text)) {
    std::optional<core::JobState> st = core::ParseJobState(name);
    if (!st) {
      return Status::InvalidArgument(
          "Invalid job state specified: " + name +
          "\nValid job states include: PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,"
          "TIMEOUT,NODE_FAIL,PREEMPTED,BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,"
          "RESIZING,RESV_DEL_HOLD,REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,"
          "SPECIAL_EXIT,STAGE_OUT,STOPPED");
    }
    out.push_back(*st);
  }
  return out;
}

namespace {

bool InList(const std::vector<std::string>& list, const std::string& value, bool nocase) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& s) {
    return nocase ? EqualsIgnoreCase(s, value) : s == value;
  });
}

}  // namespace

bool SqueueUserMatches(const SqueueFilter& f, const std::string& user, uint32_t uid) {
  return !f.users_given || InList(f.users, user, false) ||
         std::find(f.uids.begin(), f.uids.end(), uid) != f.uids.end();
}

namespace {

bool StateMatches(const SqueueFilter& f, core::JobState s) {
  if (f.states.empty()) {
    return s == core::JobState::kPending || s == core::JobState::kRunning ||
           s == core::JobState::kConfiguring || s == core::JobState::kSuspended ||
           s == core::JobState::kCompleting;
  }
  return std::find(f.states.begin(), f.states.end(), s) != f.states.end();
}

bool PartitionMatches(const SqueueFilter& f, const std::string& partitions) {
  if (f.partitions.empty()) return true;
  for (const std::string& p : SplitNonEmpty(partitions)) {
    if (InList(f.partitions, p, false)) return true;
  }
  return false;
}

bool LicenseMatches(const SqueueFilter& f, const std::string& licenses) {
  if (f.licenses.empty()) return true;
  for (const std::string& held : SplitNonEmpty(licenses)) {
    for (const std::string& want : f.licenses) {
      if (held.find(want) != std::string::npos) return true;  // squeue uses strstr
    }
  }
  return false;
}

bool NodeMatches(const SqueueFilter& f, const JobView& j) {
  if (f.nodes.empty()) return true;
  for (const std::string& n : j.node_names) {
    if (std::find(f.nodes.begin(), f.nodes.end(), n) != f.nodes.end()) return true;
  }
  return false;
}

// Everything but -j.
bool OtherFiltersMatch(const SqueueFilter& f, const JobView& j) {
  if (!SqueueUserMatches(f, j.user, j.uid)) return false;
  if (!f.accounts.empty() && !InList(f.accounts, j.account, true)) return false;
  if (!f.qos.empty() && !InList(f.qos, j.qos, true)) return false;
  if (!f.names.empty() && !InList(f.names, j.name, false)) return false;
  if (!f.reservation.empty() && f.reservation != j.reservation) return false;
  return StateMatches(f, j.state) && PartitionMatches(f, j.partition) &&
         LicenseMatches(f, j.licenses) && NodeMatches(f, j);
}

// -j for one line: the whole line, some of a combined line's tasks, or nothing.
void ApplyJobIds(const std::vector<JobIdFilter>& ids, SqueueRow row, std::vector<SqueueRow>& out) {
  const JobView& j = row.job;
  std::vector<int32_t> tasks;
  for (const JobIdFilter& f : ids) {
    if (f.task < 0 && (f.id == j.job_id || (j.array_job_id != 0 && f.id == j.array_job_id))) {
      out.push_back(std::move(row));
      return;
    }
    if (f.task >= 0 && j.array_job_id == f.id && j.array_task_id == f.task) {
      out.push_back(std::move(row));
      return;
    }
    if (f.task >= 0 && j.array_job_id == f.id && !row.task_set.empty()) tasks.push_back(f.task);
  }
  if (tasks.empty()) return;
  std::vector<int32_t> pending = ParseTaskSet(row.task_set);
  std::sort(tasks.begin(), tasks.end());
  for (int32_t t : std::set<int32_t>(tasks.begin(), tasks.end())) {
    if (std::binary_search(pending.begin(), pending.end(), t)) out.push_back(TaskRow(row, t));
  }
}

}  // namespace

std::vector<SqueueRow> FilterRows(std::vector<SqueueRow> rows, const SqueueFilter& filter) {
  if (filter.jobs.empty()) {  // one line in, at most one out: keep them where they are
    rows.erase(
        std::remove_if(rows.begin(), rows.end(),
                       [&](const SqueueRow& r) { return !OtherFiltersMatch(filter, r.job); }),
        rows.end());
    return rows;
  }
  std::vector<SqueueRow> out;
  for (SqueueRow& row : rows) {
    if (!OtherFiltersMatch(filter, row.job)) continue;
    if (filter.jobs.empty()) {
      out.push_back(std::move(row));
    } else {
      ApplyJobIds(filter.jobs, std::move(row), out);
    }
  }
  return out;
}

// ---- Sorting (squeue's sort.c)

// A line's value for one sort key: compared as (a, b, s), so that every key is one comparison.
// A text is `s`, a number in SqueueSortTexts while the lines are added, its rank among all the
// texts when they are sorted (no string per value: at 100,000 lines their copies and moves were
// a fifth of squeue's time).
struct SqueueSortValue {
  int64_t a = 0;
  int64_t b = 0;
  uint32_t s = 0;

  friend auto operator<=>(const SqueueSortValue&, const SqueueSortValue&) = default;
};

// The texts lines sort by, each kept once; "" is number 0.
struct SqueueSortTexts {
  std::vector<std::string> texts{""};
  std::unordered_map<std::string, uint32_t> numbers{{"", 0}};

  uint32_t NumberOf(const std::string& text) {
    auto it = numbers.find(text);
    if (it != numbers.end()) return it->second;
    const auto n = static_cast<uint32_t>(texts.size());
    texts.push_back(text);
    numbers.emplace(text, n);
    return n;
  }
  // Each text's place in the order of all of them, by number.
  std::vector<uint32_t> Ranks() const {
    std::vector<uint32_t> by_text(texts.size());
    for (uint32_t i = 0; i < by_text.size(); ++i) by_text[i] = i;
    std::sort(by_text.begin(), by_text.end(),
              [&](uint32_t x, uint32_t y) { return texts[x] < texts[y]; });
    std::vector<uint32_t> rank(texts.size());
    for (uint32_t r = 0; r < by_text.size(); ++r) rank[by_text[r]] = r;
    return rank;
  }
};

namespace {

constexpr std::string_view kSortLetters = "BbcCdDefgGhHiIjJlLmMnNOpPQStTuUvVz";

// squeue's job id order: the array's id, then the task (a master's pending tasks last).
std::pair<uint32_t, int64_t> IdKey(const SqueueRow& r) {
  const JobView& j = r.job;
  if (j.array_job_id != 0 && (j.array_task_id >= 0 || !r.task_set.empty())) {
    return {j.array_job_id, j.array_task_id >= 0 ? j.array_task_id : int64_t{0xfffffffe}};
  }
  return {j.job_id, int64_t{0xfffffffe}};
}

Time StartKey(const JobView& j, Time now) {
  if (j.start_time == kNoTime) return now + 100;
  if (j.state == core::JobState::kPending && j.start_time < now) return now;
  return j.start_time;
}

Duration TimeLeftKey(const JobView& j) {
  return j.time_limit >= kInfinite ? kInfinite : j.time_limit - j.run_time;
}

std::string FirstNode(const JobView& j) {
  std::vector<std::string> sorted = j.node_names;
  std::sort(sorted.begin(), sorted.end());
  return sorted.empty() ? "" : sorted.front();
}

SqueueSortValue ValueOf(char key, const SqueueRow& r, Time now, SqueueSortTexts& texts) {
  const JobView& j = r.job;
  auto num = [](int64_t n) { return SqueueSortValue{n, 0, 0}; };
  auto text = [&texts](const std::string& t) { return SqueueSortValue{0, 0, texts.NumberOf(t)}; };
  switch (key) {
    case 'B':
      return text(j.batch_host);
    case 'C':
      return num(j.num_cpus);
    case 'D':
      return num(j.min_nodes);
    case 'e':
      return num(j.end_time);
    case 'g':
      return text(j.group);
    case 'G':
      return num(j.gid);
    case 'i': {
      const auto [id, task] = IdKey(r);
      return SqueueSortValue{id, task, 0};
    }
    case 'j':
      return text(j.name);
    case 'l':
      return num(j.time_limit);
    case 'L':
      return num(TimeLeftKey(j));
    case 'm':
      return num(std::max(j.min_memory_cpu_mib, j.min_memory_node_mib));
    case 'M':
      return num(j.run_time);
    case 'N': {  // lines without nodes come last, as squeue prints them
      std::string first = FirstNode(j);
      return SqueueSortValue{first.empty() ? 1 : 0, 0, texts.NumberOf(first)};
    }
    case 'p':
    case 'Q':
      return SqueueSortValue{r.partition_priority, j.priority, 0};
    case 'P':
      return text(j.partition);
    case 'S':
      return num(StartKey(j, now));
    case 't':
      return text(j.state_compact);
    case 'T':
      return text(j.state_text);
    case 'u':
      return text(j.user);
    case 'U':
      return num(j.uid);
    case 'v':
      return text(j.reservation);
    case 'V':
      return num(j.submit_time);
    default:
      return {};  // keys squeue accepts but does not sort by (c, d, f, h, n, O, ...)
  }
}

// The values a line sorts by, appended to `out`: one per key, then its job id (ties keep job id
// order).
void AddSortValues(const SqueueRow& r, const std::vector<SortKey>& keys, Time now,
                   SqueueSortTexts& texts, std::vector<SqueueSortValue>& out) {
  for (const SortKey& k : keys) {
    if (k.key.size() == 1) out.push_back(ValueOf(k.key[0], r, now, texts));
  }
  out.push_back(ValueOf('i', r, now, texts));
}

// Values' texts by their ranks, to be compared.
void RankTexts(const SqueueSortTexts& texts, std::vector<SqueueSortValue>& values) {
  const std::vector<uint32_t> rank = texts.Ranks();
  for (SqueueSortValue& v : values) v.s = rank[v.s];
}

// How many values AddSortValues gives a line.
size_t SortStride(const std::vector<SortKey>& keys) {
  return 1 + static_cast<size_t>(std::count_if(keys.begin(), keys.end(),
                                               [](const SortKey& k) { return k.key.size() == 1; }));
}

// The order of lines by their values: line i's `stride` values start at values[i];
// `descending[k]` for the k-th key's.
std::vector<uint32_t> SortedOrder(const std::vector<const SqueueSortValue*>& values, size_t stride,
                                  const std::vector<bool>& descending) {
  std::vector<uint32_t> order(values.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const SqueueSortValue* a = values[x];
    const SqueueSortValue* b = values[y];
    for (size_t i = 0; i < stride; ++i) {
      const std::strong_ordering c = a[i] <=> b[i];
      if (c != 0) return i < descending.size() && descending[i] ? c > 0 : c < 0;
    }
    return false;
  });
  return order;
}

// Which keys sort descending, in AddSortValues' order.
std::vector<bool> Descending(const std::vector<SortKey>& keys) {
  std::vector<bool> d;
  for (const SortKey& k : keys) {
    if (k.key.size() == 1) d.push_back(k.descending);
  }
  return d;
}

}  // namespace

Status CheckSortKeys(const std::vector<SortKey>& keys) {
  for (const SortKey& k : keys) {
    if (EqualsIgnoreCase(k.key, "cluster")) continue;
    if (k.key.size() != 1 || kSortLetters.find(k.key[0]) == std::string_view::npos) {
      return Status::InvalidArgument("Invalid sort specification: " + k.key);
    }
  }
  return Status::Ok();
}

void SortRows(std::vector<SqueueRow>& rows, const std::vector<SortKey>& keys, Time now) {
  // Rows are large: sort their positions by their values, then move each row into place.
  const size_t stride = SortStride(keys);
  std::vector<SqueueSortValue> values;
  values.reserve(rows.size() * stride);
  SqueueSortTexts texts;
  for (const SqueueRow& r : rows) AddSortValues(r, keys, now, texts, values);
  RankTexts(texts, values);
  std::vector<const SqueueSortValue*> starts(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) starts[i] = values.data() + i * stride;
  std::vector<uint32_t> order = SortedOrder(starts, stride, Descending(keys));
  // Applied in place, cycle by cycle (a second vector of rows would be fresh memory as large as
  // the first: at 10,000 rows its page faults cost more than the sort).
  for (uint32_t start = 0; start < order.size(); ++start) {
    if (order[start] == start) continue;
    SqueueRow held = std::move(rows[start]);
    uint32_t at = start;
    while (order[at] != start) {
      const uint32_t from = order[at];
      rows[at] = std::move(rows[from]);
      order[at] = at;
      at = from;
    }
    rows[at] = std::move(held);
    order[at] = at;
  }
}

OutputFormat SqueueFormat(const SqueueOptions& o, std::string* errors) {
  auto report = [errors](const std::vector<std::string>& bad, const char* what) {
    if (errors == nullptr) return;
    for (const std::string& b : bad)
      *errors += "squeue: error: Invalid " + std::string(what) + b + "\n";
  };
  if (o.steps) {  // step fields: -o letters only
    OutputFormat f = o.percent_form ? ParsePercentFormat(o.format) : ParseFieldList(o.format, 20);
    report(
        ReplaceUnknownFields(f, o.percent_form, [](std::string_view k) { return IsStepLetter(k); }),
        "job step format specification: ");
    return f;
  }
  if (!o.percent_form) {
    OutputFormat f = ParseFieldList(o.format, 20);
    report(ReplaceUnknownFields(f, false, [](std::string_view k) { return IsJobFieldName(k); }),
           "job format specification: ");
    return f;
  }
  const bool all = ToLower(o.format) == "%all";
  OutputFormat f = ParsePercentFormat(all ? AllLettersFormat() : o.format);
  std::vector<std::string> bad =
      ReplaceUnknownFields(f, true, [](std::string_view k) { return IsJobLetter(k); });
  if (!all) report(bad, "job format specification: ");
  return f;
}

SqueueTableBuilder::SqueueTableBuilder(const SqueueOptions& o, OutputFormat format,
                                       std::map<std::string, int64_t> tiers, SqueueContext ctx)
    : o_(o),
      format_(std::move(format)),
      tiers_(std::move(tiers)),
      ctx_(std::move(ctx)),
      keys_(ParseSortList(o.sort, {"cluster"})),
      line_(format_, o.percent_form),
      stride_(SortStride(keys_)),
      texts_(std::make_unique<SqueueSortTexts>()) {}

SqueueTableBuilder::~SqueueTableBuilder() = default;

void SqueueTableBuilder::Reserve(size_t jobs) {
  values_.reserve(values_.size() + jobs * stride_);
  lines_.reserve(lines_.size() + jobs);
  text_.reserve(text_.size() + jobs * 96);
}

void SqueueTableBuilder::Add(JobView view) {
  NewView() = std::move(view);
  AddNewView();
}

JobView& SqueueTableBuilder::NewView() {
  return scratch_.emplace_back().job;  // scratch_ is empty between jobs (Emit clears it)
}

void SqueueTableBuilder::AddNewView() {
  // Pending tasks of an array wait for each other (they may share a line); the others go at once.
  const JobView& view = scratch_.back().job;
  if (view.state == core::JobState::kPending && view.array_job_id != 0) {
    arrays_.push_back(std::move(scratch_.back()));
    scratch_.pop_back();
    FinishLastRow(o_.array_tasks, arrays_);
    return;
  }
  FinishLastRow(o_.array_tasks, scratch_);
  Emit();
}

void SqueueTableBuilder::Emit() {
  if (o_.per_partition) scratch_ = SplitByPartition(std::move(scratch_), tiers_);
  scratch_ = FilterRows(std::move(scratch_), o_.filter);
  for (const SqueueRow& r : scratch_) {
    const size_t value_at = values_.size();
    AddSortValues(r, keys_, ctx_.now, *texts_, values_);
    const size_t begin = text_.size();
    line_.Append(r, ctx_, text_);
    lines_.push_back({chunks_.size(), begin, text_.size(), value_at});
  }
  scratch_.clear();
}

void SqueueTableBuilder::Append(SqueueTableBuilder&& part) {
  // Nothing is copied: this builder's lines and the part's become chunks (lines keep pointing
  // into them), renumbered after the ones here; the part's sort texts get this builder's numbers.
  chunks_.push_back({std::move(text_), std::move(values_)});
  text_.clear();
  values_.clear();
  std::vector<uint32_t> number(part.texts_->texts.size());
  for (size_t i = 0; i < number.size(); ++i) number[i] = texts_->NumberOf(part.texts_->texts[i]);
  *part.texts_ = SqueueSortTexts();
  part.chunks_.push_back({std::move(part.text_), std::move(part.values_)});
  const size_t base = chunks_.size();
  for (Chunk& chunk : part.chunks_) {
    for (SqueueSortValue& v : chunk.values) v.s = number[v.s];
    chunks_.push_back(std::move(chunk));
  }
  lines_.reserve(lines_.size() + part.lines_.size());
  for (const LineSpan& l : part.lines_) {
    lines_.push_back({base + l.chunk, l.begin, l.end, l.value_at});
  }
  arrays_.insert(arrays_.end(), std::make_move_iterator(part.arrays_.begin()),
                 std::make_move_iterator(part.arrays_.end()));
  part.text_.clear();
  part.values_.clear();
  part.chunks_.clear();
  part.lines_.clear();
  part.arrays_.clear();
}

std::string SqueueTableBuilder::Finish() {
  std::string out;
  FinishTo([&](std::string_view piece) { out.append(piece); });
  return out;
}

void SqueueTableBuilder::FinishTo(const std::function<void(std::string_view)>& sink) {
  if (!o_.array_tasks) CombinePendingTasks(arrays_);
  scratch_ = std::move(arrays_);
  Emit();
  if (!o_.no_header) sink(RenderSqueueHeader(format_, o_.percent_form));
  RankTexts(*texts_, values_);
  for (Chunk& chunk : chunks_) RankTexts(*texts_, chunk.values);
  std::vector<const SqueueSortValue*> starts(lines_.size());
  for (size_t i = 0; i < lines_.size(); ++i) {
    const LineSpan& l = lines_[i];
    starts[i] = (l.chunk < chunks_.size() ? chunks_[l.chunk].values : values_).data() + l.value_at;
  }
  for (uint32_t i : SortedOrder(starts, stride_, Descending(keys_))) {
    const LineSpan& l = lines_[i];
    const std::string& text = l.chunk < chunks_.size() ? chunks_[l.chunk].text : text_;
    sink(std::string_view(text).substr(l.begin, l.end - l.begin));
  }
}

}  // namespace berth::slurm
