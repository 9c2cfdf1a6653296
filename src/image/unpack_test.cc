#include "image/unpack.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "image/tar_builder_testing.h"

namespace berth::image {
namespace {

using testing::TarBuilder;

class UnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-unpack-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    root_ = base_ + "/root";
    outside_ = base_ + "/outside";
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(outside_.c_str(), 0755), 0);
  }
  void TearDown() override { (void)RemoveTree(base_); }

  Result<UnpackStats> Unpack(const std::string& tar, UnpackOptions o = {}) {
    auto src = MemorySource(tar);
    return UnpackTar(src.get(), root_, o);
  }
  bool Exists(const std::string& p) {
    struct stat st;
    return lstat(p.c_str(), &st) == 0;
  }
  std::string Read(const std::string& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  void ExpectRefused(const std::string& tar, const std::string& entry) {
    Result<UnpackStats> r = Unpack(tar);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("'" + entry + "'"), std::string::npos)
        << r.status().message();
    EXPECT_FALSE(Exists(outside_ + "/x")) << "written outside the layer";
    EXPECT_FALSE(Exists(base_ + "/x")) << "written outside the layer";
  }

  std::string base_, root_, outside_;
};

TEST_F(UnpackTest, FilesFoldersModesTimesAndOwners) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (lchown)";
  TarBuilder t;
  t.Dir("./etc", {0750, 0, 0, 1600000000})
      .File("./etc/hello", "hi\n", {0640, 1234, 4321, 1600000001})
      .File("usr/bin/tool", "#!/bin/sh\n", {0755})
      .Symlink("bin", "usr/bin")
      .Symlink("abs", "/etc/passwd")
      .Hardlink("etc/hello2", "etc/hello");
  Result<UnpackStats> r = Unpack(t.Finish());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->bytes, 3 + 10);
  struct stat st;
  ASSERT_EQ(lstat((root_ + "/etc/hello").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, 4321u);
  EXPECT_EQ(st.st_mtime, 1600000001);
  EXPECT_EQ(st.st_nlink, 2u);
  ASSERT_EQ(lstat((root_ + "/etc").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(st.st_mtime, 1600000000);  // set after its entries were added
  EXPECT_EQ(Read(root_ + "/usr/bin/tool"), "#!/bin/sh\n");
  char buf[64] = {};
  ASSERT_GT(readlink((root_ + "/abs").c_str(), buf, sizeof(buf)), 0);
  EXPECT_STREQ(buf, "/etc/passwd");  // kept as it is, never followed
}

TEST_F(UnpackTest, RefusesPathsThatEscape) {
  ExpectRefused(TarBuilder().File("../x", "evil").Finish(), "../x");
  ExpectRefused(TarBuilder().File("a/../../x", "evil").Finish(), "a/../../x");
  ExpectRefused(TarBuilder().File("./../outside/x", "evil").Finish(), "./../outside/x");
  // A ".." that stays inside is fine, and a leading "/" is the layer's root.
  ASSERT_TRUE(Unpack(TarBuilder().File("a/../b", "ok").File("/c", "ok").Finish()).ok());
  EXPECT_TRUE(Exists(root_ + "/b"));
  EXPECT_TRUE(Exists(root_ + "/c"));
}

TEST_F(UnpackTest, NeverWritesThroughASymlink) {
  ExpectRefused(TarBuilder().Symlink("l", outside_).File("l/x", "evil").Finish(), "l/x");
  ExpectRefused(TarBuilder().Symlink("up", "..").File("up/x", "evil").Finish(), "up/x");
  ExpectRefused(TarBuilder().Symlink("d", "../outside").Dir("d/x").Finish(), "d/x");
  // A symlink replaced by a file is unlinked, not written through.
  ASSERT_TRUE(Unpack(TarBuilder().Symlink("f", outside_ + "/x").File("f", "data").Finish()).ok());
  EXPECT_FALSE(Exists(outside_ + "/x"));
  EXPECT_EQ(Read(root_ + "/f"), "data");
}

TEST_F(UnpackTest, HardLinksStayInsideTheLayer) {
  ExpectRefused(TarBuilder().Hardlink("x", "../outside/secret").Finish(), "x");
  ExpectRefused(TarBuilder().Hardlink("h", "missing").Finish(), "h");
  std::ofstream(outside_ + "/secret") << "s";
  ExpectRefused(TarBuilder().Symlink("d", outside_).Hardlink("h", "d/secret").Finish(), "h");
  ExpectRefused(TarBuilder().Hardlink("h", outside_ + "/secret").Finish(), "h");
}

TEST_F(UnpackTest, WhiteoutsAndOpaqueFolders) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (mknod, trusted xattrs)";
  TarBuilder t;
  t.Dir("etc").File("etc/.wh.gone", "").Dir("var/cache").File("var/cache/.wh..wh..opq", "");
  Result<UnpackStats> r = Unpack(t.Finish());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  struct stat st;
  ASSERT_EQ(lstat((root_ + "/etc/gone").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(0, 0));
  EXPECT_FALSE(Exists(root_ + "/etc/.wh.gone"));
  char v[8] = {};
  ssize_t n = getxattr((root_ + "/var/cache").c_str(), "trusted.overlay.opaque", v, sizeof(v));
  if (n < 0 && errno == ENOTSUP) GTEST_SKIP() << "no trusted xattrs on /tmp";
  ASSERT_EQ(n, 1);
  EXPECT_EQ(v[0], 'y');
  EXPECT_FALSE(Exists(root_ + "/var/cache/.wh..wh..opq"));
  ASSERT_TRUE(Unpack(TarBuilder()
                         .Dir(".wh..wh.plnk")
                         .File(".wh..wh.plnk/1.2", "")
                         .File(".wh..wh.aufs", "")
                         .Finish())
                  .ok());
  EXPECT_FALSE(Exists(root_ + "/.wh..wh.plnk"));
  EXPECT_FALSE(Exists(root_ + "/.wh.plnk"));
}

TEST_F(UnpackTest, LongNamesAndPax) {
  std::string deep = "d/" + std::string(120, 'a') + "/" + std::string(110, 'b');
  TarBuilder t;
  t.GlobalPax().LongNameFile(deep, "long").PaxFile("short", "pax/" + std::string(200, 'p'), "px");
  Result<UnpackStats> r = Unpack(t.Finish());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read(root_ + "/" + deep), "long");
  EXPECT_EQ(Read(root_ + "/pax/" + std::string(200, 'p')), "px");
  EXPECT_FALSE(Exists(root_ + "/short"));
  ExpectRefused(TarBuilder().PaxFile("ok", "../x", "evil").Finish(), "../x");
}

TEST_F(UnpackTest, TruncatedAndCorruptArchives) {
  std::string whole = TarBuilder().File("a", std::string(2000, 'z')).Finish();
  for (size_t cut : {size_t{100}, size_t{512 + 700}}) {
    Result<UnpackStats> r = Unpack(whole.substr(0, cut));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().message();
  }
  std::string bad = whole;
  bad[0] ^= 1;
  Result<UnpackStats> r = Unpack(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("checksum"), std::string::npos);
  // No zero blocks at the end is accepted.
  EXPECT_TRUE(Unpack(TarBuilder().File("b", "x").Unfinished()).ok());
}

TEST_F(UnpackTest, SetuidStrippedDevicesSkipped) {
  TarBuilder t;
  t.File("su", "x", {04755}).File("sg", "x", {02755}).Device("dev/null", '3').Device("p", '6');
  ASSERT_TRUE(Unpack(t.Finish()).ok());
  struct stat st;
  ASSERT_EQ(stat((root_ + "/su").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(stat((root_ + "/sg").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_FALSE(Exists(root_ + "/dev/null"));
  EXPECT_FALSE(Exists(root_ + "/p"));
}

TEST_F(UnpackTest, Bounded) {
  UnpackOptions few;
  few.max_entries = 2;
  Result<UnpackStats> r =
      Unpack(TarBuilder().File("a", "").File("b", "").File("c", "").Finish(), few);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than 2 entries"), std::string::npos);
  UnpackOptions small;
  small.max_bytes = 10;
  r = Unpack(TarBuilder().File("a", std::string(8, 'x')).File("b", std::string(8, 'x')).Finish(),
             small);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("over 10 bytes"), std::string::npos);
}

TEST_F(UnpackTest, GzipAndZstdLayerFiles) {
  std::string layer = base_ + "/layer";
  std::ofstream(layer) << TarBuilder::Gzip(TarBuilder().File("z", "zipped").Finish());
  Result<UnpackStats> r = UnpackLayer(layer, root_, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read(root_ + "/z"), "zipped");
  std::string gz = TarBuilder::Gzip(TarBuilder().File("y", std::string(5000, 'q')).Finish());
  std::ofstream(layer) << gz.substr(0, gz.size() / 2);
  r = UnpackLayer(layer, root_, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().message();
  std::ofstream(layer) << std::string("\x28\xb5\x2f\xfd", 4) << "rest";
  r = UnpackLayer(layer, root_, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("zstd layers are not supported"), std::string::npos);
}

TEST(RemoveTreeTest, RemovesWithoutFollowingSymlinks) {
  char tmpl[] = "/tmp/berth-rm-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string base = tmpl;
  mkdir((base + "/keep").c_str(), 0755);
  std::ofstream(base + "/keep/f") << "x";
  mkdir((base + "/t").c_str(), 0755);
  mkdir((base + "/t/ro").c_str(), 0555);
  ASSERT_EQ(symlink((base + "/keep").c_str(), (base + "/t/link").c_str()), 0);
  ASSERT_TRUE(RemoveTree(base + "/t").ok());
  struct stat st;
  EXPECT_NE(lstat((base + "/t").c_str(), &st), 0);
  EXPECT_EQ(lstat((base + "/keep/f").c_str(), &st), 0);
  EXPECT_TRUE(RemoveTree(base + "/missing").ok());
  ASSERT_TRUE(RemoveTree(base).ok());
}

}  // namespace
}  // namespace berth::image
