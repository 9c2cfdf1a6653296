#include <gtest/gtest.h>

#include "core/state/cluster_state.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::MakePartition;

QosSpec Qos(std::string name, int32_t priority = 0) {
  QosSpec q;
  q.name = std::move(name);
  q.priority = priority;
  return q;
}

AccountSpec Acct(std::string name, std::string parent = kRootAccount) {
  AccountSpec a;
  a.name = std::move(name);
  a.parent = std::move(parent);
  return a;
}

UserSpec UserIn(std::string name, std::string account, bool is_default = false) {
  UserSpec u;
  u.name = std::move(name);
  u.account = std::move(account);
  u.is_default = is_default;
  return u;
}

struct Tables {
  std::vector<QosSpec> qos{Qos("high", 10)};
  std::vector<AccountSpec> accounts{Acct("physics"), Acct("chem")};
  std::vector<UserSpec> users{UserIn("alice", "physics"), UserIn("bob", "chem")};
};

ClusterState Build(const Tables& t) {
  MakeCluster b;
  b.Nodes("n", 2, 8, 32000).Partition(MakePartition("main", {"n01", "n02"}, true));
  for (const QosSpec& q : t.qos) b.Qos(q);
  for (const AccountSpec& a : t.accounts) b.Account(a);
  for (const UserSpec& u : t.users) b.User(u);
  ClusterSpec spec = b.Spec();
  spec.enforce_associations = true;
  return std::move(ClusterState::Create(spec)).value();
}

JobId Start(ClusterState& cs, JobSpec spec) {
  Result<JobId> id = cs.Submit(std::move(spec), nullptr, 0);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  Plan plan;
  PlannedStart s;
  s.job = *id;
  s.partition = "main";
  NodeAllocation a;
  a.node = 0;
  a.cpus = 1;
  a.tasks = 1;
  s.alloc.nodes.push_back(a);
  s.time_limit = 3600;
  plan.starts.push_back(s);
  EXPECT_EQ(cs.Apply(plan, 0).started.size(), 1u);
  return *id;
}

TEST(SetAccountingTest, AddsQosAccountsAndUsersThatJobsCanUseAtOnce) {
  Tables t;
  ClusterState cs = Build(t);
  EXPECT_FALSE(cs.Submit(MakeJob().User("carol").Account("bio").Obj(), nullptr, 0).ok());
  t.qos.push_back(Qos("low"));
  t.accounts.push_back(Acct("bio", "chem"));
  t.users.push_back(UserIn("carol", "bio"));
  ASSERT_TRUE(cs.SetAccounting(t.qos, t.accounts, t.users).ok());
  Result<JobId> id = cs.Submit(MakeJob().User("carol").QosName("low").Obj(), nullptr, 0);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(cs.FindJob(*id)->spec->account, "bio");
  const AccountInfo& bio = cs.accounts()[*cs.FindAccount("bio")];
  EXPECT_EQ(cs.accounts()[bio.parent].spec.name, "chem");
  EXPECT_EQ(cs.spec().accounts.size(), 3u);
}

TEST(SetAccountingTest, ChangesLimitsKeepingIds) {
  Tables t;
  ClusterState cs = Build(t);
  int16_t high = *cs.FindQos("high");
  int32_t physics = *cs.FindAccount("physics");
  t.qos[0].max_jobs_per_user = 1;
  t.accounts[0].grp_jobs = 2;
  t.users[0].max_jobs = 3;
  ASSERT_TRUE(cs.SetAccounting(t.qos, t.accounts, t.users).ok());
  EXPECT_EQ(*cs.FindQos("high"), high);
  EXPECT_EQ(cs.qos()[high].spec.max_jobs_per_user, 1);
  EXPECT_EQ(*cs.FindAccount("physics"), physics);
  EXPECT_EQ(cs.accounts()[physics].spec.grp_jobs, 2);
  EXPECT_EQ(cs.assocs()[cs.accounts()[physics].assocs[0]].spec.max_jobs, 3);
}

