// A read shows only what the store holds: a change is published once its commit is
// acknowledged (Controller::Impl::PublishStagedRecords), never while the commit is under way,
// so that a crash in that window cannot take back a state somebody saw. The store is a real
// etcd, paused (SIGSTOP) to hold a commit open.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "controller/controller_test_util.h"
#include "store/etcd_test_util.h"

namespace berth::controller {
namespace {

using nlohmann::json;

TEST(CommitVisibilityTest, AChangeIsShownOnlyOnceTheStoreHoldsIt) {
  std::unique_ptr<store::TestEtcd> etcd = store::TestEtcd::Start();
  if (etcd == nullptr) GTEST_SKIP() << "no etcd on this machine (BERTH_ETCD or etcd on PATH)";
  TestController c("NodeName=n1 CPUs=2 RealMemory=1024\nPartitionName=p Nodes=n1 Default=YES\n",
                   [&](ControllerOptions& o) {
                     o.store.kind = store::StoreLocation::Kind::kEtcd;
                     o.store.endpoints = {etcd->endpoint()};
                     o.store.prefix = "/berth/visibility";
                   });
  ASSERT_TRUE(c.ok());
  auto [status, body] = c.Api("POST", "/v1/jobs",
                              {{"name", "held"},
                               {"script", "#!/bin/sh\ntrue\n"},
                               {"work_dir", "/tmp"},
                               {"stdout", "/dev/null"},
                               {"hold", true}});
  ASSERT_EQ(status, 201) << body.dump();
  const std::string id = std::to_string(body.value("job_id", 0u));
  auto state = [&] { return c.Api("GET", "/v1/jobs/" + id).second.value("state", ""); };
  auto listed_state = [&] {
    for (const json& j : c.Api("GET", "/v1/jobs?all=1").second.value("jobs", json::array())) {
      if (std::to_string(j.value("id", 0u)) == id) return j.value("state", "");
    }
    return std::string("(missing)");
  };
  ASSERT_EQ(state(), "PENDING");

  // The cancel's commit waits for etcd: meanwhile every read shows the job as the store has it.
  etcd->Pause();
  int cancel_status = 0;
  std::thread cancel([&] { cancel_status = c.Api("POST", "/v1/jobs/" + id + "/cancel").first; });
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
  int reads = 0;
  while (std::chrono::steady_clock::now() < until) {
    EXPECT_EQ(state(), "PENDING") << "read " << reads << " showed an uncommitted change";
    EXPECT_EQ(listed_state(), "PENDING") << "list " << reads;
    ++reads;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  etcd->Resume();
  cancel.join();
  EXPECT_EQ(cancel_status, 200);
  // Acknowledged, so shown.
  EXPECT_EQ(state(), "CANCELLED");
  EXPECT_EQ(listed_state(), "CANCELLED");
}

}  // namespace
}  // namespace berth::controller
