// The one mapping from berth's Status to a Kubernetes `v1 Status`: the code /v1 answers, and
// Kubernetes' reason for it.
#include "k8s/status.h"

#include <gtest/gtest.h>

#include "api/errors.h"

namespace berth::k8s {
namespace {

TEST(K8sStatusTest, StoppingIsServiceUnavailable) {
  nlohmann::json s = StatusOf(Status::Unavailable("the controller is stopping"));
  EXPECT_EQ(s["kind"], "Status");
  EXPECT_EQ(s["status"], "Failure");
  EXPECT_EQ(s["code"], 503);
  EXPECT_EQ(s["reason"], "ServiceUnavailable");
  EXPECT_EQ(s["message"], "the controller is stopping");
  EXPECT_FALSE(s.contains("details"));
}

TEST(K8sStatusTest, CodesAreThoseOfTheV1Api) {
  const Status cases[] = {Status::InvalidArgument("a"),    Status::NotFound("b"),
                          Status::AlreadyExists("c"),      Status::PermissionDenied("d"),
                          Status::FailedPrecondition("e"), Status::ResourceExhausted("f"),
                          Status::Unavailable("g"),        Status::Internal("h")};
  for (const Status& st : cases) {
    nlohmann::json s = StatusOf(st);
    EXPECT_EQ(s["code"], api::HttpStatusOf(st.code())) << st.message();
    EXPECT_EQ(s["reason"], std::string(ReasonOf(s["code"].get<int>()))) << st.message();
  }
}

TEST(K8sStatusTest, Reasons) {
  EXPECT_EQ(ReasonOf(400), "BadRequest");
  EXPECT_EQ(ReasonOf(403), "Forbidden");
  EXPECT_EQ(ReasonOf(404), "NotFound");
  EXPECT_EQ(ReasonOf(409), "Conflict");
  EXPECT_EQ(ReasonOf(422), "Invalid");
  EXPECT_EQ(ReasonOf(429), "TooManyRequests");
  EXPECT_EQ(ReasonOf(503), "ServiceUnavailable");
  EXPECT_EQ(ReasonOf(500), "InternalError");
  EXPECT_EQ(ReasonOf(418), "InternalError");
}

}  // namespace
}  // namespace berth::k8s
