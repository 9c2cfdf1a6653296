#include "image/layout_writer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace berth::image {
namespace {

TEST(LayoutWriterTest, TarHasUstarHeadersAndPadding) {
  Result<std::string> tar = TarOf({{LayerEntry::Kind::kDir, "bin", "", 0755},
                                   {LayerEntry::Kind::kFile, "bin/x", "hello", 0755},
                                   {LayerEntry::Kind::kSymlink, "bin/y", "x", 0777}});
  ASSERT_TRUE(tar.ok());
  ASSERT_EQ(tar->size(), 512u * 4 + 1024u);  // 3 headers, 1 data block, 2 end blocks
  EXPECT_EQ(tar->substr(0, 4), "bin/");
  EXPECT_EQ(tar->substr(257, 5), "ustar");
  EXPECT_EQ((*tar)[512 + 156], '0');
  EXPECT_EQ(tar->substr(1024, 5), "hello");
  EXPECT_EQ((*tar)[1536 + 156], '2');
  EXPECT_EQ(tar->substr(1536 + 157, 1), "x");
  EXPECT_FALSE(TarOf({{LayerEntry::Kind::kFile, "/abs", "", 0644}}).ok());
  EXPECT_FALSE(TarOf({{LayerEntry::Kind::kFile, std::string(120, 'a'), "", 0644}}).ok());
}

TEST(LayoutWriterTest, TheStoreImportsWhatItWrites) {
  if (geteuid() != 0) GTEST_SKIP() << "unpacking keeps owners: needs root";
  char tmpl[] = "/tmp/berth-layout-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string base = tmpl;
  ImageConfig config;
  config.cmd = {"/bin/sh"};
  config.env = {"PATH=/bin"};
  Result<std::string> digest =
      WriteOciLayout(base + "/demo",
                     {{LayerEntry::Kind::kDir, "etc", "", 0755},
                      {LayerEntry::Kind::kFile, "etc/marker", "m\n", 0644}},
                     config, "1");
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  Result<std::unique_ptr<Store>> store = Store::Open(base + "/store", {});
  ASSERT_TRUE(store.ok());
  Result<std::vector<ImageRecord>> r = (*store)->Import(base + "/demo");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].digest, *digest);
  EXPECT_EQ((*r)[0].names, std::vector<std::string>{"localhost/demo:1"});
  EXPECT_EQ((*r)[0].config.cmd, config.cmd);
  std::ifstream in((*store)->LayerDirs((*r)[0]).front() + "/etc/marker");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "m\n");
  std::error_code ec;
  std::filesystem::remove_all(base, ec);
}

}  // namespace
}  // namespace berth::image
