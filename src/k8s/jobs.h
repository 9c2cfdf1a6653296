// batch/v1 Jobs and core/v1 Events as berth serves them (docs/kubernetes.md): the defaults and
// checks of a Job, a Job's Pods made from its template, Events, and their Table columns. Pure
// functions of their arguments.
#ifndef BERTH_K8S_JOBS_H_
#define BERTH_K8S_JOBS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "k8s/pods.h"

namespace berth::k8s {

// batch/v1 Jobs. A Job manifest checked and defaulted (parallelism, completions, completionMode,
// backoffLimit, suspend, selector, template labels), its uid and creation time set; nullopt when
// fine.
// `template_ctx` (optional): how the template is checked as a Pod (containers mode, the
// creator); its namespace, home and name suffix are set here.
std::optional<FieldProblem> DefaultJob(const nlohmann::json& job, const std::string& ns,
                                       const std::string& uid, int64_t now, nlohmann::json* out,
                                       const PodContext* template_ctx = nullptr);
// The Pod manifest of the job's pod with completion index `index` (-1 for a NonIndexed Job),
// named `name`.
nlohmann::json PodFromTemplate(const nlohmann::json& job, int index, const std::string& name);
nlohmann::json JobTableColumns();
nlohmann::json JobTableCells(const nlohmann::json& job, int64_t now);
std::optional<std::string> JobField(const nlohmann::json& job, const std::string& field);

// core/v1 Events.
nlohmann::json EventTableColumns();
nlohmann::json EventTableCells(const nlohmann::json& event, int64_t now);
std::optional<std::string> EventField(const nlohmann::json& event, const std::string& field);
// An Event about `object` (a Pod, Job or Node: its kind, namespace, name and uid are read).
nlohmann::json MakeEvent(const nlohmann::json& object, const std::string& type,
                         const std::string& reason, const std::string& message, int64_t time,
                         int count, const std::string& component);

}  // namespace berth::k8s

#endif  // BERTH_K8S_JOBS_H_
