// URL path patterns, as both HTTP faces' route tables match them (the controller's /v1 table in
// controller/routes.h, the Kubernetes face's in k8s/routes.h): literal segments, "{param}" for
// one segment, and a last "{...}" for any rest.
//
// Thread safety: pure functions.
#ifndef BERTH_COMMON_PATH_PATTERN_H_
#define BERTH_COMMON_PATH_PATTERN_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace berth {

// A match's parameters: "{id}" -> "12" (as "id").
using PathParams = std::map<std::string_view, std::string, std::less<>>;

// The path's non-empty segments ("/v1//jobs/" -> {"v1", "jobs"}).
std::vector<std::string> PathParts(std::string_view path);

// Whether `pattern` ("/v1/jobs/{id}", a last "{...}" for any rest) matches the path's `parts`;
// fills `params` with the parameters' segments.
bool PatternMatches(std::string_view pattern, const std::vector<std::string>& parts,
                    PathParams& params);

// A parameter's segment; "" when there is no such parameter.
const std::string& PathParam(const PathParams& params, std::string_view name);

}  // namespace berth

#endif  // BERTH_COMMON_PATH_PATTERN_H_
