#include "controller/auth.h"

#include <gtest/gtest.h>

#include <string>

namespace berth::controller {
namespace {

net::HttpRequest WithAuthorization(const std::string& value) {
  net::HttpRequest req;
  req.headers["authorization"] = value;
  return req;
}

class AuthTest : public ::testing::Test {
 protected:
  AuthTest() : signer_(std::string(64, 'a')) {
    auth_.Configure({/*own_uid=*/4242, {"opal"}, ""});
    auth_.set_signer(&signer_);
  }
  net::TokenSigner signer_;
  Auth auth_;
};

TEST_F(AuthTest, AUnixSocketPeerIsAUser) {
  net::HttpRequest req;
  req.peer = net::PeerCredentials{};
  req.peer->uid = 4242;
  req.peer->gid = 7;
  Caller c = auth_.Identify(req);
  EXPECT_TRUE(c.known);
  EXPECT_TRUE(c.admin);  // the controller's own user
  EXPECT_EQ(c.gid, 7u);
  EXPECT_EQ(KindOf(c), CredentialKind::kOperator);
  EXPECT_EQ(KindOf(auth_.Identify(net::HttpRequest{})), CredentialKind::kNobody);
}

TEST_F(AuthTest, OperatorsAreRootTheOwnUserAndTheNamedOnes) {
  Caller c;
  c.uid = 1000;
  c.user = "opal";
  EXPECT_TRUE(auth_.IsAdmin(c));
  c.user = "bob";
  EXPECT_FALSE(auth_.IsAdmin(c));
  c.uid = 0;
  EXPECT_TRUE(auth_.IsAdmin(c));
}

TEST_F(AuthTest, EachTokenKindNamesItsCaller) {
  std::optional<Caller> user =
      auth_.IdentifyToken(WithAuthorization("Bearer " + signer_.Issue(1000)));
  ASSERT_TRUE(user);
  EXPECT_EQ(user->uid, 1000u);
  EXPECT_EQ(KindOf(*user), CredentialKind::kUser);

  std::optional<Caller> node =
      auth_.IdentifyToken(WithAuthorization("bearer " + signer_.IssueNode("n1")));
  ASSERT_TRUE(node);
  EXPECT_EQ(node->agent_node, "n1");
  EXPECT_EQ(KindOf(*node), CredentialKind::kNode);
  EXPECT_FALSE(auth_.IdentifyUserToken(WithAuthorization("Bearer " + signer_.IssueNode("n1"))));

  std::optional<Caller> step =
      auth_.IdentifyToken(WithAuthorization("BEARER " + signer_.IssueJob(12, 3)));
  ASSERT_TRUE(step);
  EXPECT_EQ(step->step_job, 12u);
  EXPECT_EQ(step->step_attempt, 3);
  EXPECT_EQ(KindOf(*step), CredentialKind::kStepToken);

  std::optional<Caller> join =
      auth_.IdentifyToken(WithAuthorization("Bearer " + signer_.IssueJoin()));
  ASSERT_TRUE(join);
  EXPECT_EQ(KindOf(*join), CredentialKind::kJoinToken);

  EXPECT_FALSE(auth_.IdentifyToken(WithAuthorization("Bearer berth.1000.00")));
  EXPECT_FALSE(auth_.IdentifyToken(WithAuthorization("Basic abc")));
  EXPECT_FALSE(auth_.IdentifyToken(net::HttpRequest{}));
}

TEST_F(AuthTest, WithoutASignerNoTokenIsTaken) {
  Auth bare;
  EXPECT_FALSE(bare.IdentifyToken(WithAuthorization("Bearer " + signer_.Issue(1000))));
  EXPECT_EQ(bare.signer(), nullptr);
}

TEST(BearerTokenTest, TakesTheSchemeInAnyCase) {
  EXPECT_EQ(BearerToken(WithAuthorization("bEaReR tok")), "tok");
  EXPECT_EQ(BearerToken(WithAuthorization("Bearer ")), std::nullopt);
  EXPECT_EQ(BearerToken(WithAuthorization("Munge MUNGE:x")), std::nullopt);
}

}  // namespace
}  // namespace berth::controller
