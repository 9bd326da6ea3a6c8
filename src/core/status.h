// Status and Result<T>: how every validating function in src/ reports failure.
// Layer: core (depends on nothing). The core never throws, asserts or aborts on user input:
// errors are values that the bindings turn into JS Errors (see STYLE 4.5).
#pragma once

#include <string>
#include <utility>

namespace attnscope::core {

// Which JS error class the bindings raise: kType -> TypeError (missing / mistyped argument),
// kRange -> RangeError (size, length or value out of range), kInvalid -> Error (anything else).
enum class ErrorKind : int { kOk = 0, kType = 1, kRange = 2, kInvalid = 3 };

struct Status {
  ErrorKind kind = ErrorKind::kOk;
  std::string function;  // public (JS) name of the failing call, e.g. "multiHeadAttention"
  std::string argument;  // argument name as in the JS contract, e.g. "dModel"
  std::string message;   // full text: "multiHeadAttention: dModel (10) must be divisible by numHeads (3)"

  bool ok() const { return kind == ErrorKind::kOk; }
  static Status Ok() { return {}; }
};

// Builds an error whose message is "<function>: <text>". By convention `text` starts with the
// argument's name: "<arg> (<value>) must be ...".
inline Status make_error(ErrorKind kind, std::string function, std::string argument, const std::string& text) {
  Status s;
  s.kind = kind;
  s.message = function + ": " + text;
  s.function = std::move(function);
  s.argument = std::move(argument);
  return s;
}
inline Status type_error(std::string fn, std::string arg, const std::string& text) {
  return make_error(ErrorKind::kType, std::move(fn), std::move(arg), text);
}
inline Status range_error(std::string fn, std::string arg, const std::string& text) {
  return make_error(ErrorKind::kRange, std::move(fn), std::move(arg), text);
}
inline Status invalid_error(std::string fn, std::string arg, const std::string& text) {
  return make_error(ErrorKind::kInvalid, std::move(fn), std::move(arg), text);
}

// A value or the Status explaining why there is none.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return value_; }
  const T& value() const& { return value_; }
  T&& value() && { return std::move(value_); }

 private:
  Status status_;
  T value_{};
};

}  // namespace attnscope::core
