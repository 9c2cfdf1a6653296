// Strategic merge patch and server-side apply (k8s/patch.h): the list strategies of the
// served kinds, the $patch directives, and merging lists entry by entry.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "k8s/patch.h"
#include "k8s/patch_internal.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using patch_internal::Brief;
using patch_internal::CheckDepth;
using patch_internal::Guarded;
using patch_internal::KindOf;

// ---------------------------------------------------------------------------------------------
// Strategic merge patch.

// A list that merges instead of being replaced. An empty merge key: a list of scalars merged as
// an ordered set. Kubernetes' patchStrategy:"merge" fields of core/v1 Pod, Namespace and Node
// and batch/v1 Job. Namespace spec.finalizers has no strategy in Kubernetes but shares the name
// of metadata.finalizers; merging it too costs nothing (only "kubernetes" goes there).
struct ListStrategy {
  std::string_view field;
  std::string_view merge_key;
};

constexpr ListStrategy kStrategicLists[] = {
    {"addresses", "type"},  // Node status
    {"conditions", "type"},
    {"containers", "name"},
    {"env", "name"},
    {"ephemeralContainers", "name"},
    {"finalizers", ""},
    {"hostAliases", "ip"},
    {"hostIPs", "ip"},
    {"imagePullSecrets", "name"},
    {"initContainers", "name"},
    {"ownerReferences", "uid"},
    {"podCIDRs", ""},
    {"podIPs", "ip"},
    {"ports", "containerPort"},
    {"resourceClaims", "name"},
    {"schedulingGates", "name"},
    {"topologySpreadConstraints", "topologyKey"},
    {"volumeDevices", "devicePath"},
    {"volumeMounts", "mountPath"},
    {"volumes", "name"},
};

const ListStrategy* StrategyOf(std::string_view field) {
  for (const ListStrategy& s : kStrategicLists) {
    if (s.field == field) return &s;
  }
  return nullptr;
}

constexpr char kPatch[] = "$patch";
constexpr char kRetainKeys[] = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

enum class Outcome { kKeep, kDelete };

std::string Join(const std::string& path, std::string_view field) {
  return path.empty() ? std::string(field) : path + "." + std::string(field);
}

