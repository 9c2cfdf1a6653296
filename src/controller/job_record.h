// JobRecord: everything the controller keeps and shows about one job: the core's Job (request,
// state, times, allocation), node names, the scheduler's latest word on it while pending, and
// accounting once it ran. It is what GET /v1/jobs returns, what sacct reads, and what the store
// keeps (docs/formats/api.md describes the JSON).
#ifndef BERTH_CONTROLLER_JOB_RECORD_H_
#define BERTH_CONTROLLER_JOB_RECORD_H_

#include <atomic>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/step_record.h"
#include "common/copy_on_write.h"
#include "common/status.h"
#include "common/time.h"
#include "core/model/job.h"
#include "core/model/reason.h"
#include "slurm/job_view.h"
#include "slurm/sacct_view.h"
#include "store/store.h"

namespace berth::controller {

// What Slurm's commands show of a job that the request alone does not say (the record's
// "slurm" object).
using SlurmFacts = slurm::ClusterFacts;

// A text computed from a record once, on first use, by whichever thread asks first. A copy starts
// empty: records are copied only to be changed, and the copy's text is computed afresh.
class EncodedText {
 public:
  EncodedText() = default;
  EncodedText(const EncodedText&) {}
  EncodedText& operator=(const EncodedText&) {
    delete text_.exchange(nullptr);
    return *this;
  }
  ~EncodedText() { delete text_.load(); }

  // The text, made by `make` unless another call made it first.
  template <typename Make>
  const std::string& Get(Make make) const {
    const std::string* t = text_.load(std::memory_order_acquire);
    if (t != nullptr) return *t;
    auto* mine = new std::string(make());
    const std::string* expected = nullptr;
    if (text_.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) return *mine;
    delete mine;
    return *expected;
  }

 private:
  mutable std::atomic<const std::string*> text_{nullptr};
};

// What a record says once its job ran, was cancelled or was preempted: kept apart, so that a job
// that only waits (most of a long queue) carries one shared empty value instead of these.
struct RunFacts {
  double cpu_seconds = 0;
  int64_t max_rss_mib = 0;
  double gpu_utilization = -1;
  std::string message;        // from the node: what went wrong, what could not be enforced
  int64_t cancelled_by = -1;  // the uid whose cancel ended it (sacct: "CANCELLED by UID")
  // Preempted with a GraceTime: when the grace ends (Slurm moves the job's EndTime there).
  Time preempt_end = kNoTime;
  // The steps srun recorded in this run (sacct's JOB.N rows), by id; at most
  // api::kMaxStepsKept, the others counted. A requeued job starts with none.
  std::vector<api::StepRecord> steps;
  int64_t steps_dropped = 0;

  // What belongs to one run only and goes with a requeue (the usage and the node's message stay
  // until the next run): whether there is any, and dropping it. Keep the two lists together.
  bool HasRunOnlyFacts() const {
    return cancelled_by != -1 || preempt_end != kNoTime || !steps.empty() || steps_dropped != 0;
  }
  void DropRunOnlyFacts() {
    cancelled_by = -1;
    preempt_end = kNoTime;
    steps.clear();
    steps_dropped = 0;
  }

  friend bool operator==(const RunFacts&, const RunFacts&) = default;
};

struct JobRecord {
  core::Job job;                        // job.exec holds how to run it
  std::vector<std::string> node_names;  // of job.alloc, in order
  std::string submit_host;
  // While pending: the last pass's word on it.
  core::PendingReason reason = core::PendingReason::kNone;
  std::string reason_detail;
  Time expected_start = kNoTime;
  int64_t priority = 0;
  bool cancel_requested = false;  // a cancel (or preemption) was sent to its node
  // Once it ran: read as run->field, change through run.Mut() (copies of a record share it).
  CopyOnWrite<RunFacts> run;
  // Shared by the records whose facts are equal (nearly all of a partition's jobs).
  CopyOnWrite<SlurmFacts> slurm;
  // A job made through the Kubernetes API: its Pod's metadata and spec (docs/kubernetes.md), and
  // when a delete of the Pod was asked (0 = not); null and 0 for other jobs.
  std::shared_ptr<const nlohmann::json> k8s;
  int64_t k8s_deleted = 0;
  // The watch hub's sequence number of the last event about this record (WriteRecord sets it):
  // a Pod's resourceVersion is this + 1, so a watch resumed from a list's resourceVersion R
  // knows which records changed after R.
  uint64_t event_seq = 0;

  bool active() const { return !core::IsTerminal(job.state); }

