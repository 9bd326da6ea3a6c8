// x16-wasmsimd.cpp: SIMD128 half-width weight kernels besides the GEMM (which shares the 4x8 driver in
// f32-gemm-4x8-wasmsimd.cpp): GEMV for decoding, the dot of a tied head, the widening of embedding rows.
// Layer: kernels; compiled only with -msimd128. Weights are widened in registers (x16-wasmsimd.h), never stored.
// GEMV: 32 columns at a time in 8 f32x4 accumulators over all k rows (each row: 64 bytes of weights, one cache
// line), so y never round-trips through memory inside the k loop; 8-column and scalar tails.
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include "kernels/kernel_list.h"
#include "kernels/x16-wasmsimd.h"
#include "kernels/x16-widen.h"

namespace attnscope::kernels {
namespace {

template <class V, class H>
void gemv_x16_simd(int k, int n, const float* x, const std::uint16_t* w, int ldw, const float* bias, float* y) {
  int j = 0;
  for (; j + 32 <= n; j += 32) {
    v128_t acc[8];
    for (int q = 0; q < 8; ++q) acc[q] = bias != nullptr ? wasm_v128_load(bias + j + 4 * q) : wasm_f32x4_splat(0.0f);
    const std::uint16_t* wp = w + j;
#pragma clang loop unroll(disable)
    for (int p = 0; p < k; ++p) {
      const v128_t vx = wasm_v128_load32_splat(x + p);
      const v128_t h0 = wasm_v128_load(wp), h1 = wasm_v128_load(wp + 8);
      const v128_t h2 = wasm_v128_load(wp + 16), h3 = wasm_v128_load(wp + 24);
      wp += ldw;
      acc[0] = wasm_f32x4_add(acc[0], wasm_f32x4_mul(vx, V::lo(h0)));
      acc[1] = wasm_f32x4_add(acc[1], wasm_f32x4_mul(vx, V::hi(h0)));
      acc[2] = wasm_f32x4_add(acc[2], wasm_f32x4_mul(vx, V::lo(h1)));
      acc[3] = wasm_f32x4_add(acc[3], wasm_f32x4_mul(vx, V::hi(h1)));
      acc[4] = wasm_f32x4_add(acc[4], wasm_f32x4_mul(vx, V::lo(h2)));
      acc[5] = wasm_f32x4_add(acc[5], wasm_f32x4_mul(vx, V::hi(h2)));
      acc[6] = wasm_f32x4_add(acc[6], wasm_f32x4_mul(vx, V::lo(h3)));
      acc[7] = wasm_f32x4_add(acc[7], wasm_f32x4_mul(vx, V::hi(h3)));
    }
    for (int q = 0; q < 8; ++q) wasm_v128_store(y + j + 4 * q, acc[q]);
  }
  for (; j + 8 <= n; j += 8) {
    v128_t acc0 = bias != nullptr ? wasm_v128_load(bias + j) : wasm_f32x4_splat(0.0f);
    v128_t acc1 = bias != nullptr ? wasm_v128_load(bias + j + 4) : wasm_f32x4_splat(0.0f);
    const std::uint16_t* wp = w + j;
    for (int p = 0; p < k; ++p, wp += ldw) {
      const v128_t vx = wasm_v128_load32_splat(x + p);
      const v128_t h = wasm_v128_load(wp);
      acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(vx, V::lo(h)));
      acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(vx, V::hi(h)));
    }
    wasm_v128_store(y + j, acc0);
    wasm_v128_store(y + j + 4, acc1);
  }
  for (; j < n; ++j) {
    float acc = bias != nullptr ? bias[j] : 0.0f;
    for (int p = 0; p < k; ++p) acc += x[p] * H::widen(w[static_cast<std::ptrdiff_t>(p) * ldw + j]);
    y[j] = acc;
  }
}

template <class V, class H>
float dot_x16_simd(std::size_t n, const float* a, const std::uint16_t* b) {
  v128_t acc0 = wasm_f32x4_splat(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t h0 = wasm_v128_load(b + i), h1 = wasm_v128_load(b + i + 8);
    acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(wasm_v128_load(a + i), V::lo(h0)));
    acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(wasm_v128_load(a + i + 4), V::hi(h0)));
    acc2 = wasm_f32x4_add(acc2, wasm_f32x4_mul(wasm_v128_load(a + i + 8), V::lo(h1)));
    acc3 = wasm_f32x4_add(acc3, wasm_f32x4_mul(wasm_v128_load(a + i + 12), V::hi(h1)));
  }
  acc0 = wasm_f32x4_add(wasm_f32x4_add(acc0, acc1), wasm_f32x4_add(acc2, acc3));
  float acc = (wasm_f32x4_extract_lane(acc0, 0) + wasm_f32x4_extract_lane(acc0, 1)) +
              (wasm_f32x4_extract_lane(acc0, 2) + wasm_f32x4_extract_lane(acc0, 3));
  for (; i < n; ++i) acc += a[i] * H::widen(b[i]);
  return acc;
}

template <class V, class H>
void cvt_x16_simd(std::size_t n, const std::uint16_t* x, float* y) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t h = wasm_v128_load(x + i);
    wasm_v128_store(y + i, V::lo(h));
    wasm_v128_store(y + i + 4, V::hi(h));
  }
  for (; i < n; ++i) y[i] = H::widen(x[i]);
}

}  // namespace

void bf16_gemv_32__wasmsimd(int k, int n, const float* x, const std::uint16_t* w, int ldw, const float* bias,
                            float* y) {
  gemv_x16_simd<x16::Bf16x8, x16::Bf16>(k, n, x, w, ldw, bias, y);
}
void f16_gemv_32__wasmsimd(int k, int n, const float* x, const std::uint16_t* w, int ldw, const float* bias,
                           float* y) {
  gemv_x16_simd<x16::F16x8, x16::F16>(k, n, x, w, ldw, bias, y);
}
float bf16_dot__wasmsimd(std::size_t n, const float* a, const std::uint16_t* b) {
  return dot_x16_simd<x16::Bf16x8, x16::Bf16>(n, a, b);
}
float f16_dot__wasmsimd(std::size_t n, const float* a, const std::uint16_t* b) {
  return dot_x16_simd<x16::F16x8, x16::F16>(n, a, b);
}
void bf16_cvt__wasmsimd(std::size_t n, const std::uint16_t* x, float* y) { cvt_x16_simd<x16::Bf16x8, x16::Bf16>(n, x, y); }
void f16_cvt__wasmsimd(std::size_t n, const std::uint16_t* x, float* y) { cvt_x16_simd<x16::F16x8, x16::F16>(n, x, y); }

}  // namespace attnscope::kernels

#endif  // defined(__wasm_simd128__)
