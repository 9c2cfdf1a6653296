// The web console's files (src/web/assets/), built into the binary by embed_assets.cmake.
//
// Thread safety: the table is immutable.
#ifndef BERTH_WEB_WEB_ASSETS_H_
#define BERTH_WEB_WEB_ASSETS_H_

#include <span>
#include <string_view>

namespace berth::web {

struct WebAsset {
  std::string_view name;  // the file's name in assets/: "index.html", "app.js"
  std::string_view body;
  std::string_view etag;  // quoted, as the ETag header carries it
};

// Every asset, by name in byte order (generated).
std::span<const WebAsset> WebAssets();

}  // namespace berth::web

#endif  // BERTH_WEB_WEB_ASSETS_H_
