// q8-scalar.cpp: the scalar 8-bit block-quantised kernels (kernels.h *_q8, issue 30's optional weights8): the portable
// twins the SIMD128 ones are tested against. Layer: kernels. GEMM: each weight is dequantised as it is read (q · scale
// of its block); no buffer. GEMV: the activation row quantised to Q8_0 too, block dots in int32 (kernels.h). Layout:
// kernels.h "Q8_0 weights".
#include <cmath>

#include "kernels/kernel_list.h"
#include "kernels/q8-block.h"
#include "kernels/x16-widen.h"

namespace attnscope::kernels {

void q8_gemm_nn__scalar(int m, int n, int k, float alpha, const float* a, int lda, const std::int8_t* q,
                        const float* scales, int ldb, const float* bias, float* c, int ldc) {
  x16::gemm_nn_rows(m, n, k, alpha, a, lda, [=](int p, int j) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(p / kQ8Block) * ldb + j;
    return static_cast<float>(q[at * kQ8Block + p % kQ8Block]) * scales[at];
  }, bias, c, ldc);
}

void q8_quantize__scalar(int k, const float* x, std::int8_t* xq, float* xs) {
  for (int b = 0; b * kQ8Block < k; ++b) {
    const int len = k - b * kQ8Block < kQ8Block ? k - b * kQ8Block : kQ8Block;
    const float* xb = x + b * kQ8Block;
    std::int8_t* qb = xq + b * kQ8Block;
    float amax = 0.0f;
    for (int t = 0; t < len; ++t) amax = std::fmax(amax, std::fabs(xb[t]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    xs[b] = d;
    for (int t = 0; t < kQ8Block; ++t) qb[t] = t < len ? q8_round(xb[t] * id) : std::int8_t{0};
  }
}

void q8_gemv__scalar(int k, int n, const std::int8_t* xq, const float* xs, const std::int8_t* q, const float* scales,
                     int ldb, const float* bias, float* y) {
  const int blocks = (k + kQ8Block - 1) / kQ8Block;
  for (int j = 0; j < n; ++j) {
    float acc = 0.0f;
    for (int b = 0; b < blocks; ++b) {
      const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(b) * ldb + j;
      acc += static_cast<float>(q8_block_dot(xq + b * kQ8Block, q + at * kQ8Block)) * (scales[at] * xs[b]);
    }
    y[j] = bias != nullptr ? acc + bias[j] : acc;
  }
}

}  // namespace attnscope::kernels
