// x16-scalar.cpp: the scalar half-width weight kernels (kernels.h *_bf16 / *_f16): the portable twins the SIMD128
// ones are tested against, and what the scalar core runs. Layer: kernels. Each weight is widened as it is read
// (x16-widen.h); no buffer. GEMM runs i-p-j like f32_gemm_nn__scalar, GEMV the same row update for one row.
#include "kernels/kernel_list.h"
#include "kernels/x16-widen.h"

namespace attnscope::kernels {
namespace {

template <class H>
void gemv_x16(int k, int n, const float* x, const std::uint16_t* w, int ldw, const float* bias, float* y) {
  for (int j = 0; j < n; ++j) y[j] = bias != nullptr ? bias[j] : 0.0f;
  for (int p = 0; p < k; ++p) {
    const float xp = x[p];
    const std::uint16_t* w_p = w + static_cast<std::ptrdiff_t>(p) * ldw;
    for (int j = 0; j < n; ++j) y[j] += xp * H::widen(w_p[j]);
  }
}

template <class H>
float dot_x16(std::size_t n, const float* a, const std::uint16_t* b) {
  float acc0 = 0.0f, acc1 = 0.0f;
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    acc0 += a[i] * H::widen(b[i]);
    acc1 += a[i + 1] * H::widen(b[i + 1]);
  }
  if (i < n) acc0 += a[i] * H::widen(b[i]);
  return acc0 + acc1;
}

// one dot per row, each the same loop whatever the other rows
template <class H>
void row_dots_x16(std::size_t rows, std::size_t n, const float* h, const std::uint16_t* t, std::size_t ldt, float* out) {
  for (std::size_t r = 0; r < rows; ++r) out[r] = dot_x16<H>(n, h, t + r * ldt);
}

template <class H>
void cvt_x16(std::size_t n, const std::uint16_t* x, float* y) {
  for (std::size_t i = 0; i < n; ++i) y[i] = H::widen(x[i]);
}

}  // namespace

void bf16_gemm_nn__scalar(int m, int n, int k, float alpha, const float* a, int lda, const std::uint16_t* b, int ldb,
                          const float* bias, float* c, int ldc) {
  x16::gemm_nn_loop<x16::Bf16>(m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
}
void f16_gemm_nn__scalar(int m, int n, int k, float alpha, const float* a, int lda, const std::uint16_t* b, int ldb,
                         const float* bias, float* c, int ldc) {
  x16::gemm_nn_loop<x16::F16>(m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
}
void bf16_gemv__scalar(int k, int n, const float* x, const std::uint16_t* w, int ldw, const float* bias, float* y) {
  gemv_x16<x16::Bf16>(k, n, x, w, ldw, bias, y);
}
void f16_gemv__scalar(int k, int n, const float* x, const std::uint16_t* w, int ldw, const float* bias, float* y) {
  gemv_x16<x16::F16>(k, n, x, w, ldw, bias, y);
}
void bf16_row_dots__scalar(std::size_t rows, std::size_t n, const float* h, const std::uint16_t* t, std::size_t ldt,
                           float* out) {
  row_dots_x16<x16::Bf16>(rows, n, h, t, ldt, out);
}
void f16_row_dots__scalar(std::size_t rows, std::size_t n, const float* h, const std::uint16_t* t, std::size_t ldt,
                          float* out) {
  row_dots_x16<x16::F16>(rows, n, h, t, ldt, out);
}
void bf16_cvt__scalar(std::size_t n, const std::uint16_t* x, float* y) { cvt_x16<x16::Bf16>(n, x, y); }
void f16_cvt__scalar(std::size_t n, const std::uint16_t* x, float* y) { cvt_x16<x16::F16>(n, x, y); }

}  // namespace attnscope::kernels
