// f32-layernorm-wasmsimd.cpp: SIMD128 LayerNorm over rows, same contract as f32_layernorm__scalar.
// Layer: kernels; <wasm_simd128.h> only; compiled only with -msimd128.
// Mean and biased variance are accumulated in double like the scalar twin, two f64x2 lanes per
// f32x4 (promote low/high halves), so a constant row gives var 0 exactly; normalization runs in f32x4
// with the scalar twin's operation order. Tails (d % 4) are scalar. y may alias x.
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include <cmath>

#include "kernels/kernel_list.h"

namespace attnscope::kernels {

void f32_layernorm__wasmsimd(int n, int d, const float* x, const float* gamma, const float* beta, float eps,
                             float* y) {
  for (int r = 0; r < n; ++r) {
    const float* x_r = x + static_cast<std::ptrdiff_t>(r) * d;
    float* y_r = y + static_cast<std::ptrdiff_t>(r) * d;

    v128_t vsum_lo = wasm_f64x2_splat(0.0), vsum_hi = vsum_lo;
    int j = 0;
    for (; j + 4 <= d; j += 4) {
      const v128_t vx = wasm_v128_load(x_r + j);
      vsum_lo = wasm_f64x2_add(vsum_lo, wasm_f64x2_promote_low_f32x4(vx));
      vsum_hi = wasm_f64x2_add(vsum_hi, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(vx, vx, 2, 3, 2, 3)));
    }
    vsum_lo = wasm_f64x2_add(vsum_lo, vsum_hi);
    double sum = wasm_f64x2_extract_lane(vsum_lo, 0) + wasm_f64x2_extract_lane(vsum_lo, 1);
    for (; j < d; ++j) sum += x_r[j];
    const double mean = sum / d;

    const v128_t vmean = wasm_f64x2_splat(mean);
    v128_t vsq_lo = wasm_f64x2_splat(0.0), vsq_hi = vsq_lo;
    j = 0;
    for (; j + 4 <= d; j += 4) {
      const v128_t vx = wasm_v128_load(x_r + j);
      const v128_t vdev_lo = wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(vx), vmean);
      const v128_t vdev_hi =
          wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(vx, vx, 2, 3, 2, 3)), vmean);
      vsq_lo = wasm_f64x2_add(vsq_lo, wasm_f64x2_mul(vdev_lo, vdev_lo));
      vsq_hi = wasm_f64x2_add(vsq_hi, wasm_f64x2_mul(vdev_hi, vdev_hi));
    }
    vsq_lo = wasm_f64x2_add(vsq_lo, vsq_hi);
    double sq = wasm_f64x2_extract_lane(vsq_lo, 0) + wasm_f64x2_extract_lane(vsq_lo, 1);
    for (; j < d; ++j) {
      const double dev = x_r[j] - mean;
      sq += dev * dev;
    }
    const double var = sq / d;
    // mean as a float pair: x − mean_hi is exact when x is near the mean, so a large common offset
    // (e.g. rows around 1000) does not leave float rounding of the mean in the output.
    const float mean_hi = static_cast<float>(mean);
    const float mean_lo = static_cast<float>(mean - static_cast<double>(mean_hi));
    const float rstd = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));

    const v128_t vmean_hi = wasm_f32x4_splat(mean_hi);
    const v128_t vmean_lo = wasm_f32x4_splat(mean_lo);
    const v128_t vrstd = wasm_f32x4_splat(rstd);
    j = 0;
    for (; j + 4 <= d; j += 4) {
      v128_t v = wasm_f32x4_mul(wasm_f32x4_sub(wasm_f32x4_sub(wasm_v128_load(x_r + j), vmean_hi), vmean_lo), vrstd);
      if (gamma != nullptr) v = wasm_f32x4_mul(v, wasm_v128_load(gamma + j));
      if (beta != nullptr) v = wasm_f32x4_add(v, wasm_v128_load(beta + j));
      wasm_v128_store(y_r + j, v);
    }
    for (; j < d; ++j) {
      float v = ((x_r[j] - mean_hi) - mean_lo) * rstd;
      if (gamma != nullptr) v *= gamma[j];
      if (beta != nullptr) v += beta[j];
      y_r[j] = v;
    }
  }
}

}  // namespace attnscope::kernels

#endif  // defined(__wasm_simd128__)
