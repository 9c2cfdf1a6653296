#include "image/reference.h"

#include <gtest/gtest.h>

namespace berth::image {
namespace {

struct Good {
  const char* text;
  const char* registry;
  const char* repository;
  const char* tag;
  const char* digest;
  const char* string;
};

const char* kDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(ReferenceTest, ParsesDockerAndPyxisForms) {
  const Good cases[] = {
      {"busybox", "docker.io", "library/busybox", "latest", "", "docker.io/library/busybox:latest"},
      {"busybox:1.36", "docker.io", "library/busybox", "1.36", "", nullptr},
      {"team/app", "docker.io", "team/app", "latest", "", nullptr},
      {"docker.io/library/ubuntu:22.04", "docker.io", "library/ubuntu", "22.04", "", nullptr},
      {"index.docker.io/foo/bar", "docker.io", "foo/bar", "latest", "", nullptr},
      {"nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io", "nvidia/pytorch", "24.05-py3", "", nullptr},
      {"127.0.0.1:5000/team/app:1.0", "127.0.0.1:5000", "team/app", "1.0", "", nullptr},
      {"localhost/app", "localhost", "app", "latest", "", nullptr},
      {"localhost:5000/a__b/c-d.e_f:v_1.2-x", "localhost:5000", "a__b/c-d.e_f", "v_1.2-x", "",
       nullptr},
      {"[::1]:5000/app:1", "[::1]:5000", "app", "1", "", nullptr},
      {"docker://busybox:1.0", "docker.io", "library/busybox", "1.0", "", nullptr},
      {"nvcr.io#nvidia/pytorch:24.05-py3", "nvcr.io", "nvidia/pytorch", "24.05-py3", "",
       "nvcr.io/nvidia/pytorch:24.05-py3"},
      {"alice@nvcr.io#nvidia/pytorch", "nvcr.io", "nvidia/pytorch", "latest", "", nullptr},
      {"docker://127.0.0.1:5000#app:2", "127.0.0.1:5000", "app", "2", "", nullptr},
      {"docker.io#ubuntu", "docker.io", "library/ubuntu", "latest", "", nullptr},
      {"alice@ubuntu", "docker.io", "library/ubuntu", "latest", "", nullptr},
      {"alice@reg.io:5000/app:2", "reg.io:5000", "app", "2", "", nullptr},
  };
  for (const Good& c : cases) {
    SCOPED_TRACE(c.text);
    Result<Reference> r = ParseReference(c.text);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->registry, c.registry);
    EXPECT_EQ(r->repository, c.repository);
    EXPECT_EQ(r->tag, c.tag);
    EXPECT_EQ(r->digest, c.digest);
    if (c.string) {
      EXPECT_EQ(r->String(), c.string);
    }
  }
}

TEST(ReferenceTest, Digests) {
  Result<Reference> r = ParseReference(std::string("busybox@") + kDigest);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tag, "");
  EXPECT_EQ(r->digest, kDigest);
  EXPECT_EQ(r->String(), std::string("docker.io/library/busybox@") + kDigest);
  EXPECT_EQ(r->Transport(), std::string("//docker.io/library/busybox@") + kDigest);
  r = ParseReference(std::string("reg.io:5000/app:1.0@") + kDigest);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tag, "1.0");
  EXPECT_EQ(r->String(), std::string("reg.io:5000/app:1.0@") + kDigest);
  EXPECT_EQ(r->Transport(), std::string("//reg.io:5000/app@") + kDigest);
}

TEST(ReferenceTest, Transport) {
  EXPECT_EQ(ParseReference("busybox")->Transport(), "//docker.io/library/busybox:latest");
  EXPECT_EQ(ParseReference("127.0.0.1:5000/a:1")->Transport(), "//127.0.0.1:5000/a:1");
}

TEST(ReferenceTest, RefusesBadReferencesWithAReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty"},
      {"Busybox", "must be lowercase"},
      {"reg.io/Team/app", "must be lowercase"},
      {"busybox:", "tag"},
      {"busybox:-x", "tag"},
      {"busybox@sha256:abc", "digest"},
      {"busybox@md5:0123456789abcdef0123456789abcdef", "digest"},
      {"a//b", "component"},
      {"-a", "component"},
      {"a..b", "component"},
      {"a b", "spaces"},
      {"#app", "registry"},
      {"reg#a#b", "more than one"},
      {"bad_host:5000/app", "registry"},
      {"reg.io:port/app", "registry"},
      {"app/", "component"},
  };
  for (const auto& [text, why] : cases) {
    SCOPED_TRACE(text);
    Result<Reference> r = ParseReference(text);
    ASSERT_FALSE(r.ok()) << r->String();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("invalid reference format"), std::string::npos);
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
  std::string long_tag = "busybox:" + std::string(129, 'a');
  EXPECT_FALSE(ParseReference(long_tag).ok());
  EXPECT_TRUE(ParseReference("busybox:" + std::string(128, 'a')).ok());
  EXPECT_FALSE(ParseReference("reg.io/" + std::string(250, 'a')).ok());
  EXPECT_EQ(ParseReference("Busybox").status().message(),
            "invalid reference format: repository name must be lowercase: 'Busybox'");
}

TEST(ReferenceTest, OnLoopback) {
  EXPECT_TRUE(ParseReference("127.0.0.1:5000/a")->OnLoopback());
  EXPECT_TRUE(ParseReference("127.1.2.3/a")->OnLoopback());
  EXPECT_TRUE(ParseReference("localhost:5000/a")->OnLoopback());
  EXPECT_TRUE(ParseReference("localhost/a")->OnLoopback());
  EXPECT_TRUE(ParseReference("[::1]:5000/a")->OnLoopback());
  EXPECT_FALSE(ParseReference("busybox")->OnLoopback());
  EXPECT_FALSE(ParseReference("127.example.com/a")->OnLoopback());
  EXPECT_FALSE(ParseReference("10.0.0.1:5000/a")->OnLoopback());
}

TEST(ReferenceTest, IsLocalImagePath) {
  EXPECT_TRUE(IsLocalImagePath("/srv/images/app.tar"));
  EXPECT_FALSE(IsLocalImagePath("busybox"));
  EXPECT_FALSE(IsLocalImagePath("docker://busybox"));
  EXPECT_FALSE(IsLocalImagePath(""));
}

}  // namespace
}  // namespace berth::image
