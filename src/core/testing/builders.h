// Fixture builders for tests (header-only, test code only): terse clusters and jobs, in the
// style of the Kubernetes scheduler's MakePod().Priority(p).Obj().
//
//   ClusterState cs = MakeCluster().Nodes("gpu", 4, 64, 512 * 1024, 8, "h100").Build();
//   JobSpec j = MakeJob().User("alice").Nodes(2).GpusPerNode(8).Time(3600).Obj();
#ifndef BERTH_CORE_TESTING_BUILDERS_H_
#define BERTH_CORE_TESTING_BUILDERS_H_

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/model/cluster_spec.h"
#include "core/model/job.h"
#include "core/state/cluster_state.h"

namespace berth::core::testing {

class MakeCluster {
 public:
  // Adds `count` nodes named prefix01.. with the given resources (GPUs of one type).
  MakeCluster& Nodes(const std::string& prefix, int count, int cpus, int64_t mem_mib, int gpus = 0,
                     const std::string& gpu_type = "", std::vector<std::string> features = {},
                     std::vector<std::string> topology = {}) {
    for (int i = 1; i <= count; ++i) {
      NodeSpec n;
      char name[64];
      std::snprintf(name, sizeof(name), "%s%02d", prefix.c_str(), i);
      n.name = name;
      n.cpus = cpus;
      n.mem_mib = mem_mib;
      n.gpus.assign(gpus, gpu_type);
      n.features = features;
      n.topology = topology;
      spec_.nodes.push_back(std::move(n));
    }
    return *this;
  }
  MakeCluster& Node(NodeSpec n) {
    spec_.nodes.push_back(std::move(n));
    return *this;
  }
  MakeCluster& Partition(PartitionSpec p) {
    spec_.partitions.push_back(std::move(p));
    return *this;
  }
  MakeCluster& Qos(QosSpec q) {
    spec_.qos.push_back(std::move(q));
    return *this;
  }
  MakeCluster& Account(AccountSpec a) {
    spec_.accounts.push_back(std::move(a));
    return *this;
  }
  MakeCluster& User(UserSpec u) {
    spec_.users.push_back(std::move(u));
    return *this;
  }
  MakeCluster& License(const std::string& name, int64_t count) {
    spec_.licenses.push_back({name, count});
    return *this;
  }
  ClusterSpec Spec() const { return spec_; }
  // REQUIRES: the spec is valid (aborts the test otherwise).
  ClusterState Build() const {
    Result<ClusterState> r = ClusterState::Create(spec_);
    if (!r.ok()) {
      std::fprintf(stderr, "MakeCluster: %s\n", r.status().ToString().c_str());
      std::abort();
    }
    return std::move(r).value();
  }

 private:
  ClusterSpec spec_;
};

class MakeJob {
 public:
  MakeJob() {
    spec_.user = "alice";
    spec_.time_limit = 3600;
  }
  MakeJob& Name(std::string v) {
    spec_.name = std::move(v);
    return *this;
  }
  MakeJob& User(std::string v, uint32_t uid = 1000) {
    spec_.user = std::move(v);
    spec_.uid = uid;
    return *this;
  }
  MakeJob& Account(std::string v) {
    spec_.account = std::move(v);
    return *this;
  }
  MakeJob& Partition(std::string v) {
    spec_.partitions.push_back(std::move(v));
    return *this;
  }
  MakeJob& QosName(std::string v) {
    spec_.qos = std::move(v);
    return *this;
  }
  MakeJob& Time(Duration v) {
    spec_.time_limit = v;
    return *this;
  }
  MakeJob& TimeMin(Duration v) {
    spec_.time_min = v;
    return *this;
  }
  MakeJob& Nodes(int32_t min, int32_t max = 0) {
    spec_.min_nodes = min;
    spec_.max_nodes = max;
    return *this;
  }
  MakeJob& Tasks(int32_t v) {
    spec_.ntasks = v;
    return *this;
  }
  MakeJob& TasksPerNode(int32_t v) {
    spec_.ntasks_per_node = v;
    return *this;
  }
  MakeJob& CpusPerTask(int32_t v) {
    spec_.cpus_per_task = v;
    return *this;
  }
  MakeJob& CpusPerGpu(int32_t v) {
    spec_.cpus_per_gpu = v;
    return *this;
  }
  MakeJob& Mem(int64_t v) {
    spec_.mem_per_node_mib = v;
    return *this;
  }
  MakeJob& MemPerCpu(int64_t v) {
    spec_.mem_per_cpu_mib = v;
    return *this;
  }
  MakeJob& MemPerGpu(int64_t v) {
    spec_.mem_per_gpu_mib = v;
    return *this;
  }
  MakeJob& Gpus(int32_t v) {
    spec_.gpus = v;
    return *this;
  }
  MakeJob& GpusPerNode(int32_t v, std::string type = "") {
    spec_.gpus_per_node = v;
    spec_.gpu_type = std::move(type);
    return *this;
  }
  MakeJob& GpuMilli(int32_t v, std::string type = "") {
    spec_.gpu_milli = v;
    spec_.gpu_type = std::move(type);
    return *this;
  }
  MakeJob& GpusPerTask(int32_t v) {
    spec_.gpus_per_task = v;
    return *this;
  }
  MakeJob& Gres(std::string name, int64_t count) {
    spec_.gres.push_back({std::move(name), count});
    return *this;
  }
  MakeJob& License(std::string name, int64_t count) {
    spec_.licenses.push_back({std::move(name), count});
    return *this;
  }
  MakeJob& Exclusive(ExclusiveMode m = ExclusiveMode::kNode) {
    spec_.exclusive = m;
    return *this;
  }
  MakeJob& Nice(int32_t v) {
    spec_.nice = v;
    return *this;
  }
  MakeJob& Priority(int64_t v) {
    spec_.admin_priority = v;
    return *this;
  }
  MakeJob& Hold(HoldKind k = HoldKind::kUser) {
    spec_.hold = k;
    return *this;
  }
  MakeJob& Begin(berth::Time t) {
    spec_.begin_time = t;
    return *this;
  }
  MakeJob& NodeList(std::vector<std::string> v) {
    spec_.nodelist = std::move(v);
    return *this;
  }
  MakeJob& Exclude(std::vector<std::string> v) {
    spec_.exclude = std::move(v);
    return *this;
  }
  MakeJob& Depend(Dependency d) {
    spec_.dependency = std::move(d);
    return *this;
  }
  MakeJob& Array(std::vector<int32_t> ids, int32_t max_running = 0) {
    spec_.array.task_ids = std::move(ids);
    spec_.array.max_running = max_running;
    return *this;
  }
  MakeJob& Reservation(std::string v) {
    spec_.reservation = std::move(v);
    return *this;
  }
  MakeJob& NoRequeue() {
    spec_.requeue = false;
    return *this;
  }
  JobSpec Obj() const { return spec_; }

 private:
  JobSpec spec_;
};

inline PartitionSpec MakePartition(std::string name, std::vector<std::string> nodes,
                                   bool is_default = false) {
  PartitionSpec p;
  p.name = std::move(name);
  p.nodes = std::move(nodes);
  p.is_default = is_default;
  return p;
}

}  // namespace berth::core::testing

#endif  // BERTH_CORE_TESTING_BUILDERS_H_
