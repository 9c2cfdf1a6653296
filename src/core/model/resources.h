// Trackable resources (Slurm's TRES): CPUs, memory, GPUs, nodes, and named countables
// (other generic resources such as GPU shards, and cluster-wide licences).
#ifndef BERTH_CORE_MODEL_RESOURCES_H_
#define BERTH_CORE_MODEL_RESOURCES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace berth::core {

// A named count: "shard" x 4 on a node, "matlab" x 1 licence, "gpu:h100" x 8 in a TRES string.
struct NamedCount {
  std::string name;
  int64_t count = 0;
  friend bool operator==(const NamedCount&, const NamedCount&) = default;
};

// A TRES vector, as Slurm reports ReqTRES/AllocTRES: "cpu=4,mem=16G,node=1,billing=4,gres/gpu=2".
struct Tres {
  int64_t cpus = 0;
  int64_t mem_mib = 0;
  int64_t nodes = 0;
  int64_t gpus = 0;
  std::string gpu_type;           // when every GPU counted has one type ("h100"), else empty
  std::vector<NamedCount> other;  // "gres/shard", "license/matlab", sorted by name

  void Add(const Tres& o);
  // Slurm's text form. `billing` is printed when >= 0.
  std::string ToString(int64_t billing = -1) const;
  friend bool operator==(const Tres&, const Tres&) = default;
};

// Upper bounds on a TRES vector; kNoLimit where none applies.
inline constexpr int64_t kNoLimit = -1;
struct TresLimits {
  int64_t cpus = kNoLimit;
  int64_t mem_mib = kNoLimit;
  int64_t gpus = kNoLimit;
  int64_t nodes = kNoLimit;

  bool any() const { return cpus >= 0 || mem_mib >= 0 || gpus >= 0 || nodes >= 0; }
  friend bool operator==(const TresLimits&, const TresLimits&) = default;
};

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_RESOURCES_H_
