#include "k8s/patch.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "k8s/patch_internal.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

struct Extent {
  size_t depth = 0;
  size_t values = 0;
};

// Counted without recursion, so that a hostile value cannot exhaust the stack here.
Extent Measure(const json& root) {
  Extent extent;
  std::vector<std::pair<const json*, size_t>> stack = {{&root, 1}};
  while (!stack.empty()) {
    auto [value, depth] = stack.back();
    stack.pop_back();
    ++extent.values;
    extent.depth = std::max(extent.depth, depth);
    if (value->is_structured()) {
      for (const json& child : *value) stack.emplace_back(&child, depth + 1);
    }
  }
  return extent;
}

}  // namespace

namespace patch_internal {

using nlohmann::json;

std::string KindOf(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::null:
      return "null";
    default:
      return "a number";
  }
}

std::string Brief(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 64) text = text.substr(0, 61) + "...";
  return text;
}

Status CheckDepth(const json& patch, std::string_view what) {
  if (Measure(patch).depth <= static_cast<size_t>(kMaxPatchDepth)) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + " nests deeper than " +
                                 std::to_string(kMaxPatchDepth) + " levels");
}

}  // namespace patch_internal

namespace {

using patch_internal::Brief;
using patch_internal::CheckDepth;
using patch_internal::Guarded;
using patch_internal::KindOf;

// ---------------------------------------------------------------------------------------------
// JSON pointers (RFC 6901).

using Tokens = std::vector<std::string>;

Result<Tokens> ParsePointer(const std::string& text) {
  Tokens tokens;
  if (text.empty()) return tokens;
  if (text[0] != '/') {
    return Status::InvalidArgument("path " + text + " is not a JSON pointer (it starts with '/')");
  }
  std::string token;
  for (size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
    } else if (text[i] != '~') {
      token += text[i];
    } else if (i + 1 < text.size() && (text[i + 1] == '0' || text[i + 1] == '1')) {
      token += text[++i] == '0' ? '~' : '/';
    } else {
      return Status::InvalidArgument("path " + text + " has a '~' that is not ~0 or ~1");
    }
  }
  return tokens;
}

// An array index token: digits without a leading zero.
std::optional<size_t> ArrayIndex(std::string_view token) {
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0')) {
    return std::nullopt;
  }
  size_t index = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  return index;
}

// The value the tokens point to, or null when there is none.
json* Find(json& doc, std::span<const std::string> tokens) {
  json* at = &doc;
  for (const std::string& token : tokens) {
    if (at->is_object()) {
      auto it = at->find(token);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      std::optional<size_t> index = ArrayIndex(token);
      if (!index || *index >= at->size()) return nullptr;
      at = &(*at)[*index];
    } else {
      return nullptr;
    }
  }
  return at;
}

std::span<const std::string> ParentOf(const Tokens& tokens) {
  return std::span<const std::string>(tokens).first(tokens.size() - 1);
}

// ---------------------------------------------------------------------------------------------
// JSON patch (RFC 6902).

Status Missing(const std::string& path) {
  return Status::InvalidArgument("path " + path + " does not exist");
}

Status AddAt(json& doc, const Tokens& tokens, const std::string& path, json value) {
  if (tokens.empty()) {
    doc = std::move(value);
    return Status::Ok();
  }
  json* parent = Find(doc, ParentOf(tokens));
  if (parent == nullptr) {
    return Status::InvalidArgument("the parent of path " + path + " does not exist");
  }
  const std::string& last = tokens.back();
  if (parent->is_object()) {
    (*parent)[last] = std::move(value);
    return Status::Ok();
  }
  if (!parent->is_array()) {
    return Status::InvalidArgument("the parent of path " + path + " is " + KindOf(*parent) +
                                   ", not an object or array");
  }
  if (last == "-") {
    parent->push_back(std::move(value));
    return Status::Ok();
  }
  std::optional<size_t> index = ArrayIndex(last);
  if (!index) return Status::InvalidArgument("path " + path + ": \"" + last + "\" is not an index");
  if (*index > parent->size()) {
    return Status::InvalidArgument("path " + path + ": index " + last +
                                   " is past the end of an array of " +
                                   std::to_string(parent->size()));
  }
  parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(*index), std::move(value));
  return Status::Ok();
}

