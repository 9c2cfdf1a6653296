#include "controller/requests.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/job_json.h"

namespace berth::controller {
namespace {

using nlohmann::json;

Caller Alice() {
  Caller c;
  c.known = true;
  c.uid = 1000;
  c.gid = 1000;
  c.user = "alice";
  return c;
}

TEST(RequestsTest, GuardJsonTurnsATypeErrorIntoABadRequest) {
  const json body = {{"batch_only", "yes"}};
  Status st = GuardJson([&] {
    (void)body.value("batch_only", false);
    return Status::Ok();
  });
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("bad request: [json.exception.type_error", 0), 0u) << st.message();
}

TEST(RequestsTest, CancelManyChecksItsShapeAndSignal) {
  EXPECT_EQ(DecodeCancelMany(json::object()).status().message(),
            "expected {\"ids\": [\"12\", \"13_4\", ...]}");
  EXPECT_EQ(DecodeCancelMany({{"ids", json::array()}, {"signal", 9}}).status().message(),
            "\"signal\" must be a name or number as a string");
  EXPECT_EQ(DecodeCancelMany({{"ids", json::array()}, {"signal", "NOPE"}}).status().message(),
            "Invalid signal specified: NOPE");
  EXPECT_EQ(DecodeCancelMany({{"ids", json::array()}, {"batch_only", 1}}).status().code(),
            StatusCode::kInvalidArgument);
  Result<CancelManyRequest> r = DecodeCancelMany(
      {{"ids", {"12", 13u, -1, "14_2"}}, {"signal", "KILL"}, {"batch_only", true}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ids, (std::vector<std::string>{"12", "13", "", "14_2"}));
  EXPECT_EQ(r->signal, 9);
  EXPECT_TRUE(r->batch_only);
}

TEST(RequestsTest, JobActionsTakeTheirFieldsFromTheBodyAndQuery) {
  Result<JobActionRequest> sig = DecodeJobAction("POST", "signal", {}, {{"signal", "USR1"}});
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(sig->kind, JobActionKind::kCancel);
  EXPECT_EQ(sig->signal, 10);
  EXPECT_EQ(DecodeJobAction("POST", "signal", {}, json::object()).status().message(),
            "Invalid signal specified");
  Result<JobActionRequest> del = DecodeJobAction("DELETE", "", {{"signal", "TERM"}}, {});
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->signal, 15);
  EXPECT_EQ(DecodeJobAction("DELETE", "", {{"signal", "x"}}, {}).status().message(),
            "Invalid signal specified");
  Result<JobActionRequest> hold = DecodeJobAction("POST", "hold", {}, {{"admin", true}});
  ASSERT_TRUE(hold.ok());
  EXPECT_EQ(hold->kind, JobActionKind::kHold);
  EXPECT_TRUE(hold->admin_hold);
  EXPECT_EQ(DecodeJobAction("POST", "release", {}, {{"admin", "x"}}).status().code(),
            StatusCode::kInvalidArgument);
  Result<JobActionRequest> update = DecodeJobAction("PATCH", "", {}, {{"nice", 5}});
  ASSERT_TRUE(update.ok());
  EXPECT_EQ(update->kind, JobActionKind::kUpdate);
  EXPECT_EQ(update->update.nice, 5);
  EXPECT_FALSE(update->update.time_limit.has_value());
  EXPECT_EQ(DecodeJobAction("PATCH", "", {}, {{"nice", "x"}}).status().message(),
            "Invalid nice value");
}

TEST(RequestsTest, JobUpdateDecodesEachFieldByNameAndType) {
  Result<JobUpdate> u = DecodeJobUpdate({{"time_limit", 600},
                                         {"comment", "c"},
                                         {"num_nodes", 2},
                                         {"time_min", 61},
                                         {"features", ""},
                                         {"partition", "gpu"}});
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->time_limit, 600);
  EXPECT_EQ(u->comment, "c");
  EXPECT_FALSE(u->nice.has_value());
  // In the body's (sorted) order; time_min in whole minutes, rounded up, as sbatch counts it.
  const std::vector<std::pair<std::string, std::string>> want = {
      {"features", ""}, {"num_nodes", "2"}, {"partition", "gpu"}, {"time_min", "2"}};
  EXPECT_EQ(u->request, want);
  EXPECT_STREQ(JobUpdateOption("num_nodes"), "nodes");
  EXPECT_EQ(JobUpdateOption("user"), nullptr);
}

