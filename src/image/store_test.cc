#include "image/store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "image/skopeo.h"
#include "image/store_files.h"
#include "image/tar_builder_testing.h"
#include "image/unpack.h"

namespace berth::image {
namespace {

using json = nlohmann::json;
using testing::TarBuilder;

// An OCI layout folder written by the test.
class Layout {
 public:
  explicit Layout(std::string dir) : dir_(std::move(dir)) {
    mkdir(dir_.c_str(), 0755);
    mkdir((dir_ + "/blobs").c_str(), 0755);
    mkdir((dir_ + "/blobs/sha256").c_str(), 0755);
    std::ofstream(dir_ + "/oci-layout") << R"({"imageLayoutVersion":"1.0.0"})";
  }
  std::string Blob(const std::string& data) {
    std::string d = Sha256Digest(data);
    std::ofstream(dir_ + "/blobs/sha256/" + std::string(DigestHex(d))) << data;
    return d;
  }
  // An image of `layers` (each a tar's content); returns the manifest's digest.
  std::string Image(const std::vector<std::string>& layers, const std::string& ref_name,
                    std::vector<std::string> cmd = {"/bin/sh"}) {
    json config = {{"architecture", "amd64"},
                   {"os", "linux"},
                   {"config", {{"Cmd", cmd}, {"Env", {"PATH=/bin"}}, {"WorkingDir", "/w"}}},
                   {"rootfs", {{"type", "layers"}, {"diff_ids", json::array()}}}};
    std::string c = config.dump();
    json m = {{"schemaVersion", 2},
              {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
              {"config",
               {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                {"digest", Blob(c)},
                {"size", c.size()}}},
              {"layers", json::array()}};
    for (const std::string& l : layers) {
      std::string gz = TarBuilder::Gzip(l);
      m["layers"].push_back({{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"},
                             {"digest", Blob(gz)},
                             {"size", gz.size()}});
    }
    std::string text = m.dump();
    std::string digest = Blob(text);
    json entry = {{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                  {"digest", digest},
                  {"size", text.size()}};
    if (!ref_name.empty()) {
      entry["annotations"] = {{"org.opencontainers.image.ref.name", ref_name}};
    }
    index_["manifests"].push_back(entry);
    std::ofstream(dir_ + "/index.json") << index_.dump();
    return digest;
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  json index_ = {{"schemaVersion", 2}, {"manifests", json::array()}};
};

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-store-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    Result<std::unique_ptr<Store>> s = Store::Open(base_ + "/store", {});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  void TearDown() override { (void)RemoveTree(base_); }
  size_t Count(const std::string& sub) { return ListDir(base_ + "/store/" + sub).size(); }
  void SetLastUsed(const std::string& digest, int64_t t) {
    std::string p = base_ + "/store/images/" + std::string(DigestHex(digest)) + ".json";
    std::ifstream in(p);
    json j = json::parse(in);
    j["last_used"] = t;
    std::ofstream(p) << j.dump();
  }

  std::string base_;
  std::unique_ptr<Store> store_;
  int n_ = 0;
};

std::string Shared() {
  return TarBuilder().Dir("bin").File("bin/busybox", std::string(3000, 'b'), {0755}).Finish();
}

TEST_F(StoreTest, ImportsALayoutAndFindsItByNameAndDigest) {
  Layout l(base_ + "/demo");
  std::string d = l.Image({Shared(), TarBuilder().File("marker", "m1").Finish()}, "1.0");
  Result<std::vector<ImageRecord>> r = store_->Import(l.dir());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  const ImageRecord& rec = (*r)[0];
  EXPECT_EQ(rec.digest, d);
  EXPECT_EQ(rec.names, std::vector<std::string>{"localhost/demo:1.0"});
  EXPECT_EQ(rec.config.cmd, std::vector<std::string>{"/bin/sh"});
  EXPECT_EQ(rec.config.working_dir, "/w");
  EXPECT_EQ(rec.pulled_by_uid, -1);
  EXPECT_EQ(rec.unpacked_bytes, 3002);
  EXPECT_GT(rec.size_bytes, 0);
  std::vector<std::string> dirs = store_->LayerDirs(rec);
  ASSERT_EQ(dirs.size(), 2u);
  struct stat st;
  EXPECT_EQ(stat((dirs[0] + "/bin/busybox").c_str(), &st), 0);
  EXPECT_EQ(stat((dirs[1] + "/marker").c_str(), &st), 0);
  EXPECT_TRUE(store_->Find("localhost/demo:1.0").ok());
  EXPECT_TRUE(store_->Find(d).ok());
  EXPECT_TRUE(store_->Find("localhost/demo@" + d).ok());
  EXPECT_TRUE(store_->Find(std::string(DigestHex(d)).substr(0, 12)).ok());
  EXPECT_EQ(store_->Find("localhost/demo:2.0").status().code(), StatusCode::kNotFound);
  Result<int64_t> size = store_->SizeBytes();
  ASSERT_TRUE(size.ok());
  EXPECT_GE(*size, rec.size_bytes + rec.unpacked_bytes);
  EXPECT_EQ(Count("tmp"), 0u);
}

TEST_F(StoreTest, ImportNames) {
  Layout l(base_ + "/My_Images.tar.d");
  l.Image({Shared()}, "team/app:2");
  l.Image({Shared()}, "reg.example.com:5000/x/y:3", {"other"});
  Result<std::vector<ImageRecord>> r = store_->Import(l.dir());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].names, std::vector<std::string>{"localhost/team/app:2"});
  EXPECT_EQ((*r)[1].names, std::vector<std::string>{"reg.example.com:5000/x/y:3"});
}

TEST_F(StoreTest, ImportsAnArchive) {
  Layout l(base_ + "/arch");
  l.Image({Shared()}, "1.0");
  // The archive: a tar of the layout's files.
  TarBuilder t;
  t.File("oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  std::ifstream idx(l.dir() + "/index.json");
  t.File("index.json", std::string(std::istreambuf_iterator<char>(idx), {}));
  for (const std::string& name : ListDir(l.dir() + "/blobs/sha256")) {
    std::ifstream b(l.dir() + "/blobs/sha256/" + name);
    t.File("blobs/sha256/" + name, std::string(std::istreambuf_iterator<char>(b), {}));
  }
  std::ofstream(base_ + "/app.tar") << t.Finish();
  Result<std::vector<ImageRecord>> r = store_->Import(base_ + "/app.tar");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].names, std::vector<std::string>{"localhost/app:1.0"});
  EXPECT_EQ(Count("tmp"), 0u);
}

TEST_F(StoreTest, ImportsADockerSaveArchive) {
  std::string layer = TarBuilder().File("bin/tool", "t", {0755}).Finish();
  std::string config = R"({"config":{"Cmd":["/bin/tool"]},"rootfs":{"type":"layers"}})";
  TarBuilder t;
  t.File("abc.json", config)
      .File("l1/layer.tar", layer)
      .File("manifest.json", R"([{"Config":"abc.json","RepoTags":["tool:1.0","reg.io/x/tool:2"],)"
                             R"("Layers":["l1/layer.tar"]}])");
  std::ofstream(base_ + "/saved.tar") << t.Finish();
  Result<std::vector<ImageRecord>> r = store_->Import(base_ + "/saved.tar");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].names,
            (std::vector<std::string>{"docker.io/library/tool:1.0", "reg.io/x/tool:2"}));
  EXPECT_EQ((*r)[0].config.cmd, std::vector<std::string>{"/bin/tool"});
  EXPECT_EQ((*r)[0].layers, std::vector<std::string>{Sha256Digest(layer)});
  struct stat st;
  EXPECT_EQ(stat((store_->LayerDirs((*r)[0])[0] + "/bin/tool").c_str(), &st), 0);
  // A manifest.json naming a file outside the archive is refused.
  TarBuilder evil;
  evil.File("manifest.json", R"([{"Config":"../../../../etc/hostname","Layers":[]}])");
  std::ofstream(base_ + "/evil.tar") << evil.Finish();
  r = store_->Import(base_ + "/evil.tar");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is not a file of the archive"), std::string::npos)
      << r.status().message();
  TarBuilder link;
  link.Symlink("c.json", "/etc/hostname")
      .File("manifest.json", R"([{"Config":"c.json","Layers":[]}])");
  std::ofstream(base_ + "/link.tar") << link.Finish();
  r = store_->Import(base_ + "/link.tar");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is not a file of the archive"), std::string::npos);
}

