// q8-wasmsimd.cpp: SIMD128 GEMV over 8-bit block-quantised weights (kernels.h *_q8): per column, each block of 32
// int8 weights is two v128 loads, widened i8 -> i16 -> i32 -> f32 in registers, multiplied by the block's 32 x
// values and summed into one f32x4, then scaled by the block's scale; one horizontal sum per column. Layer:
// kernels; -msimd128 only. (The GEMM's dequantisation happens while packing: f32-gemm-4x8-wasmsimd.cpp.)
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include "kernels/kernel_list.h"

namespace attnscope::kernels {
namespace {

// 16 int8 -> four f32x4 products with x[0..16) summed into acc
inline v128_t q8_madd16(v128_t q, const float* x, v128_t acc) {
  const v128_t lo = wasm_i16x8_extend_low_i8x16(q), hi = wasm_i16x8_extend_high_i8x16(q);
  acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_v128_load(x), wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(lo))));
  acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_v128_load(x + 4), wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(lo))));
  acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_v128_load(x + 8), wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(hi))));
  acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_v128_load(x + 12), wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(hi))));
  return acc;
}

}  // namespace

void q8_gemv__wasmsimd(int k, int n, const float* x, const std::int8_t* q, const float* scales, int ldb,
                       const float* bias, float* y) {
  const int blocks = k / kQ8Block;  // whole blocks; a partial last one (k % 32) is added per column below
  const int tail = k - blocks * kQ8Block;
  const float* xt = x + blocks * kQ8Block;
  // the partial block of column j: its tail weights times x's last values, times its scale
  const auto tail_dot = [&](int j) {
    if (tail == 0) return 0.0f;
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(blocks) * ldb + j;
    float dot = 0.0f;
    for (int t = 0; t < tail; ++t) dot += xt[t] * static_cast<float>(q[at * kQ8Block + t]);
    return dot * scales[at];
  };
  int j = 0;
  // 4 columns at a time: their blocks of one k range are 128 contiguous bytes (two cache lines, both used)
  for (; j + 4 <= n; j += 4) {
    v128_t acc0 = wasm_f32x4_splat(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (int b = 0; b < blocks; ++b) {
      const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(b) * ldb + j;
      const std::int8_t* qb = q + at * kQ8Block;
      const float* xb = x + b * kQ8Block;
      const float* sb = scales + at;
      const v128_t z = wasm_f32x4_splat(0.0f);
      acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(q8_madd16(wasm_v128_load(qb + 16), xb + 16, q8_madd16(wasm_v128_load(qb), xb, z)), wasm_v128_load32_splat(sb)));
      acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(q8_madd16(wasm_v128_load(qb + 48), xb + 16, q8_madd16(wasm_v128_load(qb + 32), xb, z)), wasm_v128_load32_splat(sb + 1)));
      acc2 = wasm_f32x4_add(acc2, wasm_f32x4_mul(q8_madd16(wasm_v128_load(qb + 80), xb + 16, q8_madd16(wasm_v128_load(qb + 64), xb, z)), wasm_v128_load32_splat(sb + 2)));
      acc3 = wasm_f32x4_add(acc3, wasm_f32x4_mul(q8_madd16(wasm_v128_load(qb + 112), xb + 16, q8_madd16(wasm_v128_load(qb + 96), xb, z)), wasm_v128_load32_splat(sb + 3)));
    }
    // transpose-add: lane c of the result = the sum of acc_c's lanes
    const v128_t t01lo = wasm_i32x4_shuffle(acc0, acc1, 0, 4, 1, 5), t01hi = wasm_i32x4_shuffle(acc0, acc1, 2, 6, 3, 7);
    const v128_t t23lo = wasm_i32x4_shuffle(acc2, acc3, 0, 4, 1, 5), t23hi = wasm_i32x4_shuffle(acc2, acc3, 2, 6, 3, 7);
    const v128_t s01 = wasm_f32x4_add(t01lo, t01hi), s23 = wasm_f32x4_add(t23lo, t23hi);  // [a0 b0 a1 b1] pairs
    v128_t sum = wasm_f32x4_add(wasm_i32x4_shuffle(s01, s23, 0, 1, 4, 5), wasm_i32x4_shuffle(s01, s23, 2, 3, 6, 7));
    if (bias != nullptr) sum = wasm_f32x4_add(sum, wasm_v128_load(bias + j));
    if (tail != 0) {
      sum = wasm_f32x4_add(sum, wasm_f32x4_make(tail_dot(j), tail_dot(j + 1), tail_dot(j + 2), tail_dot(j + 3)));
    }
    wasm_v128_store(y + j, sum);
  }
  for (; j < n; ++j) {
    v128_t acc = wasm_f32x4_splat(0.0f);
    for (int b = 0; b < blocks; ++b) {
      const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(b) * ldb + j;
      const std::int8_t* qb = q + at * kQ8Block;
      const float* xb = x + b * kQ8Block;
      const v128_t dot = q8_madd16(wasm_v128_load(qb + 16), xb + 16, q8_madd16(wasm_v128_load(qb), xb, wasm_f32x4_splat(0.0f)));
      acc = wasm_f32x4_add(acc, wasm_f32x4_mul(dot, wasm_v128_load32_splat(scales + at)));
    }
    y[j] = (bias != nullptr ? bias[j] : 0.0f) + ((wasm_f32x4_extract_lane(acc, 0) + wasm_f32x4_extract_lane(acc, 1)) +
                                                 (wasm_f32x4_extract_lane(acc, 2) + wasm_f32x4_extract_lane(acc, 3))) +
           tail_dot(j);
  }
}

}  // namespace attnscope::kernels

#endif  // defined(__wasm_simd128__)
