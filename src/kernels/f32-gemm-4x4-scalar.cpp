// f32-gemm-4x4-scalar.cpp: register-blocked scalar GEMMs (nn and nt) for the build without SIMD128.
// Layer: kernels; standard library only. The scalar KernelTable's gemm_nn / gemm_nt; the plain loops
// in f32-gemm-scalar.cpp stay the reference twin they (and the SIMD kernels) are tested against.
// Shape: a 4x4 tile of C lives in 16 local accumulators; each k step loads 4 values of A (one per
// row) and 4 of B and does 16 multiply-adds, so every load feeds 4 products (the i-p-j twin loads
// and stores C once per product). No packing and no workspace: nn reads one 4-float run of a B row per
// k (column panels outermost, so the k x 4 panel of B stays in L1 while the row tiles of A stream past);
// nt reads 4 rows of B[n, k] unit-stride along k. Tails: a row tail (m % 4) or column tail (n % 4)
// re-points the missing rows/columns at the last valid one (computed twice, never stored), so every
// tile runs the same straight-line code. Numerics: one float accumulator per C element summed in k
// order, then alpha·acc + bias — for nn this is the twin's exact arithmetic (bit-identical without FMA
// contraction); for nt it differs from the twin's 4 partial sums only by summation order.
// Measured (Node 20, wasm built without -msimd128, 64..512 cubes and the MHA shapes): 6.9-7.4 GFLOP/s,
// against 4.0-4.1 (nn) and 4.8-5.1 (nt) for the twins. Natively g++ vectorizes the nt twin's four
// partial sums with SSE and that twin is faster (~13 vs ~10 GFLOP/s); native builds only run tests.
#include <cstddef>

#include "kernels/kernel_list.h"

namespace attnscope::kernels {
namespace {

// Tile names carry the tile: the unity build (CMAKE_UNITY_BUILD) puts every kernel of this folder in one file.
constexpr int kMr4x4 = 4;
constexpr int kNr4x4 = 4;

// Stores the valid mr x nr part of a 4x4 tile: c[r][j] = alpha * acc + bias[j].
inline void store_tile(int mr, int nr, float alpha, const float (&acc)[kMr4x4][kNr4x4], const float* bias, float* c,
                       int ldc) {
  for (int r = 0; r < mr; ++r) {
    float* c_r = c + static_cast<std::ptrdiff_t>(r) * ldc;
    for (int j = 0; j < nr; ++j) c_r[j] = alpha * acc[r][j] + (bias != nullptr ? bias[j] : 0.0f);
  }
}

// B columns j0..j0+3 of row p are b[p*ldb + col[0..3]] (col = column offsets, tails re-pointed).
template <bool kTransB>
void gemm_4x4(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, const float* bias,
              float* c, int ldc) {
  for (int j0 = 0; j0 < n; j0 += kNr4x4) {
    const int nr = n - j0 < kNr4x4 ? n - j0 : kNr4x4;
    for (int i0 = 0; i0 < m; i0 += kMr4x4) {
      const int mr = m - i0 < kMr4x4 ? m - i0 : kMr4x4;
      const float* a0 = a + static_cast<std::ptrdiff_t>(i0) * lda;
      const float* a1 = mr > 1 ? a0 + lda : a0;
      const float* a2 = mr > 2 ? a1 + lda : a1;
      const float* a3 = mr > 3 ? a2 + lda : a2;
      float c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      float c20 = 0, c21 = 0, c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0;
      if constexpr (kTransB) {
        // B is [n, k]: rows j0..j0+3 of B are the tile's columns, read along k.
        const float* b0 = b + static_cast<std::ptrdiff_t>(j0) * ldb;
        const float* b1 = nr > 1 ? b0 + ldb : b0;
        const float* b2 = nr > 2 ? b1 + ldb : b1;
        const float* b3 = nr > 3 ? b2 + ldb : b2;
        for (int p = 0; p < k; ++p) {
          const float va0 = a0[p], va1 = a1[p], va2 = a2[p], va3 = a3[p];
          const float vb0 = b0[p], vb1 = b1[p], vb2 = b2[p], vb3 = b3[p];
          c00 += va0 * vb0; c01 += va0 * vb1; c02 += va0 * vb2; c03 += va0 * vb3;
          c10 += va1 * vb0; c11 += va1 * vb1; c12 += va1 * vb2; c13 += va1 * vb3;
          c20 += va2 * vb0; c21 += va2 * vb1; c22 += va2 * vb2; c23 += va2 * vb3;
          c30 += va3 * vb0; c31 += va3 * vb1; c32 += va3 * vb2; c33 += va3 * vb3;
        }
      } else {
        // B is [k, n]: columns j0..j0+3 of row p; a column tail re-points at the last valid column.
        const int o1 = nr > 1 ? 1 : 0, o2 = nr > 2 ? 2 : o1, o3 = nr > 3 ? 3 : o2;
        const float* b_p = b + j0;
        for (int p = 0; p < k; ++p, b_p += ldb) {
          const float va0 = a0[p], va1 = a1[p], va2 = a2[p], va3 = a3[p];
          const float vb0 = b_p[0], vb1 = b_p[o1], vb2 = b_p[o2], vb3 = b_p[o3];
          c00 += va0 * vb0; c01 += va0 * vb1; c02 += va0 * vb2; c03 += va0 * vb3;
          c10 += va1 * vb0; c11 += va1 * vb1; c12 += va1 * vb2; c13 += va1 * vb3;
          c20 += va2 * vb0; c21 += va2 * vb1; c22 += va2 * vb2; c23 += va2 * vb3;
          c30 += va3 * vb0; c31 += va3 * vb1; c32 += va3 * vb2; c33 += va3 * vb3;
        }
      }
      const float acc[kMr4x4][kNr4x4] = {{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23},
                                   {c30, c31, c32, c33}};
      store_tile(mr, nr, alpha, acc, bias != nullptr ? bias + j0 : nullptr,
                 c + static_cast<std::ptrdiff_t>(i0) * ldc + j0, ldc);
    }
  }
}

}  // namespace

// C[m,n] = alpha * A[m,k] · B[k,n] (+ bias[n]); lda >= k, ldb >= n, ldc >= n; C must not overlap A/B/bias.
void f32_gemm_nn_4x4__scalar(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                             const float* bias, float* c, int ldc) {
  gemm_4x4<false>(m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
}

// C[m,n] = alpha * A[m,k] · B[n,k]ᵀ (+ bias[n]); lda >= k, ldb >= k, ldc >= n.
void f32_gemm_nt_4x4__scalar(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                             const float* bias, float* c, int ldc) {
  gemm_4x4<true>(m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
}

}  // namespace attnscope::kernels
