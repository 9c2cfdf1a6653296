#include "common/hostlist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace berth::hostlist {
namespace {

using Names = std::vector<std::string>;

struct ExpandCase {
  std::string expr;
  Names want;
};

TEST(HostlistTest, Expand) {
  const ExpandCase cases[] = {
      {"", {}},
      {" ,\t, ", {}},
      {"node1", {"node1"}},
      {"gpu[001-004,007],cpu01", {"gpu001", "gpu002", "gpu003", "gpu004", "gpu007", "cpu01"}},
      {"n[1-3]", {"n1", "n2", "n3"}},
      {"n[01-03]", {"n01", "n02", "n03"}},
      {"n[8-11]", {"n8", "n9", "n10", "n11"}},
      {"n[098-101]", {"n098", "n099", "n100", "n101"}},
      // The padding is the width of LO as written, whatever HI looks like.
      {"n[1-010]", {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10"}},
      {"n[001-3]", {"n001", "n002", "n003"}},
      {"n[5]", {"n5"}},
      {"n[0-0]", {"n0"}},
      {"n[3,1,2]", {"n3", "n1", "n2"}},
      {"n[1-2],n[1-2]", {"n1", "n2", "n1", "n2"}},
      {"[1-3]", {"1", "2", "3"}},
      {"[07-08]", {"07", "08"}},
      {"a b\tc", {"a", "b", "c"}},
      {"n1,,n2, n3", {"n1", "n2", "n3"}},
      {"a\nb\r\nc", {"a", "b", "c"}},
      {"login,n[1-2]", {"login", "n1", "n2"}},
      {"ip-26-0-159-215,ip-26-0-153-238", {"ip-26-0-159-215", "ip-26-0-153-238"}},
      {"rack[1-2]-node[01-02]", {"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"}},
      {"r[1,3]n[5]", {"r1n5", "r3n5"}},
      // Slurm's loop order with three groups: the middle group is the outer loop.
      {"a[1-2]b[3-4]c[5-6]",
       {"a1b3c5", "a1b3c6", "a2b3c5", "a2b3c6", "a1b4c5", "a1b4c6", "a2b4c5", "a2b4c6"}},
      {"cnode[212,213,240,260,284]", {"cnode212", "cnode213", "cnode240", "cnode260", "cnode284"}},
  };
  for (const ExpandCase& c : cases) {
    Result<Names> got = Expand(c.expr);
    ASSERT_TRUE(got.ok()) << c.expr << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.want) << c.expr;
  }
}

struct ErrorCase {
  std::string expr;
  std::string want_in_message;
};

TEST(HostlistTest, ExpandErrors) {
  const ErrorCase cases[] = {
      {"n[1-3", "unbalanced '['"},
      {"n[1-3],m[4", "unbalanced '['"},
      {"n1-3]", "unbalanced ']'"},
      {"n[[1]]", "nested '['"},
      {"n[3-1]", "reversed range '3-1'"},
      {"n[a-b]", "bad range 'a-b'"},
      {"n[1-x]", "bad range '1-x'"},
      {"n[1-]", "missing number"},
      {"n[-1]", "missing number"},
      {"n[]", "empty range"},
      {"n[1,,2]", "empty range"},
      {"n[1 -2]", "bad range '1 -2'"},
      {"n[1-2-3]", "bad range '1-2-3'"},
      {"n[+1]", "bad range '+1'"},
      {"n[1234567890123456789]", "number too long"},
      {"node[1-2]-ib", "text '-ib' after the last ']'"},
      {"n[1]x", "after the last ']'"},
      {"n[0-65536]", "names 65537 hosts"},
      {"a[0-999]b[0-999]c[0-1]", "more than 1000000 hosts"},
      {"n[0-65535],m[0-65535],o[0-65535],p[0-65535],q[0-65535],r[0-65535],s[0-65535],"
       "t[0-65535],u[0-65535],v[0-65535],w[0-65535],x[0-65535],y[0-65535],z[0-65535],"
       "a[0-65535],b[0-65535]",
       "more than 1000000 hosts"},
      {"a[0-40000,0-40000]b[1]", "prefixes"},
  };
  std::string many_groups;
  for (int i = 0; i < 65; ++i) many_groups += "x[1]";
  Result<Names> deep = Expand(many_groups);
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("more than 64 bracket groups"), std::string::npos);
  for (const ErrorCase& c : cases) {
    Result<Names> got = Expand(c.expr);
    ASSERT_FALSE(got.ok()) << c.expr;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.expr;
    EXPECT_NE(got.status().message().find(c.want_in_message), std::string::npos)
        << c.expr << " -> " << got.status().message();
  }
}

TEST(HostlistTest, ExpandLargestRange) {
  Result<Names> got = Expand("n[0-65535]");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), 65536u);
  EXPECT_EQ(got->back(), "n65535");
}