TEST_F(StoreTest, SharedLayersAreUnpackedOnce) {
  Layout l(base_ + "/two");
  l.Image({Shared(), TarBuilder().File("a", "1").Finish()}, "a");
  l.Image({Shared(), TarBuilder().File("b", "2").Finish()}, "b");
  ASSERT_TRUE(store_->Import(l.dir()).ok());
  EXPECT_EQ(Count("layers"), 3u);
  Result<std::vector<ImageRecord>> all = store_->List();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(store_->LayerDirs((*all)[0])[0], store_->LayerDirs((*all)[1])[0]);
}

TEST_F(StoreTest, CorruptBlobIsRefusedAndNothingIsRecorded) {
  Layout l(base_ + "/bad");
  l.Image({TarBuilder().File("a", "1").Finish()}, "1");
  for (const std::string& name : ListDir(l.dir() + "/blobs/sha256")) {
    std::string p = l.dir() + "/blobs/sha256/" + name;
    struct stat st;
    stat(p.c_str(), &st);
    if (st.st_size > 100 && st.st_size < 200) std::ofstream(p, std::ios::app) << "X";
  }
  // Whichever blob was changed, the import fails on its digest and records nothing.
  Result<std::vector<ImageRecord>> r = store_->Import(l.dir());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("does not match its digest"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(store_->List()->empty());
}

TEST_F(StoreTest, EscapingLayerIsRefused) {
  Layout l(base_ + "/evil");
  l.Image({TarBuilder().File("../../escaped", "x").Finish()}, "1");
  Result<std::vector<ImageRecord>> r = store_->Import(l.dir());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("escapes"), std::string::npos) << r.status().message();
  struct stat st;
  EXPECT_NE(stat((base_ + "/escaped").c_str(), &st), 0);
  EXPECT_NE(stat((base_ + "/store/escaped").c_str(), &st), 0);
  EXPECT_EQ(Count("layers"), 0u);
  EXPECT_EQ(Count("tmp"), 0u);
  EXPECT_TRUE(store_->List()->empty());
}

