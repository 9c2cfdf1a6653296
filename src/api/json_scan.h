// Reading one array of a large JSON answer item by item: the controller's lists
// (`{"jobs":[{...},...]}`) are walked as text and each item is handed on alone, so that a client
// parses one small record at a time instead of building a tree of the whole answer (at 10,000
// jobs that tree is ~10 times the text and most of squeue's time; docs/benchmarks.md).
//
// The walk checks the structure it passes (strings, nesting, separators) but not the items'
// insides: whoever receives an item parses it, and may refuse it alone.
//
// Thread safety: pure functions.
#ifndef BERTH_API_JSON_SCAN_H_
#define BERTH_API_JSON_SCAN_H_

#include <cstddef>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::api {

// Calls fn(item) with the text of each element, in order, of the array that is the value of
// top-level key `key` in the JSON object `doc`. No such key: no call, Ok. `doc` not an object,
// `key`'s value not an array, or text that ends early or breaks the structure: InvalidArgument
// naming the byte offset. A non-Ok status from fn stops the walk and is returned.
Status ForEachArrayItem(std::string_view doc, std::string_view key,
                        const std::function<Status(std::string_view item)>& fn);

// Calls fn(key, value) with each member of the JSON object `doc`, in order: the key decoded, the
// value's text. Errors as ForEachArrayItem's.
Status ForEachMember(std::string_view doc,
                     const std::function<Status(std::string_view key, std::string_view value)>& fn);

// The string that the text of a JSON string value holds, into *out; false when `text` is not
// exactly one JSON string (escapes and non-ASCII bytes are decoded and checked by the parser).
bool JsonStringValue(std::string_view text, std::string* out);

// Calls fn(item) with the text of each element, in order, of the JSON array `array`. Errors as
// ForEachArrayItem's.
Status ForEachElement(std::string_view array,
                      const std::function<Status(std::string_view item)>& fn);

// How many elements ForEachArrayItem would hand on (to reserve room before a second walk).
Result<size_t> CountArrayItems(std::string_view doc, std::string_view key);

// ForEachArrayItem with each element parsed: fn gets its tree, or a discarded value
// (is_discarded()) for an element that is not JSON. One element's tree exists at a time.
Status ForEachArrayValue(std::string_view doc, std::string_view key,
                         const std::function<void(const nlohmann::json& value)>& fn);

}  // namespace berth::api

#endif  // BERTH_API_JSON_SCAN_H_
