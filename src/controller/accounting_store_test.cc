#include "controller/accounting_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

namespace berth::controller {
namespace {

config::AccountingTables Tables() {
  config::AccountingTables t;
  core::QosSpec high;
  high.name = "high";
  high.max_wall = 600;
  high.preempt = {"normal"};
  t.qos.push_back(high);
  core::AccountSpec physics, chem;
  physics.name = "physics";
  physics.grp_jobs = 2;
  chem.name = "chem";
  chem.parent = "physics";
  t.accounts = {physics, chem};
  core::UserSpec alice;
  alice.name = "alice";
  alice.account = "chem";
  alice.is_default = true;
  alice.max_tres_per_job.gpus = 1;
  t.users = {alice};
  t.admin_levels["alice"] = "Operator";
  return t;
}

class AccountingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/accounting_store_test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    Result<std::unique_ptr<store::Store>> s = store::Store::Open(dir_ + "/state.db");
    ASSERT_TRUE(s.ok());
    store_ = std::move(s).value();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(AccountingStoreTest, NotSeededUntilTheMarkerIsWritten) {
  Result<std::optional<config::AccountingTables>> t = LoadAccounting(*store_, nullptr);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->has_value());
}

TEST_F(AccountingStoreTest, RoundTripAndIncrementalWrites) {
  std::vector<store::Write> w = AccountingWrites({}, Tables());
  EXPECT_EQ(w.size(), 5u);
  w.push_back({store::Write::Kind::kPutMeta, {}, kAccountingSeededKey, "{}"});
  ASSERT_TRUE(store_->Commit(w).ok());
  std::optional<config::AccountingTables> back = *LoadAccounting(*store_, nullptr);
  ASSERT_TRUE(back.has_value());
  std::sort(back->accounts.begin(), back->accounts.end(),
            [](const auto& a, const auto& b) { return a.name > b.name; });  // file order
  EXPECT_EQ(*back, Tables());

  config::AccountingTables next = Tables();
  next.accounts[1].grp_jobs = 7;
  next.qos.clear();
  next.admin_levels.clear();
  w = AccountingWrites(Tables(), next);
  ASSERT_EQ(w.size(), 3u);  // chem changed, high and alice's level gone
  ASSERT_TRUE(store_->Commit(w).ok());
  back = *LoadAccounting(*store_, nullptr);
  EXPECT_TRUE(back->qos.empty());
  EXPECT_TRUE(back->admin_levels.empty());
  EXPECT_EQ(back->accounts[0].name, "chem");
  EXPECT_EQ(back->accounts[0].grp_jobs, 7);
}

TEST_F(AccountingStoreTest, BadRecordsAreNamedAndSkipped) {
  ASSERT_TRUE(store_
                  ->Commit({{store::Write::Kind::kPutMeta, {}, kAccountingSeededKey, "{}"},
                            {store::Write::Kind::kPutMeta, {}, "acct/x", "not json"}})
                  .ok());
  std::vector<std::string> bad;
  std::optional<config::AccountingTables> t = *LoadAccounting(*store_, &bad);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->accounts.empty());
  EXPECT_EQ(bad, std::vector<std::string>{"acct/x: not JSON"});
}

}  // namespace
}  // namespace berth::controller
