#include "agent/agent_commands.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::agent {
namespace {

LaunchSpec SomeSpec() {
  LaunchSpec s;
  s.job_id = 12;
  s.attempt = 2;
  s.name = "train";
  s.user = "alice";
  s.uid = 1000;
  s.argv = {"python", "train.py"};
  s.environment = {{"A", "1"}};
  s.cpus = 4;
  return s;
}

// Every kind, with fields set away from their defaults.
std::vector<AgentCommand> EveryKind() {
  const CommandTarget t{12, 2};
  return {LaunchCommand{t, SomeSpec(), "token"},
          LaunchCommand{t, SomeSpec(), ""},
          CancelCommand{t},
          SignalCommand{t, 10, true},
          TimeLimitCommand{t, 7200},
          StepCommand{t, 3, SomeSpec(), "token"},
          StepCommand{t, 4, SomeSpec(), ""},
          EndStepsCommand{t},
          StepSignalCommand{t, 3, 2},
          StreamCommand{t, "ab12", R"({"command":["ls"],"kind":"exec","tty":true})"},
          NoopCommand{}};
}

TEST(AgentCommandsTest, EveryKindRoundTrips) {
  for (const AgentCommand& c : EveryKind()) {
    const std::string text = EncodeAgentCommand(c);
    SCOPED_TRACE(text);
    Result<AgentCommand> back = DecodeAgentCommand(text);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->index(), c.index());
    EXPECT_EQ(EncodeAgentCommand(*back), text);
  }
}

TEST(AgentCommandsTest, DecodedFieldsAreThoseEncoded) {
  Result<AgentCommand> c = DecodeAgentCommand(EncodeAgentCommand(SignalCommand{{7, 1}, 10, true}));
  ASSERT_TRUE(c.ok());
  const auto& s = std::get<SignalCommand>(*c);
  EXPECT_EQ(s.target, (CommandTarget{7, 1}));
  EXPECT_EQ(s.signal, 10);
  EXPECT_TRUE(s.batch_only);
  EXPECT_FALSE(s.full);
  c = DecodeAgentCommand(EncodeAgentCommand(SignalCommand{{7, 1}, 12, false, true}));
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(std::get<SignalCommand>(*c).full);
  EXPECT_EQ(std::get<SignalCommand>(*c).step, -1);
  c = DecodeAgentCommand(EncodeAgentCommand(SignalCommand{{7, 1}, 9, false, false, 3}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(std::get<SignalCommand>(*c).step, 3);
  EXPECT_FALSE(
      DecodeAgentCommand(R"({"kind": "signal", "job_id": 1, "attempt": 0, "step": -4})").ok());

  c = DecodeAgentCommand(EncodeAgentCommand(LaunchCommand{{12, 2}, SomeSpec(), "tok"}));
  ASSERT_TRUE(c.ok());
  const auto& l = std::get<LaunchCommand>(*c);
  EXPECT_EQ(l.job_token, "tok");
  EXPECT_EQ(l.spec.argv, SomeSpec().argv);
  EXPECT_EQ(l.spec.user, "alice");
}

TEST(AgentCommandsTest, TheWireFormatIsTheDocumentedOne) {
  const nlohmann::json j =
      nlohmann::json::parse(EncodeAgentCommand(StepSignalCommand{{12, 0}, 3, 15}));
  EXPECT_EQ(j, (nlohmann::json{{"kind", "step_signal"},
                               {"job_id", 12},
                               {"attempt", 0},
                               {"step_id", 3},
                               {"signal", 15}}));
  EXPECT_EQ(nlohmann::json::parse(EncodeAgentCommand(CancelCommand{{5, 1}})),
            (nlohmann::json{{"kind", "cancel"}, {"job_id", 5}, {"attempt", 1}}));
}

TEST(AgentCommandsTest, TheDeliverysSequenceNumberAndOptionalFieldsAreAccepted) {
  Result<AgentCommand> c =
      DecodeAgentCommand(R"({"kind": "signal", "job_id": 4, "attempt": 0, "seq": 9})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(std::get<SignalCommand>(*c).signal, 15);  // SIGTERM unless said
  EXPECT_FALSE(std::get<SignalCommand>(*c).batch_only);
  EXPECT_TRUE(
      std::holds_alternative<NoopCommand>(*DecodeAgentCommand(R"({"kind":"noop","seq":3})")));
}

TEST(AgentCommandsTest, MalformedCommandsAreClearErrors) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"not json", "must be a JSON object"},
      {"[1, 2]", "must be a JSON object"},
      {R"({"job_id": 1, "attempt": 0})", "no \"kind\""},
      {R"({"kind": 3, "job_id": 1, "attempt": 0})", "\"kind\" is not a string"},
      {R"({"kind": "reboot", "job_id": 1, "attempt": 0})", "unknown kind \"reboot\""},
      {R"({"kind": "cancel", "attempt": 0})", "no \"job_id\""},
      {R"({"kind": "cancel", "job_id": "1", "attempt": 0})", "\"job_id\" is not an integer"},
      {R"({"kind": "cancel", "job_id": -1, "attempt": 0})", "\"job_id\" is out of range"},
      {R"({"kind": "cancel", "job_id": 4294967296, "attempt": 0})", "\"job_id\" is out of range"},
      {R"({"kind": "cancel", "job_id": 1})", "no \"attempt\""},
      {R"({"kind": "launch", "job_id": 1, "attempt": 0})", "no \"spec\" object"},
      {R"({"kind": "step", "job_id": 1, "attempt": 0, "spec": {}})", "no \"step_id\""},
      {R"({"kind": "signal", "job_id": 1, "attempt": 0, "batch_only": 1})",
       "\"batch_only\" is not a boolean"},
      {R"({"kind": "time_limit", "job_id": 1, "attempt": 0})", "no \"time_limit\""},
      {R"({"kind": "stream", "job_id": 1, "attempt": 0, "request": {}})", "no \"stream_id\""},
      {R"({"kind": "stream", "job_id": 1, "attempt": 0, "stream_id": "x", "request": []})",
       "no \"request\" object"},
      {R"({"kind": "step_signal", "job_id": 1, "attempt": 0, "step_id": 2.5})",
       "\"step_id\" is not an integer"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    Result<AgentCommand> r = DecodeAgentCommand(c.text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  }
}

TEST(EpochFenceTest, ADeposedLeadersEpochIsRefusedOnceALaterOneWasSeen) {
  EpochFence f;
  EXPECT_TRUE(f.Admit(0));  // a controller alone
  EXPECT_TRUE(f.Admit(7));
  EXPECT_TRUE(f.Admit(7));  // the same leader again
  EXPECT_EQ(f.seen(), 7);
  EXPECT_TRUE(f.Admit(12));  // a new leader
  EXPECT_FALSE(f.Admit(7));  // the old one, deposed
  EXPECT_EQ(f.seen(), 12);
  EXPECT_TRUE(f.Admit(0));
  EXPECT_TRUE(f.Admit(12));
}

}  // namespace
}  // namespace berth::agent