TEST(RequestsTest, JobUpdateRefusesWhatNoJobCouldTake) {
  auto message = [](const json& body) { return DecodeJobUpdate(body).status().message(); };
  EXPECT_EQ(message(json::object()), "expected an object of fields to change");
  EXPECT_EQ(message(json::array()), "expected an object of fields to change");
  EXPECT_EQ(message({{"time_limit", 0}}), "Invalid time limit specification");
  EXPECT_EQ(message({{"time_limit", "1:00"}}), "Invalid time limit specification");
  EXPECT_EQ(message({{"nice", 2147483646}}), "Invalid nice value");
  EXPECT_EQ(message({{"comment", 3}}), "\"comment\": expected a string");
  EXPECT_EQ(message({{"num_nodes", true}}), "\"num_nodes\": expected a string or a number");
  EXPECT_NE(message({{"user", "bob"}}).find("cannot update \"user\""), std::string::npos);
  // A partition that is not a string is kept as an empty name, which the option refuses.
  Result<JobUpdate> p = DecodeJobUpdate({{"partition", 5}});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->request.front().second, "");
}

TEST(RequestsTest, NodeActionReasonMustBeAString) {
  Result<NodeActionRequest> r = DecodeNodeAction("n1", "drain", {{"reason", "fan"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reason, "fan");
  EXPECT_EQ(DecodeNodeAction("n1", "drain", {{"reason", 3}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(RequestsTest, JoinAndTokenRequestsKeepTheirErrorsForLater) {
  EXPECT_EQ(DecodeJoin(json::object()).error.message(), "expected {\"node\": NAME}");
  EXPECT_EQ(DecodeJoin({{"node", "-bad"}}).error.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(DecodeJoin({{"node", "n1"}}).error.ok());

  EXPECT_EQ(DecodeToken(json::array()).shape.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeToken({{"join", "yes"}}).shape.code(), StatusCode::kInvalidArgument);
  TokenRequest node = DecodeToken({{"node", 5}});
  EXPECT_TRUE(node.shape.ok());
  EXPECT_TRUE(node.has_node);
  EXPECT_EQ(node.node_error.code(), StatusCode::kInvalidArgument);
  TokenRequest user = DecodeToken(json::parse(R"({"user": 1001})"));
  EXPECT_TRUE(user.user_error.ok());
  EXPECT_EQ(user.user, "1001");
  EXPECT_TRUE(DecodeToken(nullptr).shape.ok());
}

TEST(RequestsTest, SubmitDecodesEveryJobBeforeAny) {
  const json job = {{"script", "#!/bin/sh\ntrue\n"}};
  Result<SubmitRequest> one =
      DecodeSubmit(Alice(), {{"script", "#!/bin/sh\ntrue\n"}, {"submit_host", "login1"}});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->jobs.size(), 1u);
  EXPECT_EQ(one->submit_host, "login1");
  EXPECT_EQ(one->jobs[0].spec.user, "alice");
  EXPECT_EQ(one->jobs[0].spec.uid, 1000u);

  Result<SubmitRequest> batch = DecodeSubmit(Alice(), {{"jobs", {job, json::object()}}});
  EXPECT_EQ(batch.status().message().rfind("job 2: ", 0), 0u) << batch.status().message();
  EXPECT_EQ(DecodeSubmit(Alice(), {{"jobs", 3}}).status().message(), "\"jobs\" must be an array");
  EXPECT_EQ(DecodeSubmit(Alice(), {{"jobs", json::array()}}).status().message(),
            "no jobs to submit");
  EXPECT_EQ(DecodeSubmit(Alice(), {{"jobs", {job}}, {"submit_host", 1}}).status().code(),
            StatusCode::kInvalidArgument);
  json other = job;
  other["user"] = "bob";
  EXPECT_EQ(DecodeSubmit(Alice(), other).status().code(), StatusCode::kPermissionDenied);
}

// A batch's text is decoded job by job (on several threads when large): the same jobs and the
// same errors as from its tree; bodies of other shapes are left to the tree.
TEST(RequestsTest, ABatchFromItsTextIsTheBatchFromItsTree) {
  auto same = [](const std::string& text) {
    std::optional<Result<SubmitRequest>> fast = DecodeSubmitText(Alice(), text);
    ASSERT_TRUE(fast.has_value()) << text.substr(0, 200);
    Result<SubmitRequest> tree = DecodeSubmit(Alice(), json::parse(text));
    ASSERT_EQ(fast->ok(), tree.ok()) << text.substr(0, 200);
    if (!tree.ok()) {
      EXPECT_EQ(fast->status().code(), tree.status().code());
      EXPECT_EQ(fast->status().message(), tree.status().message());
      return;
    }
    EXPECT_EQ((*fast)->submit_host, tree->submit_host);
    ASSERT_EQ((*fast)->jobs.size(), tree->jobs.size());
    for (size_t i = 0; i < tree->jobs.size(); ++i) {
      const JobSubmission& a = (*fast)->jobs[i];
      const JobSubmission& b = tree->jobs[i];
      EXPECT_EQ(api::EncodeJob(a.spec, a.exec.get()), api::EncodeJob(b.spec, b.exec.get()))
          << "job " << i + 1;
      EXPECT_EQ(a.exec->environment, b.exec->environment) << "job " << i + 1;  // order, repeats
    }
  };
  json big = json::array();
  for (int i = 0; i < 1000; ++i) {  // several slices
    big.push_back({{"script", "#!/bin/sh\ntrue\n"},
                   {"name", "j" + std::to_string(i)},
                   {"environment", {{"PATH", "/usr/bin"}, {"I", std::to_string(i)}}},
                   {"cpus_per_task", 1 + i % 4}});
  }
  same(json{{"jobs", big}, {"submit_host", "login1"}}.dump());
  same(json{{"jobs", big}}.dump(2));  // spaces and new lines anywhere
  json bad = big;
  bad[700]["user"] = "bob";  // not Alice's to give: the 701st job names the error
  bad[900]["cpus_per_task"] = "x";
  same(json{{"jobs", bad}}.dump());
  same(R"({"jobs": [{"script": "#!/bin/sh\ntrue\n"}, {}]})");
  same(R"({"jobs": []})");
  same(R"({"jobs": [{"script": "#!/bin/sh\ntrue\n"}], "submit_host": 1})");
  same(R"({"jobs": [{"script": "a"}], "jobs": [{"script": "b"}, {"script": "c"}]})");
  same(R"({"j\u006fbs": [{"script": "#!/bin/sh\ntrue\n"}], "extra": {"x": [1, 2]}})");
  // Environments read from their text (and copied from the job before when the same): unsorted
  // names, a name twice, escapes and UTF-8, and the shapes the tree refuses or reads its way.
  json envs = json::array();
  for (const char* env :
       {R"({"B": "2", "A": "1", "B": "3"})", R"({"B": "2", "A": "1", "B": "3"})",
        R"({"Q": "a\"b\\c\u00e9\n", "\u0041": "x", "\u00e9t\u00e9": "caf\u00e9"})", R"({})",
        R"({"A": 1})", R"({"A=B": "x"})", R"({"": "x"})", R"([])", R"("x")", R"({"A": null})",
        R"({"A": "1"})"}) {
    envs.push_back(json::parse(std::string(R"({"script": "s", "environment": )") + env + "}"));
  }
  for (const json& job : envs) same(json{{"jobs", json::array({job, job})}}.dump());
  same(json{{"jobs", envs}}.dump());
  same(R"({"jobs": [{"script": "s", "environment": {"A": "1"}, "environment": {"B": "2"}}]})");
  same(R"({"jobs": [{"script": "s", "environment": {"B": "2", "A": "1", "B": "3"}},
                    {"script": "s", "environment": {"B": "2", "A": "1", "B": "3"}},
                    {"script": "s", "environment": {"\u0041": "\u00e9", "A": "x"}}]})");
  same(R"({"jobs": [{"environment": {"A": "1"}, "script": "s", "environment": 5}]})");
  // Jobs whose run specifications are equal share one, whatever came between them.
  const std::string sharing = R"({"jobs": [{"script": "s", "environment": {"A": "1"}},
      {"script": "s", "environment": {"A": "1"}}, {"script": "t", "environment": {"A": "1"}},
      {"script": "t"}, {"script": "t", "environment": {"A": "1"}},
      {"script": "t", "environment": {"A": "1"}, "stdout": "o"},
      {"script": "t", "environment": {"A": "2"}}, {"script": "t", "environment": {"A": "2"}}]})";
  same(sharing);
  std::optional<Result<SubmitRequest>> shared = DecodeSubmitText(Alice(), sharing);
  ASSERT_TRUE(shared.has_value() && shared->ok());
  const std::vector<JobSubmission>& jobs = (*shared)->jobs;
  EXPECT_EQ(jobs[0].exec, jobs[1].exec);
  EXPECT_NE(jobs[1].exec, jobs[2].exec);
  EXPECT_EQ(jobs[2].exec, jobs[4].exec);
  EXPECT_NE(jobs[4].exec, jobs[5].exec);
  EXPECT_NE(jobs[5].exec, jobs[6].exec);
  EXPECT_EQ(jobs[6].exec, jobs[7].exec);
  // Not a batch, or not JSON: the tree decides.
  for (const char* other :
       {R"({"script": "#!/bin/sh\ntrue\n"})", R"({"jobs": 3})", R"({"jobs": [{"script": tru}]})",
        R"({"jobs": [{}] } x)", "", R"({"jobs": [{"script": "a"}], "k": nul})", "[1]"}) {
    EXPECT_FALSE(DecodeSubmitText(Alice(), other).has_value()) << other;
  }
}

}  // namespace
}  // namespace berth::controller
