// config::ApplyJobOption, the sbatch-named job options of scenario files and sbatch: each line
// of the input is "name=value" (or a bare name, a flag) applied to one JobSpec in turn. Every
// option must give an OK or an error with a message, never crash or throw.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/job_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  berth::core::JobSpec spec;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    const size_t eq = line.find('=');
    const std::string_view name = line.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : line.substr(eq + 1);
    berth::Status s = berth::config::ApplyJobOption(name, value, /*now=*/1'700'000'000, spec);
    if (!s.ok() && s.message().empty()) std::abort();
  }
  return 0;
}
