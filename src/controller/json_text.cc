#include "controller/json_text.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace berth::controller {

void JsonText::String(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out_->push_back('"');
  size_t plain = 0;  // where the run of bytes that need no escape starts
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_->append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out_->append("\\\"");
        break;
      case '\\':
        out_->append("\\\\");
        break;
      case '\b':
        out_->append("\\b");
        break;
      case '\f':
        out_->append("\\f");
        break;
      case '\n':
        out_->append("\\n");
        break;
      case '\r':
        out_->append("\\r");
        break;
      case '\t':
        out_->append("\\t");
        break;
      default: {
        const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out_->append(u, sizeof(u));
      }
    }
  }
  out_->append(s.data() + plain, s.size() - plain);
  out_->push_back('"');
}

void JsonText::Int(int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out_->append(buf, static_cast<size_t>(end - buf));
}

void JsonText::Double(double v) {
  // A whole number of small size prints as nlohmann prints it ("-1.0"); any other goes
  // through nlohmann itself.
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e15 &&
      !(v == 0 && std::signbit(v))) {
    Int(static_cast<int64_t>(v));
    out_->append(".0");
    return;
  }
  out_->append(nlohmann::json(v).dump());
}

void JsonText::Value(const nlohmann::json& v) {
  out_->append(v.dump());
}

}  // namespace berth::controller