struct CompressCase {
  Names names;
  std::string as_given;  // scontrol show hostlist
  std::string sorted;    // scontrol show hostlistsorted
  std::string unique;    // ReqNodeList=/ExcNodeList=
};

TEST(HostlistTest, Compress) {
  const CompressCase cases[] = {
      {{}, "", "", ""},
      {{"n1"}, "n1", "n1", "n1"},
      {{"", "n1", ""}, "n1", "n1", "n1"},
      {{"n1", "n2", "n3"}, "n[1-3]", "n[1-3]", "n[1-3]"},
      {{"gpu001", "gpu002", "gpu003", "gpu004", "gpu007", "cpu01"},
       "gpu[001-004,007],cpu01",
       "cpu01,gpu[001-004,007]",
       "cpu01,gpu[001-004,007]"},
      // From the scontrol documentation: the plain form keeps the order.
      {{"h003", "h002", "h001"}, "h[003,002,001]", "h[001-003]", "h[001-003]"},
      {{"n3", "n1", "n2"}, "n[3,1-2]", "n[1-3]", "n[1-3]"},
      {{"n1", "n1"}, "n[1,1]", "n[1,1]", "n1"},
      {{"n1", "n1", "n2"}, "n[1,1-2]", "n[1,1-2]", "n[1-2]"},
      {{"login", "n1", "n2"}, "login,n[1-2]", "login,n[1-2]", "login,n[1-2]"},
      {{"n1", "n"}, "n1,n", "n,n1", "n,n1"},
      {{"b", "a", "b"}, "b,a,b", "a,b,b", "a,b"},
      // Widths merge when no number's padding changes.
      {{"n9", "n10"}, "n[9-10]", "n[9-10]", "n[9-10]"},
      {{"n09", "n10"}, "n[09-10]", "n[09-10]", "n[09-10]"},
      {{"n1", "n01"}, "n[1,01]", "n[1,01]", "n[1,01]"},
      {{"n9", "n010"}, "n[9,010]", "n[9,010]", "n[9,010]"},
      {{"n10", "n2", "n1"}, "n[10,2,1]", "n[1-2,10]", "n[1-2,10]"},
      // Natural order of prefixes and suffixes.
      {{"n10", "n9", "rack10", "rack2"},
       "n[10,9],rack[10,2]",
       "n[9-10],rack[2,10]",
       "n[9-10],rack[2,10]"},
      {{"rack10-n1", "rack2-n1"}, "rack10-n1,rack2-n1", "rack2-n1,rack10-n1", "rack2-n1,rack10-n1"},
      {{"ip-26-0-159-215", "ip-26-0-153-238"},
       "ip-26-0-159-215,ip-26-0-153-238",
       "ip-26-0-153-238,ip-26-0-159-215",
       "ip-26-0-153-238,ip-26-0-159-215"},
      {{"n1", "m1", "n2"}, "n1,m1,n2", "m1,n[1-2]", "m1,n[1-2]"},
      {{"rack1-node01", "rack1-node02", "rack2-node01"},
       "rack1-node[01-02],rack2-node01",
       "rack1-node[01-02],rack2-node01",
       "rack1-node[01-02],rack2-node01"},
      {{"a1b", "a2b"}, "a1b,a2b", "a1b,a2b", "a1b,a2b"},
      {{"007", "008"}, "[007-008]", "[007-008]", "[007-008]"},
      // Overlapping ranges: hostlist_sort() splits them and keeps every host.
      {{"n1", "n2", "n3", "n4", "n5", "n3", "n4", "n5", "n6", "n7"},
       "n[1-5,3-7]",
       "n[1-3,3-4,4-5,5-7]",
       "n[1-7]"},
      // A suffix too long to be a number stays a plain name.
      {{"n99999999999999999999"},
       "n99999999999999999999",
       "n99999999999999999999",
       "n99999999999999999999"},
  };
  for (const CompressCase& c : cases) {
    std::string label = ::testing::PrintToString(c.names);
    EXPECT_EQ(Compress(c.names), c.as_given) << label;
    EXPECT_EQ(CompressSorted(c.names), c.sorted) << label;
    EXPECT_EQ(CompressUnique(c.names), c.unique) << label;
  }
}