TEST_F(StoreTest, PruneKeepsHeldImagesAndRemovesWhatNoImageUses) {
  Layout l(base_ + "/p");
  std::string a = l.Image({Shared(), TarBuilder().File("a", "1").Finish()}, "a");
  std::string b = l.Image({Shared(), TarBuilder().File("b", "2").Finish()}, "b");
  ASSERT_TRUE(store_->Import(l.dir()).ok());
  ImageRecord ra = *store_->Find(a);
  ASSERT_TRUE(store_->Hold(ra, "job-1").ok());
  Result<Store::PruneReport> p = store_->Prune(0);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->removed, std::vector<std::string>{b});
  EXPECT_GT(p->freed_bytes, 0);
  EXPECT_EQ(Count("layers"), 2u);        // a's two, the shared one kept
  EXPECT_EQ(Count("blobs/sha256"), 4u);  // a's manifest, config, two layers
  store_->Release(ra, "job-1");
  p = store_->Prune(0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->removed, std::vector<std::string>{a});
  EXPECT_EQ(Count("layers"), 0u);
  EXPECT_EQ(Count("blobs/sha256"), 0u);
  EXPECT_EQ(Count("images"), 0u);
  EXPECT_EQ(store_->Hold(ra, "job-2").code(), StatusCode::kNotFound);
}

TEST_F(StoreTest, AHoldWhoseProcessIsGoneCountsAsReleased) {
  Layout l(base_ + "/h");
  std::string a = l.Image({Shared()}, "a");
  ASSERT_TRUE(store_->Import(l.dir()).ok());
  ASSERT_TRUE(store_->Hold(*store_->Find(a), "job-1").ok());
  std::string hold = base_ + "/store/holds/" + std::string(DigestHex(a)) + "/job-1";
  std::ofstream(hold) << "999999999\n";  // no such pid
  Result<Store::PruneReport> p = store_->Prune(0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->removed.size(), 1u);
}

TEST_F(StoreTest, APinnedHoldLastsUntilReleased) {
  Layout l(base_ + "/pin");
  std::string a = l.Image({Shared()}, "a");
  ASSERT_TRUE(store_->Import(l.dir()).ok());
  ImageRecord ra = *store_->Find(a);
  EXPECT_FALSE(store_->InUse(ra));
  ASSERT_TRUE(store_->Hold(ra, "named-7.0-c1", /*pinned=*/true).ok());
  EXPECT_TRUE(store_->InUse(ra));
  Result<Store::PruneReport> p = store_->Prune(0);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->removed.empty());
  ImageRecord by_digest;  // what the agent has when it removes a named container
  by_digest.digest = a;
  store_->Release(by_digest, "named-7.0-c1");
  EXPECT_FALSE(store_->InUse(ra));
  p = store_->Prune(0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->removed, std::vector<std::string>{a});
}

