// f32-vexp-wasmsimd.h: vector exp for non-positive inputs (x <= 0), shared by softmax and tanh.
// Layer: kernels; <wasm_simd128.h> only; include only under __wasm_simd128__.
// XNNPACK's "rr2_p5": n = round(x·log2 e) via a magic bias, two-constant Cody–Waite reduction
// t = x − n·ln2 (hi + lo), degree-5 polynomial p(t), e^x = 2^n·(1 + t·p(t)). Max relative error
// measured against double exp over [-80, 0]: 2.1e-7 (200k points). x below -87.34 (including
// -inf) gives exactly +0; NaN gives NaN. The "_p5" in kernel names refers to this polynomial.
#pragma once

#include <wasm_simd128.h>

namespace attnscope::kernels::simd {

inline v128_t exp_nonpositive_p5(v128_t vx) {
  const v128_t vmagic_bias = wasm_f32x4_splat(0x1.8000FEp23f);  // 1.5·2^23 + 127: 2^n via a shift
  const v128_t vlog2e = wasm_f32x4_splat(0x1.715476p+0f);
  const v128_t vminus_ln2_hi = wasm_f32x4_splat(-0x1.62E400p-1f);
  const v128_t vminus_ln2_lo = wasm_f32x4_splat(-0x1.7F7D1Cp-20f);
  const v128_t vc5 = wasm_f32x4_splat(0x1.0F9F9Cp-7f);
  const v128_t vc4 = wasm_f32x4_splat(0x1.573A1Ap-5f);
  const v128_t vc3 = wasm_f32x4_splat(0x1.555A80p-3f);
  const v128_t vc2 = wasm_f32x4_splat(0x1.FFFDC6p-2f);
  const v128_t vc1 = wasm_f32x4_splat(0x1.FFFFF6p-1f);
  const v128_t vdenorm_cutoff = wasm_f32x4_splat(-0x1.5D589Ep6f);  // below: result is denormal, flush to 0

  v128_t vn = wasm_f32x4_add(wasm_f32x4_mul(vx, vlog2e), vmagic_bias);
  const v128_t vs = wasm_i32x4_shl(vn, 23);
  vn = wasm_f32x4_sub(vn, vmagic_bias);
  v128_t vt = wasm_f32x4_add(wasm_f32x4_mul(vn, vminus_ln2_hi), vx);
  vt = wasm_f32x4_add(wasm_f32x4_mul(vn, vminus_ln2_lo), vt);
  v128_t vp = wasm_f32x4_add(wasm_f32x4_mul(vc5, vt), vc4);
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), vc3);
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), vc2);
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), vc1);
  vt = wasm_f32x4_mul(vt, vs);
  const v128_t vf = wasm_f32x4_add(wasm_f32x4_mul(vt, vp), vs);
  return wasm_v128_andnot(vf, wasm_f32x4_lt(vx, vdenorm_cutoff));
}

}  // namespace attnscope::kernels::simd
