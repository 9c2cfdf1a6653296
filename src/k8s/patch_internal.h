// Pieces the patch files share (patch.cc: JSON patch, merge patch, content types;
// strategic_merge.cc: strategic merge patch and server-side apply). Not an interface: only those
// two files include it. Pure functions; no state.
#ifndef BERTH_K8S_PATCH_INTERNAL_H_
#define BERTH_K8S_PATCH_INTERNAL_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::k8s::patch_internal {

// "an object", "a string", ...: what a value is, for messages.
std::string KindOf(const nlohmann::json& v);
// At most 64 characters of a value's JSON text.
std::string Brief(const nlohmann::json& v);
// INVALID_ARGUMENT "<what> nests deeper than kMaxPatchDepth levels" for a patch that does.
Status CheckDepth(const nlohmann::json& patch, std::string_view what);

// Runs `apply`, turning a stray nlohmann exception into INVALID_ARGUMENT.
template <typename Apply>
Result<nlohmann::json> Guarded(Apply apply) {
  try {
    return apply();
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("the patch could not be applied: ") + e.what());
  }
}

}  // namespace berth::k8s::patch_internal

#endif  // BERTH_K8S_PATCH_INTERNAL_H_
