#include "store/election.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "store/etcd_client.h"
#include "store/etcd_test_util.h"

namespace berth::store {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

class ElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (TestEtcd::Binary().empty())
      GTEST_SKIP() << "no etcd binary (scripts/setup installs etcd-server)";
    TestEtcd* etcd = SharedEtcd();
    ASSERT_NE(etcd, nullptr) << "etcd did not start";
    static int n = 0;
    Result<StoreLocation> l =
        ParseStoreUrl("etcd://" + etcd->endpoint() + "/berth/election" + std::to_string(getpid()) +
                      "-" + std::to_string(++n) + "?timeout-ms=1000&retry-ms=2000");
    ASSERT_TRUE(l.ok()) << l.status().message();
    where_ = *l;
  }

  std::unique_ptr<Election> Join(const std::string& name, int ttl_s = 2) {
    Member m;
    m.name = name;
    m.address = "tcp:127.0.0.1:" + std::to_string(7000 + name.size());
    m.pid = getpid();
    Result<std::unique_ptr<Election>> e = Election::Join(where_, m, ttl_s);
    EXPECT_TRUE(e.ok()) << e.status().message();
    return e.ok() ? std::move(*e) : nullptr;
  }

  // Campaigns on another thread; the future holds the epoch once it leads.
  static std::future<Result<int64_t>> CampaignAsync(Election* e, std::atomic<bool>* stop) {
    return std::async(std::launch::async, [e, stop] { return e->Campaign(*stop, 50); });
  }

  std::unique_ptr<Store> FencedStore(int64_t epoch) {
    StoreLocation l = where_;
    l.fence_epoch = epoch;
    Result<std::unique_ptr<Store>> s = Store::Open(l, "");
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : nullptr;
  }

  StoreLocation where_;
};

TEST_F(ElectionTest, OneLeaderAtATimeAndTheNextTakesOverWhenItResigns) {
  auto a = Join("a");
  auto b = Join("b");
  ASSERT_TRUE(a && b);
  std::atomic<bool> stop{false};
  Result<int64_t> ea = a->Campaign(stop);
  ASSERT_TRUE(ea.ok()) << ea.status().message();
  EXPECT_GT(*ea, 0);
  EXPECT_EQ(a->epoch(), *ea);

  std::optional<Leader> seen_by_b;
  auto fb = std::async(std::launch::async, [&] {
    return b->Campaign(stop, 50, [&](const std::optional<Leader>& l) { seen_by_b = l; });
  });
  // b waits while a leads (a's lease is kept alive well past its TTL of 2 s).
  EXPECT_EQ(fb.wait_for(seconds(3)), std::future_status::timeout);
  ASSERT_TRUE(seen_by_b.has_value());
  EXPECT_EQ(seen_by_b->member.name, "a");
  EXPECT_EQ(seen_by_b->epoch, *ea);
  EXPECT_FALSE(a->Lost());

  Result<std::optional<Leader>> now = b->CurrentLeader();
  ASSERT_TRUE(now.ok() && now->has_value());
  EXPECT_EQ((*now)->member.name, "a");
  EXPECT_EQ((*now)->member.address, a->self().address);
  EXPECT_EQ((*now)->epoch, *ea);
  Result<std::vector<Member>> members = a->Members();
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 2u);
  EXPECT_EQ((*members)[0].name, "a");
  EXPECT_EQ((*members)[1].name, "b");

  ASSERT_TRUE(a->Resign().ok());
  ASSERT_EQ(fb.wait_for(seconds(5)), std::future_status::ready);
  Result<int64_t> eb = fb.get();
  ASSERT_TRUE(eb.ok()) << eb.status().message();
  EXPECT_GT(*eb, *ea);
  // a's lease went with its resignation: only b is a member now.
  members = b->Members();
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 1u);
  EXPECT_EQ((*members)[0].name, "b");
}

TEST_F(ElectionTest, ALeaderThatStopsRenewingIsReplacedWhenItsLeaseRunsOut) {
  auto a = Join("a", 2);
  auto b = Join("b", 2);
  ASSERT_TRUE(a && b);
  std::atomic<bool> stop{false};
  Result<int64_t> ea = a->Campaign(stop);
  ASSERT_TRUE(ea.ok());
  auto fb = CampaignAsync(b.get(), &stop);
  const auto killed = Clock::now();
  a.reset();  // as a kill -9: no resignation, the lease is simply no longer renewed
  ASSERT_EQ(fb.wait_for(seconds(15)), std::future_status::ready);
  Result<int64_t> eb = fb.get();
  ASSERT_TRUE(eb.ok()) << eb.status().message();
  EXPECT_GT(*eb, *ea);
  // Not before the lease could have run out (renewed at most a third of the TTL before).
  EXPECT_GE(Clock::now() - killed, milliseconds(1000));
}

