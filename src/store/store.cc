// The store's location (--store) and the choice of backend.
#include "store/store.h"

#include <charconv>

#include "store/etcd_store.h"

namespace berth::store {
namespace {

Status BadUrl(std::string_view url, const std::string& why) {
  return Status::InvalidArgument("--store '" + std::string(url) + "': " + why +
                                 " (want sqlite, sqlite:PATH or etcd://HOST:PORT[,HOST:PORT...]"
                                 "[/PREFIX][?cacert=F&cert=F&key=F])");
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = std::min(s.find(sep, start), s.size());
    out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool ParseInt(std::string_view text, int64_t lo, int64_t hi, int64_t* out) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty() || v < lo || v > hi) {
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

void AppendJoinedRecord(const JobRow& row, std::string* out) {
  if (row.exec == nullptr || row.record.empty()) {
    out->append(row.record);
    return;
  }
  out->reserve(out->size() + row.record.size() + row.exec->size() + 9);
  out->append("{\"exec\":");
  out->append(*row.exec);
  if (row.record != "{}") out->push_back(',');
  out->append(row.record, 1);
}

std::string JoinedRecord(const JobRow& row) {
  std::string out;
  AppendJoinedRecord(row, &out);
  return out;
}

Result<StoreLocation> ParseStoreUrl(std::string_view url) {
  StoreLocation loc;
  if (url == "sqlite") return loc;
  if (url.starts_with("sqlite:")) {
    loc.sqlite_path = std::string(url.substr(7));
    if (loc.sqlite_path.empty()) return BadUrl(url, "no path after sqlite:");
    return loc;
  }
  std::string_view rest;
  if (url.starts_with("etcd://")) {
    rest = url.substr(7);
  } else if (url.starts_with("etcds://")) {
    rest = url.substr(8);
    loc.tls = true;
  } else {
    return BadUrl(url, "unknown kind of store");
  }
  loc.kind = StoreLocation::Kind::kEtcd;
  std::string_view query;
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  std::string_view hosts = rest;
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    hosts = rest.substr(0, slash);
    std::string prefix(rest.substr(slash));
    while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
    if (prefix == "/") return BadUrl(url, "the key prefix must not be empty");
    loc.prefix = prefix;
  }
  for (const std::string& h : Split(hosts, ',')) {
    size_t colon = h.rfind(':');
    int64_t port = 0;
    if (h.empty() || colon == std::string::npos || colon == 0 ||
        !ParseInt(std::string_view(h).substr(colon + 1), 1, 65535, &port)) {
      return BadUrl(url, "'" + h + "' is not HOST:PORT");
    }
    loc.endpoints.push_back(h);
  }
  if (!query.empty()) {
    for (const std::string& kv : Split(query, '&')) {
      size_t eq = kv.find('=');
      std::string name = kv.substr(0, eq);
      std::string value = eq == std::string::npos ? "" : kv.substr(eq + 1);
      int64_t n = 0;
      if (name == "cacert" && !value.empty()) {
        loc.ca_file = value;
      } else if (name == "cert" && !value.empty()) {
        loc.cert_file = value;
      } else if (name == "key" && !value.empty()) {
        loc.key_file = value;
      } else if (name == "timeout-ms" && ParseInt(value, 100, 600000, &n)) {
        loc.timeout_ms = static_cast<int>(n);
      } else if (name == "retry-ms" && ParseInt(value, 0, 600000, &n)) {
        loc.retry_ms = static_cast<int>(n);
      } else if (name == "max-txn-ops" && ParseInt(value, 2, 1000000, &n)) {
        loc.max_txn_ops = static_cast<int>(n);
      } else {
        return BadUrl(url, "bad option '" + kv + "'");
      }
    }
  }
  if (loc.cert_file.empty() != loc.key_file.empty()) {
    return BadUrl(url, "cert and key go together");
  }
  if (!loc.tls && (!loc.ca_file.empty() || !loc.cert_file.empty())) {
    return BadUrl(url, "TLS files need etcds://");
  }
  return loc;
}

Result<std::unique_ptr<Store>> Store::Open(const StoreLocation& where,
                                           const std::string& default_sqlite_path) {
  if (where.kind == StoreLocation::Kind::kEtcd) return OpenEtcdStore(where);
  return Open(where.sqlite_path.empty() ? default_sqlite_path : where.sqlite_path);
}

}  // namespace berth::store
