#include "controller/exec_pool.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "controller/job_record.h"

namespace berth::controller {

namespace {

void Mix(size_t& h, size_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
}

void MixText(size_t& h, const std::string& s) {
  Mix(h, std::hash<std::string>{}(s));
}

}  // namespace

size_t HashExec(const core::JobExecSpec& e) {
  // The fields that tell jobs apart in practice; equality decides the rest.
  size_t h = 0;
  MixText(h, e.script);
  for (const std::string& a : e.argv) MixText(h, a);
  for (const std::string& a : e.script_args) MixText(h, a);
  MixText(h, e.work_dir);
  MixText(h, e.stdout_pattern);
  MixText(h, e.stderr_pattern);
  MixText(h, e.command);
  MixText(h, e.comment);
  Mix(h, e.environment.size());
  for (const auto& [name, value] : e.environment) {
    MixText(h, name);
    MixText(h, value);
  }
  return h;
}

std::shared_ptr<const core::JobExecSpec> ExecPool::Intern(
    std::shared_ptr<const core::JobExecSpec> exec) {
  if (!exec) return exec;
  // The same object as the last call's (a start-up's rows share their decoded specification):
  // no hash of its environment again.
  if (exec == last_in_) return last_out_;
  last_in_ = exec;
  last_out_ = InternNew(std::move(exec));
  return last_out_;
}

std::shared_ptr<const core::JobExecSpec> ExecPool::InternNew(
    std::shared_ptr<const core::JobExecSpec> exec) {
  const size_t h = HashExec(*exec);
  auto [first, last] = pool_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    std::shared_ptr<const core::JobExecSpec> known = it->second.lock();
    if (known && *known == *exec) return known;
  }
  pool_.emplace(h, exec);
  if (pool_.size() >= sweep_at_) Sweep();
  return exec;
}

const std::shared_ptr<const std::string>& ExecPool::Text(
    const std::shared_ptr<const core::JobExecSpec>& exec) {
  constexpr size_t kMaxTexts = 4096;
  auto it = texts_.find(exec.get());
  if (it != texts_.end()) {
    const std::weak_ptr<const core::JobExecSpec>& known = it->second.exec;
    // The same object (not another one at a reused address): same owner, still alive.
    if (!known.expired() && !known.owner_before(exec) && !exec.owner_before(known)) {
      return it->second.text;
    }
    texts_.erase(it);
  }
  if (texts_.size() >= kMaxTexts) {
    std::erase_if(texts_, [](const auto& e) { return e.second.exec.expired(); });
    if (texts_.size() >= kMaxTexts) texts_.clear();
  }
  auto text = std::make_shared<const std::string>(ExecJsonText(*exec));
  return texts_.emplace(exec.get(), Encoded{exec, std::move(text)}).first->second.text;
}

void ExecPool::Sweep() {
  for (auto it = pool_.begin(); it != pool_.end();) {
    it = it->second.expired() ? pool_.erase(it) : std::next(it);
  }
  // Amortised: the next sweep comes when the live entries have doubled.
  sweep_at_ = std::max<size_t>(1024, 2 * pool_.size());
}

}  // namespace berth::controller
