#include "image/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "image/digest.h"
#include "image/oci.h"
#include "image/skopeo.h"
#include "image/store_files.h"
#include "image/store_internal.h"
#include "image/unpack.h"

namespace berth::image {
namespace {

using json = nlohmann::json;

int64_t Now() {
  return static_cast<int64_t>(std::time(nullptr));
}

json ConfigToJson(const ImageConfig& c) {
  return json{{"entrypoint", c.entrypoint},
              {"cmd", c.cmd},
              {"env", c.env},
              {"working_dir", c.working_dir},
              {"user", c.user}};
}

std::string RecordToJson(const ImageRecord& r) {
  json j{{"digest", r.digest},
         {"names", r.names},
         {"config", ConfigToJson(r.config)},
         {"config_digest", r.config_digest},
         {"layers", r.layers},
         {"layer_unpacked_bytes", r.layer_unpacked_bytes},
         {"size_bytes", r.size_bytes},
         {"unpacked_bytes", r.unpacked_bytes},
         {"pulled_at", r.pulled_at},
         {"last_used", r.last_used},
         {"pulled_by_uid", r.pulled_by_uid},
         {"allowed_uids", r.allowed_uids}};
  return j.dump(2) + "\n";
}

Result<ImageRecord> RecordFromJson(std::string_view text, const std::string& path) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Internal("image record " + path + " is not JSON");
  }
  ImageRecord r;
  try {
    r.digest = j.at("digest").get<std::string>();
    r.names = j.value("names", std::vector<std::string>{});
    if (j.contains("config")) {
      const json& c = j["config"];
      r.config.entrypoint = c.value("entrypoint", std::vector<std::string>{});
      r.config.cmd = c.value("cmd", std::vector<std::string>{});
      r.config.env = c.value("env", std::vector<std::string>{});
      r.config.working_dir = c.value("working_dir", "");
      r.config.user = c.value("user", "");
    }
    r.config_digest = j.value("config_digest", "");
    r.layers = j.value("layers", std::vector<std::string>{});
    r.layer_unpacked_bytes = j.value("layer_unpacked_bytes", std::vector<int64_t>{});
    r.size_bytes = j.value("size_bytes", int64_t{0});
    r.unpacked_bytes = j.value("unpacked_bytes", int64_t{0});
    r.pulled_at = j.value("pulled_at", int64_t{0});
    r.last_used = j.value("last_used", int64_t{0});
    r.pulled_by_uid = j.value("pulled_by_uid", int64_t{-1});
    r.allowed_uids = j.value("allowed_uids", std::vector<uint32_t>{});
  } catch (const json::exception& e) {
    return Status::Internal("image record " + path + ": " + e.what());
  }
  if (!IsSha256Digest(r.digest)) return Status::Internal("image record " + path + ": bad digest");
  r.layer_unpacked_bytes.resize(r.layers.size(), 0);
  return r;
}

}  // namespace

std::string LayerId(std::string_view digest) {
  return std::string(DigestHex(digest).substr(0, 16));
}

Result<ImageRecord> Store::Impl::Load(std::string_view digest) const {
  std::string path = RecordPath(digest);
  BERTH_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
  return RecordFromJson(text, path);
}

Result<std::vector<ImageRecord>> Store::Impl::LoadAll() const {
  std::vector<ImageRecord> out;
  for (const std::string& name : ListDir(Dir("images"))) {
    if (!name.ends_with(".json") || name.size() != 64 + 5) continue;
    Result<ImageRecord> r = Load("sha256:" + name.substr(0, 64));
    if (r.ok()) out.push_back(std::move(*r));  // one being replaced or damaged is skipped
  }
  std::sort(out.begin(), out.end(),
            [](const ImageRecord& a, const ImageRecord& b) { return a.digest < b.digest; });
  return out;
}

std::optional<ImageRecord> Store::Impl::FindByRef(const Reference& ref) const {
  Result<std::vector<ImageRecord>> all = LoadAll();
  if (!all.ok()) return std::nullopt;
  std::string name = ref.String();
  for (const ImageRecord& r : *all) {
    if (std::find(r.names.begin(), r.names.end(), name) != r.names.end()) return r;
  }
  if (!ref.digest.empty()) {
    for (const ImageRecord& r : *all) {
      if (r.digest == ref.digest) return r;
    }
  }
  return std::nullopt;
}

