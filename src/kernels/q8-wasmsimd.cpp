// q8-wasmsimd.cpp: the SIMD128 Q8_0 GEMV of a decoding step (kernels.h QuantizeQ8Fn / GemvQ8Fn), in integers as
// llama.cpp's: the activation row is quantised to Q8_0 once per GEMV (q8_quantize__wasmsimd), then each 32-weight
// block's dot with it is exact int32: the weights' int8 pairs, read as i16x8, are split by a shift and a mask into
// 256 × their even and odd values and multiplied pairwise-added with the x block's by i32x4.dot_i16x8_s (pmaddwd on
// x64), four per block (block_dot4); 4 columns at a time (their blocks of one k range: 128
// contiguous bytes), their four i32x4 partial sums transposed-added to one i32x4 of block sums, converted once and
// multiplied by the 4 columns' scales × the activation block's scale, added to y. One block row (all columns of one
// k range, contiguous) after the other, so the weights are read in memory order; the x block's i16 halves are
// shared by all columns. Layer: kernels; -msimd128 only. (The GEMM's dequantisation happens while packing:
// f32-gemm-4x8-wasmsimd.cpp.)
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include "kernels/kernel_list.h"
#include "kernels/q8-block.h"

namespace attnscope::kernels {
namespace {

// The x block's 32 int8 as i16x8: its even-indexed values (x[0], x[2], … of each 16-byte half) and its odd ones,
// sign-extended, once per block for all columns.
struct XBlock {
  v128_t e0, o0, e1, o1;
  explicit XBlock(const std::int8_t* x) {
    const v128_t x0 = wasm_v128_load(x), x1 = wasm_v128_load(x + 16);
    e0 = wasm_i16x8_shr(wasm_i16x8_shl(x0, 8), 8);
    o0 = wasm_i16x8_shr(x0, 8);
    e1 = wasm_i16x8_shr(wasm_i16x8_shl(x1, 8), 8);
    o1 = wasm_i16x8_shr(x1, 8);
  }
};

// One weight block (32 int8 at w) against the x block: four int32 partial sums whose total is 256 × the block dot.
// Read as i16x8, lane i of a 16-byte half holds w[2i] in its low byte and w[2i + 1] in its high byte: shifting left
// by 8 gives 256 · w[2i], masking the low byte off gives 256 · w[2i + 1], both exact in int16 (|w| ≤ 128), one
// operation each instead of a sign extension (two on x64 for a high half); i32x4.dot_i16x8_s (pmaddwd) then pairs
// them with the x block's even / odd values. |256 · Σ| ≤ 256 · 32 · 128 · 127 < 2^31: exact in int32.
inline v128_t block_dot4(const std::int8_t* w, const XBlock& x) {
  const v128_t w0 = wasm_v128_load(w), w1 = wasm_v128_load(w + 16);
  const v128_t hi = wasm_i16x8_splat(static_cast<std::int16_t>(0xFF00));
  const v128_t s0 = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_shl(w0, 8), x.e0),
                                   wasm_i32x4_dot_i16x8(wasm_v128_and(w0, hi), x.o0));
  const v128_t s1 = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_shl(w1, 8), x.e1),
                                   wasm_i32x4_dot_i16x8(wasm_v128_and(w1, hi), x.o1));
  return wasm_i32x4_add(s0, s1);
}

inline std::int32_t hsum_i32(v128_t v) {
  return (wasm_i32x4_extract_lane(v, 0) + wasm_i32x4_extract_lane(v, 1)) +
         (wasm_i32x4_extract_lane(v, 2) + wasm_i32x4_extract_lane(v, 3));
}

}  // namespace

