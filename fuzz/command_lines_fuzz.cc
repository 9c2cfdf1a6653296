// The command lines the controller parses for squeue, scancel and sacct (POST /v1/views/squeue,
// /v1/views/scancel and /v1/views/sacct take them from any user). The first byte picks the
// command (even: squeue; 3 modulo 4: sacct; otherwise scancel), the rest is its arguments,
// separated by NUL bytes.
// Invariants: squeue's table is whole lines, its header first unless -h, and the same when made
// twice; scancel's selection names each target with ids and its exit code is 0 or 1; sacct's
// report is whole lines (or JSON with --json) and the same when made twice.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/model/job.h"
#include "slurm/job_view.h"
#include "slurm/sacct_view.h"
#include "slurm/scancel.h"
#include "slurm/squeue_view.h"

namespace {

using berth::slurm::JobView;

// Three jobs: one running on two nodes, an array's pending tasks, and a held job.
std::vector<JobView> Jobs() {
  std::vector<JobView> jobs;
  berth::core::JobSpec spec;
  spec.name = "train";
  spec.user = "alice";
  spec.uid = 1001;
  spec.gid = 1001;
  spec.partitions = {"gpu"};
  spec.account = "ml";
  berth::slurm::JobRecordFacts f;
  f.id = 7;
  f.state = berth::core::JobState::kRunning;
  f.partition = "gpu";
  f.submit_time = 1800000000;
  f.start_time = 1800000100;
  f.nodes = {{"n1", 4, 1024, 2, 0}, {"n2", 4, 1024, 2, 0}};
  jobs.push_back(berth::slurm::JobViewOf(f, spec, nullptr, 1800000500));
  berth::core::JobSpec array = spec;
  array.array.task_ids = {0, 1, 2, 5};
  array.array.max_running = 2;
  f = {};
  f.id = 8;
  f.reason = "Priority";
  f.priority = 100;
  jobs.push_back(berth::slurm::JobViewOf(f, array, nullptr, 1800000500));
  berth::core::JobSpec held = spec;
  held.hold = berth::core::HoldKind::kUser;
  held.user = "bob";
  held.partitions = {"cpu", "gpu"};
  f = {};
  f.id = 9;
  jobs.push_back(berth::slurm::JobViewOf(f, held, nullptr, 1800000500));
  return jobs;
}

std::string Table(const berth::slurm::SqueueOptions& o, const std::vector<JobView>& jobs) {
  berth::slurm::SqueueContext ctx;
  ctx.now = 1800000500;
  berth::slurm::SqueueTableBuilder b(o, berth::slurm::SqueueFormat(o, nullptr),
                                     {{"cpu", 2}, {"gpu", 1}}, ctx);
  for (const JobView& j : jobs) b.Add(j);
  return b.Finish();
}

// The jobs as sacct's records: the three above, ended or not, one with a step.
std::vector<berth::slurm::SacctJob> SacctJobs() {
  std::vector<berth::slurm::SacctJob> out;
  for (const JobView& v : Jobs()) {
    berth::slurm::SacctJob& j = out.emplace_back();
    j.view = v;
    j.now = 1800000500;
    j.batch_cpus = 4;
    j.batch_mem_mib = 1024;
  }
  out[0].steps.emplace_back().name = "python";
  out[0].steps.back().state = "RUNNING";
  out[2].view.state = berth::core::JobState::kCancelled;
  out[2].view.end_time = 1800000400;
  return out;
}

int Sacct(const std::vector<std::string>& args) {
  const berth::slurm::SacctParse p = berth::slurm::ParseSacctArgs(args, 1800000500);
  const berth::slurm::SacctOptions& o = p.options;
  if (p.done || o.version) return 0;
  static const std::vector<berth::slurm::SacctJob> jobs = SacctJobs();
  auto report = [&] {
    const std::vector<const berth::slurm::SacctJob*> selected =
        berth::slurm::SelectSacctJobs(o, jobs, {1001, "alice"}, 1800000500);
    return o.json ? berth::slurm::SacctJson(selected, "c", o.allocations).dump()
                  : berth::slurm::RenderSacct(o, selected, "c");
  };
  const std::string text = report();
  if (!o.json && !text.empty() && text.back() != '\n') std::abort();
  if (report() != text) std::abort();
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 4096) return 0;
  const bool squeue = data[0] % 2 == 0;
  const bool sacct = data[0] % 4 == 3;
  std::vector<std::string> args{squeue ? "squeue" : sacct ? "sacct" : "scancel"};
  std::string word;
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(word);
      word.clear();
    } else {
      word += static_cast<char>(data[i]);
    }
  }
  if (size > 1) args.push_back(word);
  if (sacct) return Sacct(args);
  static const std::vector<JobView> jobs = Jobs();
  if (squeue) {
    berth::slurm::SqueueParse p = berth::slurm::ParseSqueueArgs(
        args, [](std::string_view) { return std::nullopt; }, 0);
    const berth::slurm::SqueueOptions& o = p.options;
    if (p.exit.done || o.json || o.steps || o.iterate != 0) return 0;
    if (!berth::slurm::CheckSortKeys(berth::slurm::ParseSortList(o.sort, {"cluster"})).ok()) {
      return 0;
    }
    const std::string table = Table(o, jobs);
    if (!table.empty() && table.back() != '\n') std::abort();
    if (!o.no_header && table.empty()) std::abort();
    if (Table(o, jobs) != table) std::abort();
    return 0;
  }
  berth::slurm::ScancelParse p = berth::slurm::ParseScancelArgs(args);
  if (p.done || p.options.IdsOnly()) return 0;
  const berth::slurm::ScancelSelection sel = berth::slurm::SelectScancelTargets(p.options, jobs);
  if (sel.exit_code != 0 && sel.exit_code != 1) std::abort();
  for (const berth::slurm::ScancelTarget& t : sel.targets) {
    if (t.request_ids.empty() || t.display_id.empty()) std::abort();
  }
  // The controller's form, a job at a time in one scratch view, selects the same.
  const berth::slurm::ScancelSelection streamed = berth::slurm::SelectScancelTargets(
      p.options, [&](const std::function<void(const berth::slurm::JobView&)>& visit) {
        berth::slurm::JobView scratch;
        for (const berth::slurm::JobView& j : jobs) {
          scratch = j;
          visit(scratch);
        }
      });
  if (streamed.errors != sel.errors || streamed.exit_code != sel.exit_code ||
      streamed.targets.size() != sel.targets.size()) {
    std::abort();
  }
  for (size_t k = 0; k < sel.targets.size(); ++k) {
    if (streamed.targets[k].request_ids != sel.targets[k].request_ids ||
        streamed.targets[k].display_id != sel.targets[k].display_id) {
      std::abort();
    }
  }
  return 0;
}
