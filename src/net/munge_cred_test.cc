// ParseUnmungeOutput on what unmunge prints; the programs themselves are exercised by
// tests/integration/test_security.py against a real munged.
#include "net/munge_cred.h"

#include <gtest/gtest.h>

namespace berth::net {
namespace {

TEST(MungeTest, ParsesUnmungeNumericKeys) {
  Result<MungeIdentity> id = ParseUnmungeOutput("UID:             1000\nGID:             100\n\n");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->uid, 1000u);
  EXPECT_EQ(id->gid, 100u);
  EXPECT_FALSE(ParseUnmungeOutput("UID: 1000\n").ok());
  EXPECT_FALSE(ParseUnmungeOutput("UID: root (0)\nGID: 0\n").ok());
  EXPECT_FALSE(ParseUnmungeOutput("").ok());
}

TEST(MungeTest, AnythingButACredentialIsRefusedWithoutRunningUnmunge) {
  EXPECT_EQ(MungeDecode("garbage").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(MungeDecode("MUNGE:" + std::string(9000, 'a')).status().code(),
            StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace berth::net