TEST_F(ElectionTest, ADeposedLeadersCommitsWriteNothing) {
  auto a = Join("a");
  auto b = Join("b");
  ASSERT_TRUE(a && b);
  std::atomic<bool> stop{false};
  Result<int64_t> ea = a->Campaign(stop);
  ASSERT_TRUE(ea.ok());
  auto store_a = FencedStore(*ea);
  ASSERT_TRUE(store_a);
  ASSERT_TRUE(store_a->Commit({PutMeta("k", "from a")}).ok());

  auto fb = CampaignAsync(b.get(), &stop);
  ASSERT_TRUE(a->Resign().ok());
  Result<int64_t> eb = fb.get();
  ASSERT_TRUE(eb.ok());
  // a has not noticed yet; its store refuses all the same, and nothing of it is written.
  Status st = store_a->Commit({PutMeta("k", "late from a"), PutMeta("other", "x")});
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.message();
  EXPECT_NE(st.message().find("no longer its group's leader"), std::string::npos) << st.message();
  auto store_b = FencedStore(*eb);
  ASSERT_TRUE(store_b);
  EXPECT_EQ(*store_b->GetMeta("k"), std::optional<std::string>("from a"));
  EXPECT_EQ(*store_b->GetMeta("other"), std::nullopt);
  ASSERT_TRUE(store_b->Commit({PutMeta("k", "from b")}).ok());
  EXPECT_EQ(*store_b->GetMeta("k"), std::optional<std::string>("from b"));
}

TEST_F(ElectionTest, ALeaderWhoseKeyIsTakenAwayCountsAsLost) {
  auto a = Join("a", 1);
  ASSERT_TRUE(a);
  std::atomic<bool> stop{false};
  ASSERT_TRUE(a->Campaign(stop).ok());
  EXPECT_FALSE(a->Lost());
  // An operator deletes the leader key: the keep-alive notices within its period.
  Result<std::unique_ptr<EtcdClient>> c = EtcdClient::Create(where_);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->Call("/v3/kv/deleterange", {{"key", Base64(LeaderKey(where_))}}).ok());
  const auto deadline = Clock::now() + seconds(10);
  while (!a->Lost() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(50));
  EXPECT_TRUE(a->Lost());
  EXPECT_EQ(a->Role(), "deposed");
  EXPECT_EQ(GroupStatus(*a, "test")["role"], "deposed");
  // Campaigning again (the key is free): a new term, not lost.
  ASSERT_TRUE(a->Campaign(stop).ok());
  EXPECT_FALSE(a->Lost());
  EXPECT_EQ(a->Role(), "leader");
}

// etcd stalls while a campaign's txn is under way, long enough for the keep-alive to give the
// member's lease up; the txn then wins with that lease, which nothing renews any more, and the
// key goes when it runs out. Such a leader must not go on believing it leads: whenever it says
// it leads, the leader key is its own.
TEST_F(ElectionTest, ATermWonWithALeaseGivenUpMeanwhileIsLostAtOnce) {
  // The campaign's calls wait up to 2 s (the keep-alive's a third of the TTL each).
  where_.timeout_ms = 5000;
  auto a = Join("a", 1);
  ASSERT_TRUE(a);
  TestEtcd* etcd = SharedEtcd();
  std::atomic<bool> stop{false};
  etcd->Pause();
  auto fa = CampaignAsync(a.get(), &stop);
  // Long enough for the keep-alive to give up (2/3 of the TTL without a renewal, and a round
  // of calls), short of the campaign's timeout and of the lease's 2 s at etcd.
  std::this_thread::sleep_for(milliseconds(1400));
  etcd->Resume();
  ASSERT_EQ(fa.wait_for(seconds(15)), std::future_status::ready);
  Result<int64_t> ea = fa.get();
  ASSERT_TRUE(ea.ok()) << ea.status().message();
  // Past the lease's time at etcd (a TTL of 1 s is raised to etcd's minimum, under 2 s).
  std::this_thread::sleep_for(milliseconds(2500));
  if (a->Leading()) {
    Result<std::optional<Leader>> leader = a->CurrentLeader();
    ASSERT_TRUE(leader.ok()) << leader.status().message();
    ASSERT_TRUE(leader->has_value()) << "a says it leads, and no one's key is there";
    EXPECT_EQ((*leader)->epoch, *ea);
    EXPECT_EQ((*leader)->member.name, "a");
  }
  stop = true;
}

TEST_F(ElectionTest, AStandbyWhoseLeaseRanOutGetsANewOneAndCanLead) {
  auto a = Join("a", 1);
  ASSERT_TRUE(a);
  // Revoke the member's lease behind its back (as when etcd was unreachable for a TTL).
  Result<std::unique_ptr<EtcdClient>> c = EtcdClient::Create(where_);
  ASSERT_TRUE(c.ok());
  Result<nlohmann::json> leases = (*c)->Call("/v3/lease/leases", nlohmann::json::object());
  ASSERT_TRUE(leases.ok());
  for (const nlohmann::json& l : leases->value("leases", nlohmann::json::array())) {
    ASSERT_TRUE((*c)->Call("/v3/lease/revoke", {{"ID", l.value("ID", "0")}}).ok());
  }
  std::this_thread::sleep_for(milliseconds(1200));  // the keep-alive sees it gone
  std::atomic<bool> stop{false};
  Result<int64_t> e = a->Campaign(stop);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_FALSE(a->Lost());
  Result<std::vector<Member>> members = a->Members();
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 1u);  // registered again under the new lease
}

