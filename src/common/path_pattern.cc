#include "common/path_pattern.h"

namespace berth {

std::vector<std::string> PathParts(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

bool PatternMatches(std::string_view pattern, const std::vector<std::string>& parts,
                    PathParams& params) {
  params.clear();
  size_t i = 0;
  size_t pos = 0;
  while (pos < pattern.size()) {
    if (pattern[pos] == '/') {
      ++pos;
      continue;
    }
    size_t end = pattern.find('/', pos);
    if (end == std::string_view::npos) end = pattern.size();
    std::string_view seg = pattern.substr(pos, end - pos);
    pos = end;
    if (seg == "{...}") return true;
    if (i == parts.size()) return false;
    if (seg.size() > 2 && seg.front() == '{' && seg.back() == '}') {
      params[seg.substr(1, seg.size() - 2)] = parts[i];
    } else if (seg != parts[i]) {
      return false;
    }
    ++i;
  }
  return i == parts.size();
}

const std::string& PathParam(const PathParams& params, std::string_view name) {
  static const std::string kNone;
  auto it = params.find(name);
  return it == params.end() ? kNone : it->second;
}

}  // namespace berth