std::string At(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

Status Bad(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(path.empty() ? what : path + ": " + what);
}

// The value of a "$patch" directive: replace, delete or merge.
Result<std::string> PatchDirective(const json& value, const std::string& path) {
  if (value == "replace" || value == "delete" || value == "merge") return value.get<std::string>();
  return Bad(path, "unknown $patch directive " + Brief(value) +
                       " (the directives are replace, delete and merge)");
}

// An entry that is nothing but a "$patch" directive for the list around it.
bool IsListDirective(const json& entry) {
  return entry.is_object() && entry.size() == 1 && entry.contains(kPatch);
}

Status CheckDirectiveName(const std::string& key, const std::string& path) {
  bool known =
      key == kPatch || key == kRetainKeys ||
      (key.starts_with(kSetElementOrder) && key.size() > kSetElementOrder.size()) ||
      (key.starts_with(kDeleteFromPrimitiveList) && key.size() > kDeleteFromPrimitiveList.size());
  return known ? Status::Ok() : Bad(path, "unknown directive \"" + key + "\"");
}

Result<Outcome> MergeObject(json& target, const json& patch, const std::string& path);
Status MergeList(json& live, const json& patch, const ListStrategy* strategy, const json* order,
                 const std::string& path);

// A list the patch replaces, its entries' directives applied to nothing.
Status LiteralList(json& out, const json& patch, const std::string& path) {
  out = json::array();
  for (size_t i = 0; i < patch.size(); ++i) {
    const json& entry = patch[i];
    if (IsListDirective(entry)) {
      BERTH_RETURN_IF_ERROR(PatchDirective(entry[kPatch], At(path, i)).status());
    } else if (entry.is_object()) {
      json object = json::object();
      BERTH_ASSIGN_OR_RETURN(Outcome outcome, MergeObject(object, entry, At(path, i)));
      if (outcome == Outcome::kKeep) out.push_back(std::move(object));
    } else if (entry.is_array()) {
      json inner;
      BERTH_RETURN_IF_ERROR(LiteralList(inner, entry, At(path, i)));
      out.push_back(std::move(inner));
    } else {
      out.push_back(entry);
    }
  }
  return Status::Ok();
}

// Orders a merged list the way the Kubernetes API server does: the entries whose keys `order`
// names come in that order; each other entry (all from the live list) goes before the first of
// those that follows it in the live list.
template <typename KeyOf>
json Reorder(json merged, const std::vector<json>& order, const std::vector<json>& live_keys,
             KeyOf key_of) {
  std::map<json, size_t> order_index;
  std::map<json, size_t> live_index;
  for (size_t i = 0; i < order.size(); ++i) order_index.emplace(order[i], i);
  for (size_t i = 0; i < live_keys.size(); ++i) live_index.emplace(live_keys[i], i);
  std::vector<std::pair<size_t, json>> named;
  std::vector<json> others;
  for (json& entry : merged) {
    const json* key = key_of(entry);
    auto it = key == nullptr ? order_index.end() : order_index.find(*key);
    if (it == order_index.end()) {
      others.push_back(std::move(entry));
    } else {
      named.emplace_back(it->second, std::move(entry));
    }
  }
  std::stable_sort(named.begin(), named.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  auto live_position = [&](const json& entry) -> std::optional<size_t> {
    const json* key = key_of(entry);
    auto it = key == nullptr ? live_index.end() : live_index.find(*key);
    if (it == live_index.end()) return std::nullopt;
    return it->second;
  };
  json out = json::array();
  size_t i = 0, j = 0;
  while (i < others.size() || j < named.size()) {
    bool other_first = j == named.size();
    if (i < others.size() && j < named.size()) {
      std::optional<size_t> a = live_position(others[i]);
      std::optional<size_t> b = live_position(named[j].second);
      other_first = a && b && *a < *b;
    }
    out.push_back(other_first ? std::move(others[i++]) : std::move(named[j++].second));
  }
  return out;
}

// A list of scalars with the merge strategy: an ordered set.
Status MergeSet(json& live, const json& patch, const json* order, const std::string& path) {
  bool replace = false;
  std::vector<json> values;
  for (size_t i = 0; i < patch.size(); ++i) {
    if (IsListDirective(patch[i])) {
      BERTH_ASSIGN_OR_RETURN(std::string directive, PatchDirective(patch[i][kPatch], At(path, i)));
      replace = replace || directive == "replace";
    } else if (patch[i].is_structured()) {
      return Bad(At(path, i), "is " + KindOf(patch[i]) + " in a list of scalars");
    } else {
      values.push_back(patch[i]);
    }
  }
  std::vector<json> live_keys(live.begin(), live.end());
  json merged = json::array();
  std::set<json> seen;
  for (const std::vector<json>* part : {replace ? nullptr : &live_keys, &values}) {
    if (part == nullptr) continue;
    for (const json& v : *part) {
      if (seen.insert(v).second) merged.push_back(v);
    }
  }
  if (order != nullptr && !order->is_array()) return Bad(path, "$setElementOrder is not a list");
  std::vector<json> order_keys =
      order != nullptr ? std::vector<json>(order->begin(), order->end()) : values;
  live = Reorder(std::move(merged), order_keys, live_keys, [](const json& v) { return &v; });
  return Status::Ok();
}

// The keys "$setElementOrder/<list>" names, in its order.
Result<std::vector<json>> OrderKeys(const json& order, const std::string& key,
                                    const std::string& path) {
  if (!order.is_array()) return Bad(path, "$setElementOrder is not a list");
  std::vector<json> keys;
  for (size_t i = 0; i < order.size(); ++i) {
    auto it = order[i].is_object() ? order[i].find(key) : order[i].end();
    if (!order[i].is_object() || it == order[i].end()) {
      return Bad(path, "$setElementOrder entry " + Brief(order[i]) + " has no \"" + key + "\"");
    }
    keys.push_back(*it);
  }
  return keys;
}

// The patch entries of a merge-key list, after its "$patch" directives: the keys to delete from
// the live list, and whether the patch replaces the list instead.
struct KeyedPatch {
  std::vector<const json*> entries;
  std::set<json> deleted;
  bool replace = false;
};

Result<KeyedPatch> ReadKeyedPatch(const json& patch, const std::string& key,
                                  const std::string& path) {
  KeyedPatch out;
  for (size_t i = 0; i < patch.size(); ++i) {
    const json& entry = patch[i];
    if (!entry.is_object()) {
      return Bad(At(path, i),
                 "is " + KindOf(entry) + ", not an object (the list merges by \"" + key + "\")");
    }
    auto merge_key = entry.find(key);
    if (auto directive = entry.find(kPatch); directive != entry.end()) {
      BERTH_ASSIGN_OR_RETURN(std::string d, PatchDirective(*directive, At(path, i)));
      if (d == "replace") {
        out.replace = true;
        continue;
      }
      if (d == "merge" && entry.size() == 1) continue;  // a no-op marker for the list
      if (d == "delete") {
        if (merge_key == entry.end()) {
          return Bad(At(path, i), "a $patch: delete entry needs the merge key \"" + key + "\"");
        }
        out.deleted.insert(*merge_key);
        continue;
      }
    }
    if (merge_key == entry.end()) return Bad(At(path, i), "has no merge key \"" + key + "\"");
    out.entries.push_back(&entry);
  }
  return out;
}

// A list of objects merged entry by entry on `key`.
Status MergeKeyedList(json& live, const json& patch, const std::string& key, const json* order,
                      const std::string& path) {
  BERTH_ASSIGN_OR_RETURN(KeyedPatch p, ReadKeyedPatch(patch, key, path));
  auto key_of = [&key](const json& entry) -> const json* {
    auto it = entry.is_object() ? entry.find(key) : entry.end();
    return entry.is_object() && it != entry.end() ? &*it : nullptr;
  };
  std::vector<json> live_keys;
  json merged = json::array();
  for (json& entry : live) {
    const json* k = key_of(entry);
    if (k != nullptr) live_keys.push_back(*k);
    if (!p.replace && (k == nullptr || !p.deleted.contains(*k))) merged.push_back(std::move(entry));
  }
  std::map<json, size_t> position;
  for (size_t i = 0; i < merged.size(); ++i) {
    if (const json* k = key_of(merged[i])) position.emplace(*k, i);
  }
  std::vector<json> patch_keys;
  for (const json* entry : p.entries) {
    const json& k = *key_of(*entry);
    std::string at = path;
    at += "[" + key + "=" + Brief(k) + "]";
    patch_keys.push_back(k);
    auto it = position.find(k);
    if (it == position.end()) {
      it = position.emplace(k, merged.size()).first;
      merged.push_back(json::object());
    }
    BERTH_RETURN_IF_ERROR(MergeObject(merged[it->second], *entry, at).status());
  }
  if (p.replace) {
    live = std::move(merged);
    return Status::Ok();
  }
  std::vector<json> order_keys = patch_keys;
  if (order != nullptr) {
    BERTH_ASSIGN_OR_RETURN(order_keys, OrderKeys(*order, key, path));
    std::set<json> named(order_keys.begin(), order_keys.end());
    for (const json& k : patch_keys) {
      if (!named.contains(k)) {
        return Bad(path, "$setElementOrder does not name the entry with " + key + " " + Brief(k));
      }
    }
  }
  live = Reorder(std::move(merged), order_keys, live_keys, key_of);
  return Status::Ok();
}

Status MergeList(json& live, const json& patch, const ListStrategy* strategy, const json* order,
                 const std::string& path) {
  if (strategy == nullptr) return LiteralList(live, patch, path);
  if (strategy->merge_key.empty()) return MergeSet(live, patch, order, path);
  return MergeKeyedList(live, patch, std::string(strategy->merge_key), order, path);
}

Status MergeField(json& target, const std::string& key, const json& patch, const json* order,
                  const std::string& path) {
  if (patch.is_null()) {
    target.erase(key);
    return Status::Ok();
  }
  if (!patch.is_structured()) {
    target[key] = patch;
    return Status::Ok();
  }
  auto it = target.find(key);
  bool same_type = it != target.end() && it->type() == patch.type();
  json merged = same_type ? std::move(*it) : json(patch.type());
  if (patch.is_array()) {
    BERTH_RETURN_IF_ERROR(MergeList(merged, patch, StrategyOf(key), order, path));
  } else {
    BERTH_ASSIGN_OR_RETURN(Outcome outcome, MergeObject(merged, patch, path));
    if (outcome == Outcome::kDelete) {
      target.erase(key);
      return Status::Ok();
    }
  }
  target[key] = std::move(merged);
  return Status::Ok();
}

Status RetainKeys(json& target, const json& patch, const std::string& path) {
  auto retain = patch.find(kRetainKeys);
  if (retain == patch.end()) return Status::Ok();
  if (!retain->is_array()) return Bad(path, "$retainKeys is not a list");
  std::set<std::string> keep;
  for (const json& name : *retain) {
    if (!name.is_string()) return Bad(path, "$retainKeys names " + Brief(name) + ", not a field");
    keep.insert(name.get<std::string>());
  }
  for (auto it = target.begin(); it != target.end();) {
    it = keep.contains(it.key()) ? std::next(it) : target.erase(it);
  }
  return Status::Ok();
}

Status DeleteFromPrimitiveLists(json& target, const json& patch, const std::string& path) {
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (!it.key().starts_with(kDeleteFromPrimitiveList)) continue;
    std::string list = it.key().substr(kDeleteFromPrimitiveList.size());
    if (!it->is_array()) return Bad(path, it.key() + " is not a list");
    std::set<json> doomed(it->begin(), it->end());
    auto live = target.find(list);
    if (live == target.end() || !live->is_array()) continue;
    json kept = json::array();
    for (json& v : *live) {
      if (!doomed.contains(v)) kept.push_back(std::move(v));
    }
    *live = std::move(kept);
  }
  return Status::Ok();
}

const json* OrderDirective(const json& patch, const std::string& list) {
  auto it = patch.find(std::string(kSetElementOrder) + list);
  return it == patch.end() ? nullptr : &*it;
}

// "$setElementOrder/<list>" for lists the patch does not otherwise touch: a reorder only.
Status ReorderUntouchedLists(json& target, const json& patch, const std::string& path) {
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (!it.key().starts_with(kSetElementOrder)) continue;
    std::string list = it.key().substr(kSetElementOrder.size());
    auto live = target.find(list);
    const ListStrategy* strategy = StrategyOf(list);
    if (patch.contains(list) || live == target.end() || !live->is_array() || strategy == nullptr) {
      continue;
    }
    BERTH_RETURN_IF_ERROR(MergeList(*live, json::array(), strategy, &*it, Join(path, list)));
  }
  return Status::Ok();
}

