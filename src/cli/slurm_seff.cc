// seff JOBID (and `berth eff JOBID`): a job's efficiency in the layout of Slurm's seff script,
// with suggestions (src/slurm/efficiency.h).
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <string>

#include "cli/client.h"
#include "cli/commands.h"
#include "slurm/efficiency.h"
#include "slurm/job_view.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr const char* kUsage =
    "Usage: seff [Options] <Jobid>\n"
    "       Options:\n"
    "       -h    this help\n"
    "       -v    the version\n"
    "       -d    also print the raw numbers the report is made of\n";

int64_t AllocatedMemMib(const json& record) {
  int64_t mem = 0;
  if (record.contains("allocation") && record.at("allocation").contains("nodes") &&
      record.at("allocation").at("nodes").is_array()) {
    for (const json& n : record.at("allocation").at("nodes")) mem += n.value("mem_mib", int64_t{0});
  }
  return mem;
}

}  // namespace

int SeffMain(int argc, char** argv) {
  bool debug = false;
  std::vector<std::string> ids;
  // Perl's Getopt::Std, as the seff script: single letters, which may be bundled.
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() < 2 || a[0] != '-') {
      ids.push_back(a);
      continue;
    }
    for (size_t k = 1; k < a.size(); ++k) {
      if (a[k] == 'v') {
        std::puts("seff Version 2.1 (berth)");
        return 1;
      }
      if (a[k] == 'd') {
        debug = true;
      } else {
        std::fputs(kUsage, stdout);  // -h, and anything unknown
        return 1;
      }
    }
  }
  if (ids.size() != 1) {
    std::fputs(kUsage, stdout);
    return 1;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("seff", c.status());
  Result<json> r = (*c)->Call("GET", "/v1/jobs/" + ids.front());
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kNotFound ||
        r.status().code() == StatusCode::kInvalidArgument) {
      std::fputs("Job not found.\n", stderr);
      return 2;
    }
    return Fail("seff", r.status());
  }
  Result<slurm::JobView> v = slurm::JobViewFromJson(*r, std::time(nullptr));
  if (!v.ok()) return Fail("seff", v.status());
  slurm::SeffContext ctx{ClusterName(**c), AllocatedMemMib(*r)};
  if (debug) std::fputs(slurm::SeffDebug(*v, ctx).c_str(), stdout);
  std::fputs(slurm::SeffReport(*v, ctx).c_str(), stdout);
  return 0;
}

}  // namespace berth::cli
