// squeue's view of the queue (Slurm 22.05 src/squeue): which lines it prints for the controller's
// jobs (array tasks combined or one per line), its filters, its sort keys, and the text of every
// job field of -o/--format (letters) and -O/--Format (names), headers included.
//
// Values follow squeue's print.c: "(null)" for unset strings such as %a/%E/%k, "N/A" for unset
// times and counts squeue cannot know, "*" for unset socket/core/thread counts; fields berth has
// no notion of (wckey, burst buffer, heterogeneous jobs, federation) print what squeue prints for
// a job without them.
//
// Thread safety: all functions are pure, except that headers and values read the time zone and
// SLURM_TIME_FORMAT (as squeue does).
#ifndef BERTH_SLURM_SQUEUE_VIEW_H_
#define BERTH_SLURM_SQUEUE_VIEW_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "slurm/format.h"
#include "slurm/job_view.h"
#include "slurm/view_options.h"

namespace berth::slurm {

// squeue's default formats.
inline constexpr char kSqueueFormat[] = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
inline constexpr char kSqueueLongFormat[] = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
inline constexpr char kSqueueStartFormat[] = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";
inline constexpr char kSqueueDefaultSort[] = "P,t,-p";

// ---- Lines

// One line of squeue: a job, an array task, or an array's pending tasks together.
struct SqueueRow {
  JobView job;
  // The pending tasks this line stands for when they are shown together ("0-7%2"); "" otherwise.
  // job.array_task_id is the task's index when the line is one task.
  std::string task_set;
  std::string state_desc;   // reasons of combined tasks that differ: "Dependency,JobHeldUser"
  std::string sched_nodes;  // %Y: nodes the scheduler expects to use ("" = unknown)
  int64_t partition_priority = 0;  // -P: its partition's PriorityTier, sorted on before priority
};

// Lines for the controller's job records (GET /v1/jobs "jobs"). Without `one_per_task` (-r),
// an array's pending tasks are one line ("123_[4-7%2]"), and pending tasks split off from it
// with the same name and partition are folded into that line, as squeue does; with it, every
// pending task is its own line ("123_4"). Records that do not decode are skipped and counted in
// `*skipped` when given.
std::vector<SqueueRow> SqueueRows(const nlohmann::json& jobs, Time now, bool one_per_task,
                                  int* skipped = nullptr);
// The same from the text of a whole list answer (`{"jobs":[...]}`), parsed one record at a time
// (api/json_scan.h): what squeue uses, since a tree of 10,000 records costs more than the
// lines. A record that is not JSON is skipped and counted like one that does not decode; text
// whose structure is broken: InvalidArgument.
Result<std::vector<SqueueRow>> SqueueRowsFromList(std::string_view list, Time now,
                                                  bool one_per_task, int* skipped = nullptr);

// -P's PriorityTier of each partition, from GET /v1/partitions's "partitions" array (entries
// without a name are skipped; a missing tier is 1).
std::map<std::string, int64_t> PartitionTiersOf(const nlohmann::json& partitions);

// -P: a job that asked for several partitions becomes one line per partition, each with that
// partition's PriorityTier from `tiers` (1 when unknown, as squeue).
std::vector<SqueueRow> SplitByPartition(std::vector<SqueueRow> rows,
                                        const std::map<std::string, int64_t>& tiers);

// -j entries: "123" (the job, or every task of array 123) or "123_4" (one task).
struct JobIdFilter {
  uint32_t id = 0;
  int32_t task = -1;  // -1: any

