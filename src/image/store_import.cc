// Store::Import: OCI layout folders and archives, and `docker save` archives.
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "image/oci.h"
#include "image/store_internal.h"
#include "image/unpack.h"

namespace berth::image {
namespace {

using json = nlohmann::json;

// The names an import gives an image from its index entry's ref.name annotation.
Result<std::string> ImportName(const std::string& annotation, const std::string& stem) {
  std::string text;
  if (annotation.find('/') == std::string::npos && annotation.find(':') == std::string::npos) {
    text = "localhost/" + stem + ":" + annotation;  // a bare tag
  } else {
    size_t slash = annotation.find('/');
    std::string first = slash == std::string::npos ? "" : annotation.substr(0, slash);
    bool qualified = first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
                     first == "localhost";
    text = qualified ? annotation : "localhost/" + annotation;
  }
  BERTH_ASSIGN_OR_RETURN(Reference ref, ParseReference(text));
  return ref.String();
}

// The file or folder's name without .tar/.tgz/.oci endings, as a repository component.
std::string Stem(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  std::string base = p.substr(p.rfind('/') + 1);
  for (const char* ext : {".gz", ".tgz", ".tar", ".oci"}) {
    if (base.size() > std::strlen(ext) && base.ends_with(ext)) {
      base.resize(base.size() - std::strlen(ext));
    }
  }
  std::string out;
  for (char c : base) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
    if (ok) {
      out += l;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "image" : out;
}

}  // namespace

Result<std::vector<ImageRecord>> Store::Import(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return Status::NotFound("cannot import " + path + ": " + std::strerror(errno));
  }
  BERTH_ASSIGN_OR_RETURN(FileLock gc, FileLock::Take(impl_->Dir("locks/gc.lock"), false));
  if (S_ISDIR(st.st_mode)) return impl_->ImportLayout(path, Stem(path));
  BERTH_ASSIGN_OR_RETURN(TmpDir tmp, TmpDir::Make(impl_->Dir("tmp"), "import"));
  std::string into = tmp.path() + "/layout";
  BERTH_RETURN_IF_ERROR(MakeDir(into, 0700));
  Result<UnpackStats> unpacked = UnpackLayer(path, into, UnpackOptions{});
  if (!unpacked.ok()) return unpacked.status().WithContext("importing " + path);
  return impl_->ImportLayout(into, Stem(path));
}

Result<std::vector<ImageRecord>> Store::Impl::ImportLayout(const std::string& layout,
                                                           const std::string& stem) {
  std::string what = "importing " + layout;
  Result<std::string> marker = ReadSmallFile(layout + "/oci-layout");
  if (!marker.ok()) {
    struct stat st;
    if (stat((layout + "/manifest.json").c_str(), &st) == 0) return ImportDockerSave(layout);
    return Status::InvalidArgument(what +
                                   ": not an OCI layout (no oci-layout file) nor a docker save "
                                   "archive (no manifest.json)");
  }
  BERTH_ASSIGN_OR_RETURN(std::string index_text, ReadSmallFile(layout + "/index.json"));
  Result<std::vector<Descriptor>> entries = ParseIndex(index_text);
  if (!entries.ok()) return entries.status().WithContext(what);
  if (entries->empty()) return Status::InvalidArgument(what + ": its index lists no image");
  auto copy_blob = [&](const std::string& digest) -> Status {
    std::string src = layout + "/blobs/sha256/" + std::string(DigestHex(digest));
    return CopyVerified(src, BlobPath(digest), digest, Dir("tmp"));
  };
  std::map<std::string, std::vector<std::string>> names_by_digest;
  std::vector<std::string> order;
  for (const Descriptor& entry : *entries) {
    Descriptor d = entry;
    BERTH_RETURN_IF_ERROR(copy_blob(d.digest).WithContext(what));
    if (IsIndexMediaType(d.media_type)) {
      BERTH_ASSIGN_OR_RETURN(std::string nested, ReadSmallFile(BlobPath(d.digest)));
      BERTH_ASSIGN_OR_RETURN(std::vector<Descriptor> inner, ParseIndex(nested));
      Result<Descriptor> picked = PickPlatform(inner);
      if (!picked.ok()) return picked.status().WithContext(what);
      d.digest = picked->digest;
      BERTH_RETURN_IF_ERROR(copy_blob(d.digest).WithContext(what));
    }
    BERTH_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(BlobPath(d.digest)));
    Result<Manifest> m = ParseManifest(text);
    if (!m.ok()) return m.status().WithContext(what);
    BERTH_RETURN_IF_ERROR(copy_blob(m->config.digest).WithContext(what));
    for (const Descriptor& l : m->layers)
      BERTH_RETURN_IF_ERROR(copy_blob(l.digest).WithContext(what));
    if (!names_by_digest.contains(d.digest)) order.push_back(d.digest);
    std::vector<std::string>& names = names_by_digest[d.digest];
    auto it = entry.annotations.find("org.opencontainers.image.ref.name");
    if (it != entry.annotations.end()) {
      Result<std::string> name = ImportName(it->second, stem);
      if (!name.ok()) return name.status().WithContext(what);
      names.push_back(*name);
    }
  }
  std::vector<ImageRecord> out;
  for (const std::string& digest : order) {
    Result<ImageRecord> r = Commit(digest, names_by_digest[digest], Credentials{});
    if (!r.ok()) return r.status().WithContext(what);
    out.push_back(std::move(*r));
  }
  return out;
}

