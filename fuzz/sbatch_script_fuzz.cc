// sbatch reading a batch script: slurm::ParseSbatch for `sbatch job.sh` where job.sh is the
// input. That runs the script checks, the #SBATCH directive words, getopt over them, each
// option's value parser and the building of the job. Invariants: a failure says something in
// whole lines, and a job sbatch would submit is one the REST API decodes (DecodeJob of its
// EncodeJob), since that is how `sbatch` hands it to the controller.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "api/job_json.h"
#include "slurm/sbatch_job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace slurm = berth::slurm;
  const std::string script(reinterpret_cast<const char*>(data), size);
  slurm::SbatchInputs in;
  in.args = {"job.sh"};
  in.env = {{"HOME", "/home/u"}, {"USER", "u"}, {"PATH", "/usr/bin:/bin"}};
  in.cwd = "/home/u";
  in.host = "login1";
  in.now = 1'700'000'000;
  in.read_file = [&script](const std::string& path) -> berth::Result<std::string> {
    if (path == "job.sh") return script;
    return berth::Status::NotFound(path + ": No such file or directory");
  };
  slurm::SbatchOutcome out = slurm::ParseSbatch(in);
  if (const auto* failure = std::get_if<slurm::SbatchFailure>(&out)) {
    if (failure->text.empty() || failure->text.back() != '\n') std::abort();
  } else if (const auto* request = std::get_if<slurm::SbatchRequest>(&out)) {
    const nlohmann::json body = berth::api::EncodeJob(request->spec, &request->exec);
    berth::core::JobSpec spec;
    berth::core::JobExecSpec exec;
    if (!berth::api::DecodeJob(body, &spec, &exec).ok()) std::abort();
  }
  return 0;
}
