// Test helpers shared by the sim tests: where the real test data lives, and a fuzzer's garbage.
#ifndef BERTH_SIM_TRACE_TESTING_H_
#define BERTH_SIM_TRACE_TESTING_H_

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

namespace berth::sim::testing {

// /work/shared/testdata (BERTH_SHARED_TESTDATA), or "" when this machine does not have it.
inline std::string SharedTestdata(const std::string& sub) {
  const std::filesystem::path dir = std::filesystem::path(BERTH_SHARED_TESTDATA) / sub;
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? dir.string() : "";
}

// The repository's own files (data/traces/...).
inline std::string SourcePath(const std::string& relative) {
  return (std::filesystem::path(BERTH_SOURCE_DIR) / relative).string();
}

// Every regular file under `dir`, sorted, so that failures list in a stable order.
inline std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// A line of random bytes biased towards the characters trace parsers care about.
inline std::string GarbageLine(std::mt19937_64& rng) {
  static constexpr char kAlphabet[] = "0123456789 -.,;:{}[]\"e+\tNnaIif\x01\xff";
  std::uniform_int_distribution<int> length(0, 120);
  std::uniform_int_distribution<size_t> pick(0, sizeof(kAlphabet) - 2);
  std::string line(static_cast<size_t>(length(rng)), ' ');
  for (char& c : line) c = kAlphabet[pick(rng)];
  return line;
}

}  // namespace berth::sim::testing

#endif  // BERTH_SIM_TRACE_TESTING_H_