void q8_quantize__wasmsimd(int k, const float* x, std::int8_t* xq, float* xs) {
  const int whole = k / kQ8Block;
  for (int b = 0; b < whole; ++b) {
    const float* xb = x + b * kQ8Block;
    v128_t v[8];
    v128_t m = wasm_f32x4_splat(0.0f);
    for (int i = 0; i < 8; ++i) {
      v[i] = wasm_v128_load(xb + 4 * i);
      m = wasm_f32x4_max(m, wasm_f32x4_abs(v[i]));
    }
    m = wasm_f32x4_max(m, wasm_i32x4_shuffle(m, m, 2, 3, 0, 1));
    m = wasm_f32x4_max(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
    const float d = wasm_f32x4_extract_lane(m, 0) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    xs[b] = d;
    const v128_t vid = wasm_f32x4_splat(id);
    v128_t q[8];
    for (int i = 0; i < 8; ++i) q[i] = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(v[i], vid)));
    // |q| <= 127 (x · id rounds to at most 127): the saturating narrows are exact
    const v128_t h0 = wasm_i16x8_narrow_i32x4(q[0], q[1]), h1 = wasm_i16x8_narrow_i32x4(q[2], q[3]);
    const v128_t h2 = wasm_i16x8_narrow_i32x4(q[4], q[5]), h3 = wasm_i16x8_narrow_i32x4(q[6], q[7]);
    wasm_v128_store(xq + b * kQ8Block, wasm_i8x16_narrow_i16x8(h0, h1));
    wasm_v128_store(xq + b * kQ8Block + 16, wasm_i8x16_narrow_i16x8(h2, h3));
  }
  if (whole * kQ8Block < k) {  // the partial last block, zero-padded, as the scalar twin
    q8_quantize__scalar(k - whole * kQ8Block, x + whole * kQ8Block, xq + whole * kQ8Block, xs + whole);
  }
}

void q8_gemv_4__wasmsimd(int k, int n, const std::int8_t* xq, const float* xs, const std::int8_t* q,
                         const float* scales, int ldb, const float* bias, float* y) {
  const int blocks = (k + kQ8Block - 1) / kQ8Block;
  const int n4 = n - n % 4;
  for (int j = 0; j < n; ++j) y[j] = 0.0f;
  // block row by block row: the blocks of one k range are contiguous over the columns, so W streams in memory order
  // (a column-at-a-time walk strides by ldb·32 bytes per block and ran 2.3x slower); y[j] takes the terms in the
  // order b = 0, 1, … as the scalar twin's accumulator does
  for (int b = 0; b < blocks; ++b) {
    const XBlock x(xq + b * kQ8Block);
    const v128_t xsb = wasm_v128_load32_splat(xs + b);
    const std::int8_t* qb = q + static_cast<std::ptrdiff_t>(b) * ldb * kQ8Block;
    const float* sb = scales + static_cast<std::ptrdiff_t>(b) * ldb;
    for (int j = 0; j < n4; j += 4) {
      const std::int8_t* w = qb + static_cast<std::ptrdiff_t>(j) * kQ8Block;
      const v128_t s0 = block_dot4(w, x), s1 = block_dot4(w + 32, x), s2 = block_dot4(w + 64, x), s3 = block_dot4(w + 96, x);
      // transpose-add: lane c = the sum of s_c's lanes (exact: int32)
      const v128_t t01 = wasm_i32x4_add(wasm_i32x4_shuffle(s0, s1, 0, 4, 1, 5), wasm_i32x4_shuffle(s0, s1, 2, 6, 3, 7));
      const v128_t t23 = wasm_i32x4_add(wasm_i32x4_shuffle(s2, s3, 0, 4, 1, 5), wasm_i32x4_shuffle(s2, s3, 2, 6, 3, 7));
      const v128_t sums = wasm_i32x4_add(wasm_i32x4_shuffle(t01, t23, 0, 1, 4, 5), wasm_i32x4_shuffle(t01, t23, 2, 3, 6, 7));
      const v128_t scale = wasm_f32x4_mul(wasm_v128_load(sb + j), xsb);
      // float(256 · dot) · 2^-8 = float(dot) exactly (an integer, never subnormal): the scalar twin's value
      const v128_t dots = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sums), wasm_f32x4_splat(0x1.0p-8f));
      wasm_v128_store(y + j, wasm_f32x4_add(wasm_v128_load(y + j), wasm_f32x4_mul(dots, scale)));
    }
    for (int j = n4; j < n; ++j) {
      y[j] += static_cast<float>(hsum_i32(block_dot4(qb + static_cast<std::ptrdiff_t>(j) * kQ8Block, x)) / 256) * (sb[j] * xs[b]);
    }
  }
  if (bias != nullptr) {
    for (int j = 0; j < n; ++j) y[j] += bias[j];
  }
}

}  // namespace attnscope::kernels

#endif  // defined(__wasm_simd128__)
