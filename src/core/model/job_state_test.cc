#include "core/model/job_state.h"

#include <gtest/gtest.h>

namespace berth::core {
namespace {

TEST(JobStateTest, NamesRoundTrip) {
  for (int i = 0; i < kNumJobStates; ++i) {
    JobState s = static_cast<JobState>(i);
    EXPECT_EQ(ParseJobState(JobStateName(s)), s);
    EXPECT_EQ(ParseJobState(JobStateShortName(s)), s);
  }
  EXPECT_EQ(ParseJobState("completed"), JobState::kCompleted);
  EXPECT_EQ(ParseJobState("canceled"), JobState::kCancelled);
  EXPECT_EQ(ParseJobState("bogus"), std::nullopt);
  EXPECT_EQ(JobStateShortName(JobState::kOutOfMemory), "OOM");
}

struct TransitionCase {
  JobState from, to;
  bool valid;
};

class TransitionTest : public ::testing::TestWithParam<TransitionCase> {};

TEST_P(TransitionTest, Table) {
  const TransitionCase& c = GetParam();
  EXPECT_EQ(IsValidTransition(c.from, c.to), c.valid)
      << JobStateName(c.from) << " -> " << JobStateName(c.to);
}

using S = JobState;
INSTANTIATE_TEST_SUITE_P(Slurm, TransitionTest,
                         ::testing::Values(TransitionCase{S::kPending, S::kRunning, true},
                                           TransitionCase{S::kPending, S::kConfiguring, true},
                                           TransitionCase{S::kPending, S::kCancelled, true},
                                           TransitionCase{S::kPending, S::kDeadline, true},
                                           TransitionCase{S::kPending, S::kCompleted, false},
                                           TransitionCase{S::kPending, S::kTimeout, false},
                                           TransitionCase{S::kPending, S::kPending, false},
                                           TransitionCase{S::kConfiguring, S::kRunning, true},
                                           TransitionCase{S::kConfiguring, S::kBootFail, true},
                                           TransitionCase{S::kConfiguring, S::kCompleted, false},
                                           TransitionCase{S::kRunning, S::kCompleted, true},
                                           TransitionCase{S::kRunning, S::kTimeout, true},
                                           TransitionCase{S::kRunning, S::kOutOfMemory, true},
                                           TransitionCase{S::kRunning, S::kNodeFail, true},
                                           TransitionCase{S::kRunning, S::kPreempted, true},
                                           TransitionCase{S::kRunning, S::kPending, true},
                                           TransitionCase{S::kRunning, S::kConfiguring, false},
                                           TransitionCase{S::kSuspended, S::kRunning, true},
                                           TransitionCase{S::kSuspended, S::kOutOfMemory, false},
                                           TransitionCase{S::kCompleting, S::kCompleted, true},
                                           TransitionCase{S::kCompleting, S::kRunning, false},
                                           TransitionCase{S::kCompleted, S::kPending, true},
                                           TransitionCase{S::kCompleted, S::kRunning, false},
                                           TransitionCase{S::kCancelled, S::kCompleted, false},
                                           TransitionCase{S::kTimeout, S::kPending, true}));

TEST(JobStateTest, TerminalAndHolding) {
  EXPECT_TRUE(IsTerminal(S::kNodeFail));
  EXPECT_FALSE(IsTerminal(S::kCompleting));
  EXPECT_TRUE(HoldsResources(S::kCompleting));
  EXPECT_FALSE(HoldsResources(S::kPending));
  EXPECT_FALSE(HoldsResources(S::kCompleted));
}

}  // namespace
}  // namespace berth::core