TEST_F(ElectionTest, CampaignStopsWhenAsked) {
  auto a = Join("a");
  auto b = Join("b");
  ASSERT_TRUE(a && b);
  std::atomic<bool> stop_a{false}, stop_b{false};
  ASSERT_TRUE(a->Campaign(stop_a).ok());
  auto fb = CampaignAsync(b.get(), &stop_b);
  std::this_thread::sleep_for(milliseconds(200));
  stop_b = true;
  ASSERT_EQ(fb.wait_for(seconds(5)), std::future_status::ready);
  EXPECT_EQ(fb.get().status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(b->epoch(), 0);
}

TEST_F(ElectionTest, HealthNamesEachEndpoint) {
  auto a = Join("a");
  ASSERT_TRUE(a);
  std::vector<EtcdEndpointHealth> h = a->Health();
  ASSERT_EQ(h.size(), 1u);
  EXPECT_TRUE(h[0].ok) << h[0].error;
  EXPECT_FALSE(h[0].version.empty());
  EXPECT_GT(h[0].db_size, 0);
  EXPECT_TRUE(h[0].is_leader);  // a one-member etcd leads itself
}

TEST_F(ElectionTest, CompactionDropsTheHistoryBeforeARevision) {
  auto a = Join("a");
  ASSERT_TRUE(a);
  Result<std::unique_ptr<EtcdClient>> c = EtcdClient::Create(where_);
  ASSERT_TRUE(c.ok());
  const std::string key = Base64(where_.prefix + "/meta/k");
  ASSERT_TRUE((*c)->Call("/v3/kv/put", {{"key", key}, {"value", Base64("1")}}).ok());
  Result<int64_t> first = a->Revision();
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE((*c)->Call("/v3/kv/put", {{"key", key}, {"value", Base64("2")}}).ok());
  Result<int64_t> second = a->Revision();
  ASSERT_TRUE(second.ok());
  EXPECT_GT(*second, *first);
  // The old version is readable until the compaction, and not after it.
  auto at = [&](int64_t revision) {
    return (*c)->Call("/v3/kv/range", {{"key", key}, {"revision", std::to_string(revision)}});
  };
  ASSERT_TRUE(at(*first).ok());
  ASSERT_TRUE(a->Compact(*second).ok());
  Result<nlohmann::json> old = at(*first);
  EXPECT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("compacted"), std::string::npos) << old.status().message();
  Result<nlohmann::json> now = at(*second);
  ASSERT_TRUE(now.ok()) << now.status().message();
  EXPECT_EQ(now->at("kvs").at(0).value("value", ""), Base64("2"));
  EXPECT_TRUE(a->Compact(*first).ok());  // compacted already: not an error
}

TEST(MemberTest, EncodesAndDecodes) {
  Member m{"ctl-1", "tcp:10.0.0.1:6817", 42, 1700000000};
  Result<Member> back = DecodeMember(EncodeMember(m));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->name, "ctl-1");
  EXPECT_EQ(back->address, "tcp:10.0.0.1:6817");
  EXPECT_EQ(back->pid, 42);
  EXPECT_EQ(back->since, 1700000000);
  EXPECT_EQ(DecodeMember("not json").status().code(), StatusCode::kInternal);
  EXPECT_EQ(DecodeMember("{\"pid\": 1}").status().code(), StatusCode::kInternal);
}

TEST(ElectionJoinTest, RefusesWhatCannotLead) {
  StoreLocation sqlite;
  EXPECT_EQ(Election::Join(sqlite, Member{"a", "", 1, 0}, 3).status().code(),
            StatusCode::kInvalidArgument);
  Result<StoreLocation> l = ParseStoreUrl("etcd://127.0.0.1:1");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(Election::Join(*l, Member{"a/b", "", 1, 0}, 3).status().code(),
            StatusCode::kInvalidArgument);
}

// Members offering their own value at once all come away with one of them, the first's; a later
// offer gets it too.
TEST_F(ElectionTest, MembersAgreeOnOneGroupValue) {
  std::vector<std::future<Result<std::string>>> offers;
  for (int i = 0; i < 4; ++i) {
    offers.push_back(std::async(std::launch::async, [this, i] {
      return AgreeOnGroupValue(where_, "token.secret", "secret-" + std::to_string(i));
    }));
  }
  std::set<std::string> got;
  for (auto& f : offers) {
    Result<std::string> v = f.get();
    ASSERT_TRUE(v.ok()) << v.status().message();
    got.insert(*v);
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.begin()->rfind("secret-", 0), 0u);
  EXPECT_EQ(*AgreeOnGroupValue(where_, "token.secret", "late"), *got.begin());
  EXPECT_EQ(*AgreeOnGroupValue(where_, "other", "late"), "late");
}

}  // namespace
}  // namespace berth::store