TEST(SetAccountingTest, MovingAnAccountMovesItsRunningCounters) {
  Tables t;
  ClusterState cs = Build(t);
  Start(cs, MakeJob().User("alice").Obj());
  int32_t physics = *cs.FindAccount("physics"), chem = *cs.FindAccount("chem");
  EXPECT_EQ(cs.accounts()[physics].running.jobs, 1);
  t.accounts[0].parent = "chem";
  ASSERT_TRUE(cs.SetAccounting(t.qos, t.accounts, t.users).ok());
  EXPECT_EQ(cs.accounts()[physics].parent, chem);
  EXPECT_EQ(cs.accounts()[chem].running.jobs, 1);
  EXPECT_EQ(cs.accounts()[0].running.jobs, 1);
  EXPECT_EQ(cs.accounts()[0].children, std::vector<int32_t>{chem});
}

TEST(SetAccountingTest, RefusesRemovingWhatJobsUseAndChangesNothing) {
  Tables t;
  ClusterState cs = Build(t);
  Start(cs, MakeJob().User("alice").QosName("high").Obj());
  Tables gone = t;
  gone.qos.clear();
  Status st = cs.SetAccounting(gone.qos, gone.accounts, gone.users);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("Job(s) active"), std::string::npos) << st.message();
  gone = t;
  gone.users.erase(gone.users.begin());  // alice's association
  EXPECT_EQ(cs.SetAccounting(gone.qos, gone.accounts, gone.users).code(),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(cs.FindQos("high"));
  EXPECT_EQ(cs.spec().users.size(), 2u);
}

TEST(SetAccountingTest, RemovesUnusedEntriesAndTakesTheirNamesBack) {
  Tables t;
  ClusterState cs = Build(t);
  int16_t high = *cs.FindQos("high");
  Tables gone = t;
  gone.qos.clear();
  gone.users.pop_back();     // bob
  gone.accounts.pop_back();  // chem
  ASSERT_TRUE(cs.SetAccounting(gone.qos, gone.accounts, gone.users).ok());
  EXPECT_FALSE(cs.FindQos("high"));
  EXPECT_FALSE(cs.FindAccount("chem"));
  EXPECT_FALSE(cs.Submit(MakeJob().User("bob").Obj(), nullptr, 0).ok());
  EXPECT_EQ(cs.accounts()[0].children.size(), 1u);
  ASSERT_TRUE(cs.SetAccounting(t.qos, t.accounts, t.users).ok());
  EXPECT_EQ(*cs.FindQos("high"), high);
  EXPECT_TRUE(cs.Submit(MakeJob().User("bob").Obj(), nullptr, 0).ok());
}

TEST(SetAccountingTest, RefusesInconsistentTables) {
  Tables t;
  ClusterState cs = Build(t);
  Tables bad = t;
  bad.users.push_back(UserIn("dan", "nowhere"));
  EXPECT_EQ(cs.SetAccounting(bad.qos, bad.accounts, bad.users).code(),
            StatusCode::kInvalidArgument);
  bad = t;
  bad.accounts[0].parent = "chem";
  bad.accounts[1].parent = "physics";
  EXPECT_EQ(cs.SetAccounting(bad.qos, bad.accounts, bad.users).code(),
            StatusCode::kInvalidArgument);
  bad = t;
  bad.qos[0].preempt = {"nope"};
  EXPECT_EQ(cs.SetAccounting(bad.qos, bad.accounts, bad.users).code(),
            StatusCode::kInvalidArgument);
}

TEST(SetAccountingTest, DefaultAccountFollowsTheFlag) {
  Tables t;
  t.users.push_back(UserIn("alice", "chem"));
  ClusterState cs = Build(t);
  Result<JobId> id = cs.Submit(MakeJob().User("alice").Obj(), nullptr, 0);
  EXPECT_EQ(cs.FindJob(*id)->spec->account, "physics");
  t.users[2].is_default = true;
  ASSERT_TRUE(cs.SetAccounting(t.qos, t.accounts, t.users).ok());
  id = cs.Submit(MakeJob().User("alice").Obj(), nullptr, 0);
  EXPECT_EQ(cs.FindJob(*id)->spec->account, "chem");
}

}  // namespace
}  // namespace berth::core
