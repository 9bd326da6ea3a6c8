// f32-softmax-wasmsimd.cpp: SIMD128 row softmax, same contract as f32_softmax__scalar.
// Layer: kernels; <wasm_simd128.h> only; compiled only with -msimd128.
// Three passes per row, 4 lanes wide: max (pmax, 4 accumulators), exp(x − max) with the rr2_p5
// polynomial (f32-vexp-wasmsimd.h, rel err ~2e-7 vs exact; hence the `_p5` name) stored and summed,
// then scale by 1/sum. Tails (cols % 4) run the same vector exp on a -inf-padded 4-lane copy, so
// every entry gets identical numerics. -inf gives exactly 0; a fully -inf row gives zeros. y may alias x.
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include <limits>

#include "kernels/f32-vexp-wasmsimd.h"
#include "kernels/kernel_list.h"

namespace attnscope::kernels {

void f32_softmax__wasmsimd_p5(int rows, int cols, const float* x, int ldx, float* y, int ldy) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int r = 0; r < rows; ++r) {
    const float* x_r = x + static_cast<std::ptrdiff_t>(r) * ldx;
    float* y_r = y + static_cast<std::ptrdiff_t>(r) * ldy;

    // 1. row max
    v128_t vmax0 = wasm_f32x4_splat(kNegInf), vmax1 = vmax0, vmax2 = vmax0, vmax3 = vmax0;
    int j = 0;
    for (; j + 16 <= cols; j += 16) {
      vmax0 = wasm_f32x4_pmax(vmax0, wasm_v128_load(x_r + j));
      vmax1 = wasm_f32x4_pmax(vmax1, wasm_v128_load(x_r + j + 4));
      vmax2 = wasm_f32x4_pmax(vmax2, wasm_v128_load(x_r + j + 8));
      vmax3 = wasm_f32x4_pmax(vmax3, wasm_v128_load(x_r + j + 12));
    }
    for (; j + 4 <= cols; j += 4) vmax0 = wasm_f32x4_pmax(vmax0, wasm_v128_load(x_r + j));
    vmax0 = wasm_f32x4_pmax(wasm_f32x4_pmax(vmax0, vmax1), wasm_f32x4_pmax(vmax2, vmax3));
    float row_max = kNegInf;
    for (int lane = 0; lane < 4; ++lane) {
      const float v = lane == 0   ? wasm_f32x4_extract_lane(vmax0, 0)
                      : lane == 1 ? wasm_f32x4_extract_lane(vmax0, 1)
                      : lane == 2 ? wasm_f32x4_extract_lane(vmax0, 2)
                                  : wasm_f32x4_extract_lane(vmax0, 3);
      row_max = v > row_max ? v : row_max;
    }
    for (; j < cols; ++j) row_max = x_r[j] > row_max ? x_r[j] : row_max;
    if (row_max == kNegInf) {  // every entry blocked
      for (int jj = 0; jj < cols; ++jj) y_r[jj] = 0.0f;
      continue;
    }

    // 2. e = exp(x - max), stored, and summed
    const v128_t vrow_max = wasm_f32x4_splat(row_max);
    v128_t vsum0 = wasm_f32x4_splat(0.0f), vsum1 = vsum0;
    j = 0;
    for (; j + 8 <= cols; j += 8) {
      const v128_t ve0 = simd::exp_nonpositive_p5(wasm_f32x4_sub(wasm_v128_load(x_r + j), vrow_max));
      const v128_t ve1 = simd::exp_nonpositive_p5(wasm_f32x4_sub(wasm_v128_load(x_r + j + 4), vrow_max));
      wasm_v128_store(y_r + j, ve0);
      wasm_v128_store(y_r + j + 4, ve1);
      vsum0 = wasm_f32x4_add(vsum0, ve0);
      vsum1 = wasm_f32x4_add(vsum1, ve1);
    }
    for (; j + 4 <= cols; j += 4) {
      const v128_t ve = simd::exp_nonpositive_p5(wasm_f32x4_sub(wasm_v128_load(x_r + j), vrow_max));
      wasm_v128_store(y_r + j, ve);
      vsum0 = wasm_f32x4_add(vsum0, ve);
    }
    if (j < cols) {
      alignas(16) float tail[4] = {kNegInf, kNegInf, kNegInf, kNegInf};
      for (int t = 0; j + t < cols; ++t) tail[t] = x_r[j + t];
      const v128_t ve = simd::exp_nonpositive_p5(wasm_f32x4_sub(wasm_v128_load(tail), vrow_max));
      wasm_v128_store(tail, ve);
      for (int t = 0; j + t < cols; ++t) y_r[j + t] = tail[t];
      vsum0 = wasm_f32x4_add(vsum0, ve);  // padded lanes are exp(-inf) = 0
    }
    vsum0 = wasm_f32x4_add(vsum0, vsum1);
    const float sum = (wasm_f32x4_extract_lane(vsum0, 0) + wasm_f32x4_extract_lane(vsum0, 1)) +
                      (wasm_f32x4_extract_lane(vsum0, 2) + wasm_f32x4_extract_lane(vsum0, 3));

    // 3. normalize (sum >= 1: the max entry contributes exp(0) = 1)
    const float inv_sum = 1.0f / sum;
    const v128_t vinv_sum = wasm_f32x4_splat(inv_sum);
    j = 0;
    for (; j + 4 <= cols; j += 4) wasm_v128_store(y_r + j, wasm_f32x4_mul(wasm_v128_load(y_r + j), vinv_sum));
    for (; j < cols; ++j) y_r[j] *= inv_sum;
  }
}

}  // namespace attnscope::kernels

#endif  // defined(__wasm_simd128__)
