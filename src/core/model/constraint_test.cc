#include "core/model/constraint.h"

#include <gtest/gtest.h>

#include <set>

namespace berth::core {
namespace {

using Features = std::set<std::string, std::less<>>;

bool MatchesNode(const Constraint& c, const Features& node) {
  return c.Matches([&node](std::string_view f) { return node.count(f) > 0; });
}

struct ParseCase {
  std::string text;
  std::string stored;                     // text()
  std::vector<std::string> names;         // FeatureNames()
  std::vector<std::string> alternatives;  // MatchingAlternatives()
  bool counts;                            // HasCounts()
};

TEST(ConstraintTest, Parse) {
  const ParseCase cases[] = {
      {"ib", "ib", {"ib"}, {}, false},
      {"gpu_tesla_A100", "gpu_tesla_A100", {"gpu_tesla_A100"}, {}, false},
      {"a100&ib", "a100&ib", {"a100", "ib"}, {}, false},
      {"v100|a100", "v100|a100", {"v100", "a100"}, {}, false},
      {"[rack1|rack2|rack3]",
       "[rack1|rack2|rack3]",
       {"rack1", "rack2", "rack3"},
       {"rack1", "rack2", "rack3"},
       false},
      {"[a]", "[a]", {"a"}, {"a"}, false},
      {"(a|b)&c", "(a|b)&c", {"a", "b", "c"}, {}, false},
      {"[a|b]&c", "[a|b]&c", {"a", "b", "c"}, {}, false},
      {"[a*2&b*4]", "[a*2&b*4]", {"a", "b"}, {}, true},
      {"intel*4", "intel*4", {"intel"}, {}, true},
      {"(knl&snc4&flat)*4&haswell",
       "(knl&snc4&flat)*4&haswell",
       {"knl", "snc4", "flat", "haswell"},
       {},
       true},
      {"[(knl&snc4&flat)*4&haswell*1]",
       "[(knl&snc4&flat)*4&haswell*1]",
       {"knl", "snc4", "flat", "haswell"},
       {},
       true},
      {"a&b&a", "a&b&a", {"a", "b"}, {}, false},
      {" a100 & ib ", "a100&ib", {"a100", "ib"}, {}, false},
      {"gpu:a100&nvme.local-1", "gpu:a100&nvme.local-1", {"gpu:a100", "nvme.local-1"}, {}, false},
      {"[(a&b)|c]", "[(a&b)|c]", {"a", "b", "c"}, {}, false},
  };
  for (const ParseCase& c : cases) {
    Result<Constraint> got = Constraint::Parse(c.text);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
    EXPECT_FALSE(got->empty()) << c.text;
    EXPECT_EQ(got->text(), c.stored) << c.text;
    EXPECT_EQ(got->FeatureNames(), c.names) << c.text;
    EXPECT_EQ(got->MatchingAlternatives(), c.alternatives) << c.text;
    EXPECT_EQ(got->HasCounts(), c.counts) << c.text;
  }
}

TEST(ConstraintTest, Empty) {
  for (const char* text : {"", "   "}) {
    Result<Constraint> got = Constraint::Parse(text);
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(got->empty());
    EXPECT_EQ(got->text(), "");
    EXPECT_TRUE(got->FeatureNames().empty());
    EXPECT_TRUE(MatchesNode(*got, {}));
  }
  EXPECT_TRUE(Constraint().empty());
  EXPECT_TRUE(MatchesNode(Constraint(), {"x"}));
}

struct MatchCase {
  std::string text;
  Features node;
  bool want;
};

TEST(ConstraintTest, Matches) {
  const MatchCase cases[] = {
      {"ib", {"ib"}, true},
      {"ib", {"a100"}, false},
      {"a100&ib", {"a100", "ib"}, true},
      {"a100&ib", {"a100"}, false},
      {"v100|a100", {"a100"}, true},
      {"v100|a100", {"h100"}, false},
      {"[rack1|rack2]", {"rack2"}, true},
      {"[rack1|rack2]", {"rack3"}, false},
      {"(a|b)&c", {"b", "c"}, true},
      {"(a|b)&c", {"a"}, false},
      {"a&(b|c)", {"a", "c"}, true},
      {"a&(b|c)", {"b", "c"}, false},
      // Left to right, no precedence: "a|b&c" is "(a|b)&c", "a&b|c" is "(a&b)|c".
      {"a|b&c", {"a"}, false},
      {"a|b&c", {"a", "c"}, true},
      {"a&b|c", {"c"}, true},
      {"a&b|c", {"a"}, false},
      // Counts are ignored for a single node.
      {"intel*4", {"intel"}, true},
      {"[a*2&b*4]", {"a", "b"}, true},
      {"[a*2&b*4]", {"a"}, false},
  };
  for (const MatchCase& c : cases) {
    Result<Constraint> got = Constraint::Parse(c.text);
    ASSERT_TRUE(got.ok()) << c.text;
    EXPECT_EQ(MatchesNode(*got, c.node), c.want)
        << c.text << " on " << ::testing::PrintToString(c.node);
  }
}

struct ErrorCase {
  std::string text;
  std::string want_in_message;
};

TEST(ConstraintTest, Errors) {
  const ErrorCase cases[] = {
      {"a&[b|c", "unbalanced '[' in constraint 'a&[b|c'"},
      {"a&&b", "empty feature name in constraint 'a&&b'"},
      {"&a", "empty feature name"},
      {"a|", "missing feature name"},
      {"(a|b", "unbalanced '('"},
      {"a|b)", "unbalanced ')'"},
      {"a]", "unbalanced ']'"},
      {"[a|b)", "mismatched ')'"},
      {"((a|b))", "nested '('"},
      {"[[a]]", "nested '['"},
      {"(a&[b|c])", "nested '['"},
      {"[]", "empty feature name"},
      {"()", "empty feature name"},
      {"a*0", "count after '*'"},
      {"a*", "count after '*'"},
      {"a*x", "count after '*'"},
      {"a*99999999999", "count after '*'"},
      {"*2", "empty feature name"},
      {"a*2|b", "cannot be combined with '|'"},
      {"[a*2|b*2]", "cannot be combined with '|'"},
      {"a,b", "',' is not a constraint operator"},
      {"a$b", "unexpected '$'"},
      {"$x", "invalid character '$'"},
      {"a\"b", "unexpected '\"'"},
  };
  for (const ErrorCase& c : cases) {
    Result<Constraint> got = Constraint::Parse(c.text);
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(got.status().message().find(c.want_in_message), std::string::npos)
        << c.text << " -> " << got.status().message();
  }
}

// The oracle scripts' constraints; scontrol showed each as given in Features=.
TEST(ConstraintTest, OracleFeatures) {
  for (const char* text :
       {"gpu_tesla_A100", "h100", "haswell", "gpu", "gpu80", "scratch", "hpcf2009", "a100"}) {
    Result<Constraint> got = Constraint::Parse(text);
    ASSERT_TRUE(got.ok()) << text;
    EXPECT_EQ(got->text(), text);
  }
}

TEST(ConstraintTest, CopiesShareTheParsedTree) {
  Result<Constraint> got = Constraint::Parse("a&b");
  ASSERT_TRUE(got.ok());
  Constraint copy = *got;
  EXPECT_TRUE(MatchesNode(copy, {"a", "b"}));
  EXPECT_EQ(copy.text(), "a&b");
}

}  // namespace
}  // namespace berth::core
