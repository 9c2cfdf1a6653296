// JsonText: JSON written straight into a string, key by key, with the bytes nlohmann's dump()
// gives for the same values (no spaces, strings escaped the same way with UTF-8 kept as it is,
// numbers printed as it prints them), for texts the controller writes on hot paths (a record
// for each change of a job, the answers of list views) without building a tree first.
// Callers give an object's keys in sorted order, as nlohmann's objects keep theirs.
#ifndef BERTH_CONTROLLER_JSON_TEXT_H_
#define BERTH_CONTROLLER_JSON_TEXT_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace berth::controller {

class JsonText {
 public:
  explicit JsonText(std::string* out) : out_(out) {}

  void Open() {
    out_->push_back('{');
    first_ = true;
  }
  void Close() {
    out_->push_back('}');
    first_ = false;
  }
  void OpenArray() {
    out_->push_back('[');
    first_ = true;
  }
  void CloseArray() {
    out_->push_back(']');
    first_ = false;
  }
  // Before each element of an array (a comma after the first).
  void Next() {
    if (!first_) out_->push_back(',');
    first_ = false;
  }
  void Key(std::string_view key) {
    Next();
    String(key);
    out_->push_back(':');
  }
  void String(std::string_view s);
  void Int(int64_t v);
  void Bool(bool v) { out_->append(v ? "true" : "false"); }
  void Double(double v);
  void Value(const nlohmann::json& v);

 private:
  std::string* out_;
  bool first_ = true;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_JSON_TEXT_H_
