#include "store/etcd_client.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <thread>
#include <utility>

#include "net/http.h"

namespace berth::store {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The gateway's error: {"error": "...", "code": N, "message": "..."} (gRPC codes).
std::string EtcdMessage(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object()) {
    if (j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
    if (j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
  }
  return body.substr(0, 200);
}

}  // namespace

std::string Base64(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

Result<std::string> Unbase64(std::string_view in) {
  static const std::array<int8_t, 256> kValue = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
    return t;
  }();
  std::string out;
  out.reserve(in.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    int8_t v = kValue[static_cast<uint8_t>(c)];
    if (v < 0) return Status::Internal("etcd: bad base64 in an answer");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<uint8_t>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<uint8_t>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key (etcd's "\0" range end)
}

int64_t EtcdInt(const nlohmann::json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string()) {
    int64_t v = 0;
    const std::string& s = j.get_ref<const std::string&>();
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
  }
  return 0;
}

Status ForEachKv(const nlohmann::json& answer,
                 const std::function<Status(std::string key, std::string value)>& fn) {
  auto kvs = answer.find("kvs");
  if (kvs == answer.end()) return Status::Ok();
  if (!kvs->is_array()) return Status::Internal("etcd: a range answer without a kvs list");
  for (const nlohmann::json& kv : *kvs) {
    BERTH_ASSIGN_OR_RETURN(std::string key, Unbase64(kv.value("key", "")));
    BERTH_ASSIGN_OR_RETURN(std::string value, Unbase64(kv.value("value", "")));
    BERTH_RETURN_IF_ERROR(fn(std::move(key), std::move(value)));
  }
  return Status::Ok();
}

nlohmann::json CreateRevisionIs(const std::string& key, int64_t revision) {
  return {{"key", Base64(key)},
          {"target", "CREATE"},
          {"create_revision", std::to_string(revision)},
          {"result", "EQUAL"}};
}

Result<std::unique_ptr<EtcdClient>> EtcdClient::Create(const StoreLocation& where) {
  if (where.kind != StoreLocation::Kind::kEtcd || where.endpoints.empty()) {
    return Status::InvalidArgument("etcd: no endpoints");
  }
  std::unique_ptr<EtcdClient> c(new EtcdClient());
  c->where_ = where;
  return c;
}

EtcdClient::~EtcdClient() = default;

const std::string& EtcdClient::endpoint() const {
  return where_.endpoints[current_];
}

Result<std::unique_ptr<net::HttpClient>> ConnectEtcd(const StoreLocation& where,
                                                     const std::string& endpoint) {
  net::ClientOptions o;
  o.timeout_ms = where.timeout_ms;
  o.tls_ca_file = where.ca_file;
  o.tls_cert_file = where.cert_file;
  o.tls_key_file = where.key_file;
  return net::HttpClient::Connect((where.tls ? "tls:" : "tcp:") + endpoint, o);
}

Status RangeAt(EtcdClient& client, const std::string& key, const std::string& range_end,
               size_t page, size_t limit, bool keys_only, int64_t* revision,
               const std::function<Status(std::string, std::string)>& fn) {
  std::string from = key;
  size_t seen = 0;
  while (true) {
    const size_t n = limit > 0 ? std::min(page, limit - seen) : page;
    nlohmann::json req = {{"key", Base64(from)}, {"range_end", Base64(range_end)}, {"limit", n}};
    if (keys_only) req["keys_only"] = true;
    if (*revision > 0) req["revision"] = *revision;
    BERTH_ASSIGN_OR_RETURN(nlohmann::json answer, client.Call("/v3/kv/range", req));
    if (*revision == 0) *revision = EtcdInt(answer["header"]["revision"]);
    std::string last;
    BERTH_RETURN_IF_ERROR(ForEachKv(answer, [&](std::string k, std::string v) {
      last = k;
      ++seen;
      return fn(std::move(k), std::move(v));
    }));
    if (!answer.value("more", false) || last.empty() || (limit > 0 && seen >= limit)) {
      return Status::Ok();
    }
    from = last + '\0';
  }
}

Result<nlohmann::json> EtcdClient::CallOne(const std::string& path, const std::string& body) {
  if (!http_) {
    BERTH_ASSIGN_OR_RETURN(http_, ConnectEtcd(where_, endpoint()));
  }
  Result<net::ClientResponse> r = http_->Request("POST", path, body);
  if (!r.ok()) {
    http_.reset();  // a fresh connection next time
    // An etcd with --client-cert-auth closes a TLS connection that brought no certificate.
    if (where_.tls && where_.cert_file.empty() &&
        r.status().message().find("closed by server") != std::string::npos) {
      return Status(r.status().code(), r.status().message() +
                                           " (does etcd ask for a client certificate? give "
                                           "?cert=FILE&key=FILE)");
    }
    return r.status();
  }
  if (r->status >= 500) {
    // No leader, no quorum, a request that timed out inside etcd: another member may do better.
    return Status::Unavailable("etcd: " + EtcdMessage(r->body));
  }
  if (r->status != 200) {
    return Status::InvalidArgument("etcd refused the request: " + EtcdMessage(r->body));
  }
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Internal("etcd: an answer that is not a JSON object from " + endpoint());
  }
  return j;
}

Result<nlohmann::json> EtcdClient::Call(const std::string& path, const nlohmann::json& body) {
  const std::string text = body.dump();
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(where_.retry_ms);
  std::string why;
  while (true) {
    why.clear();
    for (size_t tried = 0; tried < where_.endpoints.size(); ++tried) {
      if (where_.deposed && where_.deposed->load()) {
        return Status::Unavailable(
            "this controller is no longer its group's leader (its etcd lease was lost): nothing "
            "was "
            "saved");
      }
      Result<nlohmann::json> r = CallOne(path, text);
      if (r.ok() || r.status().code() != StatusCode::kUnavailable) return r;
      why += (why.empty() ? "" : "; ") + endpoint() + ": " + r.status().message();
      http_.reset();
      current_ = (current_ + 1) % where_.endpoints.size();
    }
    if (std::chrono::steady_clock::now() >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::Unavailable("the etcd store cannot be reached (" + why + ")");
}

}  // namespace berth::store