// Removes the value and answers it.
Result<json> RemoveAt(json& doc, const Tokens& tokens, const std::string& path) {
  if (tokens.empty()) return Status::InvalidArgument("the whole document cannot be removed");
  json* parent = Find(doc, ParentOf(tokens));
  if (parent != nullptr && parent->is_object()) {
    auto it = parent->find(tokens.back());
    if (it == parent->end()) return Missing(path);
    json removed = std::move(*it);
    parent->erase(it);
    return removed;
  }
  if (parent != nullptr && parent->is_array()) {
    std::optional<size_t> index = ArrayIndex(tokens.back());
    if (!index || *index >= parent->size()) return Missing(path);
    auto it = parent->begin() + static_cast<std::ptrdiff_t>(*index);
    json removed = std::move(*it);
    parent->erase(it);
    return removed;
  }
  return Missing(path);
}

Result<std::string> StringMember(const json& operation, const char* name) {
  auto it = operation.find(name);
  if (it == operation.end()) {
    return Status::InvalidArgument(std::string("\"") + name + "\" is missing");
  }
  if (!it->is_string()) {
    return Status::InvalidArgument(std::string("\"") + name + "\" is " + KindOf(*it) +
                                   ", not a string");
  }
  return it->get<std::string>();
}

struct Operation {
  std::string op;
  std::string path;
  Tokens to;
  std::string from;  // move and copy
  Tokens from_tokens;
  const json* value = nullptr;  // add, replace and test
};

Result<Operation> ReadOperation(const json& entry, std::string op) {
  Operation o;
  o.op = std::move(op);
  BERTH_ASSIGN_OR_RETURN(o.path, StringMember(entry, "path"));
  BERTH_ASSIGN_OR_RETURN(o.to, ParsePointer(o.path));
  if (o.op == "add" || o.op == "replace" || o.op == "test") {
    auto it = entry.find("value");
    if (it == entry.end()) return Status::InvalidArgument("\"value\" is missing");
    o.value = &*it;
  } else if (o.op == "move" || o.op == "copy") {
    BERTH_ASSIGN_OR_RETURN(o.from, StringMember(entry, "from"));
    BERTH_ASSIGN_OR_RETURN(o.from_tokens, ParsePointer(o.from));
  } else if (o.op != "remove") {
    return Status::InvalidArgument(
        "unknown operation (the operations are add, remove, replace, move, copy and test)");
  }
  return o;
}

Status Move(json& doc, const Operation& o) {
  if (Find(doc, o.from_tokens) == nullptr) {
    return Status::InvalidArgument("from " + o.from + " does not exist");
  }
  if (o.to == o.from_tokens) return Status::Ok();
  if (o.to.size() > o.from_tokens.size() &&
      std::equal(o.from_tokens.begin(), o.from_tokens.end(), o.to.begin())) {
    return Status::InvalidArgument("path " + o.path + " is inside from " + o.from +
                                   ": a value cannot move into itself");
  }
  BERTH_ASSIGN_OR_RETURN(json value, RemoveAt(doc, o.from_tokens, o.from));
  return AddAt(doc, o.to, o.path, std::move(value));
}

Status Copy(json& doc, const Operation& o, size_t* copied) {
  const json* source = Find(doc, o.from_tokens);
  if (source == nullptr) return Status::InvalidArgument("from " + o.from + " does not exist");
  *copied += Measure(*source).values;
  if (*copied > kMaxJsonPatchCopiedValues) {
    return Status::InvalidArgument("the copies add up to more than " +
                                   std::to_string(kMaxJsonPatchCopiedValues) + " values");
  }
  return AddAt(doc, o.to, o.path, *source);
}

Status Test(json& doc, const Operation& o) {
  const json* value = Find(doc, o.to);
  if (value == nullptr) return Missing(o.path);
  if (*value == *o.value) return Status::Ok();
  return Status::InvalidArgument("test failed: path " + o.path + " holds " + Brief(*value) +
                                 ", not " + Brief(*o.value));
}

