// x16-wasmsimd.cpp: SIMD128 half-width weight kernels besides the GEMM (which shares the 4x8 driver in
// f32-gemm-4x8-wasmsimd.cpp): GEMV for decoding, the row dots of a tied head (x16-wasmsimd.h), the widening of embedding rows.
// Layer: kernels; compiled only with -msimd128. Weights are widened in registers (x16-wasmsimd.h), never stored.
// GEMV: 4 rows of W at a time, each swept over all columns in memory order (16 columns per step: 4 f32x4 of y
// loaded, updated by the 4 rows, stored; y stays in L1), 8-column and scalar tails. It replaced a 32-column strip
// over all k rows (8 accumulators in registers, but W read at a stride of a row per 64 bytes), which ran 1.3-1.6x
// slower on the SmolLM2-135M decode shapes: the strided walk, not the arithmetic, bounded it. The sum for each y[j]
// runs over p in order, as the scalar twin's.
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include "kernels/kernel_list.h"
#include "kernels/x16-wasmsimd.h"
#include "kernels/x16-widen.h"

namespace attnscope::kernels {
namespace {

// y[j] += Σ_{r < R} x[p + r] · W[p + r, j] for every j, r in order: R rows of W, each read in memory order
template <int R, class V, class H>
void gemv_x16_rows(int p, int n, const float* x, const std::uint16_t* w, int ldw, float* y) {
  v128_t vx[R];
  const std::uint16_t* wr[R];
  for (int r = 0; r < R; ++r) {
    vx[r] = wasm_v128_load32_splat(x + p + r);
    wr[r] = w + static_cast<std::ptrdiff_t>(p + r) * ldw;
  }
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    v128_t a0 = wasm_v128_load(y + j), a1 = wasm_v128_load(y + j + 4);
    v128_t a2 = wasm_v128_load(y + j + 8), a3 = wasm_v128_load(y + j + 12);
    for (int r = 0; r < R; ++r) {
      const v128_t h0 = wasm_v128_load(wr[r] + j), h1 = wasm_v128_load(wr[r] + j + 8);
      a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(vx[r], V::lo(h0)));
      a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(vx[r], V::hi(h0)));
      a2 = wasm_f32x4_add(a2, wasm_f32x4_mul(vx[r], V::lo(h1)));
      a3 = wasm_f32x4_add(a3, wasm_f32x4_mul(vx[r], V::hi(h1)));
    }
    wasm_v128_store(y + j, a0);
    wasm_v128_store(y + j + 4, a1);
    wasm_v128_store(y + j + 8, a2);
    wasm_v128_store(y + j + 12, a3);
  }
  for (; j + 8 <= n; j += 8) {
    v128_t a0 = wasm_v128_load(y + j), a1 = wasm_v128_load(y + j + 4);
    for (int r = 0; r < R; ++r) {
      const v128_t h = wasm_v128_load(wr[r] + j);
      a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(vx[r], V::lo(h)));
      a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(vx[r], V::hi(h)));
    }
    wasm_v128_store(y + j, a0);
    wasm_v128_store(y + j + 4, a1);
  }
  for (; j < n; ++j) {
    float acc = y[j];
    for (int r = 0; r < R; ++r) acc += x[p + r] * H::widen(wr[r][j]);
    y[j] = acc;
  }
}

template <class V, class H>
void gemv_x16_simd(int k, int n, const float* x, const std::uint16_t* w, int ldw, const float* bias, float* y) {
  for (int j = 0; j < n; ++j) y[j] = bias != nullptr ? bias[j] : 0.0f;
  int p = 0;
  for (; p + 4 <= k; p += 4) gemv_x16_rows<4, V, H>(p, n, x, w, ldw, y);
  for (; p < k; ++p) gemv_x16_rows<1, V, H>(p, n, x, w, ldw, y);
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
void bf16_row_dots_4__wasmsimd(std::size_t rows, std::size_t n, const float* h, const std::uint16_t* t, std::size_t ldt,
                               float* out) {
  x16::row_dots<x16::HalfLoad8<x16::Bf16x8, x16::Bf16>>(rows, n, h, t, ldt, out);
}
void f16_row_dots_4__wasmsimd(std::size_t rows, std::size_t n, const float* h, const std::uint16_t* t, std::size_t ldt,
                              float* out) {
  x16::row_dots<x16::HalfLoad8<x16::F16x8, x16::F16>>(rows, n, h, t, ldt, out);
}
void bf16_cvt__wasmsimd(std::size_t n, const std::uint16_t* x, float* y) { cvt_x16_simd<x16::Bf16x8, x16::Bf16>(n, x, y); }
void f16_cvt__wasmsimd(std::size_t n, const std::uint16_t* x, float* y) { cvt_x16_simd<x16::F16x8, x16::F16>(n, x, y); }

}  // namespace attnscope::kernels

#endif  // defined(__wasm_simd128__)
