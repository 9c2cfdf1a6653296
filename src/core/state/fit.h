// Does a job's shape fit on one node's free resources, and what exactly would it get there?
// Shared by the scheduler (placement, backfill, preemption) and by ClusterState (submit-time
// feasibility, re-checking a Plan before applying it), so that both agree by construction.
#ifndef BERTH_CORE_STATE_FIT_H_
#define BERTH_CORE_STATE_FIT_H_

#include <cstdint>
#include <vector>

#include "core/model/job.h"
#include "core/state/shape.h"

namespace berth::core {

struct NodeInfo;

// The free part of a node, as the current pass sees it.
struct NodeFree {
  int32_t cpus = 0;
  int64_t mem_mib = 0;
  uint64_t gpus = 0;  // mask of free devices (held neither whole nor in part)
  // Per device, the thousandths that shares hold; empty while no device of the node is shared.
  // A device outside `gpus` with 0 here is held whole.
  std::vector<int32_t> gpu_milli;
  std::vector<int64_t> gres;  // parallel to the node's gres (empty when it has none)
  int64_t sole_user = -1;     // see NodeInfo::sole_user
  bool user_exclusive = false;

  // Copies skip the two vectors when they are empty, as they nearly always are: a pass copies a
  // node's free part for every node it looks at, and the vectors' copies were most of that.
  // (Assignments are moves in the pass; copy-assigning an empty vector allocates nothing.)
  NodeFree() = default;
  NodeFree(const NodeFree& o)
      : cpus(o.cpus),
        mem_mib(o.mem_mib),
        gpus(o.gpus),
        sole_user(o.sole_user),
        user_exclusive(o.user_exclusive) {
    if (!o.gpu_milli.empty()) gpu_milli = o.gpu_milli;
    if (!o.gres.empty()) gres = o.gres;
  }
  NodeFree(NodeFree&&) noexcept = default;
  NodeFree& operator=(const NodeFree&) = default;
  NodeFree& operator=(NodeFree&&) noexcept = default;
  ~NodeFree() = default;

  static NodeFree Of(const NodeInfo& n);    // the node's current free resources
  static NodeFree Full(const NodeInfo& n);  // the node with nothing running
  // Subtracts / adds back an allocation made by `user` (an interned user id) (exclusive_user as the
  // job asked).
  void Take(const NodeInfo& n, const NodeAllocation& a, int32_t user, bool exclusive_user);
  // Subtracts the resources only (a reservation: nobody runs there yet).
  void Subtract(const NodeInfo& n, const NodeAllocation& a);
  // Adds back an allocation; the user-sharing fields are left as they are (conservative).
  void Give(const NodeInfo& n, const NodeAllocation& a);

  // Thousandths held by shares on device `d` (0 when free or held whole).
  int32_t SharedMilli(int d) const {
    return static_cast<size_t>(d) < gpu_milli.size() ? gpu_milli[static_cast<size_t>(d)] : 0;
  }
  // Room left for shares on device `d`: 1000 when free, 0 when held whole.
  int32_t ShareRoom(int d) const;
};

// The device among `allowed` that a share of `milli` goes to: best fit, the device with the least
// room left that still holds it (a device already shared before a free one), lowest index on
// ties; -1 when none has room. The one place the device choice for shares is made.
int ChooseShareDevice(uint64_t allowed, const NodeFree& free, int32_t milli);

// The mask of the node's GPU devices of `type` (every device for kAnyGpuType).
uint64_t GpuTypeMask(const NodeInfo& n, int16_t type);

// Static capability: could this node ever host one unit of the shape (one node share in node
// mode, one task in task mode) if it were empty? Ignores features and node state.
bool NodeCanEverHost(const JobShape& shape, const NodeInfo& n);

// Node mode: fills `out` with what the job gets on this node and returns true, or returns false.
bool FitNode(const JobShape& shape, const NodeInfo& n, const NodeFree& free, int32_t user,
             NodeAllocation* out);

// Task mode: how many tasks (at most `limit`) fit on this node, and fills `out` for that many.
int32_t FitTasks(const JobShape& shape, const NodeInfo& n, const NodeFree& free, int32_t user,
                 int32_t limit, NodeAllocation* out);

}  // namespace berth::core

#endif  // BERTH_CORE_STATE_FIT_H_
