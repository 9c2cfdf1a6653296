// Candidate nodes: for a job in one partition, the nodes it could ever use (in the partition,
// matching its features, not excluded, with its GPU type and gres kinds, large enough), and of
// those, the usable ones. Cached across passes; rebuilt when nodes are added or change state.
// Also explains, node by node, why a blocked job does not fit (the reason detail).
#ifndef BERTH_CORE_SCHED_CANDIDATES_H_
#define BERTH_CORE_SCHED_CANDIDATES_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/bitset.h"
#include "core/sched/pass_state.h"

namespace berth::core {

struct CandidateSet {
  Bitset static_nodes;               // could ever host the job
  Bitset usable;                     // static_nodes that are usable now
  std::vector<Bitset> alternatives;  // matching-OR alternatives (nodes with each), if any
};

class CandidateCache {
 public:
  // REQUIRES: slot < e.partitions.size()
  const CandidateSet& Get(const ClusterState& cs, const JobEntry& e, size_t slot);

 private:
  uint64_t config_generation_ = ~uint64_t{0};
  uint64_t state_generation_ = ~uint64_t{0};
  std::vector<std::unique_ptr<CandidateSet>> cache_;  // by shape id
};

// Why the job does not fit in partition `slot` now, as counts of nodes by cause, e.g.
// "16 nodes: 9 lack 4 free h100 GPUs, 4 lack feature ib, 3 drained".
std::string ExplainNoFit(const PassState& pass, const JobEntry& e, size_t slot, Duration limit);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_CANDIDATES_H_
