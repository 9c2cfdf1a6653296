// The controller's side of the Kubernetes face's port (k8s/port.h): one adapter that answers the
// face's reads from Controller::Impl's published views and runs its state-thread commands as
// Calls over the batch's transaction. Nothing else in the controller knows the face's insides;
// the face knows the controller only through this.
//
// Thread safety: as k8s::ControllerPort says. Reads take Impl's view_mu (shared); Run goes
// through Impl::Call (never from the state thread); OnPass runs on the state thread.
#ifndef BERTH_CONTROLLER_K8S_PORT_H_
#define BERTH_CONTROLLER_K8S_PORT_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "controller/controller.h"
#include "controller/job_record.h"
#include "controller/txn.h"
#include "k8s/face.h"
#include "k8s/port.h"

namespace berth::controller {

class K8sPort : public k8s::ControllerPort {
 public:
  explicit K8sPort(Controller::Impl& im) : im_(im) {}

  int64_t Now() const override;
  uint64_t WatchNext() const override;
  uint64_t WatchWait(uint64_t after, int wait_ms) override;
  std::vector<k8s::PodJob> PodJobs(const std::string& ns) const override;
  std::vector<k8s::PodJob> FacePodJobs() const override;
  std::optional<k8s::PodJob> FindPodJob(uint32_t id) const override;
  std::string OutputFile(uint32_t id) const override;
  std::vector<k8s::NodeFacts> Nodes() const override;
  k8s::UsageView Usage() const override;
  std::optional<k8s::User> IdentifyUser(const net::HttpRequest& req) const override;
  net::HttpResponse ServeApi(const net::HttpRequest& req) override;
  Result<std::optional<std::string>> GetMeta(const std::string& key) override;
  Status ScanMeta(const std::string& prefix,
                  const std::function<void(const std::string&, const std::string&)>& fn) override;
  Status PutMetaNow(const std::string& key, const std::string& value) override;
  Status Run(const std::function<Status(k8s::StateOps&)>& fn) override;
  // controller_streams.cc
  Result<std::unique_ptr<k8s::AgentStream>> OpenAgentStream(
      const k8s::PodJob& job, const nlohmann::json& request,
      const std::atomic<bool>& stopping) override;

  // The controller's per-batch hook (state thread): the face's Job controller over `t`.
  void OnPass(k8s::Face& face, Txn& t);

 private:
  class Ops;  // k8s::StateOps over one command's transaction (k8s_port.cc)

  // The published records `chosen_if` picks, as Pods.
  std::vector<k8s::PodJob> PodJobsWhere(
      const std::function<bool(const JobRecord&)>& chosen_if) const;

  Controller::Impl& im_;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_K8S_PORT_H_
