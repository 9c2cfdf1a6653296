// Helpers shared by sacct's option parsing, its view (sacct_view.cc) and its step rows
// (sacct_steps.cc); not part of the interface.
#ifndef BERTH_SLURM_SACCT_INTERNAL_H_
#define BERTH_SLURM_SACCT_INTERNAL_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/step_record.h"
#include "common/time.h"
#include "slurm/sacct_view.h"

namespace berth::slurm::sacct_internal {

std::optional<int64_t> Number(std::string_view s);  // a whole decimal integer

std::string TimeOrUnknown(Time t);                 // sacct's time stamp, "Unknown" when unset
std::string JobIdText(const JobView& v);           // "12", "14_2"
std::string FormatElapsed(Duration secs);          // sacct's [D-]HH:MM:SS
nlohmann::json TresList(const std::string& tres);  // "cpu=4,mem=1G" as the REST API lists it
nlohmann::json ExitJson(int code, int signal);     // the REST API's exit_code object
// A step's "tres" object as Slurm's REST API gives it: nothing under "requested", its peak (and
// mean) memory under "consumed", what it holds under "allocated".
nlohmann::json StepTres(nlohmann::json consumed_max, nlohmann::json consumed_average,
                        nlohmann::json allocated);

// The value of field `f` in step `s`'s row (JOB.N) of job `j`, and its --json entry.
std::string StepRowValue(std::string_view f, const SacctJob& j, const api::StepRecord& s,
                         const std::string& cluster);
nlohmann::json StepJson(const SacctJob& j, const api::StepRecord& s);

}  // namespace berth::slurm::sacct_internal

#endif  // BERTH_SLURM_SACCT_INTERNAL_H_
