#include "image/layout_writer.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "image/oci.h"

namespace berth::image {
namespace {

using json = nlohmann::json;

void Octal(char* field, size_t width, uint64_t value) {
  std::snprintf(field, width, "%0*llo", static_cast<int>(width - 1),
                static_cast<unsigned long long>(value));
}

}  // namespace

Result<std::string> TarOf(const std::vector<LayerEntry>& entries) {
  std::string out;
  for (const LayerEntry& e : entries) {
    if (e.path.empty() || e.path.size() > 99 || e.path.front() == '/') {
      return Status::InvalidArgument("tar entry name '" + e.path + "': 1 to 99 bytes, relative");
    }
    char h[512] = {};
    std::string name = e.path + (e.kind == LayerEntry::Kind::kDir ? "/" : "");
    std::memcpy(h, name.data(), name.size());
    Octal(h + 100, 8, static_cast<uint64_t>(e.mode & 07777));
    Octal(h + 108, 8, 0);
    Octal(h + 116, 8, 0);
    const uint64_t size = e.kind == LayerEntry::Kind::kFile ? e.content.size() : 0;
    Octal(h + 124, 12, size);
    Octal(h + 136, 12, 0);
    h[156] =
        e.kind == LayerEntry::Kind::kFile ? '0' : (e.kind == LayerEntry::Kind::kDir ? '5' : '2');
    if (e.kind == LayerEntry::Kind::kSymlink) {
      if (e.content.size() > 99) return Status::InvalidArgument("symlink target too long");
      std::memcpy(h + 157, e.content.data(), e.content.size());
    }
    std::memcpy(h + 257, "ustar", 6);
    std::memcpy(h + 263, "00", 2);
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    std::snprintf(h + 148, 8, "%06o", sum);
    out.append(h, sizeof(h));
    if (size > 0) {
      out += e.content;
      out.append((512 - size % 512) % 512, '\0');
    }
  }
  out.append(1024, '\0');
  return out;
}

Result<std::string> WriteOciLayout(const std::string& dir, const std::vector<LayerEntry>& layer,
                                   const ImageConfig& config, const std::string& tag) {
  BERTH_ASSIGN_OR_RETURN(std::string tar, TarOf(layer));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir + "/blobs/sha256", ec);
  if (ec) return Status::InvalidArgument("cannot create " + dir + ": " + ec.message());
  auto put = [&](const std::string& data) -> Result<std::string> {
    std::string digest = Sha256Digest(data);
    BERTH_RETURN_IF_ERROR(
        WriteFileAtomic(dir + "/blobs/sha256/" + std::string(DigestHex(digest)), data));
    return digest;
  };
  BERTH_ASSIGN_OR_RETURN(std::string layer_digest, put(tar));
  json cfg = {
      {"architecture", "amd64"},
      {"os", "linux"},
      {"config", {{"Env", config.env}, {"WorkingDir", config.working_dir}, {"User", config.user}}},
      {"rootfs", {{"type", "layers"}, {"diff_ids", {layer_digest}}}}};
  if (!config.entrypoint.empty()) cfg["config"]["Entrypoint"] = config.entrypoint;
  if (!config.cmd.empty()) cfg["config"]["Cmd"] = config.cmd;
  const std::string cfg_text = cfg.dump();
  BERTH_ASSIGN_OR_RETURN(std::string cfg_digest, put(cfg_text));
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                   {"config",
                    {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                     {"digest", cfg_digest},
                     {"size", cfg_text.size()}}},
                   {"layers", json::array({{{"mediaType", "application/vnd.oci.image.layer.v1.tar"},
                                            {"digest", layer_digest},
                                            {"size", tar.size()}}})}};
  const std::string manifest_text = manifest.dump();
  BERTH_ASSIGN_OR_RETURN(std::string manifest_digest, put(manifest_text));
  json index = {{"schemaVersion", 2},
                {"manifests",
                 json::array({{{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                               {"digest", manifest_digest},
                               {"size", manifest_text.size()},
                               {"annotations", {{"org.opencontainers.image.ref.name", tag}}}}})}};
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(dir + "/index.json", index.dump()));
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(dir + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})"));
  return manifest_digest;
}

}  // namespace berth::image