// `docker save`'s format before Docker 25 (which also writes an OCI layout): manifest.json lists
// each image's config file, RepoTags and uncompressed layer tars. The manifest is made here (OCI,
// uncompressed layers); names are Docker's ("busybox:1.36" is docker.io/library/busybox:1.36).
Result<std::vector<ImageRecord>> Store::Impl::ImportDockerSave(const std::string& dir) {
  std::string what = "importing the docker save archive";
  BERTH_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(dir + "/manifest.json"));
  json list = json::parse(text, nullptr, false);
  if (!list.is_array() || list.empty()) {
    return Status::InvalidArgument(what + ": manifest.json is not a list of images");
  }
  char* real_dir = realpath(dir.c_str(), nullptr);
  std::string base = real_dir ? real_dir : dir;
  free(real_dir);
  // A file the archive names, inside the archive (no "..", no symlink out of it): its digest is
  // computed here, so a file outside would become an image's content.
  auto inside = [&](const json& name) -> Result<std::string> {
    if (!name.is_string()) return Status::InvalidArgument(what + ": a file name is not a string");
    std::string rel = name.get<std::string>();
    char* real = realpath((dir + "/" + rel).c_str(), nullptr);
    std::string resolved = real ? real : "";
    free(real);
    struct stat st;
    if (resolved.empty() || !resolved.starts_with(base + "/") || stat(resolved.c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode)) {
      return Status::InvalidArgument(what + ": '" + rel + "' is not a file of the archive");
    }
    return resolved;
  };
  auto add_blob = [&](const std::string& path) -> Result<std::pair<std::string, int64_t>> {
    BERTH_ASSIGN_OR_RETURN(std::string digest, Sha256File(path));
    BERTH_RETURN_IF_ERROR(CopyVerified(path, BlobPath(digest), digest, Dir("tmp")));
    struct stat st;
    stat(path.c_str(), &st);
    return std::make_pair(digest, static_cast<int64_t>(st.st_size));
  };
  std::vector<ImageRecord> out;
  for (const json& image : list) {
    if (!image.is_object() || !image.contains("Config") || !image.contains("Layers") ||
        !image["Layers"].is_array()) {
      return Status::InvalidArgument(what + ": an entry of manifest.json lacks Config or Layers");
    }
    BERTH_ASSIGN_OR_RETURN(std::string config_path, inside(image["Config"]));
    BERTH_ASSIGN_OR_RETURN(auto config, add_blob(config_path));
    json manifest = {{"schemaVersion", 2},
                     {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                     {"config",
                      {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                       {"digest", config.first},
                       {"size", config.second}}},
                     {"layers", json::array()}};
    for (const json& layer : image["Layers"]) {
      BERTH_ASSIGN_OR_RETURN(std::string layer_path, inside(layer));
      BERTH_ASSIGN_OR_RETURN(auto blob, add_blob(layer_path));
      manifest["layers"].push_back({{"mediaType", "application/vnd.oci.image.layer.v1.tar"},
                                    {"digest", blob.first},
                                    {"size", blob.second}});
    }
    std::string manifest_text = manifest.dump();
    std::string digest = Sha256Digest(manifest_text);
    BERTH_RETURN_IF_ERROR(WriteFileAtomic(BlobPath(digest), manifest_text));
    std::vector<std::string> names;
    if (image.contains("RepoTags") && image["RepoTags"].is_array()) {
      for (const json& tag : image["RepoTags"]) {
        if (!tag.is_string()) continue;
        Result<Reference> ref = ParseReference(tag.get<std::string>());
        if (!ref.ok()) return ref.status().WithContext(what);
        names.push_back(ref->String());
      }
    }
    Result<ImageRecord> r = Commit(digest, names, Credentials{});
    if (!r.ok()) return r.status().WithContext(what);
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace berth::image
