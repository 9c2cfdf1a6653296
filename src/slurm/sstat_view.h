// sstat (Slurm 22.05 src/sstat) over what berth measures of running jobs: the node agents'
// readings of each job's cgroup (GET /v1/usage/jobs: CPU time so far, the working set now, and
// the largest working set seen at a heartbeat) shown as the job's batch step (JOB.batch), and the
// running srun steps berth knows (GET /v1/jobs?steps=1) with their task counts and nodes only.
//
// Layout: Slurm's field names and widths, print_fields' header and dashed line, text cut with a
// '+', one space after each field; -p/-P '|'-delimited.
//
// Thread safety: ParseSstatArgs uses getopt_long (process-wide state); the rest is pure.
#ifndef BERTH_SLURM_SSTAT_VIEW_H_
#define BERTH_SLURM_SSTAT_VIEW_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/step_record.h"
#include "common/status.h"
#include "slurm/view_options.h"

namespace berth::slurm {

// One -j item: JOB, JOB.batch or JOB.N.
struct SstatJobId {
  uint32_t job = 0;
  enum class Step { kDefault, kBatch, kNumber } step = Step::kDefault;
  uint32_t step_id = 0;
};

struct SstatField {
  std::string name;
  int width = 0;
};

struct SstatOptions {
  std::vector<SstatJobId> jobs;    // -j and operands
  bool all_steps = false;          // -a
  std::vector<SstatField> fields;  // -o, else Slurm's default list
  int parsable = 0;                // 1: -p, 2: -P
  bool no_header = false;          // -n
};

struct SstatParse {
  SstatOptions options;
  ParseExit exit;
};

// Parses sstat's command line (args[0] is the program name): unknown fields, bad job ids and no
// job at all end it with Slurm's messages (exit 1).
SstatParse ParseSstatArgs(const std::vector<std::string>& args);

// A running job as sstat needs it: its node(s) and running srun steps, and the agent's reading.
struct SstatJob {
  uint32_t id = 0;
  bool running = false;
  std::string nodes;  // hostlist of its nodes
  std::string batch_node;
  std::vector<api::StepRecord> steps;  // running srun steps
  bool measured = false;
  double cpu_seconds = 0;
  int64_t memory_bytes = 0, max_memory_bytes = 0;
};

// Joins GET /v1/jobs?steps=1 and GET /v1/usage/jobs. Errors (kInvalidArgument) on answers of the
// wrong shape.
Result<std::vector<SstatJob>> SstatJobsFromJson(const nlohmann::json& jobs,
                                                const nlohmann::json& usage);

// What sstat prints on stdout (header unless -n, then the rows) and on stderr (Slurm's errors for
// a job it cannot stat).
struct SstatOutput {
  std::string out, err;
};
SstatOutput RenderSstat(const SstatOptions& o, const std::vector<SstatJob>& jobs);

// Memory as sstat prints it from KiB: "2048K" -> "2M" when it divides exactly, else in K.
std::string SstatMemory(int64_t bytes);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SSTAT_VIEW_H_
