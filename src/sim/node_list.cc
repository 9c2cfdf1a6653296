#include "sim/node_list.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <iterator>

#include "common/strings.h"
#include "sim/text_scan.h"

namespace berth::sim {
namespace {

using internal::CsvSplitter;
using internal::LineScanner;
using internal::ParseNumber;
using internal::Quote;

constexpr int64_t kMaxNodeGpus = 64;

std::vector<std::string> LowerFields(std::string_view line) {
  CsvSplitter splitter;
  std::string error;
  std::vector<std::string> names;
  if (!splitter.Split(line, &error)) return names;
  for (std::string_view f : splitter.fields()) names.push_back(ToLower(f));
  return names;
}

int IndexOf(const std::vector<std::string>& names, std::string_view name) {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

Result<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Walks a CSV with a header: finds the named columns, then hands each data row's fields to
// `row`, which returns "" or what is wrong. Errors read "name:line: what is wrong".
template <typename RowFn>
Status ForEachRow(std::string_view text, std::string_view name,
                  std::initializer_list<std::string_view> required, std::vector<int>* columns,
                  RowFn&& row) {
  LineScanner lines(text);
  std::string_view line;
  while (lines.Next(&line) && TrimWhitespace(line).empty()) {
  }
  auto where = [&](int64_t n) { return std::string(name) + ":" + std::to_string(n) + ": "; };
  if (TrimWhitespace(line).empty()) return Status::InvalidArgument(std::string(name) + ": empty");
  const std::vector<std::string> names = LowerFields(line);
  for (std::string_view want : required) {
    const int i = IndexOf(names, want);
    if (i < 0) {
      return Status::InvalidArgument(where(lines.line_number()) + "the header has no column '" +
                                     std::string(want) + "'");
    }
    columns->push_back(i);
  }
  CsvSplitter splitter;
  std::string error;
  while (lines.Next(&line)) {
    if (TrimWhitespace(line).empty()) continue;
    if (!splitter.Split(line, &error)) {
      return Status::InvalidArgument(where(lines.line_number()) + error);
    }
    if (splitter.fields().size() != names.size()) {
      return Status::InvalidArgument(where(lines.line_number()) + "expected " +
                                     std::to_string(names.size()) + " fields, found " +
                                     std::to_string(splitter.fields().size()));
    }
    std::string what = row(splitter.fields(), lines.line_number());
    if (!what.empty()) return Status::InvalidArgument(where(lines.line_number()) + what);
  }
  return Status::Ok();
}

// A non-negative number no larger than `max`, or "" into *what.
bool Field(std::string_view text, std::string_view label, int64_t max, int64_t* out,
           std::string* what) {
  std::optional<int64_t> v = ParseNumber(text);
  if (!v || *v < 0 || *v > max) {
    *what = std::string(label) + " is not a number from 0 to " + std::to_string(max) + ": " +
            Quote(text);
    return false;
  }
  *out = *v;
  return true;
}

}  // namespace

bool IsNodeListHeader(std::string_view header_line) {
  const std::vector<std::string> names = LowerFields(header_line);
  return IndexOf(names, "sn") >= 0 && IndexOf(names, "cpu_milli") >= 0 &&
         IndexOf(names, "gpu") >= 0;
}

bool IsNodeListFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (in && std::getline(in, line)) {
    if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    if (!TrimWhitespace(line).empty()) return IsNodeListHeader(line);
  }
  return false;
}

Result<NodeList> ParseNodeList(std::string_view text, std::string_view name) {
  NodeList list;
  list.name = std::string(internal::BaseName(name));
  std::vector<int> c;
  Status st = ForEachRow(
      text, name, {"sn", "cpu_milli", "memory_mib", "gpu", "model"}, &c,
      [&](const std::vector<std::string_view>& f, int64_t line) -> std::string {
        ListedNode n;
        n.line = line;
        n.name = std::string(f[c[0]]);
        std::string what;
        int64_t gpus = 0;
        if (n.name.empty()) return "empty node name (sn)";
        if (!Field(f[c[1]], "cpu_milli", internal::kMaxTraceNumber, &n.cpu_milli, &what) ||
            !Field(f[c[2]], "memory_mib", internal::kMaxTraceNumber, &n.mem_mib, &what) ||
            !Field(f[c[3]], "gpu", kMaxNodeGpus, &gpus, &what)) {
          return what;
        }
        n.gpus = static_cast<int32_t>(gpus);
        n.model = std::string(f[c[4]]);
        if (n.gpus > 0 && n.model.empty()) return "a node with GPUs needs a model";
        list.total_gpus += n.gpus;
        list.nodes.push_back(std::move(n));
        return "";
      });
  if (!st.ok()) return st;
  if (list.nodes.empty()) return Status::InvalidArgument(std::string(name) + ": no nodes");
  return list;
}

Result<NodeList> ReadNodeList(const std::string& path) {
  BERTH_ASSIGN_OR_RETURN(std::string text, ReadWhole(path));
  return ParseNodeList(text, path);
}

core::ClusterSpec NodeListCluster(const NodeList& list) {
  core::ClusterSpec spec;
  spec.name = "sim";
  for (const ListedNode& n : list.nodes) {
    core::NodeSpec node;
    node.name = n.name;
    node.cpus = static_cast<int32_t>(std::clamp<int64_t>(n.cpu_milli / 1000, 1, INT32_MAX));
    node.mem_mib = n.mem_mib;
    node.gpus.assign(static_cast<size_t>(n.gpus), n.model);
    spec.nodes.push_back(std::move(node));
  }
  return spec;
}

Result<PodList> ParsePodList(std::string_view text, std::string_view name) {
  PodList list;
  list.name = std::string(internal::BaseName(name));
  std::vector<int> c;
  int spec = -1;
  {
    LineScanner lines(text);
    std::string_view line;
    while (lines.Next(&line) && TrimWhitespace(line).empty()) {
    }
    spec = IndexOf(LowerFields(line), "gpu_spec");
  }
  Status st = ForEachRow(
      text, name, {"cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}, &c,
      [&](const std::vector<std::string_view>& f, int64_t line) -> std::string {
        PodShape p;
        p.line = line;
        std::string what;
        int64_t gpus = 0, milli = 0;
        if (!Field(f[c[0]], "cpu_milli", internal::kMaxTraceNumber, &p.cpu_milli, &what) ||
            !Field(f[c[1]], "memory_mib", internal::kMaxTraceNumber, &p.mem_mib, &what) ||
            !Field(f[c[2]], "num_gpu", kMaxNodeGpus, &gpus, &what) ||
            !Field(f[c[3]], "gpu_milli", 1000, &milli, &what)) {
          return what;
        }
        // As the trace reader: gpu_milli is a share only for one GPU; 0 or 1000 is whole.
        if (gpus == 1 && milli > 0 && milli < 1000) {
          p.share_milli = static_cast<int32_t>(milli);
        } else {
          p.gpus = static_cast<int32_t>(gpus);
        }
        if (spec >= 0) {
          for (std::string_view m : Split(f[static_cast<size_t>(spec)], '|')) {
            m = TrimWhitespace(m);
            if (!m.empty()) p.gpu_models.emplace_back(m);
          }
        }
        list.pods.push_back(std::move(p));
        return "";
      });
  if (!st.ok()) return st;
  return list;
}

Result<PodList> ReadPodList(const std::string& path) {
  BERTH_ASSIGN_OR_RETURN(std::string text, ReadWhole(path));
  return ParsePodList(text, path);
}

}  // namespace berth::sim
