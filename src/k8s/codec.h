// The Kubernetes wire format's common pieces, for the controller's Kubernetes face
// (docs/kubernetes.md): `v1 Status` errors, times and durations as Kubernetes prints them,
// quantities, Accept negotiation (Tables, aggregated discovery), label and field selectors, and
// `meta.k8s.io/v1` Tables. Pure functions of their arguments.
#ifndef BERTH_K8S_CODEC_H_
#define BERTH_K8S_CODEC_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::k8s {

// A `v1 Status` failure, e.g. (404, "NotFound", "nodes \"x\" not found", {name, kind}).
// `details` may be null (left out).
nlohmann::json StatusBody(int code, std::string_view reason, const std::string& message,
                          const nlohmann::json& details);
// `resource` is the plural, qualified by its group unless core ("nodes", "jobs.batch").
nlohmann::json NotFoundStatus(const std::string& resource, const std::string& name);
nlohmann::json AlreadyExistsStatus(const std::string& resource, const std::string& name);
// 422: `Kind "name" is invalid: field: Invalid value: "value": detail`.
nlohmann::json InvalidStatus(const std::string& kind, const std::string& name,
                             const std::string& field, const std::string& value,
                             const std::string& detail);
// 403: `resource "name" is forbidden: detail` (name may be empty).
nlohmann::json ForbiddenStatus(const std::string& resource, const std::string& name,
                               const std::string& detail);
nlohmann::json UnauthorizedStatus();
// A `v1 Status` with status "Success" (e.g. the answer to a DELETE).
nlohmann::json SuccessStatus(const std::string& resource, const std::string& name,
                             const std::string& uid);

// "2026-12-03T04:05:06Z" (RFC 3339, UTC, seconds).
std::string Rfc3339(int64_t unix_seconds);
// The reverse ("2026-12-03T04:05:06Z", fractions allowed); nullopt for other text.
std::optional<int64_t> ParseRfc3339(std::string_view text);
// What kubectl shows in AGE columns: "45s", "2m3s", "15m", "3h12m", "5d", "2y30d".
std::string HumanDuration(int64_t seconds);
// Memory in MiB as a quantity: "16Gi" when whole GiB, else "1536Mi".
std::string MemoryQuantity(int64_t mib);
// A uid (UUID text) that is the same for the same kind and name every time.
std::string StableUid(std::string_view kind, std::string_view name);

// Accept negotiation. True when the Accept list names `as=Table` in meta.k8s.io v1 or v1beta1.
bool AcceptsTable(std::string_view accept);
// "v2" or "v2beta1": the first aggregated-discovery version (apidiscovery.k8s.io,
// as=APIGroupDiscoveryList) the Accept list names; "" when it names none.
std::string AggregatedDiscoveryVersion(std::string_view accept);
// Go's strconv.ParseBool: 1 t T true True TRUE / 0 f F false False FALSE.
std::optional<bool> ParseBool(std::string_view text);

// One term of a label or field selector.
struct Requirement {
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
  std::string key;
  Op op = Op::kEquals;
  std::vector<std::string> values;
};

// "app=x,tier!=db,env in (a,b),!legacy,gpu" (Kubernetes' label selector syntax).
// INVALID_ARGUMENT names the term it cannot read.
Result<std::vector<Requirement>> ParseLabelSelector(std::string_view text);
// "metadata.name=x,status.phase!=Failed" (=, == and != only).
Result<std::vector<Requirement>> ParseFieldSelector(std::string_view text);
// Does an object's metadata.labels (a JSON object, or null) satisfy every requirement?
bool LabelsMatch(const std::vector<Requirement>& selector, const nlohmann::json& labels);
// Does the object satisfy every field requirement? `field` answers a field's value, or nullopt
// for a field this resource does not support (which never matches: callers check
// SupportedFields first).
bool FieldsMatch(const std::vector<Requirement>& selector,
                 const std::function<std::optional<std::string>(const std::string&)>& field);

// A `meta.k8s.io/v1` Table column definition. priority 0 = always shown, 1 = with -o wide.
nlohmann::json TableColumn(const std::string& name, const std::string& type,
                           const std::string& format, const std::string& description, int priority);
// A Table row: its cells, and the object's metadata as a PartialObjectMetadata (kubectl needs
// it for the NAMESPACE column of -A and for --show-labels).
nlohmann::json TableRow(nlohmann::json cells, const nlohmann::json& object);
nlohmann::json Table(nlohmann::json columns, nlohmann::json rows,
                     const std::string& resource_version);

// The Content-Types these bodies go out with.
inline constexpr std::string_view kTableContentType =
    "application/json;as=Table;v=v1;g=meta.k8s.io";

}  // namespace berth::k8s

#endif  // BERTH_K8S_CODEC_H_
