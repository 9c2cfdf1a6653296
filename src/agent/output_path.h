// The file names of a batch job's stdin/stdout/stderr, from Slurm's filename patterns (sbatch
// --output/--error/--input), expanded the way Slurm 22.05's slurmstepd does for a batch job
// (src/slurmd/common/fname.c):
//
//   %%  a '%'                      %j  the job id             %J  the job id (see below)
//   %A  the array's job id, or the job id when the job is not an array task
//   %a  the array task id; 4294967294 (Slurm's NO_VAL) when the job is not an array task
//   %x  the job name               %u  the user name          %N  this node's name
//   %n  this node's index in the job (0 for the batch step)   %t  the task id (0)
//   %s  the step ("batch")
//
// A number between '%' and the letter zero-pads a numeric field to that width, at most 10
// ("%5j" -> 00042); on a text field (%x %u %N %s) the width is ignored. An unknown letter stays
// as written ("%q" -> "%q"; with a width only the last digit stays, as in Slurm: "%5q" -> "5q",
// and likewise at the end of the pattern: "a%52" -> "a2").
// If the pattern holds a backslash anywhere, nothing is expanded and the backslashes are removed
// ("\\" keeps one). A pattern of digits only names a task: the batch step is task 0, so "0" is
// the file "0" and any other number is /dev/null.
//
// %J: Slurm prints "jobid.stepid"; the batch step has no numeric step id, so berth prints the job
// id alone for %J (as Slurm's own expansion for batch jobs does) and "batch" for %s.
//
// Thread safety: all functions are pure.
#ifndef BERTH_AGENT_OUTPUT_PATH_H_
#define BERTH_AGENT_OUTPUT_PATH_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace berth::agent {

struct OutputPatternFields {
  uint32_t job_id = 0;
  uint32_t array_job_id = 0;   // 0 when not an array task
  int32_t array_task_id = -1;  // -1 when not an array task
  std::string job_name;
  std::string user;
  std::string node_name;
  int32_t node_index = 0;
};

// The expanded pattern, not yet joined to the working directory.
std::string ExpandOutputPattern(std::string_view pattern, const OutputPatternFields& fields);

// The path to open: the expanded pattern, relative ones under work_dir (joined as Slurm does,
// by text: work_dir + "/" + name). An empty pattern is `default_pattern`.
std::string OutputPath(std::string_view pattern, std::string_view default_pattern,
                       const OutputPatternFields& fields, std::string_view work_dir);

// Slurm's default stdout pattern: "slurm-%j.out", or "slurm-%A_%a.out" for array tasks.
std::string_view DefaultStdoutPattern(bool array_task);

}  // namespace berth::agent

#endif  // BERTH_AGENT_OUTPUT_PATH_H_
