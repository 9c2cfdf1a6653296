// The node's image cache: a content-addressed store of image blobs and unpacked layers, shared by
// every job on the node (docs/containers.md has the layout).
//
//   ROOT/blobs/sha256/<hex>     blobs as the registry sent them (manifests, configs, layers),
//                               written by skopeo (--dest-shared-blob-dir) or an import, checked
//                               against their digest before use
//   ROOT/layers/<id>/           a layer unpacked for overlayfs (whiteouts as overlay's 0/0
//                               character devices, opaque folders as trusted.overlay.opaque=y);
//                               <id> = the first 16 hex digits of the layer's digest; made in
//                               ROOT/tmp and renamed into place whole, so a half-unpacked layer is
//                               never used
//   ROOT/images/<hex>.json      one record per image (manifest digest): names, config, layers,
//                               sizes, last use, who may use it
//   ROOT/locks/                 flocks: one pull per reference per node; the index
//   ROOT/holds/<hex>/<holder>   a running job's hold on an image (prune keeps held images)
//
// Pulls go through skopeo (docs/adr/0005-containers.md). Every function may be called from
// several processes at once (the supervisors of jobs starting together): writers take flocks,
// files are replaced atomically.
#ifndef BERTH_IMAGE_STORE_H_
#define BERTH_IMAGE_STORE_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "image/container_spec.h"
#include "image/reference.h"

namespace berth::image {

// The image's configuration (the OCI image config's "config" object).
struct ImageConfig {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<std::string> env;  // "NAME=value"
  std::string working_dir;
  std::string user;
  friend bool operator==(const ImageConfig&, const ImageConfig&) = default;
};

struct ImageRecord {
  std::string digest;              // the manifest's digest, "sha256:..."
  std::vector<std::string> names;  // references that resolve to it (Reference::String())
  ImageConfig config;
  std::vector<std::string> layers;            // layer digests, bottom first
  std::string config_digest;                  // the image config blob's digest
  std::vector<int64_t> layer_unpacked_bytes;  // per layer (as `layers`), its unpacked content
  int64_t size_bytes = 0;      // the blobs' size (compressed layers + config + manifest)
  int64_t unpacked_bytes = 0;  // the unpacked layers' size
  int64_t pulled_at = 0;       // unix seconds
  int64_t last_used = 0;       // unix seconds (set by Hold)
  // Whose credentials pulled it: -1 = none (anonymous or imported): anyone may use it; else the
  // uid whose credentials the registry accepted. Other users are checked (CheckAccess) before
  // they may use it, and added to allowed_uids once the registry says yes.
  int64_t pulled_by_uid = -1;
  std::vector<uint32_t> allowed_uids;
};

struct StoreOptions {
  std::string skopeo = "skopeo";      // the binary
  std::string ca_dir;                 // extra CA certificates (*.crt) for registries; "" = none
  std::vector<std::string> insecure;  // registries reached over plain HTTP / without TLS checks
  int64_t pull_timeout_s = 900;
};

// Credentials for one pull: a Docker/containers auth file (config.json or auth.json), or none.
struct Credentials {
  std::string auth_file;  // "" = anonymous
  int64_t uid = -1;       // whose they are (-1: anonymous)
};

struct PullReport {
  bool pulled = false;  // false: it was already there (or another process pulled it meanwhile)
  double seconds = 0;   // time spent waiting and pulling
};

class Store {
 public:
  // Opens (creating the folders) and cleans up what an interrupted pull or unpack left behind.
  static Result<std::unique_ptr<Store>> Open(const std::string& root, StoreOptions options);
  ~Store();

  // The image of `ref`, present per `policy` (kDefault: Always for ":latest" or no tag, else
  // IfNotPresent, as Kubernetes decides). One pull per reference at a time on the node: other
  // callers wait for it and use its result. Errors, with the registry's words in the message:
  //   NotFound            unknown repository, tag or digest ("manifest unknown")
  //   PermissionDenied    the registry refused the credentials, or asked for some
  //   Unavailable         the registry cannot be reached, or answered 5xx
  //   InvalidArgument     a blob does not match its digest, a layer is malformed or escapes
  //   ResourceExhausted   the disk is full
  //   FailedPrecondition  kNever and the image is not on the node
  Result<ImageRecord> Ensure(const Reference& ref, PullPolicy policy, const Credentials& creds,
                             PullReport* report);
  // Loads an OCI archive (.tar) or layout folder; its names come from the layout's
  // org.opencontainers.image.ref.name annotations (as "localhost/NAME:TAG" when unqualified).
  Result<std::vector<ImageRecord>> Import(const std::string& path);
  // Asks the registry (a manifest request with `creds`) whether that user may read `ref`; on yes
  // adds creds.uid to the record's allowed_uids. Needed before a user other than the one whose
  // credentials pulled a private image uses it (docs/security.md).
  Status CheckAccess(const Reference& ref, const ImageRecord& record, const Credentials& creds);
  // True when `uid` may use the record without asking the registry.
  static bool MayUse(const ImageRecord& record, uint32_t uid);

  Result<ImageRecord> Find(const std::string& name_or_digest) const;
  Result<std::vector<ImageRecord>> List() const;
  // Absolute folders of the image's layers, bottom first (overlayfs wants them top first).
  std::vector<std::string> LayerDirs(const ImageRecord& record) const;
  // A running job holds the image while it runs (prune keeps it); `holder` is a unique name (the
  // job's folder's tag). Sets last_used. The hold ends with Release or with the calling process;
  // a `pinned` one only with Release (a named container, kept between a job's steps).
  Status Hold(const ImageRecord& record, const std::string& holder, bool pinned = false);
  void Release(const ImageRecord& record, const std::string& holder);
  // Whether a running job holds the image (holds of processes that are gone are dropped).
  bool InUse(const ImageRecord& record) const;

  // Removes images no job holds, least recently used first, until the store's size is at most
  // `limit_bytes` (0: every unheld image), and then blobs and layers no image uses.
  struct PruneReport {
    std::vector<std::string> removed;  // digests
    int64_t freed_bytes = 0;
  };
  Result<PruneReport> Prune(int64_t limit_bytes);
  Result<int64_t> SizeBytes() const;
  const std::string& root() const;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::image

#endif  // BERTH_IMAGE_STORE_H_
