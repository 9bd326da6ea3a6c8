// f32-gemm-scalar.cpp: the reference GEMMs (nn and nt), the twins every other GEMM is judged against.
// Layer: kernels; standard library only. Plain loops in float: nn runs i-p-j (row of C += a_ip * row p
// of B, which g++ vectorizes natively); nt runs one dot product per (i, j) with four partial sums.
// C must not overlap A, B or bias. Tails: none (untiled).
#include "kernels/kernel_list.h"
#include "kernels/x16-widen.h"

namespace attnscope::kernels {

// C[m,n] = alpha * A[m,k] · B[k,n] (+ bias[n]); lda >= k, ldb >= n, ldc >= n.
void f32_gemm_nn__scalar(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                         const float* bias, float* c, int ldc) {
  x16::gemm_nn_loop<x16::F32>(m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
}

// C[m,n] = alpha * A[m,k] · B[n,k]ᵀ (+ bias[n]); lda >= k, ldb >= k, ldc >= n.
void f32_gemm_nt__scalar(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                         const float* bias, float* c, int ldc) {
  for (int i = 0; i < m; ++i) {
    const float* a_i = a + static_cast<std::ptrdiff_t>(i) * lda;
    float* c_i = c + static_cast<std::ptrdiff_t>(i) * ldc;
    for (int j = 0; j < n; ++j) {
      const float* b_j = b + static_cast<std::ptrdiff_t>(j) * ldb;
      float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
      int p = 0;
      for (; p + 4 <= k; p += 4) {
        acc0 += a_i[p] * b_j[p];
        acc1 += a_i[p + 1] * b_j[p + 1];
        acc2 += a_i[p + 2] * b_j[p + 2];
        acc3 += a_i[p + 3] * b_j[p + 3];
      }
      for (; p < k; ++p) acc0 += a_i[p] * b_j[p];
      c_i[j] = alpha * ((acc0 + acc1) + (acc2 + acc3)) + (bias != nullptr ? bias[j] : 0.0f);
    }
  }
}

}  // namespace attnscope::kernels
