// hostlist::Expand on any text. Invariant: an expression that expands compresses back to an
// expression that expands to the same names (Compress keeps order and duplicates), and the
// sorted and unique forms expand too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace hl = berth::hostlist;
  const std::string_view expr(reinterpret_cast<const char*>(data), size);
  berth::Result<std::vector<std::string>> names = hl::Expand(expr);
  if (!names.ok()) {
    if (names.status().message().empty()) std::abort();
    return 0;
  }
  if (names->size() > 10'000) return 0;  // the round trip below is quadratic in places
  const std::string compressed = hl::Compress(*names);
  berth::Result<std::vector<std::string>> again = hl::Expand(compressed);
  std::vector<std::string> non_empty;
  for (const std::string& n : *names) {
    if (!n.empty()) non_empty.push_back(n);
  }
  if (!again.ok() || *again != non_empty) std::abort();
  if (!hl::Expand(hl::CompressSorted(*names)).ok()) std::abort();
  if (!hl::Expand(hl::CompressUnique(*names)).ok()) std::abort();
  return 0;
}