std::vector<std::string> Store::Impl::RegistryArgs(const Reference& ref, const Credentials& creds,
                                                   bool copy) const {
  std::string p = copy ? "--src-" : "--";
  std::vector<std::string> a;
  if (!creds.auth_file.empty()) {
    a.push_back(p + "authfile=" + creds.auth_file);
  } else {
    a.push_back(p + "no-creds");
  }
  if (!options.ca_dir.empty()) a.push_back(p + "cert-dir=" + options.ca_dir);
  bool insecure = ref.OnLoopback() || std::find(options.insecure.begin(), options.insecure.end(),
                                                ref.registry) != options.insecure.end();
  if (insecure) a.push_back(p + "tls-verify=false");
  a.push_back("--retry-times=0");
  return a;
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

const std::string& Store::root() const {
  return impl_->root;
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& root, StoreOptions options) {
  if (root.empty() || root.front() != '/') {
    return Status::InvalidArgument("the image store's folder must be an absolute path: '" + root +
                                   "'");
  }
  auto impl = std::make_unique<Impl>();
  impl->root = root;
  while (impl->root.size() > 1 && impl->root.back() == '/') impl->root.pop_back();
  impl->options = std::move(options);
  for (const char* sub :
       {"", "/blobs", "/blobs/sha256", "/layers", "/images", "/locks", "/holds", "/tmp"}) {
    BERTH_RETURN_IF_ERROR(MakeDir(impl->root + sub, 0700));
  }
  BERTH_RETURN_IF_ERROR(CleanTmp(impl->Dir("tmp")));
  CleanBlobTemps(impl->Dir("blobs"), impl->options.pull_timeout_s + 60);
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

bool Store::MayUse(const ImageRecord& record, uint32_t uid) {
  if (record.pulled_by_uid < 0 || record.pulled_by_uid == static_cast<int64_t>(uid)) return true;
  return std::find(record.allowed_uids.begin(), record.allowed_uids.end(), uid) !=
         record.allowed_uids.end();
}

Result<ImageRecord> Store::Ensure(const Reference& ref, PullPolicy policy, const Credentials& creds,
                                  PullReport* report) {
  auto start = std::chrono::steady_clock::now();
  PullReport local;
  if (!report) report = &local;
  auto finish = [&](Result<ImageRecord> r) -> Result<ImageRecord> {
    report->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!r.ok()) return r;
    // A private image pulled with someone else's credentials: the registry decides.
    if (creds.uid >= 0 && !MayUse(*r, static_cast<uint32_t>(creds.uid))) {
      BERTH_RETURN_IF_ERROR(CheckAccess(ref, *r, creds));
      return Find(r->digest);
    }
    if (creds.uid < 0 && r->pulled_by_uid >= 0) {
      BERTH_RETURN_IF_ERROR(CheckAccess(ref, *r, creds));
    }
    return r;
  };
  if (policy == PullPolicy::kDefault) {
    policy = (ref.digest.empty() && (ref.tag == "latest" || ref.tag.empty()))
                 ? PullPolicy::kAlways
                 : PullPolicy::kIfNotPresent;
  }
  std::optional<ImageRecord> have = impl_->FindByRef(ref);
  if (have && policy != PullPolicy::kAlways) return finish(*have);
  if (policy == PullPolicy::kNever) {
    return Status::FailedPrecondition("image " + ref.String() +
                                      " is not on this node and its pull policy is Never");
  }
  // One pull per reference on the node: the others wait here and use its result.
  std::string lock_path = impl_->Dir(
      "locks/pull-" + std::string(DigestHex(Sha256Digest(ref.String())).substr(0, 16)) + ".lock");
  bool waited = false;
  BERTH_ASSIGN_OR_RETURN(FileLock lock, FileLock::Take(lock_path, true, &waited));
  have = impl_->FindByRef(ref);
  if (have && (policy != PullPolicy::kAlways || waited)) return finish(*have);
  // Prune removes unreferenced blobs only when no pull is running (it takes this exclusively).
  BERTH_ASSIGN_OR_RETURN(FileLock gc, FileLock::Take(impl_->Dir("locks/gc.lock"), false));
  Result<ImageRecord> pulled = impl_->Pull(ref, creds);
  // Pulled again (kAlways) and the registry still has the same image: nothing new came.
  if (pulled.ok()) report->pulled = !(have && have->digest == pulled->digest);
  return finish(std::move(pulled));
}

Result<ImageRecord> Store::Impl::Pull(const Reference& ref, const Credentials& creds) {
  BERTH_ASSIGN_OR_RETURN(TmpDir tmp, TmpDir::Make(Dir("tmp"), "pull"));
  std::vector<std::string> argv = {options.skopeo, "--insecure-policy", "copy"};
  for (std::string& a : RegistryArgs(ref, creds, true)) argv.push_back(std::move(a));
  argv.push_back("--dest-shared-blob-dir=" + Dir("blobs"));
  argv.push_back("docker:" + ref.Transport());
  argv.push_back("oci:" + tmp.path() + "/layout:berth");
  BERTH_ASSIGN_OR_RETURN(CommandResult run, RunBounded(argv, options.pull_timeout_s, Env(tmp)));
  if (run.exit_code != 0) return SkopeoStatus(run, "pulling " + ref.String());
  BERTH_ASSIGN_OR_RETURN(std::string index_text, ReadSmallFile(tmp.path() + "/layout/index.json"));
  BERTH_ASSIGN_OR_RETURN(std::vector<Descriptor> manifests, ParseIndex(index_text));
  if (manifests.empty()) return Status::Internal("skopeo wrote an empty index for " + ref.String());
  Result<ImageRecord> rec = Commit(manifests.back().digest, {ref.String()}, creds);
  if (!rec.ok()) return rec.status().WithContext("pulling " + ref.String());
  return rec;
}

Result<int64_t> Store::Impl::EnsureLayer(const std::string& digest) {
  std::string dest = LayerDir(digest);
  struct stat st;
  if (lstat(dest.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    // Already unpacked (by this image or another): its size from a record that has it.
    Result<std::vector<ImageRecord>> all = LoadAll();
    if (all.ok()) {
      for (const ImageRecord& r : *all) {
        for (size_t i = 0; i < r.layers.size(); ++i) {
          if (r.layers[i] == digest && r.layer_unpacked_bytes[i] > 0) {
            return r.layer_unpacked_bytes[i];
          }
        }
      }
    }
    return TreeBytes(dest);
  }
  std::string blob = BlobPath(digest);
  Status verified = VerifyFile(blob, digest);
  if (!verified.ok()) {
    if (verified.code() == StatusCode::kInvalidArgument) unlink(blob.c_str());
    return verified;
  }
  BERTH_ASSIGN_OR_RETURN(TmpDir tmp, TmpDir::Make(Dir("tmp"), "layer"));
  std::string into = tmp.path() + "/root";
  BERTH_RETURN_IF_ERROR(MakeDir(into, 0755));
  Result<UnpackStats> stats = UnpackLayer(blob, into, UnpackOptions{});
  if (!stats.ok()) return stats.status().WithContext("layer " + digest);
  if (rename(into.c_str(), dest.c_str()) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
    if (errno == ENOSPC) return Status::ResourceExhausted("no space left on device");
    return Status::Internal("cannot rename the unpacked layer into " + dest + ": " +
                            std::strerror(errno));
  }
  return stats->bytes;
}

Result<ImageRecord> Store::Impl::Commit(const std::string& manifest_digest,
                                        const std::vector<std::string>& names,
                                        const Credentials& creds) {
  auto check = [&](const std::string& digest) -> Status {
    std::string path = BlobPath(digest);
    Status s = VerifyFile(path, digest);
    if (s.code() == StatusCode::kInvalidArgument) unlink(path.c_str());
    return s;
  };
  BERTH_RETURN_IF_ERROR(check(manifest_digest));
  BERTH_ASSIGN_OR_RETURN(std::string manifest_text, ReadSmallFile(BlobPath(manifest_digest)));
  BERTH_ASSIGN_OR_RETURN(Manifest manifest, ParseManifest(manifest_text));
  BERTH_RETURN_IF_ERROR(check(manifest.config.digest));
  BERTH_ASSIGN_OR_RETURN(std::string config_text, ReadSmallFile(BlobPath(manifest.config.digest)));
  ImageRecord rec;
  rec.digest = manifest_digest;
  rec.names = names;
  BERTH_ASSIGN_OR_RETURN(rec.config, ParseImageConfig(config_text));
  rec.config_digest = manifest.config.digest;
  rec.size_bytes = static_cast<int64_t>(manifest_text.size() + config_text.size());
  for (const Descriptor& layer : manifest.layers) {
    BERTH_ASSIGN_OR_RETURN(int64_t unpacked, EnsureLayer(layer.digest));
    rec.layers.push_back(layer.digest);
    rec.layer_unpacked_bytes.push_back(unpacked);
    rec.unpacked_bytes += unpacked;
    struct stat st;
    if (stat(BlobPath(layer.digest).c_str(), &st) == 0) rec.size_bytes += st.st_size;
  }
  rec.pulled_at = rec.last_used = Now();
  bool with_creds = !creds.auth_file.empty() && creds.uid >= 0;
  rec.pulled_by_uid = with_creds ? creds.uid : -1;
  if (with_creds) rec.allowed_uids.push_back(static_cast<uint32_t>(creds.uid));

  BERTH_ASSIGN_OR_RETURN(FileLock index, IndexLock());
  Result<ImageRecord> old = Load(manifest_digest);
  if (old.ok()) {
    for (const std::string& n : old->names) {
      if (std::find(rec.names.begin(), rec.names.end(), n) == rec.names.end()) {
        rec.names.push_back(n);
      }
    }
    // Anyone could pull it anonymously before: it stays public.
    if (old->pulled_by_uid < 0) {
      rec.pulled_by_uid = -1;
    } else if (rec.pulled_by_uid < 0) {
      rec.pulled_by_uid = -1;
    }
    for (uint32_t u : old->allowed_uids) {
      if (std::find(rec.allowed_uids.begin(), rec.allowed_uids.end(), u) ==
          rec.allowed_uids.end()) {
        rec.allowed_uids.push_back(u);
      }
    }
    rec.pulled_at = old->pulled_at;
  }
  // A name moves to the image it now resolves to (a tag pushed again).
  BERTH_ASSIGN_OR_RETURN(std::vector<ImageRecord> all, LoadAll());
  for (ImageRecord& other : all) {
    if (other.digest == rec.digest) continue;
    size_t before = other.names.size();
    std::erase_if(other.names, [&](const std::string& n) {
      return std::find(names.begin(), names.end(), n) != names.end();
    });
    if (other.names.size() != before) {
      BERTH_RETURN_IF_ERROR(WriteFileAtomic(RecordPath(other.digest), RecordToJson(other)));
    }
  }
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(RecordPath(rec.digest), RecordToJson(rec)));
  return rec;
}

Status Store::CheckAccess(const Reference& ref, const ImageRecord& record,
                          const Credentials& creds) {
  BERTH_ASSIGN_OR_RETURN(TmpDir tmp, TmpDir::Make(impl_->Dir("tmp"), "check"));
  std::vector<std::string> argv = {impl_->options.skopeo, "--insecure-policy", "inspect", "--raw"};
  for (std::string& a : impl_->RegistryArgs(ref, creds, false)) argv.push_back(std::move(a));
  argv.push_back("docker:" + ref.Transport());
  BERTH_ASSIGN_OR_RETURN(
      CommandResult run,
      RunBounded(argv, std::min<int64_t>(impl_->options.pull_timeout_s, 120), Impl::Env(tmp)));
  if (run.exit_code != 0) {
    Status s = SkopeoStatus(run, "checking access to " + ref.String());
    if (s.code() == StatusCode::kUnavailable) return s;
    return Status::PermissionDenied(s.message());
  }
  if (creds.uid < 0) return Status::Ok();
  return impl_->AddUid(record.digest, creds.uid);
}

Status Store::Impl::AddUid(const std::string& digest, int64_t uid) {
  BERTH_ASSIGN_OR_RETURN(FileLock index, IndexLock());
  BERTH_ASSIGN_OR_RETURN(ImageRecord rec, Load(digest));
  auto u = static_cast<uint32_t>(uid);
  if (std::find(rec.allowed_uids.begin(), rec.allowed_uids.end(), u) != rec.allowed_uids.end()) {
    return Status::Ok();
  }
  rec.allowed_uids.push_back(u);
  return WriteFileAtomic(RecordPath(digest), RecordToJson(rec));
}

Result<ImageRecord> Store::Find(const std::string& name_or_digest) const {
  if (IsSha256Digest(name_or_digest)) {
    Result<ImageRecord> r = impl_->Load(name_or_digest);
    if (!r.ok() && r.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("no image " + name_or_digest + " on this node");
    }
    return r;
  }
  BERTH_ASSIGN_OR_RETURN(std::vector<ImageRecord> all, impl_->LoadAll());
  std::string hex =
      name_or_digest.starts_with("sha256:") ? name_or_digest.substr(7) : name_or_digest;
  bool hexish = hex.size() >= 12 && hex.find_first_not_of("0123456789abcdef") == std::string::npos;
  Result<Reference> ref = ParseReference(name_or_digest);
  for (const ImageRecord& r : all) {
    if (hexish && DigestHex(r.digest).starts_with(hex)) return r;
    if (ref.ok() && !ref->digest.empty() && r.digest == ref->digest) return r;
    for (const std::string& n : r.names) {
      if (n == name_or_digest || (ref.ok() && n == ref->String())) return r;
    }
  }
  return Status::NotFound("no image " + name_or_digest + " on this node");
}

Result<std::vector<ImageRecord>> Store::List() const {
  return impl_->LoadAll();
}

std::vector<std::string> Store::LayerDirs(const ImageRecord& record) const {
  std::vector<std::string> out;
  for (const std::string& l : record.layers) out.push_back(impl_->LayerDir(l));
  return out;
}

Status Store::Hold(const ImageRecord& record, const std::string& holder, bool pinned) {
  if (holder.empty() || holder.find('/') != std::string::npos || holder.front() == '.') {
    return Status::InvalidArgument("bad holder name '" + holder + "'");
  }
  BERTH_ASSIGN_OR_RETURN(FileLock index, impl_->IndexLock());
  Result<ImageRecord> rec = impl_->Load(record.digest);
  if (!rec.ok()) return Status::NotFound("image " + record.digest + " is no longer on this node");
  std::string dir = impl_->Dir("holds/" + std::string(DigestHex(record.digest)));
  BERTH_RETURN_IF_ERROR(MakeDir(dir, 0700));
  BERTH_RETURN_IF_ERROR(
      WriteFileAtomic(dir + "/" + holder, pinned ? "pinned\n" : std::to_string(getpid()) + "\n"));
  rec->last_used = Now();
  return WriteFileAtomic(impl_->RecordPath(record.digest), RecordToJson(*rec));
}

void Store::Release(const ImageRecord& record, const std::string& holder) {
  if (holder.empty() || holder.find('/') != std::string::npos) return;
  std::string dir = impl_->Dir("holds/" + std::string(DigestHex(record.digest)));
  unlink((dir + "/" + holder).c_str());
  rmdir(dir.c_str());  // fails while others hold it
}

bool Store::InUse(const ImageRecord& record) const {
  return impl_->Held(record.digest);
}

bool Store::Impl::Held(std::string_view digest) const {
  std::string dir = Dir("holds/" + std::string(DigestHex(digest)));
  bool held = false;
  for (const std::string& name : ListDir(dir)) {
    std::string path = dir + "/" + name;
    Result<std::string> text = ReadSmallFile(path, 64);
    int64_t pid = text.ok() ? std::strtoll(text->c_str(), nullptr, 10) : 0;
    if (text.ok() && text->starts_with("pinned")) {
      held = true;
    } else if (pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) {
      held = true;
    } else if (text.ok() && name.find(".tmp.") == std::string::npos) {
      unlink(path.c_str());  // its process is gone: released
    }
  }
  if (!held) rmdir(dir.c_str());
  return held;
}

Result<Store::PruneReport> Store::Prune(int64_t limit_bytes) {
  if (limit_bytes < 0) return Status::InvalidArgument("a negative size limit");
  // No pull or import runs while unreferenced blobs are removed (theirs have no record yet).
  BERTH_ASSIGN_OR_RETURN(FileLock gc, FileLock::Take(impl_->Dir("locks/gc.lock"), true));
  BERTH_ASSIGN_OR_RETURN(FileLock index, impl_->IndexLock());
  BERTH_ASSIGN_OR_RETURN(std::vector<ImageRecord> all, impl_->LoadAll());
  PruneReport report;
  auto blob_size = [&](const std::string& digest) -> int64_t {
    struct stat st;
    return stat(impl_->BlobPath(digest).c_str(), &st) == 0 ? st.st_size : 0;
  };
  // The store's size were only `kept` left: each blob and layer counted once.
  auto size_of = [&](const std::vector<const ImageRecord*>& kept) {
    std::set<std::string> blobs;
    std::map<std::string, int64_t> layers;
    for (const ImageRecord* r : kept) {
      blobs.insert(r->digest);
      blobs.insert(r->config_digest);
      for (size_t i = 0; i < r->layers.size(); ++i) {
        blobs.insert(r->layers[i]);
        layers[LayerId(r->layers[i])] = r->layer_unpacked_bytes[i];
      }
    }
    int64_t total = 0;
    for (const std::string& b : blobs) total += b.empty() ? 0 : blob_size(b);
    for (const auto& [id, bytes] : layers) total += bytes;
    return total;
  };
  std::vector<const ImageRecord*> kept, candidates;
  for (const ImageRecord& r : all) {
    kept.push_back(&r);
    if (!impl_->Held(r.digest)) candidates.push_back(&r);
  }
  std::sort(candidates.begin(), candidates.end(), [](const ImageRecord* a, const ImageRecord* b) {
    return std::tie(a->last_used, a->pulled_at, a->digest) <
           std::tie(b->last_used, b->pulled_at, b->digest);
  });
  std::map<std::string, int64_t> unpacked_by_id;
  for (const ImageRecord& r : all) {
    for (size_t i = 0; i < r.layers.size(); ++i) {
      unpacked_by_id[LayerId(r.layers[i])] = r.layer_unpacked_bytes[i];
    }
  }
  for (const ImageRecord* victim : candidates) {
    if (limit_bytes > 0 && size_of(kept) <= limit_bytes) break;
    if (unlink(impl_->RecordPath(victim->digest).c_str()) != 0 && errno != ENOENT) {
      return Status::Internal("cannot remove the record of " + victim->digest + ": " +
                              std::strerror(errno));
    }
    std::erase(kept, victim);
    report.removed.push_back(victim->digest);
  }
  // Blobs and layers that no remaining image uses.
  std::set<std::string> used_blobs, used_layers;
  for (const ImageRecord* r : kept) {
    used_blobs.insert(std::string(DigestHex(r->digest)));
    if (!r->config_digest.empty()) used_blobs.insert(std::string(DigestHex(r->config_digest)));
    for (const std::string& l : r->layers) {
      used_blobs.insert(std::string(DigestHex(l)));
      used_layers.insert(LayerId(l));
    }
  }
  std::string blobs = impl_->Dir("blobs/sha256");
  for (const std::string& name : ListDir(blobs)) {
    if (used_blobs.contains(name)) continue;
    struct stat st;
    std::string path = blobs + "/" + name;
    if (lstat(path.c_str(), &st) == 0 && unlink(path.c_str()) == 0)
      report.freed_bytes += st.st_size;
  }
  std::string layers = impl_->Dir("layers");
  for (const std::string& name : ListDir(layers)) {
    if (used_layers.contains(name)) continue;
    BERTH_RETURN_IF_ERROR(RemoveTree(layers + "/" + name));
    report.freed_bytes += unpacked_by_id.contains(name) ? unpacked_by_id[name] : 0;
  }
  return report;
}

Result<int64_t> Store::SizeBytes() const {
  BERTH_ASSIGN_OR_RETURN(std::vector<ImageRecord> all, impl_->LoadAll());
  int64_t total = 0;
  std::string blobs = impl_->Dir("blobs/sha256");
  for (const std::string& name : ListDir(blobs)) {
    struct stat st;
    if (lstat((blobs + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += st.st_size;
  }
  std::map<std::string, int64_t> layers;
  for (const ImageRecord& r : all) {
    for (size_t i = 0; i < r.layers.size(); ++i) {
      layers[LayerId(r.layers[i])] = r.layer_unpacked_bytes[i];
    }
  }
  for (const auto& [id, bytes] : layers) total += bytes;
  return total;
}

}  // namespace berth::image
