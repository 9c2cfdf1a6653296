#include "api/accounting_json.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

TEST(AccountingJsonTest, QosRoundTrip) {
  core::QosSpec q;
  q.name = "high";
  q.priority = 10;
  q.preempt = {"low"};
  q.preempt_mode = core::PreemptMode::kRequeue;
  q.usage_factor = 0.5;
  q.max_tres_per_user.gpus = 4;
  q.max_tres_per_account.cpus = 64;
  q.max_tres_per_job.mem_mib = 1024;
  q.max_jobs_per_user = 2;
  q.max_jobs_per_account = 5;
  q.max_wall = 3600;
  Result<core::QosSpec> back = QosFromJson(nlohmann::json::parse(QosToJson(q).dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, q);
  core::QosSpec plain;
  plain.name = "normal";
  EXPECT_FALSE(QosToJson(plain).contains("max_wall"));
  EXPECT_EQ(*QosFromJson(QosToJson(plain)), plain);
}

TEST(AccountingJsonTest, AccountAndUserRoundTrip) {
  core::AccountSpec a;
  a.name = "chem";
  a.parent = "science";
  a.shares = 3;
  a.grp_tres.nodes = 2;
  a.grp_jobs = 4;
  EXPECT_EQ(*AccountFromJson(AccountToJson(a)), a);
  core::UserSpec u;
  u.name = "alice";
  u.account = "chem";
  u.is_default = true;
  u.shares = 2;
  u.max_jobs = 1;
  u.max_tres_per_job.cpus = 8;
  EXPECT_EQ(*UserFromJson(UserToJson(u)), u);
}

TEST(AccountingJsonTest, WrongTypesAreErrors) {
  EXPECT_FALSE(QosFromJson({{"name", 3}}).ok());
  EXPECT_FALSE(AccountFromJson({{"name", "x"}, {"grp_jobs", "many"}}).ok());
  EXPECT_FALSE(UserFromJson({{"user", "x"}}).ok());
}

}  // namespace
}  // namespace berth::api
