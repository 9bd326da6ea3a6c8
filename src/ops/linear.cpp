// linear.cpp: GEMM wrappers over kernels::active_kernels(). Layer: ops.
#include "ops/linear.h"

#include "kernels/kernels.h"

namespace attnscope::ops {

void matmul_nn(core::ConstMatView a, core::ConstMatView b, core::MatView c, float alpha, const float* bias) {
  kernels::active_kernels().gemm_nn(a.rows, b.cols, a.cols, alpha, a.data, a.ld, b.data, b.ld, bias, c.data, c.ld);
}

void matmul_nt(core::ConstMatView a, core::ConstMatView b, core::MatView c, float alpha) {
  kernels::active_kernels().gemm_nt(a.rows, b.rows, a.cols, alpha, a.data, a.ld, b.data, b.ld, nullptr, c.data,
                                    c.ld);
}

void linear(core::ConstMatView x, std::span<const float> w, std::span<const float> b, core::MatView y) {
  if (x.rows == 1) {
    // One row (a decoding step): y = b + Σ_k x_k W[k, :], row updates the compiler vectorises. The GEMM would
    // pack all of W into panels first, which for one row costs more than the product (GPT-2: 85 M floats per
    // token).
    float* out = y.data;
    const auto n = static_cast<std::size_t>(y.cols);
    for (std::size_t j = 0; j < n; ++j) out[j] = b.empty() ? 0.0f : b[j];
    for (int k = 0; k < x.cols; ++k) {
      const float xk = x.data[k];
      const float* row = w.data() + static_cast<std::size_t>(k) * n;
      for (std::size_t j = 0; j < n; ++j) out[j] += xk * row[j];
    }
    return;
  }
  const core::ConstMatView wv{w.data(), x.cols, y.cols, y.cols};
  matmul_nn(x, wv, y, 1.0f, b.empty() ? nullptr : b.data());
}

std::vector<float> linear(std::span<const float> x, int n, int in, std::span<const float> w, int out,
                          std::span<const float> b) {
  std::vector<float> y(static_cast<std::size_t>(n) * static_cast<std::size_t>(out));
  linear(core::as_view(x, n, in), w, b, core::MatView{y.data(), n, out, out});
  return y;
}

}  // namespace attnscope::ops
