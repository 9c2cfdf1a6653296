#include "api/json_scan.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace berth::api {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view text) : t_(text) {}

  void SkipSpace() {
    while (i_ < t_.size() &&
           (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) {
      ++i_;
    }
  }
  bool AtEnd() const { return i_ >= t_.size(); }
  char Peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
  size_t pos() const { return i_; }

  Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) return Error(std::string("expected '") + c + "'");
    ++i_;
    return Status::Ok();
  }

  // A string starting at the current '"'; *raw gets its text between the quotes, undecoded.
  Status String(std::string_view* raw) {
    if (Peek() != '"') return Error("expected a string");
    const size_t start = ++i_;
    while (i_ < t_.size()) {
      // Many plain bytes at a time (most of a string: an environment's values, a script): 16
      // with SSE2, which also finds where the first special byte is; 8 without, and for what is
      // left of the text.
#if defined(__SSE2__)
      while (i_ + 16 <= t_.size()) {
        const size_t plain = PlainPrefix16(t_.data() + i_);
        i_ += plain;
        if (plain < 16) break;
      }
#endif
      while (i_ + 8 <= t_.size() && PlainWord(t_.data() + i_)) i_ += 8;
      if (i_ >= t_.size()) break;
      const char c = t_[i_];
      if (c == '\\') {
        i_ += 2;
        continue;
      }
      if (c == '"') {
        if (raw != nullptr) *raw = t_.substr(start, i_ - start);
        ++i_;
        return Status::Ok();
      }
      if (static_cast<unsigned char>(c) < 0x20) return Error("a control character in a string");
      ++i_;
    }
    return Error("the text ends inside a string");
  }

  // Any value at the current position (after spaces); *span gets its text.
  Status Value(std::string_view* span) {
    SkipSpace();
    const size_t start = i_;
    const char c = Peek();
    if (c == '"') {
      BERTH_RETURN_IF_ERROR(String(nullptr));
    } else if (c == '{' || c == '[') {
      BERTH_RETURN_IF_ERROR(Nested());
    } else {
      while (i_ < t_.size()) {
        const char d = t_[i_];
        if (d == ',' || d == '}' || d == ']' || d == ' ' || d == '\n' || d == '\r' || d == '\t') {
          break;
        }
        ++i_;
      }
      if (i_ == start) return Error("expected a value");
    }
    *span = t_.substr(start, i_ - start);
    return Status::Ok();
  }

  Status Error(const std::string& what) const {
    return Status::InvalidArgument("not a JSON list: " + what + " at byte " + std::to_string(i_));
  }

 private:
  // An object or array at the current '{' or '[', to its matching close.
  Status Nested() {
    std::string stack;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '"') {
        BERTH_RETURN_IF_ERROR(String(nullptr));
        continue;
      }
      if (c == '{' || c == '[') {
        stack.push_back(c == '{' ? '}' : ']');
      } else if (c == '}' || c == ']') {
        if (stack.empty() || stack.back() != c) return Error(std::string("unexpected '") + c + "'");
        stack.pop_back();
        if (stack.empty()) {
          ++i_;
          return Status::Ok();
        }
      }
      ++i_;
    }
    return Error("the text ends inside an object or array");
  }

  // Whether none of the 8 bytes at `p` ends or escapes a string or is a control character:
  // no '"', no '\\', none below 0x20 (bytes with the high bit set are plain).
  static bool PlainWord(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof(v));
    constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
    auto has_zero = [&](uint64_t x) { return ((x - kOnes) & ~x & kHigh) != 0; };
    const bool below_space = ((v - kOnes * 0x20) & ~v & kHigh) != 0;
    return !below_space && !has_zero(v ^ (kOnes * '"')) && !has_zero(v ^ (kOnes * '\\'));
  }

#if defined(__SSE2__)
  // How many of the 16 bytes at `p` are plain (as PlainWord says), counted from the first.
  static size_t PlainPrefix16(const char* p) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    const __m128i escape = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    // Below 0x20 (unsigned): the byte is its own minimum with 0x1f.
    const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
    const auto special = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, escape), control)));
    return special == 0 ? 16 : static_cast<size_t>(__builtin_ctz(special));
  }
#endif

  std::string_view t_;
  size_t i_ = 0;
};

// The elements of a sequence whose opening bracket was just read, up to `close`, separated by
// commas: each() reads one element.
template <typename Each>
Status Sequence(Scanner& s, char close, Each each) {
  s.SkipSpace();
  for (bool first = true; s.Peek() != close; first = false) {
    if (!first) BERTH_RETURN_IF_ERROR(s.Expect(','));
    BERTH_RETURN_IF_ERROR(each());
    s.SkipSpace();
    if (s.AtEnd()) return s.Error(std::string("the text ends before '") + close + "'");
  }
  return s.Expect(close);
}