Status Run(json& doc, const Operation& o, size_t* copied) {
  if (o.op == "add") return AddAt(doc, o.to, o.path, *o.value);
  if (o.op == "remove") return RemoveAt(doc, o.to, o.path).status();
  if (o.op == "replace") {
    json* target = Find(doc, o.to);
    if (target == nullptr) return Missing(o.path);
    *target = *o.value;
    return Status::Ok();
  }
  if (o.op == "move") return Move(doc, o);
  if (o.op == "copy") return Copy(doc, o, copied);
  return Test(doc, o);
}

// Applies operation number `index`; errors say which one it was.
Status ApplyOperation(json& doc, const json& entry, size_t index, size_t* copied) {
  std::string where = "operation " + std::to_string(index);
  if (!entry.is_object()) {
    return Status::InvalidArgument(where + ": is " + KindOf(entry) + ", not an object");
  }
  auto op = entry.find("op");
  if (op == entry.end() || !op->is_string()) {
    return Status::InvalidArgument(where + ": \"op\" is missing or not a string");
  }
  where += " (" + op->get<std::string>() + ")";
  Result<Operation> operation = ReadOperation(entry, op->get<std::string>());
  Status status = operation.ok() ? Run(doc, *operation, copied) : operation.status();
  return status.ok() ? status : status.WithContext(where);
}

// ---------------------------------------------------------------------------------------------
// JSON merge patch (RFC 7386).

void MergeInto(json& target, const json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it->is_null()) {
      target.erase(it.key());
    } else {
      MergeInto(target[it.key()], *it);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Content types.

constexpr std::string_view kUnsupported = "unsupported patch content type: ";

Result<json> ParseBody(std::string_view body, bool apply) {
  try {
    return json::parse(body.begin(), body.end());
  } catch (const json::parse_error& e) {
    std::string why = " (syntax error at byte " + std::to_string(e.byte) + ")";
    if (apply) why += "; berth reads apply-patch+yaml bodies as JSON, which kubectl sends";
    return Status::InvalidArgument("the body is not JSON" + why);
  }
}

}  // namespace

Result<json> ApplyMergePatch(const json& target, const json& patch) {
  return Guarded([&]() -> Result<json> {
    BERTH_RETURN_IF_ERROR(CheckDepth(patch, "the merge patch"));
    json result = target;
    MergeInto(result, patch);
    return result;
  });
}

Result<json> ApplyJsonPatch(const json& target, const json& patch) {
  return Guarded([&]() -> Result<json> {
    if (!patch.is_array()) {
      return Status::InvalidArgument("a JSON patch is an array of operations, not " +
                                     KindOf(patch));
    }
    if (patch.size() > kMaxJsonPatchOperations) {
      return Status::InvalidArgument("the JSON patch has " + std::to_string(patch.size()) +
                                     " operations, more than the " +
                                     std::to_string(kMaxJsonPatchOperations) + " allowed");
    }
    BERTH_RETURN_IF_ERROR(CheckDepth(patch, "the JSON patch"));
    json doc = target;
    size_t copied = 0;
    for (size_t i = 0; i < patch.size(); ++i) {
      BERTH_RETURN_IF_ERROR(ApplyOperation(doc, patch[i], i, &copied));
    }
    return doc;
  });
}

Result<json> ApplyPatch(std::string_view content_type, const json& target, std::string_view body) {
  std::string_view media = Trim(content_type.substr(0, content_type.find(';')));
  std::string type = ToLower(media);
  bool apply = type == "application/apply-patch+yaml";
  if (type != "application/json-patch+json" && type != "application/merge-patch+json" &&
      type != "application/strategic-merge-patch+json" && !apply) {
    return Status::InvalidArgument(std::string(kUnsupported) + std::string(media));
  }
  BERTH_ASSIGN_OR_RETURN(json patch, ParseBody(body, apply));
  if (type == "application/json-patch+json") return ApplyJsonPatch(target, patch);
  if (type == "application/merge-patch+json") return ApplyMergePatch(target, patch);
  if (apply) return ApplyServerSideApply(target, patch);
  return ApplyStrategicMergePatch(target, patch);
}

bool IsUnsupportedPatchType(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument &&
         status.message().starts_with(kUnsupported);
}

}  // namespace berth::k8s
