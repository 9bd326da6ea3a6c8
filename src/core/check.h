// Argument checks shared by every op: each returns Status::Ok() or an error naming the function
// and the argument, with the message text the JS wrapper also uses (STYLE 4.5).
// Layer: core. ATTN_TRY propagates a failed Status out of the calling function.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/text.h"

#define ATTN_TRY(expr)                                   \
  do {                                                   \
    ::attnscope::core::Status attn_status_ = (expr);     \
    if (!attn_status_.ok()) return attn_status_;         \
  } while (0)

namespace attnscope::core {

// A number as messages quote it, spelled the way the JS wrapper's messages spell it: NaN, Infinity,
// -Infinity, and otherwise the shortest decimal that reads back as the same double ("0.1", "1e+39", "2.5").
// std::to_string would print "nan", "inf" and "0.000000".
inline std::string format_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

// "fn: arg (value) must be a positive integer"
inline Status check_positive(const char* fn, const char* arg, long long value) {
  if (value > 0) return Status::Ok();
  return range_error(fn, arg, std::string(arg) + " (" + std::to_string(value) + ") must be a positive integer");
}

// "fn: arg must not be empty" (an array that needs at least one element)
inline Status check_not_empty(const char* fn, const char* arg, std::size_t size) {
  if (size > 0) return Status::Ok();
  return range_error(fn, arg, std::string(arg) + " must not be empty");
}

// "fn: arg (value) must be a non-negative integer"
inline Status check_non_negative(const char* fn, const char* arg, long long value) {
  if (value >= 0) return Status::Ok();
  return range_error(fn, arg, std::string(arg) + " (" + std::to_string(value) + ") must be a non-negative integer");
}

// "fn: arg must have length expected (what), got actual"
inline Status check_length(const char* fn, const char* arg, std::size_t actual, std::size_t expected,
                           const std::string& what) {
  if (actual == expected) return Status::Ok();
  return range_error(fn, arg,
                     std::string(arg) + " must have length " + std::to_string(expected) + " (" + what + "), got " +
                         std::to_string(actual));
}

// "fn: <what>[i] (value) must be finite" (argument arg); `what` defaults to the argument's name, and names a
// tensor inside it otherwise: "loadBundled: weights: tensor \"w\"[3] (NaN) must be finite".
template <class T>
Status check_finite(const char* fn, const char* arg, std::span<const T> x, const std::string& what) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(static_cast<double>(x[i]))) {
      return range_error(fn, arg, what + "[" + std::to_string(i) + "] (" + format_number(static_cast<double>(x[i])) +
                                      ") must be finite");
    }
  }
  return Status::Ok();
}
template <class T>
Status check_finite(const char* fn, const char* arg, std::span<const T> x) {
  return check_finite(fn, arg, x, arg);
}

// "fn: <what> has shape [16,8], expected [16,16]" (RangeError, argument arg): a tensor of a file against the shape
// the model declares for it.
template <class A, class B>
Status check_shape(const char* fn, const char* arg, const std::string& what, const std::vector<A>& shape,
                   const std::vector<B>& expected) {
  if (std::equal(shape.begin(), shape.end(), expected.begin(), expected.end(),
                 [](A a, B b) { return static_cast<long long>(a) == static_cast<long long>(b); })) {
    return Status::Ok();
  }
  return range_error(fn, arg, what + " has shape " + shape_text(shape) + ", expected " + shape_text(expected));
}

}  // namespace attnscope::core