// The raw (undecoded) text of a key, decoded; nullopt when its escapes are not JSON's.
// Plain ASCII needs no decoding; escapes and other bytes (UTF-8, checked) go through a parser.
bool PlainKey(std::string_view raw) {
  return std::all_of(raw.begin(), raw.end(),
                     [](char c) { return c != '\\' && static_cast<unsigned char>(c) < 0x80; });
}

std::optional<std::string> KeyText(std::string_view raw) {
  if (PlainKey(raw)) return std::string(raw);
  nlohmann::json k = nlohmann::json::parse("\"" + std::string(raw) + "\"", nullptr, false);
  if (!k.is_string()) return std::nullopt;
  return k.get<std::string>();
}

// Whether the raw (undecoded) key text equals `key`.
bool KeyIs(std::string_view raw, std::string_view key) {
  if (raw.find('\\') == std::string_view::npos) return raw == key;
  const std::optional<std::string> k = KeyText(raw);
  return k.has_value() && *k == key;
}

// The elements of the array at the current position, each one's text handed to fn.
Status Elements(Scanner& s, const std::function<Status(std::string_view item)>& fn) {
  BERTH_RETURN_IF_ERROR(s.Expect('['));
  return Sequence(s, ']', [&]() -> Status {
    std::string_view value;
    BERTH_RETURN_IF_ERROR(s.Value(&value));
    return fn(value);
  });
}

// The members of the object at the current position: each one's raw (undecoded) key is handed
// to member(), which reads its value.
template <typename Member>
Status Members(Scanner& s, Member member) {
  BERTH_RETURN_IF_ERROR(s.Expect('{'));
  return Sequence(s, '}', [&]() -> Status {
    s.SkipSpace();
    std::string_view name;
    BERTH_RETURN_IF_ERROR(s.String(&name));
    BERTH_RETURN_IF_ERROR(s.Expect(':'));
    return member(name);
  });
}

// Nothing but spaces after what `s` has read.
Status AtEndOfText(Scanner& s) {
  s.SkipSpace();
  if (!s.AtEnd()) return s.Error("text after the value");
  return Status::Ok();
}

}  // namespace

Status ForEachArrayItem(std::string_view doc, std::string_view key,
                        const std::function<Status(std::string_view item)>& fn) {
  Scanner s(doc);
  BERTH_RETURN_IF_ERROR(Members(s, [&](std::string_view name) -> Status {
    std::string_view value;
    if (!KeyIs(name, key)) return s.Value(&value);
    return Elements(s, fn);
  }));
  return AtEndOfText(s);
}

Status ForEachMember(
    std::string_view doc,
    const std::function<Status(std::string_view key, std::string_view value)>& fn) {
  Scanner s(doc);
  auto member = [&](std::string_view name) -> Status {
    std::string_view value;
    BERTH_RETURN_IF_ERROR(s.Value(&value));
    if (PlainKey(name)) return fn(name, value);
    const std::optional<std::string> key = KeyText(name);
    if (!key.has_value()) return s.Error("a key that is not a JSON string");
    return fn(*key, value);
  };
  BERTH_RETURN_IF_ERROR(Members(s, member));
  return AtEndOfText(s);
}

bool JsonStringValue(std::string_view text, std::string* out) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return false;
  const std::string_view inner = text.substr(1, text.size() - 2);
  // Plain ASCII as it is; escapes and other bytes (UTF-8, checked) through the parser.
  if (std::all_of(inner.begin(), inner.end(), [](char c) {
        return c != '\\' && c != '"' && static_cast<unsigned char>(c) >= 0x20 &&
               static_cast<unsigned char>(c) < 0x80;
      })) {
    out->assign(inner);
    return true;
  }
  nlohmann::json s = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!s.is_string()) return false;
  *out = s.get<std::string>();
  return true;
}

Status ForEachElement(std::string_view array,
                      const std::function<Status(std::string_view item)>& fn) {
  Scanner s(array);
  BERTH_RETURN_IF_ERROR(Elements(s, fn));
  return AtEndOfText(s);
}

Result<size_t> CountArrayItems(std::string_view doc, std::string_view key) {
  size_t count = 0;
  const Status walked = ForEachArrayItem(doc, key, [&](std::string_view) {
    ++count;
    return Status::Ok();
  });
  if (!walked.ok()) return walked;
  return count;
}

Status ForEachArrayValue(std::string_view doc, std::string_view key,
                         const std::function<void(const nlohmann::json& value)>& fn) {
  nlohmann::json value;  // one element's tree at a time
  return ForEachArrayItem(doc, key, [&](std::string_view item) {
    value = nlohmann::json::parse(item, nullptr, /*allow_exceptions=*/false);
    fn(value);
    return Status::Ok();
  });
}

}  // namespace berth::api
