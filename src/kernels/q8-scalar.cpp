// q8-scalar.cpp: the scalar 8-bit block-quantised weight kernels (kernels.h *_q8, issue 30's optional weights8):
// the portable twins the SIMD128 ones are tested against. Layer: kernels. Each weight is dequantised as it is read
// (q · scale of its block); no buffer. Layout: kernels.h "Q8_0 weights".
#include "kernels/kernel_list.h"
#include "kernels/x16-widen.h"

namespace attnscope::kernels {

void q8_gemm_nn__scalar(int m, int n, int k, float alpha, const float* a, int lda, const std::int8_t* q,
                        const float* scales, int ldb, const float* bias, float* c, int ldc) {
  x16::gemm_nn_rows(m, n, k, alpha, a, lda, [=](int p, int j) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(p / kQ8Block) * ldb + j;
    return static_cast<float>(q[at * kQ8Block + p % kQ8Block]) * scales[at];
  }, bias, c, ldc);
}

void q8_gemv__scalar(int k, int n, const float* x, const std::int8_t* q, const float* scales, int ldb,
                     const float* bias, float* y) {
  for (int j = 0; j < n; ++j) {
    float acc = bias != nullptr ? bias[j] : 0.0f;
    for (int b = 0; b * kQ8Block < k; ++b) {
      const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(b) * ldb + j;
      const std::int8_t* qb = q + at * kQ8Block;
      float dot = 0.0f;
      const int len = k - b * kQ8Block < kQ8Block ? k - b * kQ8Block : kQ8Block;
      for (int t = 0; t < len; ++t) dot += x[b * kQ8Block + t] * static_cast<float>(qb[t]);
      acc += dot * scales[at];
    }
    y[j] = acc;
  }
}

}  // namespace attnscope::kernels
