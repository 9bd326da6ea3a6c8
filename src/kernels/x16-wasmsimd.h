// x16-wasmsimd.h: 8 BF16 / F16 bit patterns (one v128) to two f32x4, in registers. Layer: kernels; -msimd128 only.
// BF16: interleave with zero halves (one i16x8.shuffle each), i.e. a 16-bit shift, exact. F16: the same bit
// manipulation as x16-widen.h's scalar twin, lane-wise (normals: shift + rebias + ×2^-112; subnormals: magic
// number 0.5 subtracted; selected by an unsigned compare), exact for normals, subnormals and infinities.
#pragma once
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

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

}  // namespace attnscope::kernels::x16

#endif  // defined(__wasm_simd128__)
