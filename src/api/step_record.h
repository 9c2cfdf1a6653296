// A job step's accounting record (Slurm's JOB.0, JOB.1, ...): srun reports it to the controller
// when the step starts and again when it ends (POST /v1/jobs/ID/steps/N/record), the controller
// keeps it in the job's record, and sacct shows it as a row of its own. The JSON form is
// described in docs/formats/api.md ("steps").
//
// Thread safety: plain values and pure functions.
// Used by srun (src/cli/slurm_srun.cc), the controller (controller_steps.cc, job_record.cc) and
// sacct (src/slurm/sacct_view.cc).
#ifndef BERTH_API_STEP_RECORD_H_
#define BERTH_API_STEP_RECORD_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace berth::api {

// The most steps a job's record keeps per run: a job that starts more (a loop of sruns) still
// runs them, and its record counts them in steps_dropped.
inline constexpr size_t kMaxStepsKept = 512;

struct StepRecord {
  uint32_t id = 0;
  int32_t attempt = 0;      // the job's restart count when the step ran
  std::string name;         // the program srun ran (Slurm's step JobName)
  std::string state;        // RUNNING, COMPLETED, FAILED or CANCELLED
  int32_t exit_code = 0;    // the tasks' largest exit code
  int32_t term_signal = 0;  // the signal that ended a task (0: none)
  Time start = kNoTime;
  Time end = kNoTime;  // kNoTime while it runs
  int32_t ntasks = 0;
  int32_t ncpus = 0;
  std::string nodes;  // Slurm's hostlist of its nodes
  // Usage of the step's tasks (as the kernel counts a waited child): largest peak RSS, its task
  // and node, and CPU time summed over every node's tasks; mean peak RSS and the least CPU of
  // one task over the batch node's tasks (those srun ran itself).
  int64_t max_rss_kib = 0;
  int32_t max_rss_task = 0;
  std::string max_rss_node;
  int64_t ave_rss_kib = 0;
  double user_cpu_seconds = 0;
  double system_cpu_seconds = 0;
  double min_cpu_seconds = 0;
  int32_t min_cpu_task = 0;
  // Who cancelled it (scancel JOB.STEP), for sacct's "CANCELLED by UID"; -1: nobody. Kept by the
  // controller, never sent by srun.
  int64_t cancelled_by = -1;

  bool ended() const { return end != kNoTime; }
  friend bool operator==(const StepRecord&, const StepRecord&) = default;
};

nlohmann::json EncodeStepRecord(const StepRecord& s);
// Checks every field (types, ranges, a known state, end not before start): an error names the
// key. A record of a step still running has no "end".
Result<StepRecord> DecodeStepRecord(const nlohmann::json& j);

// `s` as sacct shows a step of a job that has ended: a step still RUNNING then was ended with
// the job (its srun was killed with it), so it is CANCELLED at the job's end.
StepRecord StepAfterJobEnd(StepRecord s, Time job_end);

}  // namespace berth::api

#endif  // BERTH_API_STEP_RECORD_H_
