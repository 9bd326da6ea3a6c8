// validate.h: argument checks shared by ops/, attention/ and model/ that core/check.h does not cover:
// arrays named with a prefix ("params.self.wq"), length given as a shape, finiteness in one pass.
// Layer: ops (depends on core only). Names are built only when a check fails, so a passing call
// allocates nothing.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "core/check.h"
#include "core/status.h"

namespace attnscope::ops {

// The expected shape of an array, for messages: names "nq*dModel", sizes 4 and 8 -> "nq*dModel = 4*8".
// d1 < 0 means a vector of d0 elements ("dModel = 8").
struct Dims {
  const char* names;
  long long d0;
  long long d1 = -1;
  std::size_t count() const { return static_cast<std::size_t>(d1 < 0 ? d0 : d0 * d1); }
  std::string text() const {
    // Built with append: g++ 12 reports a false -Wrestrict on chained operator+ here (GCC bug 105329).
    std::string s(names);
    s.append(" = ").append(std::to_string(d0));
    if (d1 >= 0) s.append("*").append(std::to_string(d1));
    return s;
  }
};

// True when no element is NaN or ±inf. Branch-free: the largest exponent field (an unsigned max over
// the bit patterns, integer ops only) is all ones iff some element is not finite, so clang vectorizes
// it under -msimd128 without -ffast-math (i32x4.max_u): the 0.8 M inputs of a 128x512 MHA call in
// ~0.1 ms where the early-exit std::isfinite loop took ~0.5 ms. The JS wrapper leaves the finiteness of
// multiHeadAttention / scaledDotProductAttention / softmax inputs to this scan (validate.js).
inline bool all_finite(std::span<const float> x) {
  std::uint32_t max_exp = 0;
  for (const float v : x) {
    std::uint32_t bits;  // std::bit_cast is missing from Emscripten 3.1.6's libc++
    std::memcpy(&bits, &v, sizeof bits);
    const std::uint32_t e = bits & 0x7f800000u;
    max_exp = e > max_exp ? e : max_exp;
  }
  return max_exp != 0x7f800000u;
}

// Finite inputs can still overflow float32 inside a call (|x·W| or q·k beyond 3.4e38), which would
// turn scores into inf and weights into NaN. Ops check what they return and report it instead:
// "fn: output is not finite: an intermediate value overflowed float32 (inputs too large)".
inline core::Status overflow_error(const char* fn, const char* what) {
  return core::range_error(fn, what, std::string(what) +
                                         " is not finite: an intermediate value overflowed float32 (inputs too large)");
}
inline core::Status check_result(const char* fn, const char* what, std::span<const float> x) {
  return all_finite(x) ? core::Status::Ok() : overflow_error(fn, what);
}

enum class Need { kRequired, kOptional };  // kOptional: an empty span means "not given"

// Length (against dims) and finiteness of a float array named prefix+name.
//   "fn: <prefix><name> is required"                              (TypeError, empty required array)
//   "fn: <prefix><name> must have length 32 (nq*dModel = 4*8), got 31"   (RangeError)
//   "fn: <prefix><name>[5] (NaN) must be finite"                  (RangeError)
inline core::Status check_array(const char* fn, const char* prefix, const char* name, std::span<const float> x,
                                const Dims& dims, Need need = Need::kRequired) {
  if (x.empty()) {
    if (need == Need::kOptional) return core::Status::Ok();
    return core::type_error(fn, std::string(prefix) + name, std::string(prefix) + name + " is required");
  }
  if (x.size() != dims.count()) {
    const std::string arg = std::string(prefix) + name;
    return core::check_length(fn, arg.c_str(), x.size(), dims.count(), dims.text());
  }
  if (!all_finite(x)) {
    const std::string arg = std::string(prefix) + name;
    return core::check_finite(fn, arg.c_str(), x);  // finds the first bad element and words the message
  }
  return core::Status::Ok();
}

// An optional 0/1 mask of nq*nk (nonzero = may attend): only its length is checked.
inline core::Status check_mask(const char* fn, const char* name, std::span<const std::uint8_t> mask, long long nq,
                               long long nk, const char* dims_names = "nq*nk") {
  if (mask.empty()) return core::Status::Ok();
  const Dims dims{dims_names, nq, nk};
  return core::check_length(fn, name, mask.size(), dims.count(), dims.text());
}

// "fn: eps (0) must be a positive finite number"
inline core::Status check_positive_finite(const char* fn, const char* name, double value) {
  if (std::isfinite(value) && value > 0.0) return core::Status::Ok();
  return core::range_error(fn, name, std::string(name) + " (" + core::format_number(value) +
                                         ") must be a positive finite number");
}

// "fn: scale (Infinity) must be a finite number"
inline core::Status check_finite_number(const char* fn, const char* name, double value) {
  if (std::isfinite(value)) return core::Status::Ok();
  return core::range_error(fn, name, std::string(name) + " (" + core::format_number(value) + ") must be a finite number");
}

// "fn: dModel (10) must be divisible by numHeads (3)"
inline core::Status check_divisible(const char* fn, int d_model, int num_heads) {
  if (d_model % num_heads == 0) return core::Status::Ok();
  return core::range_error(fn, "dModel", "dModel (" + std::to_string(d_model) + ") must be divisible by numHeads (" +
                                             std::to_string(num_heads) + ")");
}

}  // namespace attnscope::ops