TEST_F(StoreTest, PruneToALimitRemovesTheLeastRecentlyUsedFirst) {
  Layout l(base_ + "/lru");
  std::string big(200000, 'x');
  std::string a = l.Image({TarBuilder().File("a", big + "a").Finish()}, "a");
  std::string b = l.Image({TarBuilder().File("b", big + "b").Finish()}, "b");
  std::string c = l.Image({TarBuilder().File("c", big + "c").Finish()}, "c");
  ASSERT_TRUE(store_->Import(l.dir()).ok());
  SetLastUsed(a, 300);
  SetLastUsed(b, 100);
  SetLastUsed(c, 200);
  Result<int64_t> size = store_->SizeBytes();
  ASSERT_TRUE(size.ok());
  // Room for about two images: b (the oldest use) goes.
  Result<Store::PruneReport> p = store_->Prune(*size - 1000);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->removed, std::vector<std::string>{b});
  p = store_->Prune(*size / 3 + 1000);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->removed, std::vector<std::string>{c});
  EXPECT_TRUE(store_->Find(a).ok());
}

TEST_F(StoreTest, OpenRemovesWhatAnInterruptedPullLeftButNotALiveOne) {
  std::string tmp = base_ + "/store/tmp";
  mkdir((tmp + "/pull-dead").c_str(), 0700);
  std::ofstream(tmp + "/pull-dead/blob") << "x";
  std::ofstream(tmp + "/layer-dead.lock") << "";
  mkdir((tmp + "/layer-dead").c_str(), 0700);
  Result<TmpDir> live = TmpDir::Make(tmp, "pull");
  ASSERT_TRUE(live.ok());
  ASSERT_TRUE(Store::Open(base_ + "/store", {}).ok());
  std::vector<std::string> left = ListDir(tmp);
  std::sort(left.begin(), left.end());
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(tmp + "/" + left[0], live->path());
}

TEST_F(StoreTest, EnsureWithPolicyNeverAndRegistryErrors) {
  Result<Reference> ref = ParseReference("127.0.0.1:1/app:1.0");
  ASSERT_TRUE(ref.ok());
  Result<ImageRecord> r = store_->Ensure(*ref, PullPolicy::kNever, {}, nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  // A stand-in skopeo answers as the registry would.
  struct Case {
    const char* msg;
    StatusCode code;
  } cases[] = {
      {"reading manifest 1.0 in 127.0.0.1:1/app: manifest unknown: manifest unknown",
       StatusCode::kNotFound},
      {"reading manifest 1.0 in 127.0.0.1:1/app: unauthorized: authentication required",
       StatusCode::kPermissionDenied},
      {"pinging container registry 127.0.0.1:1: Get \\\"https://127.0.0.1:1/v2/\\\": dial tcp "
       "127.0.0.1:1: connect: connection refused",
       StatusCode::kUnavailable},
      {"writing blob: write /x: no space left on device", StatusCode::kResourceExhausted},
  };
  for (const Case& c : cases) {
    std::string script = base_ + "/skopeo";
    std::ofstream(script) << "#!/bin/sh\necho 'time=\"2024-01-01T00:00:00Z\" level=fatal msg=\""
                          << c.msg << "\"' >&2\nexit 1\n";
    chmod(script.c_str(), 0755);
    StoreOptions o;
    o.skopeo = script;
    Result<std::unique_ptr<Store>> s = Store::Open(base_ + "/store", o);
    ASSERT_TRUE(s.ok());
    r = (*s)->Ensure(*ref, PullPolicy::kIfNotPresent, {}, nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
    EXPECT_NE(r.status().message().find("pulling 127.0.0.1:1/app:1.0: "), std::string::npos)
        << r.status().message();
  }
  EXPECT_EQ(Count("tmp"), 0u);
}

TEST_F(StoreTest, OpenRemovesStaleBlobTemporaries) {
  std::string blobs = base_ + "/store/blobs";
  std::ofstream(blobs + "/oci-put-blob123") << "x";
  std::ofstream(blobs + "/sha256/abc.import.1") << "x";
  std::ofstream(blobs + "/fresh") << "x";
  for (const char* old : {"/oci-put-blob123", "/sha256/abc.import.1"}) {
    timespec t[2] = {{1000, 0}, {1000, 0}};
    utimensat(AT_FDCWD, (blobs + old).c_str(), t, 0);
  }
  ASSERT_TRUE(Store::Open(base_ + "/store", {}).ok());
  EXPECT_EQ(ListDir(blobs + "/sha256").size(), 0u);
  std::vector<std::string> left = ListDir(blobs);
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"fresh", "sha256"}));
}

