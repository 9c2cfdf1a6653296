// Typed reads of fields from parsed JSON, with messages that name the key and show the bad
// value: "\"time_limit\": expected a whole number, got 'soon'". The job codec (job_json.cc) and
// the simulator's JSON Lines traces (sim/jsonl_reader.cc) read their keys through these, so the
// two formats word their errors the same way.
//
// Thread safety: all functions are pure. None throws (nlohmann::json's typed getters are called
// only after the type is checked).
#ifndef BERTH_API_JSON_READ_H_
#define BERTH_API_JSON_READ_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::api {

// Whole numbers in jobs and traces stay within +-10^15 (times in seconds, memory in MiB, counts).
inline constexpr int64_t kMaxJsonNumber = 1'000'000'000'000'000;
// `max_shown` of the functions below: show a bad value whole.
inline constexpr size_t kShowWhole = std::string_view::npos;

// InvalidArgument "\"<key>\": <what>".
Status KeyError(std::string_view key, std::string_view what);

// A value as messages show it: its compact JSON text in quotes, non-printable bytes as '?', cut
// after `max_shown` characters ("'{\"a\":1...'").
std::string ShowJson(const nlohmann::json& v, size_t max_shown = kShowWhole);

// A whole number in [min, max] into *out; an integral float such as 3600.0 counts as whole.
// Anything else (another type, a fraction, beyond +-kMaxJsonNumber, out of range) is a KeyError
// that shows the value through ShowJson(v, max_shown). *out is unchanged on error.
Status GetInt(const nlohmann::json& v, std::string_view key, int64_t min, int64_t max, int64_t* out,
              size_t max_shown = kShowWhole);

// GetInt into a narrower integer type. REQUIRES: T holds every value in [min, max].
template <typename T>
Status GetIntAs(const nlohmann::json& v, std::string_view key, int64_t min, int64_t max, T* out,
                size_t max_shown = kShowWhole) {
  int64_t n = 0;
  BERTH_RETURN_IF_ERROR(GetInt(v, key, min, max, &n, max_shown));
  *out = static_cast<T>(n);
  return Status::Ok();
}

// A JSON string / boolean into *out, or a KeyError showing what was there instead.
Status GetString(const nlohmann::json& v, std::string_view key, std::string* out);
Status GetBool(const nlohmann::json& v, std::string_view key, bool* out);

}  // namespace berth::api

#endif  // BERTH_API_JSON_READ_H_
