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

  // The message without its "<function>: " prefix: what went wrong with which argument. Layers that are
  // called under several public names (the model: createModel / loadPretrained / loadBundled, run /
  // generate) report an operation in `function`, and the bindings build the public message once from
  // their own name and this detail.
  std::string detail() const {
    const std::string prefix = function + ": ";
    return message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size()) : message;
  }
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

// The same error reported by another call about another argument: function becomes `function`, and the
// argument the detail starts with (by convention "<arg> ...") becomes `argument`, e.g. a tokenizer's
// "encode: text is not valid UTF-8 (...)" seen by the model's run of the source:
// readdress(s, "run", "source") -> "run: source is not valid UTF-8 (...)".
inline Status readdress(const Status& s, std::string function, std::string argument) {
  std::string d = s.detail();
  if (!s.argument.empty() && d.compare(0, s.argument.size(), s.argument) == 0) {
    d = argument + d.substr(s.argument.size());
  }
  return make_error(s.kind, std::move(function), std::move(argument), d);
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
