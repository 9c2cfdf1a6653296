// Status and Result<T>: berth's one error vocabulary.
//
// A Status is either OK or a code plus a message for humans. Codes have one meaning each; they
// are mapped to HTTP statuses and CLI exit codes in one place each (the api and cli layers).
// Nothing in berth throws across a module boundary; the core throws nothing at all.
//
// Thread safety: Status and Result are values; distinct objects may be used from any thread.
#ifndef BERTH_COMMON_STATUS_H_
#define BERTH_COMMON_STATUS_H_

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace berth {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the input is malformed or names something impossible
  kNotFound,            // a named thing does not exist
  kAlreadyExists,       // a create collided with an existing thing
  kPermissionDenied,    // the caller may not do this
  kFailedPrecondition,  // the thing is in a state where this is not allowed
  kResourceExhausted,   // a limit was reached
  kUnavailable,         // try again later
  kInternal,            // a bug or a broken invariant
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message" (for adding context on the way up).
  Status WithContext(std::string_view prefix) const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Result<T> holds a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  // REQUIRES: !status.ok()
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  // The error, or OK when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<1>(v_); }

  // REQUIRES: ok()
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace berth

#define BERTH_STATUS_CONCAT_INNER_(a, b) a##b
#define BERTH_STATUS_CONCAT_(a, b) BERTH_STATUS_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function when `expr` is not OK.
#define BERTH_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::berth::Status berth_status_ = (expr);        \
    if (!berth_status_.ok()) return berth_status_; \
  } while (false)

// BERTH_ASSIGN_OR_RETURN(auto x, ResultExpr()): declares x from the value, or returns the error.
#define BERTH_ASSIGN_OR_RETURN(lhs, expr) \
  BERTH_ASSIGN_OR_RETURN_IMPL_(BERTH_STATUS_CONCAT_(berth_result_, __LINE__), lhs, expr)
#define BERTH_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

#endif  // BERTH_COMMON_STATUS_H_
