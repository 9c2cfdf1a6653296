#include "image/reference.h"

#include <string>

namespace berth::image {
namespace {

constexpr std::string_view kDefaultRegistry = "docker.io";
constexpr size_t kMaxNameLength = 255;

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool IsAlnum(char c) {
  return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z');
}
bool IsWordChar(char c) {
  return IsAlnum(c) || c == '_';
}
bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

Status Invalid(std::string_view why, std::string_view text) {
  return Status::InvalidArgument("invalid reference format: " + std::string(why) + ": '" +
                                 std::string(text) + "'");
}

// Docker's path-component: alpha-numeric [separator alpha-numeric]*, separator = [_.] | __ | -+.
bool ValidPathComponent(std::string_view c) {
  if (c.empty() || !IsLowerAlnum(c.front()) || !IsLowerAlnum(c.back())) return false;
  size_t i = 0;
  while (i < c.size()) {
    if (IsLowerAlnum(c[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < c.size() && !IsLowerAlnum(c[j])) ++j;
    std::string_view sep = c.substr(i, j - i);
    bool dashes = sep.find_first_not_of('-') == std::string_view::npos;
    if (!(sep == "." || sep == "_" || sep == "__" || dashes)) return false;
    i = j;
  }
  return true;
}

// A domain: components of [a-zA-Z0-9-] (not starting or ending with '-') joined by '.', an
// optional :port; or a bracketed IPv6 address with an optional :port.
bool ValidDomain(std::string_view d) {
  std::string_view host = d;
  std::string_view port;
  if (!d.empty() && d.front() == '[') {
    size_t close = d.find(']');
    if (close == std::string_view::npos) return false;
    std::string_view addr = d.substr(1, close - 1);
    if (addr.empty() || addr.find_first_not_of("0123456789abcdefABCDEF:.") != addr.npos) {
      return false;
    }
    std::string_view rest = d.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port = rest.substr(1);
      if (port.empty() || port.find_first_not_of("0123456789") != port.npos) return false;
    }
    return true;
  }
  if (size_t colon = d.find(':'); colon != std::string_view::npos) {
    host = d.substr(0, colon);
    port = d.substr(colon + 1);
    if (port.empty() || port.find_first_not_of("0123456789") != port.npos) return false;
  }
  if (host.empty()) return false;
  size_t start = 0;
  while (start <= host.size()) {
    size_t dot = host.find('.', start);
    std::string_view comp =
        host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (comp.empty() || comp.front() == '-' || comp.back() == '-') return false;
    for (char c : comp) {
      if (!IsAlnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

bool ValidTag(std::string_view t) {
  if (t.empty() || t.size() > 128 || !IsWordChar(t.front())) return false;
  for (char c : t) {
    if (!IsWordChar(c) && c != '.' && c != '-') return false;
  }
  return true;
}

bool ValidDigest(std::string_view d) {
  if (!d.starts_with("sha256:") || d.size() != 7 + 64) return false;
  for (char c : d.substr(7)) {
    if (!IsHex(c)) return false;
  }
  return true;
}

// "algorithm:..." with no '/': Docker's "@digest" (checked later), not pyxis's "USER@IMAGE".
bool LooksLikeDigest(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || s.find('/') != std::string_view::npos) {
    return false;
  }
  for (char c : s.substr(0, colon)) {
    if (!IsLowerAlnum(c) && c != '+' && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// Whether the first component of a name is a registry (Docker's rule).
bool LooksLikeDomain(std::string_view first) {
  return first.find('.') != first.npos || first.find(':') != first.npos || first == "localhost" ||
         first.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != first.npos;
}

// Parses "[REGISTRY/]REPOSITORY[:TAG][@DIGEST]"; `registry` (from pyxis's '#') when not empty
// takes the place of the first component's test.
Result<Reference> ParseDockerForm(std::string_view text, std::string_view registry,
                                  std::string_view whole) {
  Reference r;
  std::string_view rest = text;
  if (size_t at = rest.find('@'); at != std::string_view::npos) {
    std::string_view digest = rest.substr(at + 1);
    if (!ValidDigest(digest)) {
      return Invalid("the digest must be sha256: and 64 lowercase hex digits", whole);
    }
    r.digest = std::string(digest);
    rest = rest.substr(0, at);
  }
  // A ':' after the last '/' starts the tag (a ':' before it belongs to the registry's port).
  size_t slash = rest.rfind('/');
  size_t colon = rest.find(':', slash == std::string_view::npos ? 0 : slash + 1);
  if (colon != std::string_view::npos) {
    std::string_view tag = rest.substr(colon + 1);
    if (!ValidTag(tag)) {
      return Invalid("a tag is [A-Za-z0-9_] then up to 127 of [A-Za-z0-9_.-]", whole);
    }
    r.tag = std::string(tag);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return Invalid("no repository name", whole);
  std::string_view path = rest;
  if (!registry.empty()) {
    r.registry = std::string(registry);
  } else if (size_t first = rest.find('/');
             first != std::string_view::npos && LooksLikeDomain(rest.substr(0, first))) {
    r.registry = std::string(rest.substr(0, first));
    path = rest.substr(first + 1);
  } else {
    r.registry = std::string(kDefaultRegistry);
  }
  if (!ValidDomain(r.registry)) return Invalid("bad registry '" + r.registry + "'", whole);
  if (r.registry == "index.docker.io" || r.registry == "registry-1.docker.io") {
    r.registry = std::string(kDefaultRegistry);
  }
  if (path.empty()) return Invalid("no repository name", whole);
  if (path.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string_view::npos) {
    return Status::InvalidArgument(
        "invalid reference format: repository name must be lowercase: '" + std::string(whole) +
        "'");
  }
  size_t start = 0;
  while (true) {
    size_t next = path.find('/', start);
    std::string_view comp =
        path.substr(start, next == std::string_view::npos ? std::string_view::npos : next - start);
    if (!ValidPathComponent(comp)) {
      return Invalid("bad repository component '" + std::string(comp) +
                         "' (lowercase letters and digits, separated by '.', '_', '__' or '-')",
                     whole);
    }
    if (next == std::string_view::npos) break;
    start = next + 1;
  }
  r.repository = std::string(path);
  if (r.registry == kDefaultRegistry && r.repository.find('/') == std::string::npos) {
    r.repository = "library/" + r.repository;
  }
  if (r.registry.size() + 1 + r.repository.size() > kMaxNameLength) {
    return Invalid("the name is longer than 255 characters", whole);
  }
  if (r.tag.empty() && r.digest.empty()) r.tag = "latest";
  return r;
}

}  // namespace

std::string Reference::String() const {
  std::string s = registry + "/" + repository;
  if (!tag.empty()) s += ":" + tag;
  if (!digest.empty()) s += "@" + digest;
  return s;
}

std::string Reference::Transport() const {
  // skopeo's docker transport takes a tag or a digest, not both: the digest is the stronger.
  std::string s = "//" + registry + "/" + repository;
  if (!digest.empty()) return s + "@" + digest;
  return s + ":" + (tag.empty() ? "latest" : tag);
}

bool Reference::OnLoopback() const {
  std::string_view host = registry;
  if (!host.empty() && host.front() == '[') {
    size_t close = host.find(']');
    host = host.substr(1, close == std::string_view::npos ? host.npos : close - 1);
    return host == "::1";
  }
  if (size_t colon = host.find(':'); colon != std::string_view::npos) host = host.substr(0, colon);
  if (host == "localhost") return true;
  if (!host.starts_with("127.")) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3;
}

Result<Reference> ParseReference(std::string_view text) {
  std::string_view whole = text;
  if (text.starts_with("docker://")) text.remove_prefix(9);
  if (text.empty()) return Status::InvalidArgument("invalid reference format: empty image name");
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      return Invalid("spaces and control characters are not allowed", whole);
    }
  }
  // pyxis: [USER@][REGISTRY#]IMAGE[:TAG]. USER@ names a credential; berth reads the user's own
  // auth files instead, so it is dropped. An '@' followed by "algorithm:" is Docker's digest.
  size_t hash = text.find('#');
  size_t at = text.find('@');
  if (at != std::string_view::npos && (hash == std::string_view::npos || at < hash)) {
    std::string_view after = text.substr(at + 1);
    bool is_digest = hash == std::string_view::npos && LooksLikeDigest(after);
    if (!is_digest) {
      std::string_view user = text.substr(0, at);
      if (user.empty() || user.find_first_of("/:#") != std::string_view::npos) {
        return Invalid("bad user name before '@'", whole);
      }
      text = after;
      hash = text.find('#');
    }
  }
  if (hash != std::string_view::npos) {
    std::string_view registry = text.substr(0, hash);
    std::string_view image = text.substr(hash + 1);
    if (registry.empty()) return Invalid("no registry before '#'", whole);
    if (image.find('#') != std::string_view::npos) return Invalid("more than one '#'", whole);
    return ParseDockerForm(image, registry, whole);
  }
  return ParseDockerForm(text, "", whole);
}

bool IsLocalImagePath(std::string_view text) {
  return !text.empty() && text.front() == '/';
}

}  // namespace berth::image