  friend bool operator==(const JobIdFilter&, const JobIdFilter&) = default;
};
// Parses a -j list ("12,13_4"). Errors (kInvalidArgument) as squeue: "Invalid job id: abc".
Result<std::vector<JobIdFilter>> ParseJobIdList(std::string_view text);

// Parses a -t list: long or compact state names in any case, or "all". Errors carry squeue's
// two lines: "Invalid job state specified: foo\nValid job states include: PENDING,...".
Result<std::vector<core::JobState>> ParseJobStateList(std::string_view text);

struct SqueueFilter {
  std::vector<JobIdFilter> jobs;
  bool users_given = false;  // -u/--me: only `users` (names) and `uids` match
  std::vector<std::string> users;
  std::vector<uint32_t> uids;
  std::vector<std::string> accounts;  // -A, case-insensitive
  std::vector<std::string> qos;       // -q, case-insensitive
  std::vector<std::string> names;     // -n
  std::vector<std::string> partitions;
  std::vector<std::string> licenses;  // -L: a job using any of them
  std::vector<std::string> nodes;     // -w, expanded: jobs allocated any of them
  std::string reservation;            // -R
  // -t; empty = squeue's default: pending, running, suspended, completing (and configuring).
  std::vector<core::JobState> states;
};

// -u/--me for a job of user `user` (its name) and `uid`: true without -u or --me.
bool SqueueUserMatches(const SqueueFilter& f, const std::string& user, uint32_t uid);

// What squeue's command line asks for.
struct SqueueOptions {
  SqueueFilter filter;
  std::string format;                 // -o / -O / SQUEUE_FORMAT(2), else the mode's default
  bool percent_form = true;           // false: `format` is a -O list
  std::string sort;                   // -S / SQUEUE_SORT, else the mode's default
  bool array_tasks = false;           // -r
  bool long_list = false;             // -l: a date line before the header
  bool no_header = false;             // -h
  bool json = false;                  // --json
  bool per_partition = false;         // -P: a pending job once per partition it asked for
  int iterate = 0;                    // -i SECONDS (0: once)
  bool steps = false;                 // -s: job steps instead of jobs
  std::vector<std::string> step_ids;  // -s LIST ("12.0,13.batch"); empty: every step
};

struct SqueueParse {
  SqueueOptions options;
  ParseExit exit;        // done: print and exit
  std::string warnings;  // squeue's non-fatal errors, for stderr ("squeue: error: ...\n")
};

// Parses squeue's command line (args[0] is the program name) and its environment variables
// (SQUEUE_ACCOUNT, SQUEUE_ALL, SQUEUE_ARRAY, SQUEUE_FORMAT, SQUEUE_FORMAT2, SQUEUE_NAMES,
// SQUEUE_LICENSES, SQUEUE_PARTITION, SQUEUE_PRIORITY, SQUEUE_QOS, SQUEUE_SORT, SQUEUE_STATES,
// SQUEUE_USERS), as squeue 22.05 does, with its messages and exit codes. `my_uid` is for --me.
SqueueParse ParseSqueueArgs(const std::vector<std::string>& args, const EnvLookup& env,
                            uint32_t my_uid);

// Applies the filter. A -j task filter narrows a combined line to the named tasks, each then
// shown as its own line ("123_4"), as squeue shows `squeue -j 123_4`.
std::vector<SqueueRow> FilterRows(std::vector<SqueueRow> rows, const SqueueFilter& filter);

// Sort keys squeue accepts (letters; "cluster" is accepted and has no effect on one cluster).
// kInvalidArgument "Invalid sort specification: Z" for others.
Status CheckSortKeys(const std::vector<SortKey>& keys);
// Sorts stably by the keys, first key first (squeue applies them last to first, each stably,
// which gives the same order). Ties keep job id order.
void SortRows(std::vector<SqueueRow>& rows, const std::vector<SortKey>& keys, Time now);

// Whether squeue knows a -o letter / a -O name (names are case-insensitive; "numtask*" is one).
bool IsJobLetter(std::string_view key);
bool IsJobFieldName(std::string_view name);

// What the command needs besides the rows.
struct SqueueContext {
  Time now = 0;
  std::string cluster = "berth";  // "Cluster" field
  std::string time_format;        // SLURM_TIME_FORMAT ("" = unset)
};

// The header text of a field and its value for a row; `percent_form` says whether keys are
// letters (-o) or names (-O).
Cell JobFieldHeader(const FormatField& f, bool percent_form);
Cell JobFieldValue(const FormatField& f, bool percent_form, const SqueueRow& row,
                   const SqueueContext& ctx);

// The table squeue prints: the header line unless `no_header`, then one line per row, each
// ending in '\n'.
std::string RenderSqueue(const OutputFormat& format, bool percent_form,
                         const std::vector<SqueueRow>& rows, bool no_header,
                         const SqueueContext& ctx);

// squeue --json: {"meta": ..., "errors": [], "jobs": [...]} with the main keys of Slurm 22.05's
// openapi v0.0.38 job records (job_id, name, user_name, job_state, state_reason, partition,
// nodes, array_job_id, array_task_id, array_task_string, priority, time_limit in minutes, times
// in Unix seconds, ...); in squeue_json.cc.
nlohmann::json SqueueJson(const std::vector<SqueueRow>& rows, const SqueueContext& ctx);

// squeue's time stamps: "2026-12-02T19:23:56" (or SLURM_TIME_FORMAT's strftime form), "N/A"
// when unset. The first reads SLURM_TIME_FORMAT from the environment.
std::string SqueueTimeText(Time t);
std::string SqueueTimeText(Time t, const std::string& time_format);

// The job format squeue's options ask for, with the words of squeue's errors about unknown
// fields appended to `*errors` (one "squeue: error: ...\n" line each) when given.
OutputFormat SqueueFormat(const SqueueOptions& o, std::string* errors);

// squeue's job lines in one format, each field's value found once (not per line). The format
// must outlive it.
class SqueueLineRenderer {
 public:
  SqueueLineRenderer(const OutputFormat& format, bool percent_form);
  // The line of `row`, '\n' included, appended to `out`.
  void Append(const SqueueRow& row, const SqueueContext& ctx, std::string& out) const;

