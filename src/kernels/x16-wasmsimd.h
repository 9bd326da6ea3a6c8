// x16-wasmsimd.h: 8 BF16 / F16 bit patterns (one v128) to two f32x4, in registers. Layer: kernels; -msimd128 only.
// BF16: interleave with zero halves (one i16x8.shuffle each), i.e. a 16-bit shift, exact. F16: the same bit
// manipulation as x16-widen.h's scalar twin, lane-wise (normals: shift + rebias + ×2^-112; subnormals: magic
// number 0.5 subtracted; selected by an unsigned compare), exact for normals, subnormals and infinities.
#pragma once
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include <cstddef>
#include <cstdint>

namespace attnscope::kernels::x16 {

struct Bf16x8 {
  static v128_t lo(v128_t h) { return wasm_i16x8_shuffle(wasm_i16x8_splat(0), h, 0, 8, 1, 9, 2, 10, 3, 11); }
  static v128_t hi(v128_t h) { return wasm_i16x8_shuffle(wasm_i16x8_splat(0), h, 4, 12, 5, 13, 6, 14, 7, 15); }
};

// w: four halves in the TOP 16 bits of each 32-bit lane (low halves zero).
inline v128_t f16_top_to_f32x4(v128_t w) {
  const v128_t sign = wasm_v128_and(w, wasm_i32x4_splat(static_cast<int>(0x80000000u)));
  const v128_t two_w = wasm_i32x4_add(w, w);
  const v128_t normalized = wasm_f32x4_mul(wasm_i32x4_add(wasm_u32x4_shr(two_w, 4), wasm_i32x4_splat(0xE0 << 23)),
                                           wasm_f32x4_splat(0x1.0p-112f));
  const v128_t denormalized =
      wasm_f32x4_sub(wasm_v128_or(wasm_u32x4_shr(two_w, 17), wasm_i32x4_splat(126 << 23)), wasm_f32x4_splat(0.5f));
  const v128_t is_denormal = wasm_u32x4_lt(two_w, wasm_i32x4_splat(1 << 27));
  return wasm_v128_or(sign, wasm_v128_bitselect(denormalized, normalized, is_denormal));
}

struct F16x8 {
  static v128_t lo(v128_t h) { return f16_top_to_f32x4(Bf16x8::lo(h)); }
  static v128_t hi(v128_t h) { return f16_top_to_f32x4(Bf16x8::hi(h)); }
};

// Loaders of 8 consecutive weights as two f32x4 (elements 0-3, 4-7) for row_dots below: half-width through a widener
// above (one v128 load), float32 as two loads. `one` widens a single weight (the tails).
template <class V, class H>
struct HalfLoad8 {
  using T = std::uint16_t;
  static void load(const T* p, v128_t& lo, v128_t& hi) {
    const v128_t w = wasm_v128_load(p);
    lo = V::lo(w);
    hi = V::hi(w);
  }
  static float one(T w) { return H::widen(w); }
};
struct F32Load8 {
  using T = float;
  static void load(const T* p, v128_t& lo, v128_t& hi) {
    lo = wasm_v128_load(p);
    hi = wasm_v128_load(p + 4);
  }
  static float one(T w) { return w; }
};

// A tied head's logits (kernels.h RowDotsFn / RowDotsHalfFn): out[r] = h · row r of t, R rows at a time, so each load
// of h (8 floats a step) serves R rows and R rows of the table stream at once; a row's partial sums are its own two
// f32x4 (elements 8s..8s+3 and 8s+4..8s+7 of step s), reduced as (lo + hi), lanes (0 + 1) + (2 + 3), then its scalar
// tail in order. The operations on a row never depend on R or on the rows beside it, so row_dots<4> and row_dots<1>
// give it the same bits, and so does any split of the rows over threads. 4 rows: 8 accumulators, 2 of h and the
// loaded weights fit x64's 16 vector registers. One row a call of gemv-like kernels read ~6 GB/s of a BF16 table
// against ~7 GB/s for the layers' GEMV (README, issue 30's "2 threads vs 1").
template <int R, class L>
void row_dots_group(std::size_t n, const float* h, const typename L::T* t, std::size_t ldt, float* out) {
  v128_t lo[R], hi[R];
  const typename L::T* row[R];
  for (int r = 0; r < R; ++r) {
    lo[r] = hi[r] = wasm_f32x4_splat(0.0f);
    row[r] = t + static_cast<std::size_t>(r) * ldt;
  }
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t h0 = wasm_v128_load(h + i), h1 = wasm_v128_load(h + i + 4);
    for (int r = 0; r < R; ++r) {
      v128_t w0, w1;
      L::load(row[r] + i, w0, w1);
      lo[r] = wasm_f32x4_add(lo[r], wasm_f32x4_mul(h0, w0));
      hi[r] = wasm_f32x4_add(hi[r], wasm_f32x4_mul(h1, w1));
    }
  }
  for (int r = 0; r < R; ++r) {
    const v128_t s = wasm_f32x4_add(lo[r], hi[r]);
    float acc = (wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1)) +
                (wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3));
    for (std::size_t j = i; j < n; ++j) acc += h[j] * L::one(row[r][j]);
    out[r] = acc;
  }
}

template <class L>
void row_dots(std::size_t rows, std::size_t n, const float* h, const typename L::T* t, std::size_t ldt, float* out) {
  std::size_t r = 0;
  for (; r + 4 <= rows; r += 4) row_dots_group<4, L>(n, h, t + r * ldt, ldt, out + r);
  for (; r < rows; ++r) row_dots_group<1, L>(n, h, t + r * ldt, ldt, out + r);
}

}  // namespace attnscope::kernels::x16

#endif  // defined(__wasm_simd128__)