// What slurmctld stored for the oracle scripts' --exclude values.
TEST(HostlistTest, OracleExcludeLists) {
  Result<Names> a = Expand("cnode[212,213,240,260,284]");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(CompressUnique(*a), "cnode[212-213,240,260,284]");
  Result<Names> b = Expand("ip-26-0-159-215,ip-26-0-153-238");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(CompressUnique(*b), "ip-26-0-153-238,ip-26-0-159-215");
}

TEST(HostlistTest, RoundTripsFromExpressions) {
  const char* exprs[] = {"gpu[001-004,007],cpu01",         "n[1-3,7,9-12]",
                         "login,n[01-10],gpu[1-2]",        "n[9-10]",
                         "rack1-node[01-02],rack2-node01", "[007-008]"};
  for (const char* expr : exprs) {
    Result<Names> names = Expand(expr);
    ASSERT_TRUE(names.ok()) << expr;
    EXPECT_EQ(Compress(*names), expr);
  }
}

// Seed logged in the failure message so a failure can be replayed.
TEST(HostlistTest, RandomRoundTrips) {
  const uint32_t seed = 20240611;
  std::mt19937 rng(seed);
  const std::string prefixes[] = {"n", "gpu", "rack1-n", "", "a.b-"};
  for (int iter = 0; iter < 300; ++iter) {
    Names names;
    int count = static_cast<int>(rng() % 40);
    for (int i = 0; i < count; ++i) {
      const std::string& prefix = prefixes[rng() % 5];
      if (rng() % 10 == 0) {
        names.push_back(prefix.empty() ? "login" : prefix + "x");
        continue;
      }
      std::string num = std::to_string(rng() % 30);
      int width = static_cast<int>(rng() % 4);
      if (static_cast<int>(num.size()) < width) num.insert(0, width - num.size(), '0');
      names.push_back(prefix + num);
    }
    std::string label = "seed " + std::to_string(seed) + " iter " + std::to_string(iter) + " " +
                        ::testing::PrintToString(names);

    Result<Names> plain = Expand(Compress(names));
    ASSERT_TRUE(plain.ok()) << label;
    EXPECT_EQ(*plain, names) << label << " -> " << Compress(names);

    Result<Names> sorted = Expand(CompressSorted(names));
    ASSERT_TRUE(sorted.ok()) << label;
    Names want = names;
    std::sort(want.begin(), want.end());
    Names got = *sorted;
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << label << " -> " << CompressSorted(names);

    Result<Names> unique = Expand(CompressUnique(names));
    ASSERT_TRUE(unique.ok()) << label;
    std::set<std::string> want_set(names.begin(), names.end());
    EXPECT_EQ(unique->size(), want_set.size()) << label << " -> " << CompressUnique(names);
    EXPECT_EQ(std::set<std::string>(unique->begin(), unique->end()), want_set) << label;
  }
}

}  // namespace
}  // namespace berth::hostlist
