// validate.h: argument checks shared by ops/, attention/ and model/ that core/check.h does not cover:
// arrays named with a prefix ("params.self.wq"), length given as a shape, finiteness in one pass.
// Layer: ops (depends on core only). Names are built only when a check fails, so a passing call
// allocates nothing.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
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

enum class Need { kRequired, kOptional };  // kOptional: an empty span means "not given"

// Length (against dims) and finiteness of a float array named prefix+name.
//   "fn: <prefix><name> is required"                              (TypeError, empty required array)
//   "fn: <prefix><name> must have length 32 (nq*dModel = 4*8), got 31"   (RangeError)
//   "fn: <prefix><name>[5] (nan) must be finite"                  (RangeError)
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
  for (const float v : x) {
    if (!std::isfinite(v)) {
      const std::string arg = std::string(prefix) + name;
      return core::check_finite(fn, arg.c_str(), x);
    }
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
  return core::range_error(fn, name, std::string(name) + " (" + std::to_string(value) +
                                         ") must be a positive finite number");
}

// "fn: scale (inf) must be a finite number"
inline core::Status check_finite_number(const char* fn, const char* name, double value) {
  if (std::isfinite(value)) return core::Status::Ok();
  return core::range_error(fn, name, std::string(name) + " (" + std::to_string(value) + ") must be a finite number");
}

// "fn: dModel (10) must be divisible by numHeads (3)"
inline core::Status check_divisible(const char* fn, int d_model, int num_heads) {
  if (d_model % num_heads == 0) return core::Status::Ok();
  return core::range_error(fn, "dModel", "dModel (" + std::to_string(d_model) + ") must be divisible by numHeads (" +
                                             std::to_string(num_heads) + ")");
}

}  // namespace attnscope::ops