  // The list form, EncodeJobRecord(*this, false), without "priority", "reason", "reason_detail"
  // and "expected_start" (which change with every scheduling pass: the caller adds them) and
  // without its closing brace. Computed once per record: lists copy it instead of encoding.
  // REQUIRES: the record no longer changes (it is published).
  const std::string& ListJsonPrefix() const;

 private:
  EncodedText list_json_;
};

// The JSON form. `with_exec` includes how to run it (the script can be large; lists leave it
// out).
nlohmann::json EncodeJobRecord(const JobRecord& r, bool with_exec);
// What the controller writes for each change of a record, without building its tree:
// *stored = EncodeJobRecord(r, false).dump(). Returns the length of its watch event's text
// (JobRecordEventText's).
size_t WriteJobRecordText(const JobRecord& r, std::string* stored);
// The watch event of the record, {"job": VIEW, "type": "job"} with VIEW that form less its
// "request": the same bytes as nlohmann dumps them. Made when a watcher first reads the event.
std::string JobRecordEventText(const JobRecord& r);
// Run specifications already decoded, by their JSON text (ExecJsonText): a start-up reads
// thousands of stored records that share a few, and decodes each of those once.
// The last request a decode read, by its text, and what it decoded to (jobs submitted together
// mostly ask for the same).
struct RequestMemo {
  bool valid = false;
  std::string text;
  // Shared with the records decoded from it; its submit time is the last such record's.
  CopyOnWrite<core::JobSpec> spec;
  // The last record's Slurm facts, shared with the records after it that have the same.
  CopyOnWrite<SlurmFacts> facts;
};
struct ExecCache {
  std::unordered_map<std::string, std::shared_ptr<const core::JobExecSpec>> by_text;
  RequestMemo request;
  // The last store row's run specification text (the store's copy, shared by the rows that have
  // it) and its decoding: consecutive rows mostly share one, and need no look-up by text.
  std::shared_ptr<const std::string> last_text;
  std::shared_ptr<const core::JobExecSpec> last;
};
// With `cache`, a record in the store's whole form (store::JoinedRecord) whose run specification is
// in it gets that copy, and a new one is added (up to a few thousand).
Result<JobRecord> DecodeJobRecord(std::string_view json_text, ExecCache* cache = nullptr);
// The same through a tree of the whole text (DecodeJobRecord reads the records it writes
// without one, and comes here for any other): for tests that hold the two equal.
Result<JobRecord> DecodeJobRecordTree(std::string_view json_text);
// The record read from its text without a tree of the whole (job_record_text.cc), with `memo`
// (may be null) for a request equal to the last one read; nullopt for any text it does not read
// exactly as DecodeJobRecordTree does, which then decodes it.
// JobRecordTest.TheFastDecodeIsTheTreeDecode holds the two equal.
std::optional<JobRecord> DecodeJobRecordText(std::string_view json_text, RequestMemo* memo);
// The record's "allocation" object into r (its nodes and node names, its licenses); throws as
// nlohmann's accessors do on another shape.
Status DecodeAllocation(const nlohmann::json& allocation, JobRecord& r);
// A store row: its record, and the run specification kept apart from it (store::JobRow::exec)
// when there is one.
Result<JobRecord> DecodeJobRow(const store::JobRow& row, ExecCache* cache = nullptr);
// The same without its run specification, which is then not parsed (r.job.exec is an empty
// one): for the readers that show no script or environment (sacct's records).
Result<JobRecord> DecodeJobRowWithoutExec(const store::JobRow& row, ExecCache* cache);

// The keys of a job's JSON (docs/formats/job-json.md) that come from its run specification, as
// the text of one JSON object.
std::string ExecJsonText(const core::JobExecSpec& exec);

// The record's fields as Slurm's views read them (slurm::JobViewOf), the same as from its JSON
// (EncodeJobRecord): the record's own priority, reason and expected start.
slurm::JobRecordFacts SlurmFactsOf(const JobRecord& r);
// The job as sacct shows it (POST /v1/views/sacct): what slurm::SacctJobFromJson reads of the
// record's JSON without the execution keys (GET /v1/accounting/jobs), from the record itself.
// JobRecordTest.SacctShowsARecordAsItShowsItsJson holds the two equal.
slurm::SacctJob SacctJobOf(const JobRecord& r, Time now);

// The TRES the job holds (AllocTRES), or asks for while pending.
std::string AllocTresText(const JobRecord& r);

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_JOB_RECORD_H_
