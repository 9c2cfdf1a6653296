// The native JSON form of a job (docs/formats/job-json.md): what to run and what it needs, with
// sbatch's options as keys (times in seconds, memory in MiB). The REST API's POST /v1/jobs takes
// it, berth's JSON Lines traces use it (plus their trace keys), and the controller stores it.
#ifndef BERTH_API_JOB_JSON_H_
#define BERTH_API_JOB_JSON_H_

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "common/status.h"
#include "core/model/job.h"

namespace berth::api {

// Applies one key to `spec`, or to `exec` for the keys that say how to run the job (script,
// argv, work_dir, stdout, environment, signal, ...). `exec` may be null where those keys are
// not allowed (traces). Returns NotFound for a key the format does not have; other errors are
// InvalidArgument and name the key: "\"nodes\": expected a count or a range like \"2-4\"".
Status ApplyJobKey(std::string_view key, const nlohmann::json& value, core::JobSpec* spec,
                   core::JobExecSpec* exec);

// Decodes a whole JSON object; every key must be known. Never throws.
Status DecodeJob(const nlohmann::json& object, core::JobSpec* spec, core::JobExecSpec* exec);

// The inverse: the keys whose values differ from a default JobSpec / JobExecSpec.
// DecodeJob(EncodeJob(s, e)) gives back s and e.
nlohmann::json EncodeJob(const core::JobSpec& spec, const core::JobExecSpec* exec);

// "--signal=[{R|B}:]<sig_num|SIGNAME>[@sig_time]" -> exec's signal fields (time default 60 s).
Status ParseSignalSpec(std::string_view text, core::JobExecSpec* exec);
std::string FormatSignalSpec(const core::JobExecSpec& exec);  // "" when none
// Signal numbers by name ("USR1", "SIGUSR1", "10") for --signal and scancel; 0 if unknown.
int SignalNumber(std::string_view name);

}  // namespace berth::api

#endif  // BERTH_API_JOB_JSON_H_
