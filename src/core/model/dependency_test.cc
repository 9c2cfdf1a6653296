#include "core/model/dependency.h"

#include <gtest/gtest.h>

namespace berth::core {
namespace {

using T = DependencyType;

DependencyTarget Job(uint32_t id, int32_t task = kAllArrayTasks, Duration delay = 0) {
  return DependencyTarget{id, task, delay};
}

struct ParseCase {
  std::string text;
  Dependency want;
  std::string canonical;  // FormatDependency(want)
  std::string scontrol;   // FormatDependencyForScontrol(want), no array jobs known
};

void ExpectParses(const ParseCase& c) {
  Result<Dependency> got = ParseDependency(c.text);
  ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
  EXPECT_EQ(*got, c.want) << c.text;
  EXPECT_EQ(got->empty(), c.want.conditions.empty());
  EXPECT_EQ(FormatDependency(*got), c.canonical) << c.text;
  EXPECT_EQ(FormatDependencyForScontrol(*got), c.scontrol) << c.text;
  Result<Dependency> again = ParseDependency(FormatDependency(*got));
  ASSERT_TRUE(again.ok()) << c.canonical;
  EXPECT_EQ(*again, *got) << c.canonical;
}

TEST(DependencyTest, Parse) {
  const ParseCase cases[] = {
      {"", {}, "", "(null)"},
      {"0", {}, "", "(null)"},  // Slurm: "0" clears the dependency
      {"afterok:123",
       {{{T::kAfterOk, {Job(123)}}}, false},
       "afterok:123",
       "afterok:123(unfulfilled)"},
      {"afterok:20:21,afterany:23",
       {{{T::kAfterOk, {Job(20), Job(21)}}, {T::kAfterAny, {Job(23)}}}, false},
       "afterok:20:21,afterany:23",
       "afterok:20(unfulfilled),afterok:21(unfulfilled),afterany:23(unfulfilled)"},
      {"afterok:20:21?afterany:23",
       {{{T::kAfterOk, {Job(20), Job(21)}}, {T::kAfterAny, {Job(23)}}}, true},
       "afterok:20:21?afterany:23",
       "afterok:20(unfulfilled)?afterok:21(unfulfilled)?afterany:23(unfulfilled)"},
      {"after:7+5",
       {{{T::kAfter, {Job(7, kAllArrayTasks, 300)}}}, false},
       "after:7+5",
       "after:7+5(unfulfilled)"},
      // A delay belongs to the id it follows.
      {"after:1+5:2",
       {{{T::kAfter, {Job(1, kAllArrayTasks, 300), Job(2)}}}, false},
       "after:1+5:2",
       "after:1+5(unfulfilled),after:2(unfulfilled)"},
      {"afterok:1+10",
       {{{T::kAfterOk, {Job(1, kAllArrayTasks, 600)}}}, false},
       "afterok:1+10",
       "afterok:1+10(unfulfilled)"},
      {"afterok:12_3,singleton",
       {{{T::kAfterOk, {Job(12, 3)}}, {T::kSingleton, {}}}, false},
       "afterok:12_3,singleton",
       "afterok:12_3(unfulfilled),singleton(unfulfilled)"},
      {"afterany:123_*",
       {{{T::kAfterAny, {Job(123)}}}, false},
       "afterany:123",
       "afterany:123(unfulfilled)"},
      {"aftercorr:55",
       {{{T::kAfterCorr, {Job(55)}}}, false},
       "aftercorr:55",
       "aftercorr:55(unfulfilled)"},
      {"afternotok:9?singleton",
       {{{T::kAfterNotOk, {Job(9)}}, {T::kSingleton, {}}}, true},
       "afternotok:9?singleton",
       "afternotok:9(unfulfilled)?singleton(unfulfilled)"},
      {"singleton", {{{T::kSingleton, {}}}, false}, "singleton", "singleton(unfulfilled)"},
      {"SINGLETON", {{{T::kSingleton, {}}}, false}, "singleton", "singleton(unfulfilled)"},
      {"AfterOK:5", {{{T::kAfterOk, {Job(5)}}}, false}, "afterok:5", "afterok:5(unfulfilled)"},
  };
  for (const ParseCase& c : cases) ExpectParses(c);
}

TEST(DependencyTest, ParseOldFormatArrayListsAndDuplicates) {
  const ParseCase cases[] = {
      // The old format: plain ids, each an afterany.
      {"123", {{{T::kAfterAny, {Job(123)}}}, false}, "afterany:123", "afterany:123(unfulfilled)"},
      {"123,456_7",
       {{{T::kAfterAny, {Job(123)}}, {T::kAfterAny, {Job(456, 7)}}}, false},
       "afterany:123,afterany:456_7",
       "afterany:123(unfulfilled),afterany:456_7(unfulfilled)"},
      {"afterok:1,2",
       {{{T::kAfterOk, {Job(1)}}, {T::kAfterAny, {Job(2)}}}, false},
       "afterok:1,afterany:2",
       "afterok:1(unfulfilled),afterany:2(unfulfilled)"},
      {"afterok:1?2",
       {{{T::kAfterOk, {Job(1)}}, {T::kAfterAny, {Job(2)}}}, true},
       "afterok:1?afterany:2",
       "afterok:1(unfulfilled)?afterany:2(unfulfilled)"},
      // Array task lists expand as Slurm's _xlate_array_dep() does.
      {"afterok:123_[1-3]",
       {{{T::kAfterOk, {Job(123, 1), Job(123, 2), Job(123, 3)}}}, false},
       "afterok:123_1:123_2:123_3",
       "afterok:123_1(unfulfilled),afterok:123_2(unfulfilled),afterok:123_3(unfulfilled)"},
      {"after:9_[5,1-2]+4",
       {{{T::kAfter, {Job(9, 1), Job(9, 2), Job(9, 5, 240)}}}, false},
       "after:9_1:9_2:9_5+4",
       "after:9_1(unfulfilled),after:9_2(unfulfilled),after:9_5+4(unfulfilled)"},
      // Duplicates are kept in the model; scontrol shows them once.
      {"afterok:1:1,afterok:1",
       {{{T::kAfterOk, {Job(1), Job(1)}}, {T::kAfterOk, {Job(1)}}}, false},
       "afterok:1:1,afterok:1",
       "afterok:1(unfulfilled)"},
      {"singleton,singleton",
       {{{T::kSingleton, {}}, {T::kSingleton, {}}}, false},
       "singleton,singleton",
       "singleton(unfulfilled)"},
      {"afterok:4294967295",
       {{{T::kAfterOk, {Job(4294967295u)}}}, false},
       "afterok:4294967295",
       "afterok:4294967295(unfulfilled)"},
  };
  for (const ParseCase& c : cases) ExpectParses(c);
}

TEST(DependencyTest, ScontrolMarksWholeArrays) {
  Result<Dependency> d = ParseDependency("afterok:10:11_2:12_*");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(FormatDependencyForScontrol(*d, {10, 11}),
            "afterok:10_*(unfulfilled),afterok:11_2(unfulfilled),afterok:12(unfulfilled)");
}

struct ErrorCase {
  std::string text;
  std::string want_in_message;
};

TEST(DependencyTest, Errors) {
  const ErrorCase cases[] = {
      {"aftr:1", "invalid dependency type 'aftr'"},
      {"afterokay:1", "invalid dependency type 'afterokay'"},
      {"afterok:x1", "invalid job id 'x1' in dependency"},
      {"afterok:", "invalid job id ''"},
      {"afterok:1:", "invalid job id ''"},
      {"afterok:-5", "invalid job id '-5'"},
      {"afterok: 5", "invalid job id ' 5'"},
      {"afterok:0", "job id 0 is invalid"},
      {"afterok:4294967296", "job id 4294967296 is invalid"},
      {"afterok:12345678901", "invalid job id '12345678901'"},
      {"afterok:12_", "invalid array task id ''"},
      {"afterok:12_x", "invalid array task id 'x'"},
      {"afterok:12_99999999", "invalid array task id '99999999'"},
      {"afterok", "dependency type 'afterok' needs job ids"},
      {"afterok,afterany:1", "dependency type 'afterok' needs job ids"},
      {"after:1+0", "delay +0 must be 1 to"},
      {"after:1+", "invalid delay in minutes ''"},
      {"after:1+5x", "unexpected 'x' after a job id"},
      {"afterok:1 ,afterok:2", "unexpected ' ,afterok:2'"},
      {"afterok:1(unfulfilled)", "state annotations"},
      {"afterok:1,afterany:2?afterok:3", "cannot be mixed"},
      {"afterok:1?afterany:2,afterok:3", "cannot be mixed"},
      {"afterok:1,", "nothing after the last ','"},
      {"afterok:1,,afterok:2", "empty condition"},
      {",afterok:1", "empty condition"},
      {"123?456", "can only be joined with ','"},
      {"123,afterok:456", "cannot come before"},
      {"123+5", "unexpected '+5'"},
      {"singleton:1", "unexpected ':1'"},
      {"singletons", "unexpected 's'"},
      {"afterburstbuffer:1", "'afterburstbuffer' in 'afterburstbuffer:1' is not supported"},
      {"expand:1", "'expand' in 'expand:1' is not supported"},
      {"afterok:1_[3-1]", "bad array task list '_[3-1]'"},
      {"afterok:1_[0-100000]", "names more than 100000 array tasks"},
      {"afterok:1_[0-60000]:2_[0-60000]", "names more than 100000 array tasks"},
      {"afterok:1_[]", "bad array task list '_[]'"},
      {"afterok:1_[2", "bad array task list '_[2'"},
      {"afterok:1_[a]", "bad array task list '_[a]'"},
      {"afterok:$jobid", "invalid job id '$jobid'"},
  };
  for (const ErrorCase& c : cases) {
    Result<Dependency> got = ParseDependency(c.text);
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(got.status().message().find(c.want_in_message), std::string::npos)
        << c.text << " -> " << got.status().message();
  }
}

TEST(DependencyTest, TypeNames) {
  EXPECT_EQ(DependencyTypeName(T::kAfter), "after");
  EXPECT_EQ(DependencyTypeName(T::kAfterAny), "afterany");
  EXPECT_EQ(DependencyTypeName(T::kAfterOk), "afterok");
  EXPECT_EQ(DependencyTypeName(T::kAfterNotOk), "afternotok");
  EXPECT_EQ(DependencyTypeName(T::kAfterCorr), "aftercorr");
  EXPECT_EQ(DependencyTypeName(T::kSingleton), "singleton");
}

TEST(DependencyTest, FormatThenParseRoundTripsBuiltValues) {
  Dependency d;
  d.any = true;
  d.conditions.push_back({T::kAfter, {Job(1, 0, 60), Job(2), Job(3, kAllArrayTasks, 7200)}});
  d.conditions.push_back({T::kSingleton, {}});
  d.conditions.push_back({T::kAfterCorr, {Job(4, 4000000)}});
  Result<Dependency> again = ParseDependency(FormatDependency(d));
  ASSERT_TRUE(again.ok()) << FormatDependency(d);
  EXPECT_EQ(*again, d);
}

}  // namespace
}  // namespace berth::core
