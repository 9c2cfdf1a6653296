// The four bodies a Kubernetes PATCH may carry, applied to a JSON object: JSON merge patch
// (RFC 7386), JSON patch (RFC 6902), strategic merge patch, and server-side apply. Pure
// functions of their arguments: each returns the patched copy and leaves its inputs alone.
//
// Errors are INVALID_ARGUMENT with a message that names what could not be applied; nothing
// throws. Patches nested deeper than kMaxPatchDepth are refused (they would only be written to
// exhaust the stack).
//
// Strategic merge and apply need to know which lists merge entry by entry. Kubernetes reads that
// from the Go types; berth serves only core/v1 Pods, Namespaces and Nodes and batch/v1 Jobs, in
// which a field name has the same patch strategy wherever it appears, so the strategy is chosen
// by the list's field name alone (see kStrategicLists in strategic_merge.cc).
#ifndef BERTH_K8S_PATCH_H_
#define BERTH_K8S_PATCH_H_

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "common/status.h"

namespace berth::k8s {

inline constexpr int kMaxPatchDepth = 256;
// Kubernetes' own cap on the operations of one JSON patch.
inline constexpr size_t kMaxJsonPatchOperations = 10000;
// How many JSON values the copy operations of one JSON patch may duplicate in all (a few dozen
// "copy the whole document into itself" operations would otherwise need exabytes).
inline constexpr size_t kMaxJsonPatchCopiedValues = 1 << 20;

// application/merge-patch+json (RFC 7386): objects merge recursively, null removes a member,
// anything else (arrays included) replaces the target's value.
Result<nlohmann::json> ApplyMergePatch(const nlohmann::json& target, const nlohmann::json& patch);

// application/json-patch+json (RFC 6902): an array of add, remove, replace, move, copy and test
// operations on JSON pointers (RFC 6901: ~0 is '~', ~1 is '/', "-" is past an array's end).
// All or nothing. Errors name the operation and its path, e.g.
// "operation 2 (remove): path /spec/x does not exist".
Result<nlohmann::json> ApplyJsonPatch(const nlohmann::json& target, const nlohmann::json& patch);

// application/strategic-merge-patch+json, as kubectl patch and client-side kubectl apply send it:
//  - objects merge recursively; null removes a member; scalars and unlisted lists replace;
//  - lists of objects with a merge key (containers by name, volumeMounts by mountPath, ports by
//    containerPort, conditions by type, ...) merge entry by entry; new entries are placed as
//    Kubernetes places them (see below);
//  - lists of scalars with the merge strategy (finalizers) merge as ordered sets;
//  - directives, none of which stays in the result:
//      "$patch": "replace" (in an object: take the patch's object as it is; as an entry of a
//        merge list: take the patch's entries as the whole list), "delete" (in an object:
//        remove it; in a merge list, with the merge key: remove the entries with that key),
//        "merge" (the default; accepted and dropped);
//      "$retainKeys": [fields] removes the target's other fields before merging;
//      "$deleteFromPrimitiveList/<list>": [values] removes those values from the list;
//      "$setElementOrder/<list>": [keys or values] orders the merged list; entries it does not
//        name keep their place relative to the live list.
// Without "$setElementOrder" the patch's entries are ordered as in the patch and the live
// list's other entries are slotted in by their live order, so a new container goes before the
// existing ones, as on a Kubernetes API server.
// A patch that is not a JSON object is INVALID_ARGUMENT.
Result<nlohmann::json> ApplyStrategicMergePatch(const nlohmann::json& target,
                                                const nlohmann::json& patch);

// application/apply-patch+yaml (server-side apply; kubectl sends the body as JSON). The applied
// configuration merges into the live object: objects recursively, merge-key lists entry by
// entry (as strategic merge), set lists (finalizers) as a union, other lists and scalars
// replaced. Fields the configuration leaves out are kept, and so are fields it sets to null:
// berth does not track field managers, so a metadata-only apply (kubectl's second apply from
// its own field manager) must not wipe the spec. Keys starting with '$' are INVALID_ARGUMENT.
Result<nlohmann::json> ApplyServerSideApply(const nlohmann::json& live,
                                            const nlohmann::json& applied);

// Applies `body` as the Content-Type says: one of the four types above, parameters after ';'
// ignored, case-insensitive. The body must be JSON text, also for apply-patch+yaml (INVALID_
// ARGUMENT "the body is not JSON ..."). An unknown type is INVALID_ARGUMENT
// "unsupported patch content type: X" (the controller answers 415 Unsupported Media Type).
Result<nlohmann::json> ApplyPatch(std::string_view content_type, const nlohmann::json& target,
                                  std::string_view body);

// True when `status` is ApplyPatch's answer to a Content-Type it does not know.
bool IsUnsupportedPatchType(const Status& status);

}  // namespace berth::k8s

#endif  // BERTH_K8S_PATCH_H_
