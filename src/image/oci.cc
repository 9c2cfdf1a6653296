#include "image/oci.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "image/digest.h"

namespace berth::image {
namespace {

using json = nlohmann::json;

constexpr std::string_view kOciIndex = "application/vnd.oci.image.index.v1+json";
constexpr std::string_view kDockerList =
    "application/vnd.docker.distribution.manifest.list.v2+json";

Result<json> Parse(std::string_view text, std::string_view what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(std::string(what) + " is not a JSON object");
  }
  return j;
}

Result<Descriptor> ParseDescriptor(const json& j, std::string_view what) {
  if (!j.is_object()) return Status::InvalidArgument(std::string(what) + ": not an object");
  Descriptor d;
  d.media_type = j.value("mediaType", "");
  if (!j.contains("digest") || !j["digest"].is_string()) {
    return Status::InvalidArgument(std::string(what) + ": no digest");
  }
  d.digest = j["digest"].get<std::string>();
  if (!IsSha256Digest(d.digest)) {
    return Status::InvalidArgument(std::string(what) + ": unsupported digest '" + d.digest +
                                   "' (sha256 only)");
  }
  if (j.contains("size") && j["size"].is_number_integer()) d.size = j["size"].get<int64_t>();
  if (d.size < 0) return Status::InvalidArgument(std::string(what) + ": negative size");
  if (j.contains("annotations") && j["annotations"].is_object()) {
    for (auto& [k, v] : j["annotations"].items()) {
      if (v.is_string()) d.annotations[k] = v.get<std::string>();
    }
  }
  if (j.contains("platform") && j["platform"].is_object()) {
    d.os = j["platform"].value("os", "");
    d.architecture = j["platform"].value("architecture", "");
  }
  return d;
}

std::vector<std::string> Strings(const json& j, const char* key) {
  std::vector<std::string> out;
  if (j.contains(key) && j[key].is_array()) {
    for (const json& s : j[key]) {
      if (s.is_string()) out.push_back(s.get<std::string>());
    }
  }
  return out;
}

}  // namespace

bool IsIndexMediaType(std::string_view media_type) {
  return media_type == kOciIndex || media_type == kDockerList;
}

Result<Manifest> ParseManifest(std::string_view text) {
  BERTH_ASSIGN_OR_RETURN(json j, Parse(text, "the manifest"));
  Manifest m;
  m.media_type = j.value("mediaType", "");
  if (IsIndexMediaType(m.media_type) || (j.contains("manifests") && !j.contains("layers"))) {
    return Status::InvalidArgument("the manifest is an index, not an image manifest");
  }
  if (j.value("schemaVersion", 0) != 2) {
    return Status::InvalidArgument("unsupported manifest schemaVersion (2 only)");
  }
  if (!j.contains("config")) return Status::InvalidArgument("the manifest has no config");
  BERTH_ASSIGN_OR_RETURN(m.config, ParseDescriptor(j["config"], "the manifest's config"));
  if (!j.contains("layers") || !j["layers"].is_array()) {
    return Status::InvalidArgument("the manifest has no layers");
  }
  for (const json& l : j["layers"]) {
    BERTH_ASSIGN_OR_RETURN(Descriptor d, ParseDescriptor(l, "a manifest layer"));
    if (d.media_type.find("foreign") != std::string::npos ||
        d.media_type.find("nondistributable") != std::string::npos) {
      return Status::InvalidArgument("foreign (non-distributable) layers are not supported");
    }
    m.layers.push_back(std::move(d));
  }
  return m;
}

Result<std::vector<Descriptor>> ParseIndex(std::string_view text) {
  BERTH_ASSIGN_OR_RETURN(json j, Parse(text, "the index"));
  if (!j.contains("manifests") || !j["manifests"].is_array()) {
    return Status::InvalidArgument("the index has no manifests");
  }
  std::vector<Descriptor> out;
  for (const json& m : j["manifests"]) {
    BERTH_ASSIGN_OR_RETURN(Descriptor d, ParseDescriptor(m, "an index entry"));
    out.push_back(std::move(d));
  }
  return out;
}

Result<ImageConfig> ParseImageConfig(std::string_view text) {
  BERTH_ASSIGN_OR_RETURN(json j, Parse(text, "the image config"));
  ImageConfig c;
  if (!j.contains("config") || !j["config"].is_object()) return c;
  const json& k = j["config"];
  c.entrypoint = Strings(k, "Entrypoint");
  c.cmd = Strings(k, "Cmd");
  c.env = Strings(k, "Env");
  if (k.contains("WorkingDir") && k["WorkingDir"].is_string()) c.working_dir = k["WorkingDir"];
  if (k.contains("User") && k["User"].is_string()) c.user = k["User"];
  return c;
}

Result<Descriptor> PickPlatform(const std::vector<Descriptor>& manifests) {
  for (const Descriptor& d : manifests) {
    if (d.os == "linux" && d.architecture == "amd64") return d;
  }
  if (manifests.size() == 1) return manifests[0];
  return Status::NotFound("no linux/amd64 image in the index");
}

Result<std::string> ReadSmallFile(const std::string& path, int64_t max) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path + " does not exist");
    return Status::Internal("cannot open " + path + ": " + std::strerror(errno));
  }
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (static_cast<int64_t>(out.size()) > max) {
      close(fd);
      return Status::InvalidArgument(path + " is larger than " + std::to_string(max) + " bytes");
    }
  }
  close(fd);
  return out;
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Internal("cannot create " + tmp + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      unlink(tmp.c_str());
      if (e == ENOSPC) return Status::ResourceExhausted("no space left on device writing " + path);
      return Status::Internal("cannot write " + tmp + ": " + std::strerror(e));
    }
    off += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    unlink(tmp.c_str());
    return Status::Internal("cannot write " + tmp + ": " + std::strerror(errno));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    return Status::Internal("cannot rename " + tmp + ": " + std::strerror(e));
  }
  return Status::Ok();
}

}  // namespace berth::image
