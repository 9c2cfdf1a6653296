// ExecPool: jobs whose run specifications are equal share one copy of it. A user's jobs mostly
// come from one shell (the same exported environment, often the same script and output pattern),
// and that environment is most of what a pending job weighs: sharing it keeps the controller's
// memory per pending job small.
//
// Thread safety: none; the controller's state thread owns it.
#ifndef BERTH_CONTROLLER_EXEC_POOL_H_
#define BERTH_CONTROLLER_EXEC_POOL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/model/job.h"

namespace berth::controller {

class ExecPool {
 public:
  // The pooled copy equal to `exec` (which becomes the pooled copy when none is). Null stays null.
  std::shared_ptr<const core::JobExecSpec> Intern(std::shared_ptr<const core::JobExecSpec> exec);

  // Entries, including those whose jobs are gone and not yet swept.
  size_t size() const { return pool_.size(); }

  // ExecJsonText(*exec), encoded once for as long as it stays among the last few thousand asked
  // for (every record the controller writes names its run specification: store::JobRow::exec).
  // REQUIRES: exec is not null. The reference is valid until the next call; the text it holds
  // never changes.
  const std::shared_ptr<const std::string>& Text(
      const std::shared_ptr<const core::JobExecSpec>& exec);

 private:
  void Sweep();
  std::shared_ptr<const core::JobExecSpec> InternNew(std::shared_ptr<const core::JobExecSpec> exec);

  struct Encoded {
    std::weak_ptr<const core::JobExecSpec> exec;
    std::shared_ptr<const std::string> text;
  };

  std::unordered_multimap<size_t, std::weak_ptr<const core::JobExecSpec>> pool_;
  size_t sweep_at_ = 1024;  // sweep expired entries when the pool reaches this size
  std::unordered_map<const core::JobExecSpec*, Encoded> texts_;
  // The last Intern's argument and answer (held: the address names that object alone).
  std::shared_ptr<const core::JobExecSpec> last_in_, last_out_;
};

// A hash of the specification's content (equal specifications hash equal).
size_t HashExec(const core::JobExecSpec& e);

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_EXEC_POOL_H_
