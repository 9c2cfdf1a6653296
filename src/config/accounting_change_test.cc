#include "config/accounting_change.h"

#include <gtest/gtest.h>

namespace berth::config {
namespace {

AccountingTables Base() {
  AccountingTables t;
  core::QosSpec high;
  high.name = "high";
  high.priority = 10;
  t.qos.push_back(high);
  core::AccountSpec physics;
  physics.name = "physics";
  physics.grp_tres.gpus = 4;
  t.accounts.push_back(physics);
  core::UserSpec alice;
  alice.name = "alice";
  alice.account = "physics";
  alice.is_default = true;
  t.users.push_back(alice);
  return t;
}

AccountingChange Change(AcctVerb verb, AcctEntity entity,
                        std::vector<std::pair<std::string, std::string>> where,
                        std::vector<std::pair<std::string, std::string>> set = {}) {
  return {verb, entity, std::move(where), std::move(set)};
}

TEST(AccountingChangeTest, AddAccountWithLimitsUnderAParent) {
  Result<AccountingOutcome> r = ApplyAccountingChange(
      Base(),
      Change(AcctVerb::kAdd, AcctEntity::kAccount, {{"Name", "Chem,Bio"}},
             {{"parent", "physics"}, {"GrpJobs", "3"}, {"fairshare", "5"}, {"Description", "x"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tables.accounts.size(), 3u);
  const core::AccountSpec& chem = r->tables.accounts[1];
  EXPECT_EQ(chem.name, "chem");  // Slurm keeps account names in lower case
  EXPECT_EQ(chem.parent, "physics");
  EXPECT_EQ(chem.grp_jobs, 3);
  EXPECT_EQ(chem.shares, 5);
  EXPECT_EQ(r->names, (std::vector<std::string>{"chem", "bio"}));
}

TEST(AccountingChangeTest, AddErrors) {
  struct Case {
    AccountingChange change;
    StatusCode code;
    std::string message;
  } cases[] = {
      {Change(AcctVerb::kAdd, AcctEntity::kAccount, {{"Name", "physics"}}),
       StatusCode::kAlreadyExists, "Nothing new added."},
      {Change(AcctVerb::kAdd, AcctEntity::kAccount, {{"Name", "x"}}, {{"Parent", "nope"}}),
       StatusCode::kNotFound, "Parent account 'nope' doesn't exist"},
      {Change(AcctVerb::kAdd, AcctEntity::kAccount, {{"Name", "x"}}, {{"Bogus", "1"}}),
       StatusCode::kInvalidArgument, "Unknown option: Bogus"},
      {Change(AcctVerb::kAdd, AcctEntity::kAccount, {{"Name", "x"}}, {{"MaxWall", "10"}}),
       StatusCode::kInvalidArgument, "MaxWall is not supported by berth on accounts"},
      {Change(AcctVerb::kAdd, AcctEntity::kAccount, {{"Name", "x"}}, {{"GrpJobs", "many"}}),
       StatusCode::kInvalidArgument, "invalid GrpJobs value 'many'"},
      {Change(AcctVerb::kAdd, AcctEntity::kUser, {{"Name", "bob"}}), StatusCode::kInvalidArgument,
       "Need a default account"},
      {Change(AcctVerb::kAdd, AcctEntity::kUser, {{"Name", "bob"}}, {{"Account", "nope"}}),
       StatusCode::kNotFound, "This account 'nope' doesn't exist."},
      {Change(AcctVerb::kAdd, AcctEntity::kUser, {{"Name", "alice"}}, {{"Account", "physics"}}),
       StatusCode::kAlreadyExists, "Nothing new added."},
      {Change(AcctVerb::kAdd, AcctEntity::kQos, {{"Name", "x"}}, {{"GrpJobs", "1"}}),
       StatusCode::kInvalidArgument, "GrpJobs is not supported by berth on QoS"},
      {Change(AcctVerb::kAdd, AcctEntity::kQos, {{"Name", "x"}}, {{"MaxTRESPU", "licence/x=1"}}),
       StatusCode::kInvalidArgument, "invalid MaxTRESPU value"},
      {Change(AcctVerb::kAdd, AcctEntity::kAccount, {}), StatusCode::kInvalidArgument,
       "Need name of account to add."},
  };
  for (const Case& c : cases) {
    Result<AccountingOutcome> r = ApplyAccountingChange(Base(), c.change);
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().ToString();
  }
}

TEST(AccountingChangeTest, AddUserToAccountsWithDefaultAndAdminLevel) {
  AccountingTables t = Base();
  core::AccountSpec chem;
  chem.name = "chem";
  t.accounts.push_back(chem);
  Result<AccountingOutcome> r =
      ApplyAccountingChange(t, Change(AcctVerb::kAdd, AcctEntity::kUser, {{"Name", "bob"}},
                                      {{"Account", "physics,chem"},
                                       {"DefaultAccount", "chem"},
                                       {"AdminLevel", "operator"},
                                       {"MaxJobs", "2"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tables.users.size(), 3u);
  EXPECT_EQ(r->tables.users[2].account, "chem");
  EXPECT_FALSE(r->tables.users[1].is_default);
  EXPECT_TRUE(r->tables.users[2].is_default);
  EXPECT_EQ(r->tables.users[2].max_jobs, 2);
  EXPECT_EQ(r->tables.admin_levels.at("bob"), "Operator");
}

TEST(AccountingChangeTest, ModifyMergesTresAndSelectsWithWhere) {
  Result<AccountingOutcome> r = ApplyAccountingChange(
      Base(), Change(AcctVerb::kModify, AcctEntity::kAccount, {{"Name", "physics"}},
                     {{"GrpTRES", "cpu=8"}, {"GrpJobs", "-1"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tables.accounts[0].grp_tres.cpus, 8);
  EXPECT_EQ(r->tables.accounts[0].grp_tres.gpus, 4);  // kept
  EXPECT_EQ(r->tables.accounts[0].grp_jobs, -1);
  r = ApplyAccountingChange(Base(), Change(AcctVerb::kModify, AcctEntity::kAccount,
                                           {{"Name", "nope"}}, {{"GrpJobs", "1"}}));
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "Nothing modified");
}

TEST(AccountingChangeTest, ModifyQosIncludingTheImplicitNormal) {
  Result<AccountingOutcome> r = ApplyAccountingChange(
      Base(), Change(AcctVerb::kModify, AcctEntity::kQos, {{"Name", "normal"}},
                     {{"MaxJobsPU", "2"}, {"MaxWall", "1:00:00"}, {"Preempt", "high"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tables.qos.size(), 2u);
  EXPECT_EQ(r->tables.qos[0].name, "normal");
  EXPECT_EQ(r->tables.qos[0].max_jobs_per_user, 2);
  EXPECT_EQ(r->tables.qos[0].max_wall, 3600);
  EXPECT_EQ(r->tables.qos[0].preempt, std::vector<std::string>{"high"});
  r = ApplyAccountingChange(r->tables, Change(AcctVerb::kModify, AcctEntity::kQos,
                                              {{"Name", "normal"}}, {{"Preempt-", "high"}}));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->tables.qos[0].preempt.empty());
}

TEST(AccountingChangeTest, ModifyUserDefaultAccountAndAssociationLimits) {
  AccountingTables t = Base();
  core::AccountSpec chem;
  chem.name = "chem";
  t.accounts.push_back(chem);
  core::UserSpec second = t.users[0];
  second.account = "chem";
  second.is_default = false;
  t.users.push_back(second);
  Result<AccountingOutcome> r =
      ApplyAccountingChange(t, Change(AcctVerb::kModify, AcctEntity::kUser, {{"Name", "alice"}},
                                      {{"DefaultAccount", "chem"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->tables.users[0].is_default);
  EXPECT_TRUE(r->tables.users[1].is_default);
  EXPECT_EQ(r->users, std::vector<std::string>{"alice"});
  r = ApplyAccountingChange(t,
                            Change(AcctVerb::kModify, AcctEntity::kAssociation,
                                   {{"Account", "chem"}, {"User", "alice"}}, {{"MaxJobs", "1"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tables.users[0].max_jobs, -1);
  EXPECT_EQ(r->tables.users[1].max_jobs, 1);
  r = ApplyAccountingChange(t, Change(AcctVerb::kModify, AcctEntity::kAssociation,
                                      {{"Account", "physics"}}, {{"GrpJobs", "2"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tables.accounts[0].grp_jobs, 2);
}

TEST(AccountingChangeTest, DeleteRules) {
  Result<AccountingOutcome> r = ApplyAccountingChange(
      Base(), Change(AcctVerb::kDelete, AcctEntity::kAccount, {{"Name", "physics"}}));
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("has users ('alice')"), std::string::npos);
  r = ApplyAccountingChange(Base(),
                            Change(AcctVerb::kDelete, AcctEntity::kUser, {{"Name", "alice"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->tables.users.empty());
  r = ApplyAccountingChange(r->tables,
                            Change(AcctVerb::kDelete, AcctEntity::kAccount, {{"Name", "physics"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->tables.accounts.empty());
  r = ApplyAccountingChange(Base(),
                            Change(AcctVerb::kDelete, AcctEntity::kQos, {{"Name", "normal"}}));
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  r = ApplyAccountingChange(Base(),
                            Change(AcctVerb::kDelete, AcctEntity::kQos, {{"Name", "nope"}}));
  EXPECT_EQ(r.status().message(), "Nothing deleted");
}

TEST(AccountingChangeTest, LowerCaseNamesFindTheFilesCapitalisedOnes) {
  AccountingTables t = Base();
  t.accounts[0].name = "Physics";
  t.users[0].account = "Physics";
  Result<AccountingOutcome> r = ApplyAccountingChange(
      t,
      Change(AcctVerb::kModify, AcctEntity::kAccount, {{"Name", "physics"}}, {{"GrpJobs", "2"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tables.accounts[0].grp_jobs, 2);
  r = ApplyAccountingChange(
      t, Change(AcctVerb::kAdd, AcctEntity::kUser, {{"Name", "bob"}}, {{"Account", "PHYSICS"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tables.users[1].account, "Physics");
  r = ApplyAccountingChange(
      t, Change(AcctVerb::kAdd, AcctEntity::kAccount, {{"Name", "chem"}}, {{"Parent", "physics"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tables.accounts[1].parent, "Physics");
  r = ApplyAccountingChange(t, Change(AcctVerb::kAdd, AcctEntity::kAccount, {{"Name", "physics"}}));
  EXPECT_EQ(r.status().code(), StatusCode::kAlreadyExists);
}

TEST(AccountingChangeTest, DifferencesNameEachEntity) {
  AccountingTables config = Base(), db = Base();
  db.accounts[0].grp_jobs = 1;
  db.qos.clear();
  core::UserSpec bob;
  bob.name = "bob";
  bob.account = "physics";
  db.users.push_back(bob);
  EXPECT_EQ(DescribeDifferences(config, db),
            (std::vector<std::string>{
                "QoS 'high' only in the configuration",
                "account 'physics' differs between the configuration and the database",
                "user association 'bob/physics' only in the database"}));
  EXPECT_TRUE(DescribeDifferences(config, config).empty());
}

}  // namespace
}  // namespace berth::config
