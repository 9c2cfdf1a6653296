// A fake of the Kubernetes face's port (port.h) for the face's unit tests (face_test.cc): jobs
// and nodes in maps, the store's meta keys in a map written only by commands that succeed, and a
// log of what the face asked (submits, test submits, deletes, node actions). Single-threaded:
// Run calls its function at once. Test code only.
#ifndef BERTH_K8S_FACE_TEST_PORT_H_
#define BERTH_K8S_FACE_TEST_PORT_H_

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k8s/port.h"
#include "net/http.h"

namespace berth::k8s::facetest {

// A request to the face as `who` (a bearer token the FakePort knows; "" sends none).
inline net::HttpRequest FaceRequest(const std::string& method, const std::string& path,
                                    const std::string& body, const std::string& who,
                                    const std::string& content_type) {
  net::HttpRequest req;
  req.method = method;
  req.path = path;
  req.target = path;
  req.body = body;
  if (!who.empty()) req.headers["authorization"] = "Bearer " + who;
  req.headers["content-type"] = content_type;
  return req;
}

class FakePort : public ControllerPort, public StateOps {
 public:
  int64_t now = 1796270518;
  uint64_t seq = 10;
  std::map<uint32_t, PodJob> jobs;
  std::vector<NodeFacts> nodes;
  std::map<std::string, std::string> meta;  // the store's meta keys
  std::map<std::string, User> tokens;       // "Bearer T" -> who
  bool stopping = false;                    // Run answers UNAVAILABLE
  Status submit_status = Status::Ok();      // SubmitPod's answer (when not OK)
  // What the face asked.
  std::vector<std::pair<User, PodMapping>> submits;
  std::vector<PodMapping> test_submits;
  std::vector<uint32_t> deleted;
  std::vector<std::string> node_actions;  // "drain node1 by alice"
  int runs = 0;
  uint32_t next_id = 100;

  // ControllerPort
  int64_t Now() const override { return now; }
  uint64_t WatchNext() const override { return seq; }
  uint64_t WatchWait(uint64_t after, int) override { return after; }
  std::vector<PodJob> PodJobs(const std::string& ns) const override {
    std::vector<PodJob> out;
    for (const auto& [id, j] : jobs) {
      const bool slurm = !j.meta;
      if (!ns.empty() && slurm != (ns == kSlurmNamespace)) continue;
      if (!ns.empty() && !slurm && j.meta->value("namespace", "") != ns) continue;
      out.push_back(j);
    }
    return out;
  }
  std::vector<PodJob> FacePodJobs() const override {
    std::vector<PodJob> out;
    for (const auto& [id, j] : jobs) {
      if (j.meta) out.push_back(j);
    }
    return out;
  }
  std::optional<PodJob> FindPodJob(uint32_t id) const override {
    auto it = jobs.find(id);
    if (it == jobs.end()) return std::nullopt;
    return it->second;
  }
  std::string OutputFile(uint32_t) const override { return "/nonexistent/out"; }
  std::vector<NodeFacts> Nodes() const override { return nodes; }
  std::optional<User> IdentifyUser(const net::HttpRequest& req) const override {
    auto it = tokens.find(req.Header("authorization"));
    if (it == tokens.end()) return std::nullopt;
    return it->second;
  }
  net::HttpResponse ServeApi(const net::HttpRequest&) override {
    net::HttpResponse r;
    r.status = 299;  // a marker: berth's own API answered
    return r;
  }
  Result<std::optional<std::string>> GetMeta(const std::string& key) override {
    auto it = meta.find(key);
    if (it == meta.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Status ScanMeta(const std::string& prefix,
                  const std::function<void(const std::string&, const std::string&)>& fn) override {
    for (const auto& [k, v] : meta) {
      if (k.rfind(prefix, 0) == 0) fn(k, v);
    }
    return Status::Ok();
  }
  Status PutMetaNow(const std::string& key, const std::string& value) override {
    meta[key] = value;
    return Status::Ok();
  }
  Status Run(const std::function<Status(StateOps&)>& fn) override {
    if (stopping) return Status::Unavailable("the controller is stopping");
    ++runs;
    staged_.clear();
    Status st = fn(*this);
    if (!st.ok()) return st;  // all-or-nothing: nothing staged is kept
    for (auto& [key, value] : staged_) {
      if (value) {
        meta[key] = *value;
      } else {
        meta.erase(key);
      }
    }
    return st;
  }

  // StateOps
  std::optional<PodJob> Job(uint32_t id) override { return FindPodJob(id); }
  Result<uint32_t> SubmitPod(const User& who, const PodMapping& m) override {
    if (!submit_status.ok()) return submit_status;
    submits.emplace_back(who, m);
    PodJob j;
    j.id = next_id++;
    j.uid = who.uid;
    j.meta = std::make_shared<const nlohmann::json>(m.meta);
    j.facts.job_id = j.id;
    j.facts.state = "PENDING";
    j.facts.user = who.name;
    j.facts.submit_time = now;
    j.facts.meta = j.meta.get();
    jobs[j.id] = j;
    return j.id;
  }
  Status TestSubmitPod(const User&, const PodMapping& m) override {
    test_submits.push_back(m);
    return Status::Ok();
  }
  void DeletePod(uint32_t id) override {
    deleted.push_back(id);
    if (auto it = jobs.find(id); it != jobs.end()) {
      it->second.deleted = true;
      it->second.facts.deleted_at = now;
    }
  }
  Status SetPodMeta(uint32_t id, const nlohmann::json& labels,
                    const nlohmann::json& annotations) override {
    auto it = jobs.find(id);
    if (it == jobs.end() || !it->second.meta) return Status::NotFound("gone");
    nlohmann::json m = *it->second.meta;
    m["labels"] = labels;
    m["annotations"] = annotations;
    it->second.meta = std::make_shared<const nlohmann::json>(std::move(m));
    it->second.facts.meta = it->second.meta.get();
    return Status::Ok();
  }
  Result<std::string> NodeAction(const User& who, const std::string& node,
                                 const std::string& action, const std::string&) override {
    node_actions.push_back(action + " " + node + " by " + who.name);
    for (NodeFacts& n : nodes) {
      if (n.name == node) n.state = action == "drain" ? "DRAINED" : "IDLE";
    }
    return std::string(action == "drain" ? "DRAINED" : "IDLE");
  }
  void PutMeta(const std::string& key, const std::string& value) override {
    staged_.emplace_back(key, value);
  }
  void DeleteMeta(const std::string& key) override { staged_.emplace_back(key, std::nullopt); }
  size_t ReleaseGang(const std::vector<uint32_t>&) override { return 0; }

  // A Slurm job (a Pod in namespace "slurm" named job-ID), owned by `uid`.
  PodJob& AddSlurmJob(uint32_t id, uint32_t uid) {
    PodJob j;
    j.id = id;
    j.uid = uid;
    j.facts.job_id = id;
    j.facts.state = "RUNNING";
    j.facts.submit_time = now;
    return jobs[id] = j;
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> staged_;
};

}  // namespace berth::k8s::facetest

#endif  // BERTH_K8S_FACE_TEST_PORT_H_