// A private image (pulled with uid 1000's credentials) is another user's only once the registry
// says yes to that user's credentials (a stand-in skopeo answers here).
TEST_F(StoreTest, AnotherUserNeedsTheRegistrysYes) {
  Layout l(base_ + "/priv");
  std::string d = l.Image({Shared()}, "reg.example.com/team/app:1");
  ASSERT_TRUE(store_->Import(l.dir()).ok());
  std::string p = base_ + "/store/images/" + std::string(DigestHex(d)) + ".json";
  {
    std::ifstream in(p);
    json j = json::parse(in);
    j["pulled_by_uid"] = 1000;
    j["allowed_uids"] = {1000};
    std::ofstream(p) << j.dump();
  }
  Reference ref = *ParseReference("reg.example.com/team/app:1");
  auto with = [&](const char* answer) {
    std::string script = base_ + "/skopeo-" + std::to_string(n_++);
    std::ofstream(script) << "#!/bin/sh\n" << answer << "\n";
    chmod(script.c_str(), 0755);
    StoreOptions o;
    o.skopeo = script;
    return std::move(Store::Open(base_ + "/store", o)).value();
  };
  Credentials bob{base_ + "/bob.json", 2000};
  Result<ImageRecord> r =
      with(
          "echo 'level=fatal msg=\"reading manifest 1 in reg.example.com/team/app: "
          "denied: requested access to the resource is denied\"' >&2; exit 1")
          ->Ensure(ref, PullPolicy::kIfNotPresent, bob, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(r.status().message().find("requested access to the resource is denied"),
            std::string::npos);
  EXPECT_FALSE(Store::MayUse(*store_->Find(d), 2000));
  // Anonymous users are asked about too.
  r = with("echo 'level=fatal msg=\"unauthorized: authentication required\"' >&2; exit 1")
          ->Ensure(ref, PullPolicy::kIfNotPresent, {}, nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  // The owner is not asked.
  r = with("exit 1")->Ensure(ref, PullPolicy::kIfNotPresent, {"", 1000}, nullptr);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  r = with("echo '{}'; exit 0")->Ensure(ref, PullPolicy::kIfNotPresent, bob, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(Store::MayUse(*r, 2000));
  EXPECT_TRUE(Store::MayUse(*store_->Find(d), 2000));
  EXPECT_FALSE(Store::MayUse(*store_->Find(d), 3000));
}

TEST_F(StoreTest, PullTimesOut) {
  std::string script = base_ + "/slow";
  std::ofstream(script) << "#!/bin/sh\nsleep 30\n";
  chmod(script.c_str(), 0755);
  StoreOptions o;
  o.skopeo = script;
  o.pull_timeout_s = 1;
  Result<std::unique_ptr<Store>> s = Store::Open(base_ + "/store", o);
  ASSERT_TRUE(s.ok());
  Result<ImageRecord> r =
      (*s)->Ensure(*ParseReference("127.0.0.1:1/app:1.0"), PullPolicy::kAlways, {}, nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos);
}

TEST(DigestTest, Sha256AndVerification) {
  EXPECT_EQ(Sha256Digest(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_TRUE(IsSha256Digest(Sha256Digest("x")));
  EXPECT_FALSE(IsSha256Digest("sha256:ABC"));
  char tmpl[] = "/tmp/berth-digest-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "abc", 3), 3);
  close(fd);
  EXPECT_TRUE(VerifyFile(tmpl, Sha256Digest("abc")).ok());
  Status s = VerifyFile(tmpl, Sha256Digest("abd"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("does not match its digest"), std::string::npos);
  unlink(tmpl);
}

TEST(SkopeoTest, MessageIsOneShortLine) {
  EXPECT_EQ(SkopeoMessage("time=\"x\" level=fatal msg=\"a \\\"b\\\" c\"\n"), "a \"b\" c");
  EXPECT_EQ(SkopeoMessage("plain error\n\n"), "plain error");
  EXPECT_EQ(SkopeoMessage("msg=\"initializing source docker://r/a:1: reading manifest 1 in r/a: "
                          "manifest unknown\""),
            "reading manifest 1 in r/a: manifest unknown");
  EXPECT_LE(SkopeoMessage("msg=\"" + std::string(1000, 'x') + "\"").size(), 300u);
}

}  // namespace
}  // namespace berth::image
