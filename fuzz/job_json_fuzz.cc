// The native JSON job decoder of POST /v1/jobs: the body parsed as the controller parses it,
// then api::DecodeJob. Invariants: DecodeJob never throws (job_json.h) and a job it accepts
// encodes to a fixed point: EncodeJob(DecodeJob(EncodeJob(job))) == EncodeJob(job).
// The same bytes also go through the list walker the CLI reads job lists with
// (api::ForEachArrayItem), checked against nlohmann's parse: on valid JSON it fails only where
// the key's value is not an array, and the items it hands on are the array's elements; and
// through the member and element walks a batch submission is read with (ForEachMember,
// ForEachElement), each member and element checked against the tree.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/job_json.h"
#include "api/json_scan.h"

namespace {

// The walk over the value of `key`, against the tree `body` of the same text (discarded when
// the text is not JSON).
void CheckListWalk(std::string_view text, const nlohmann::json& body, const std::string& key) {
  std::vector<std::string> items;
  const berth::Status s = berth::api::ForEachArrayItem(text, key, [&](std::string_view item) {
    items.emplace_back(item);
    return berth::Status::Ok();
  });
  if (!s.ok() && s.message().empty()) std::abort();
  if (body.is_discarded()) return;  // the walker checks structure only: it may accept it
  // nlohmann skips a byte order mark; the controller never sends one.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") return;
  // A key written twice (also as "jobs" and "j\u006fbs"): the tree keeps the last value, the
  // walker sees both. Texts with escapes are left to the unit tests.
  if (text.find('\\') != std::string_view::npos) return;
  size_t mentions = 0;
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    ++mentions;
  }
  if (!body.is_object() || mentions > 1) return;
  auto it = body.find(key);
  const bool is_array = it != body.end() && it->is_array();
  if (s.ok() != (it == body.end() || is_array)) std::abort();
  if (!s.ok() || !is_array) return;
  if (items.size() != it->size()) std::abort();
  for (size_t i = 0; i < items.size(); ++i) {
    if (nlohmann::json::parse(items[i], nullptr, false) != (*it)[i]) std::abort();
  }
}

// The member walk (a batch submission's) and the element walk over the same text: on JSON
// that nlohmann parses to an object (or array), each member (element) the walk hands on parses
// to the tree's value of that key (that element); every member and element is handed on.
void CheckMemberWalk(std::string_view text, const nlohmann::json& body) {
  std::vector<std::pair<std::string, std::string>> members;
  const berth::Status m =
      berth::api::ForEachMember(text, [&](std::string_view key, std::string_view value) {
        members.emplace_back(key, std::string(value));
        return berth::Status::Ok();
      });
  std::vector<std::string> elements;
  const berth::Status e = berth::api::ForEachElement(text, [&](std::string_view item) {
    elements.emplace_back(item);
    return berth::Status::Ok();
  });
  if ((!m.ok() && m.message().empty()) || (!e.ok() && e.message().empty())) std::abort();
  if (body.is_discarded() || text.substr(0, 3) == "\xEF\xBB\xBF") return;
  if (body.is_object()) {
    if (!m.ok()) std::abort();
    std::set<std::string> keys;
    for (const auto& [key, value] : members) {
      if (!body.contains(key)) std::abort();
      keys.insert(key);
    }
    if (keys.size() != body.size()) std::abort();
    if (members.size() == keys.size()) {  // no key twice: each value is the tree's
      for (const auto& [key, value] : members) {
        if (nlohmann::json::parse(value, nullptr, false) != body.at(key)) std::abort();
      }
    }
  } else if (body.is_array()) {
    if (!e.ok() || elements.size() != body.size()) std::abort();
    for (size_t i = 0; i < elements.size(); ++i) {
      if (nlohmann::json::parse(elements[i], nullptr, false) != body[i]) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json body = nlohmann::json::parse(data, data + size, nullptr, false);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckListWalk(text, body, "jobs");
  if (body.is_object() && !body.empty()) CheckListWalk(text, body, body.begin().key());
  CheckMemberWalk(text, body);
  if (body.is_discarded()) return 0;
  berth::core::JobSpec spec;
  berth::core::JobExecSpec exec;
  const berth::Status s = berth::api::DecodeJob(body, &spec, &exec);
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  const nlohmann::json encoded = berth::api::EncodeJob(spec, &exec);
  berth::core::JobSpec spec2;
  berth::core::JobExecSpec exec2;
  if (!berth::api::DecodeJob(encoded, &spec2, &exec2).ok()) std::abort();
  if (berth::api::EncodeJob(spec2, &exec2) != encoded || !(exec2 == exec)) std::abort();
  return 0;
}