Result<Outcome> MergeObject(json& target, const json& patch, const std::string& path) {
  if (auto directive = patch.find(kPatch); directive != patch.end()) {
    BERTH_ASSIGN_OR_RETURN(std::string d, PatchDirective(*directive, path));
    if (d == "delete") return Outcome::kDelete;
    if (d == "replace") target = json::object();
  }
  if (!target.is_object()) target = json::object();
  BERTH_RETURN_IF_ERROR(RetainKeys(target, patch, path));
  BERTH_RETURN_IF_ERROR(DeleteFromPrimitiveLists(target, patch, path));
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& key = it.key();
    if (key.starts_with('$')) {
      BERTH_RETURN_IF_ERROR(CheckDirectiveName(key, path));
      continue;
    }
    BERTH_RETURN_IF_ERROR(
        MergeField(target, key, *it, OrderDirective(patch, key), Join(path, key)));
  }
  BERTH_RETURN_IF_ERROR(ReorderUntouchedLists(target, patch, path));
  return Outcome::kKeep;
}

// ---------------------------------------------------------------------------------------------
// Server-side apply.

Status ApplyObject(json& live, const json& applied, const std::string& path);

Status ApplyKeyedList(json& live, const json& applied, const std::string& key,
                      const std::string& path) {
  std::map<json, size_t> position;
  for (size_t i = 0; i < live.size(); ++i) {
    if (live[i].is_object() && live[i].contains(key)) position.emplace(live[i][key], i);
  }
  for (size_t i = 0; i < applied.size(); ++i) {
    const json& entry = applied[i];
    auto k = entry.is_object() ? entry.find(key) : entry.end();
    if (!entry.is_object() || k == entry.end() || k->is_null()) {
      return Bad(At(path, i), "has no merge key \"" + key + "\"");
    }
    auto it = position.find(*k);
    if (it == position.end()) {
      it = position.emplace(*k, live.size()).first;
      live.push_back(json::object());
    }
    BERTH_RETURN_IF_ERROR(ApplyObject(live[it->second], entry, At(path, i)));
  }
  return Status::Ok();
}

