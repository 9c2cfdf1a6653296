#include "api/errors.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::api {
namespace {

TEST(ErrorsTest, HttpStatuses) {
  EXPECT_EQ(HttpStatusOf(StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusOf(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusOf(StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusOf(StatusCode::kNotFound), 404);
  // Both "exists already" and "not in a state for this" are conflicts.
  EXPECT_EQ(HttpStatusOf(StatusCode::kAlreadyExists),
            HttpStatusOf(StatusCode::kFailedPrecondition));
  EXPECT_EQ(HttpStatusOf(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusOf(StatusCode::kInternal), 500);
}

TEST(ErrorsTest, UnavailableIsServiceUnavailableOnEveryFace) {
  EXPECT_EQ(HttpStatusOf(StatusCode::kUnavailable), 503);
  EXPECT_EQ(K8sReasonOf(StatusCode::kUnavailable), "ServiceUnavailable");
  EXPECT_EQ(StatusFromHttp(503, "").code(), StatusCode::kUnavailable);
}

TEST(ErrorsTest, KubernetesReasonsAreTheApiServersNames) {
  EXPECT_EQ(K8sReasonOf(StatusCode::kInvalidArgument), "BadRequest");
  EXPECT_EQ(K8sReasonOf(StatusCode::kNotFound), "NotFound");
  EXPECT_EQ(K8sReasonOf(StatusCode::kAlreadyExists), "AlreadyExists");
  EXPECT_EQ(K8sReasonOf(StatusCode::kFailedPrecondition), "Conflict");
  EXPECT_EQ(K8sReasonOf(StatusCode::kPermissionDenied), "Forbidden");
}

TEST(ErrorsTest, EveryFailureExitsOneAsSlurmsCommandsDo) {
  EXPECT_EQ(ExitCodeOf(StatusCode::kOk), 0);
  for (int c = 1; c <= static_cast<int>(StatusCode::kInternal); ++c) {
    EXPECT_EQ(ExitCodeOf(static_cast<StatusCode>(c)), 1) << c;
  }
}

TEST(ErrorsTest, ErrorBodyRoundTripsThroughStatusFromHttp) {
  const Status st = Status::FailedPrecondition("Job has already finished: 12");
  const std::string body = ErrorBody(st).dump();
  EXPECT_EQ(body,
            R"({"error":{"code":"FAILED_PRECONDITION","message":"Job has already finished: 12"}})");
  EXPECT_EQ(StatusFromHttp(HttpStatusOf(st.code()), body), st);
}

TEST(ErrorsTest, StatusFromHttpWithoutABodyGoesByTheHttpStatus) {
  EXPECT_TRUE(StatusFromHttp(201, "").ok());
  EXPECT_EQ(StatusFromHttp(503, "down").code(), StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromHttp(401, "").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusFromHttp(502, "").code(), StatusCode::kInternal);
  EXPECT_EQ(StatusFromHttp(404, "").message(), "HTTP 404");
}

}  // namespace
}  // namespace berth::api
