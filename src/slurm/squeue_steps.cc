// squeue -s (squeue_view.h): the running steps of the running jobs, as Slurm 22.05 lists them.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "api/step_record.h"
#include "common/slurm_time.h"
#include "slurm/squeue_view.h"

namespace berth::slurm {
namespace {

using nlohmann::json;

struct StepField {
  char letter;
  const char* header;
  bool cut;  // whether a right-justified value is cut to the width
  std::string (*value)(const SqueueStepRow& r, Time now);
};

const StepField kStepFields[] = {
    {'i', "STEPID", true, [](const SqueueStepRow& r, Time) { return r.step_id; }},
    {'j', "NAME", true, [](const SqueueStepRow& r, Time) { return r.name; }},
    {'P', "PARTITION", true, [](const SqueueStepRow& r, Time) { return r.partition; }},
    {'u', "USER", true, [](const SqueueStepRow& r, Time) { return r.user; }},
    {'M', "TIME", false,
     [](const SqueueStepRow& r, Time now) {
       return FormatElapsed(r.start == kNoTime ? 0 : std::max<Duration>(0, now - r.start));
     }},
    {'l', "TIME_LIMIT", false, [](const SqueueStepRow&, Time) { return std::string("UNLIMITED"); }},
    {'S', "START_TIME", true, [](const SqueueStepRow& r, Time) { return SqueueTimeText(r.start); }},
    {'N', "NODELIST", false, [](const SqueueStepRow& r, Time) { return r.nodes; }},
    {'A', "TASKS", true, [](const SqueueStepRow& r, Time) { return std::to_string(r.ntasks); }},
};

const StepField* FindStepField(std::string_view key) {
  for (const StepField& f : kStepFields) {
    if (key.size() == 1 && key[0] == f.letter) return &f;
  }
  return nullptr;
}

}  // namespace

bool IsStepLetter(std::string_view key) {
  return FindStepField(key) != nullptr;
}

std::vector<SqueueStepRow> SqueueStepRows(const json& jobs, Time now, SqueueFilter filter,
                                          const std::vector<std::string>& step_ids) {
  if (filter.states.empty()) filter.states = {core::JobState::kRunning};
  std::map<uint32_t, const json*> steps_of;
  for (const json& j : jobs) {
    if (j.is_object() && j.contains("steps") && j.contains("id") && j.at("id").is_number()) {
      steps_of[j.at("id").get<uint32_t>()] = &j.at("steps");
    }
  }
  std::vector<SqueueStepRow> out;
  auto add = [&](SqueueStepRow row) {
    if (!step_ids.empty() &&
        std::find(step_ids.begin(), step_ids.end(), row.step_id) == step_ids.end()) {
      return;
    }
    out.push_back(std::move(row));
  };
  for (const SqueueRow& r : FilterRows(SqueueRows(jobs, now, true), filter)) {
    const JobView& v = r.job;
    if (v.state != core::JobState::kRunning) continue;  // a suspended job's steps are stopped
    const std::string id = v.array_task_id >= 0 ? std::to_string(v.array_job_id) + "_" +
                                                      std::to_string(v.array_task_id)
                                                : std::to_string(v.job_id);
    SqueueStepRow batch;
    batch.step_id = id + ".batch";
    batch.name = "batch";
    batch.partition = v.partition;
    batch.user = v.user;
    batch.nodes = v.node_names.empty() ? "" : v.node_names.front();
    batch.start = v.start_time;
    batch.ntasks = 1;
    add(std::move(batch));
    auto it = steps_of.find(v.job_id);
    if (it == steps_of.end() || !it->second->is_array()) continue;
    for (const json& s : *it->second) {
      Result<api::StepRecord> step = api::DecodeStepRecord(s);
      if (!step.ok() || step->ended()) continue;
      SqueueStepRow row;
      row.step_id = id + "." + std::to_string(step->id);
      row.name = step->name;
      row.partition = v.partition;
      row.user = v.user;
      row.nodes = step->nodes;
      row.start = step->start;
      row.ntasks = step->ntasks;
      add(std::move(row));
    }
  }
  return out;
}

std::string RenderSqueueSteps(const OutputFormat& format, const std::vector<SqueueStepRow>& rows,
                              bool no_header, Time now) {
  std::string out;
  if (!no_header) {
    out += RenderLine(format, [](const FormatField& f) {
      const StepField* field = FindStepField(f.key);
      return field == nullptr ? Cell{} : Cell{field->header, true};
    });
    out += '\n';
  }
  for (const SqueueStepRow& row : rows) {
    out += RenderLine(format, [&](const FormatField& f) {
      const StepField* field = FindStepField(f.key);
      return field == nullptr ? Cell{} : Cell{field->value(row, now), field->cut};
    });
    out += '\n';
  }
  return out;
}

}  // namespace berth::slurm
