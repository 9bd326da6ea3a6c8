// linear.cpp: GEMM wrappers over kernels::active_kernels(), split across the core's thread pool when the
// product is large enough (core/parallel.h). Layer: ops.
#include "ops/linear.h"

#include <algorithm>
#include <cstdint>

#include "core/parallel.h"
#include "kernels/kernels.h"

namespace attnscope::ops {

namespace {

// Column blocks are whole 8-wide panels of the SIMD GEMM and at least 64 columns, so a split adds no
// column tails and each thread packs only its own part of B; row blocks (4-row tiles, at least 16
// rows) when C is too narrow for two column blocks — each thread then packs all of B, which costs
// k·n against its m·n·k / threads of products.
constexpr std::int64_t kColBlock = 8;
constexpr std::int64_t kColGrain = 8;  // x 8 = 64 columns
constexpr std::int64_t kRowBlock = 4;
constexpr std::int64_t kRowGrain = 4;  // x 4 = 16 rows

// c = alpha · a · op(b) (+ bias) with op(b) = b [k, n] (nt false) or bᵀ, b [n, k] (nt true); the
// pieces of C are disjoint and each is an ordinary call of the kernel, so results equal the
// single-threaded ones bit for bit (a piece sums over the same k in the same order).
void gemm(bool nt, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
          const float* bias, float* c, int ldc) {
  const kernels::KernelTable& kt = kernels::active_kernels();
  const auto call = [&](int i0, int i1, int j0, int j1) {
    const float* b_j = nt ? b + static_cast<std::ptrdiff_t>(j0) * ldb : b + j0;
    const float* bias_j = bias != nullptr ? bias + j0 : nullptr;
    (nt ? kt.gemm_nt : kt.gemm_nn)(i1 - i0, j1 - j0, k, alpha, a + static_cast<std::ptrdiff_t>(i0) * lda, lda, b_j,
                                   ldb, bias_j, c + static_cast<std::ptrdiff_t>(i0) * ldc + j0, ldc);
  };
  const double flops = 2.0 * m * n * k;
  const std::int64_t col_blocks = (n + kColBlock - 1) / kColBlock;
  if (core::parallel_chunks(col_blocks, kColGrain, flops) > 1) {
    core::parallel_for(col_blocks, kColGrain, flops, [&](std::int64_t begin, std::int64_t end, int) {
      call(0, m, static_cast<int>(begin * kColBlock), static_cast<int>(std::min<std::int64_t>(end * kColBlock, n)));
    });
    return;
  }
  const std::int64_t row_blocks = (m + kRowBlock - 1) / kRowBlock;
  core::parallel_for(row_blocks, kRowGrain, flops, [&](std::int64_t begin, std::int64_t end, int) {
    call(static_cast<int>(begin * kRowBlock), static_cast<int>(std::min<std::int64_t>(end * kRowBlock, m)), 0, n);
  });
}

}  // namespace

void matmul_nn(core::ConstMatView a, core::ConstMatView b, core::MatView c, float alpha, const float* bias) {
  gemm(false, a.rows, b.cols, a.cols, alpha, a.data, a.ld, b.data, b.ld, bias, c.data, c.ld);
}

void matmul_nt(core::ConstMatView a, core::ConstMatView b, core::MatView c, float alpha) {
  gemm(true, a.rows, b.rows, a.cols, alpha, a.data, a.ld, b.data, b.ld, nullptr, c.data, c.ld);
}

void linear(core::ConstMatView x, std::span<const float> w, std::span<const float> b, core::MatView y) {
  if (x.rows == 1) {
    // One row (a decoding step): y = b + Σ_k x_k W[k, :], row updates the compiler vectorises. The GEMM would
    // pack all of W into panels first, which for one row costs more than the product (GPT-2: 85 M floats per
    // token).
    // Column blocks of 256 go to the pool when W is large (a language-model head: 768 x 50,257).
    const auto n = static_cast<std::size_t>(y.cols);
    const std::int64_t blocks = (y.cols + 255) / 256;
    core::parallel_for(blocks, 1, 2.0 * x.cols * y.cols, [&](std::int64_t begin, std::int64_t end, int) {
      const std::size_t j0 = static_cast<std::size_t>(begin) * 256;
      const std::size_t j1 = std::min(static_cast<std::size_t>(end) * 256, n);
      float* out = y.data;
      for (std::size_t j = j0; j < j1; ++j) out[j] = b.empty() ? 0.0f : b[j];
      for (int k = 0; k < x.cols; ++k) {
        const float xk = x.data[k];
        const float* row = w.data() + static_cast<std::size_t>(k) * n;
        for (std::size_t j = j0; j < j1; ++j) out[j] += xk * row[j];
      }
    });
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