Status ApplyField(json& live, const std::string& key, const json& applied,
                  const std::string& path) {
  json& slot = live[key];
  if (applied.is_object()) return ApplyObject(slot, applied, path);
  const ListStrategy* strategy = applied.is_array() ? StrategyOf(key) : nullptr;
  if (strategy == nullptr) {
    slot = applied;
    return Status::Ok();
  }
  if (!slot.is_array()) slot = json::array();
  if (!strategy->merge_key.empty()) {
    return ApplyKeyedList(slot, applied, std::string(strategy->merge_key), path);
  }
  std::set<json> present(slot.begin(), slot.end());
  for (const json& v : applied) {
    if (present.insert(v).second) slot.push_back(v);
  }
  return Status::Ok();
}

Status ApplyObject(json& live, const json& applied, const std::string& path) {
  if (!live.is_object()) live = json::object();
  for (auto it = applied.begin(); it != applied.end(); ++it) {
    std::string at = Join(path, it.key());
    if (it.key().starts_with('$')) return Bad(at, "apply configurations take no $ directives");
    if (it->is_null()) continue;
    BERTH_RETURN_IF_ERROR(ApplyField(live, it.key(), *it, at));
  }
  return Status::Ok();
}

}  // namespace

Result<json> ApplyStrategicMergePatch(const json& target, const json& patch) {
  return Guarded([&]() -> Result<json> {
    if (!patch.is_object()) {
      return Status::InvalidArgument("a strategic merge patch is a JSON object, not " +
                                     KindOf(patch));
    }
    BERTH_RETURN_IF_ERROR(CheckDepth(patch, "the strategic merge patch"));
    json result = target;
    BERTH_ASSIGN_OR_RETURN(Outcome outcome, MergeObject(result, patch, ""));
    if (outcome == Outcome::kDelete) return json::object();
    return result;
  });
}

Result<json> ApplyServerSideApply(const json& live, const json& applied) {
  return Guarded([&]() -> Result<json> {
    if (!applied.is_object()) {
      return Status::InvalidArgument("an apply configuration is a JSON object, not " +
                                     KindOf(applied));
    }
    BERTH_RETURN_IF_ERROR(CheckDepth(applied, "the apply configuration"));
    json result = live;
    BERTH_RETURN_IF_ERROR(ApplyObject(result, applied, ""));
    return result;
  });
}

}  // namespace berth::k8s
