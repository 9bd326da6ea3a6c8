// q8-block.h: the scalar pieces of the integer Q8_0 GEMV (kernels.h QuantizeQ8Fn / GemvQ8Fn), shared by the scalar
// kernels and the SIMD128 ones' tails, so both ISAs round and sum the same way. Layer: kernels.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace attnscope::kernels {

// round to nearest, ties to even (wasm's f32.nearest / f32x4.nearest, IEEE's default mode), saturated to
// [-127, 127]; NaN gives 0 (as i32x4.trunc_sat_f32x4_s does)
inline std::int8_t q8_round(float v) {
  if (!(v == v)) return 0;
  float r = __builtin_nearbyintf(v);
  r = r < -127.0f ? -127.0f : (r > 127.0f ? 127.0f : r);
  return static_cast<std::int8_t>(r);
}

// Σ_t a[t] · b[t] over one block of 32, exact in int32 (|Σ| ≤ 32 · 128 · 128)
inline std::int32_t q8_block_dot(const std::int8_t* a, const std::int8_t* b) {
  std::int32_t s = 0;
  for (int t = 0; t < kQ8Block; ++t) s += static_cast<std::int32_t>(a[t]) * static_cast<std::int32_t>(b[t]);
  return s;
}

}  // namespace attnscope::kernels