 private:
  const OutputFormat* format_;
  std::vector<int> fields_;  // each format field's place in the field table; -1: none
};
// What squeue prints for its job lines (not --json, not -s), built from one job at a time, so
// that only each line's text and sort values are kept (not the jobs' views): arrays' pending
// tasks combined, -P's split (with the partitions' PriorityTier in `tiers`), the filter, the
// sort, the header. The same from the controller's records (POST /v1/views/squeue) and from a
// list of them here.
struct SqueueSortValue;  // squeue_view.cc
struct SqueueSortTexts;

class SqueueTableBuilder {
 public:
  SqueueTableBuilder(const SqueueOptions& o, OutputFormat format,
                     std::map<std::string, int64_t> tiers, SqueueContext ctx);
  ~SqueueTableBuilder();
  SqueueTableBuilder(const SqueueTableBuilder&) = delete;
  SqueueTableBuilder& operator=(const SqueueTableBuilder&) = delete;

  // Room for about `jobs` lines.
  void Reserve(size_t jobs);
  // One job's view.
  void Add(JobView view);
  // The same in place: the view to fill (as JobView{} makes it), then AddNewView once it is
  // filled. Nothing else may be added in between.
  JobView& NewView();
  void AddNewView();
  // The jobs `part` was given (made with the same options, format and context), as if they had
  // been added here after those added so far: builders of consecutive slices of the jobs, filled
  // on several threads, make the table of all of them.
  void Append(SqueueTableBuilder&& part);
  // The text: the header unless -h, then the lines in order.
  std::string Finish();
  // The same text given to `sink` a piece at a time (the header, then each line), so that a
  // caller can send it on without making the whole of it (8 MB for 100,000 jobs: fresh memory
  // that each squeue took a page fault per page of).
  void FinishTo(const std::function<void(std::string_view)>& sink);

 private:
  void Emit();  // scratch_'s rows become lines

  const SqueueOptions& o_;
  OutputFormat format_;
  std::map<std::string, int64_t> tiers_;
  SqueueContext ctx_;
  std::vector<SortKey> keys_;
  SqueueLineRenderer line_;
  std::vector<SqueueRow> scratch_;          // the rows of the job being added
  std::vector<SqueueRow> arrays_;           // arrays' pending tasks, until Finish
  size_t stride_ = 0;                       // sort values per line
  std::unique_ptr<SqueueSortTexts> texts_;  // the texts sort values name
  // The lines' text, one after another, and their sort values (stride_ each), in chunks: text_
  // and values_ are those lines are added to, chunks_ those taken over from other builders (and
  // this one's before that).
  struct Chunk {
    std::string text;
    std::vector<SqueueSortValue> values;
  };
  struct LineSpan {
    size_t chunk;  // chunks_[chunk], or text_ and values_ when chunk == chunks_.size()
    size_t begin, end;
    size_t value_at;  // where its sort values start
  };
  std::string text_;
  std::vector<SqueueSortValue> values_;
  std::vector<Chunk> chunks_;
  std::vector<LineSpan> lines_;
};

// The parts of a job's view (ViewPart bits) the fields of `format` show: squeue's lines need
// no others (its filters and sort keys read none of them).
uint32_t SqueueViewParts(const OutputFormat& format, bool percent_form);
// One line of the table, '\n' included, and the header line.
std::string RenderSqueueLine(const OutputFormat& format, bool percent_form, const SqueueRow& row,
                             const SqueueContext& ctx);
std::string RenderSqueueHeader(const OutputFormat& format, bool percent_form);

// ---- squeue -s: job steps

inline constexpr char kSqueueStepFormat[] = "%.15i %.8j %.9P %.8u %.9M %N";
inline constexpr char kSqueueStepLongFormat[] = "%.15i %.8j %.9P %.8u %.9l %.9M %N";

// One running step: a running job's batch step (JOB.batch) or a step srun recorded that still
// runs (JOB.N; the job record's "steps", GET /v1/jobs?steps=1).
struct SqueueStepRow {
  std::string step_id;  // "12.0", "14_2.batch"
  std::string name;     // "batch", or the program srun ran
  std::string partition, user, nodes;
  Time start = kNoTime;
  int32_t ntasks = 0;
};

// The running steps of the jobs `filter` selects (its states default to RUNNING), in job order,
// each job's batch step first, then its steps by id. `step_ids` (squeue -s LIST: "12.0",
// "12_3.batch") keeps only those steps; empty keeps all.
std::vector<SqueueStepRow> SqueueStepRows(const nlohmann::json& jobs, Time now, SqueueFilter filter,
                                          const std::vector<std::string>& step_ids);

// The -o letters squeue knows for steps: i (STEPID), j (NAME), P (PARTITION), u (USER),
// M (TIME), l (TIME_LIMIT: UNLIMITED, a step has no limit of its own), S (START_TIME),
// N (NODELIST), A (TASKS).
bool IsStepLetter(std::string_view key);
// The table of squeue -s: the header unless `no_header`, then one line per step.
std::string RenderSqueueSteps(const OutputFormat& format, const std::vector<SqueueStepRow>& rows,
                              bool no_header, Time now);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SQUEUE_VIEW_H_
