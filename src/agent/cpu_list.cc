#include "agent/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "common/strings.h"

namespace berth::agent {

namespace {

bool ParseCpuNumber(std::string_view text, int32_t* out) {
  if (text.empty() || text.size() > 7) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

Result<std::vector<int32_t>> ParseCpuList(std::string_view text) {
  text = TrimWhitespace(text);
  std::vector<int32_t> cpus;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t dash = item.find('-');
    int32_t lo = 0;
    int32_t hi = 0;
    bool ok = false;
    if (dash == std::string_view::npos) {
      ok = ParseCpuNumber(item, &lo);
      hi = lo;
    } else {
      ok = ParseCpuNumber(item.substr(0, dash), &lo) && ParseCpuNumber(item.substr(dash + 1), &hi);
    }
    if (!ok || lo > hi || hi - lo > 65535) {
      return Status::InvalidArgument("bad CPU list item '" + std::string(item) + "'");
    }
    for (int32_t c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(std::vector<int32_t> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int32_t> ChooseCpus(const std::vector<int32_t>& online,
                                const std::vector<int32_t>& taken, int32_t count) {
  std::map<int32_t, int32_t> sharers;  // online CPU -> jobs holding it
  for (int32_t c : online) sharers[c] = 0;
  for (int32_t c : taken) {
    auto it = sharers.find(c);
    if (it != sharers.end()) ++it->second;
  }
  std::vector<std::pair<int32_t, int32_t>> order;  // (sharers, cpu): least shared, lowest first
  order.reserve(sharers.size());
  for (const auto& [cpu, n] : sharers) order.emplace_back(n, cpu);
  std::sort(order.begin(), order.end());
  std::vector<int32_t> chosen;
  for (size_t i = 0; i < order.size() && static_cast<int32_t>(chosen.size()) < count; ++i) {
    chosen.push_back(order[i].second);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace berth::agent
