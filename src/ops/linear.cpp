// linear.cpp: GEMM wrappers over kernels::active_kernels(), split across the core's thread pool when the
// product is large enough (core/parallel.h). Layer: ops.
#include "ops/linear.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernels.h"

namespace attnscope::ops {

static_assert(kernels::kQ8Block == core::kQ8Block, "one Q8_0 block size");

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
// T is float, or std::uint16_t for half-width B (nn only), with `kernel` the matching KernelTable slot.
template <class T, class Kernel>
void gemm(bool nt, int m, int n, int k, float alpha, const float* a, int lda, const T* b, int ldb, const float* bias,
          float* c, int ldc, Kernel kernel) {
  const auto call = [&](int i0, int i1, int j0, int j1) {
    const T* b_j = nt ? b + static_cast<std::ptrdiff_t>(j0) * ldb : b + j0;
    const float* bias_j = bias != nullptr ? bias + j0 : nullptr;
    kernel(i1 - i0, j1 - j0, k, alpha, a + static_cast<std::ptrdiff_t>(i0) * lda, lda, b_j, ldb, bias_j,
           c + static_cast<std::ptrdiff_t>(i0) * ldc + j0, ldc);
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

// One row (a decoding step) is bound by reading W, not by its 2 flops a weight, and parallel_for's threshold is in
// GEMM flops (~0.2 ms, sized for a hand-off to a sleeping worker). Counted as 2 flops a weight, every matrix of a small
// model (SmolLM2's 576 x 192 ... 576 x 1,536: 0.2-1.8 MFLOP, 0.05-0.4 ms each) stayed on one thread, so its decoding
// steps barely used the second one. A weight byte is counted as kGemvFlopsPerByte flops instead (~2x the ratio of the
// GEMM's rate to the GEMV's bytes read per second, 29 GFLOP/s : 7.7 GB/s on the 1B shape): matrices from 0.5 MB up
// split. A decoding step's matrices come back to back, so the pool's workers are still spinning from the last one
// (parallel.cpp), and a worker that is late costs the caller nothing but the lock: it takes the late piece itself.
constexpr double kGemvFlopsPerByte = 16.0;
double gemv_flops(core::ConstMatView x, core::MatView y, double bytes_per_weight) {
  return kGemvFlopsPerByte * bytes_per_weight * static_cast<double>(x.cols) * static_cast<double>(y.cols);
}

// Columns of a GEMV piece are whole blocks of kGemvCols (the SIMD GEMV's widest step, 16 columns, so that only the
// last piece has a column tail): SmolLM2's 576 columns split 288 / 288 (blocks of 256 split them 256 / 320). Each
// column is summed over k in the same order whatever its piece, so results equal the one-thread ones bit for bit.
constexpr std::int64_t kGemvCols = 16;
// One piece a thread, as wide as it can be (gemv_grain): a piece reads a run of its columns from every row of W, and
// the pool's 4 pieces a thread (runs of 128-512 bytes over 512-2,048 columns) decoded the 2-layer 1B shape at 13.7
// tokens/s on 2 threads against 16.8 with one piece a thread (runs of 0.5-8 KB; 7 interleaved rounds of one build
// with a switch, 2026-11-27). At least 64 columns a piece.
std::int64_t gemv_grain(std::int64_t blocks, std::int64_t min_grain) {
  return std::max<std::int64_t>(min_grain, blocks / core::thread_count());
}
constexpr std::int64_t kGemvGrain = 4;

// One row times half-width matrices W [in, out] (at most kMaxMany): the GEMV kernel over their column blocks, taken
// as one concatenated run of blocks (the pool's pieces), each weight read once. linear() is one target, linear_many
// several (a decoding step's Q/K/V, gate/up).
constexpr std::size_t kMaxMany = 4;
void gemv_x16(core::ConstMatView x, std::span<const LinearTarget> targets) {
  const kernels::KernelTable& kt = kernels::active_kernels();
  std::array<std::int64_t, kMaxMany + 1> first{};  // target i's blocks are [first[i], first[i + 1])
  double work = 0.0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    first[i + 1] = first[i] + (targets[i].y.cols + kGemvCols - 1) / kGemvCols;
    work += gemv_flops(x, targets[i].y, 2.0);
  }
  const std::int64_t blocks = first[targets.size()];
  // a piece may cover the end of one matrix and the start of the next: each gets its own GEMV call over its columns
  // there, so each column is summed the same whatever the targets beside it
  core::parallel_for(blocks, gemv_grain(blocks, kGemvGrain), work, [&](std::int64_t begin, std::int64_t end, int) {
    for (std::size_t i = 0; i < targets.size(); ++i) {
      const std::int64_t b0 = std::max(begin, first[i]), b1 = std::min(end, first[i + 1]);
      if (b0 >= b1) continue;
      const LinearTarget& t = targets[i];
      const int j0 = static_cast<int>((b0 - first[i]) * kGemvCols);
      const int j1 = static_cast<int>(std::min<std::int64_t>((b1 - first[i]) * kGemvCols, t.y.cols));
      const kernels::GemvHalfFn gemv = t.w->type == core::WeightType::kBF16 ? kt.gemv_bf16 : kt.gemv_f16;
      gemv(x.cols, j1 - j0, x.data, t.w->bits() + j0, t.y.cols, t.b.empty() ? nullptr : t.b.data() + j0, t.y.data + j0);
    }
  });
}

// A short prompt's rows (at most kQ8IntegerRows) against a Q8_0 W run in integers too: every row is quantised once,
// then for each column chunk small enough to stay in L2 (kb block rows × nc columns × 36 bytes ≲ 128 KB) the integer
// GEMV runs row after row over it, so W is read from memory once. Each row's result is the GEMV's bit for bit (the
// same kernel on the same operands), so a prompt row equals a decoding step's. The float GEMM (below) would first
// dequantise all of W while packing it, which for a few rows costs more than the products (44 % of a short generate).
constexpr int kQ8IntegerRows = 32;

void q8_rows(core::ConstMatView x, const core::WeightSpan& w, std::span<const float> b, core::MatView y, std::size_t kb) {
  const kernels::KernelTable& kt = kernels::active_kernels();
  const auto B = static_cast<std::size_t>(kernels::kQ8Block);
  const auto rows = static_cast<std::size_t>(x.rows);
  std::vector<std::int8_t> xq(rows * kb * B);
  std::vector<float> xs(rows * kb);
  for (std::size_t i = 0; i < rows; ++i) {
    kt.quantize_q8(x.cols, x.data + static_cast<std::ptrdiff_t>(i) * x.ld, xq.data() + i * kb * B, xs.data() + i * kb);
  }
  const int nc = std::max(4, static_cast<int>(131072 / (kb * 36)) / 4 * 4);
  const std::int64_t blocks = (y.cols + 255) / 256;
  core::parallel_for(blocks, 1, 2.0 * x.rows * x.cols * y.cols, [&](std::int64_t begin, std::int64_t end, int) {
    const int j0 = static_cast<int>(begin * 256);
    const int j1 = static_cast<int>(std::min<std::int64_t>(end * 256, y.cols));
    for (int c0 = j0; c0 < j1; c0 += nc) {
      const int c1 = std::min(c0 + nc, j1);
      const std::int8_t* q = w.q8() + static_cast<std::ptrdiff_t>(c0) * kernels::kQ8Block;
      for (std::size_t i = 0; i < rows; ++i) {
        kt.gemv_q8(x.cols, c1 - c0, xq.data() + i * kb * B, xs.data() + i * kb, q, w.scales + c0, y.cols,
                   b.empty() ? nullptr : b.data() + c0, y.data + static_cast<std::ptrdiff_t>(i) * y.ld + c0);
      }
    }
  });
}

// x · W for a Q8_0 W [in, out] (kernels.h layout, ldb = out), weights and activations 8-bit as llama.cpp's: each row
// of x is quantised to Q8_0 blocks once (kernels.h QuantizeQ8Fn); one row (a decoding step) then runs the integer
// GEMV, up to kQ8IntegerRows rows (a short prompt) the same GEMV row by row (q8_rows), more rows (a long prompt) the
// float GEMM on those rows dequantised (xq · xs: the same activation values, so its numerics agree with a decoding
// step's up to float summation order). Column blocks of 256 go to the pool
// (a block of the layout holds one column, so a column range is a pointer offset).
void linear_q8(core::ConstMatView x, const core::WeightSpan& w, std::span<const float> b, core::MatView y) {
  const kernels::KernelTable& kt = kernels::active_kernels();
  const std::int64_t blocks = (y.cols + 255) / 256;
  const double flops = 2.0 * x.rows * x.cols * y.cols;
  const auto B = static_cast<std::size_t>(kernels::kQ8Block);
  const std::size_t kb = (static_cast<std::size_t>(x.cols) + B - 1) / B;  // Q8_0 blocks per row
  std::vector<std::int8_t> xq(kb * B);
  std::vector<float> xs(kb);
  std::vector<float> xd;  // prompt rows: quantised and dequantised, [rows, cols]
  if (x.rows > 1 && x.rows <= kQ8IntegerRows) {
    q8_rows(x, w, b, y, kb);
    return;
  }
  if (x.rows > 1) {
    xd.resize(static_cast<std::size_t>(x.rows) * static_cast<std::size_t>(x.cols));
    for (int i = 0; i < x.rows; ++i) {
      kt.quantize_q8(x.cols, x.data + static_cast<std::ptrdiff_t>(i) * x.ld, xq.data(), xs.data());
      float* row = xd.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(x.cols);
      for (int p = 0; p < x.cols; ++p) row[p] = static_cast<float>(xq[static_cast<std::size_t>(p)]) * xs[static_cast<std::size_t>(p) / B];
    }
  } else {
    kt.quantize_q8(x.cols, x.data, xq.data(), xs.data());
  }
  // one row: bound by reading W (gemv_flops: 36 bytes per 32 weights)
  const double work = x.rows == 1 ? gemv_flops(x, y, 36.0 / 32.0) : flops;
  const std::int64_t grain = x.rows == 1 ? gemv_grain(blocks, 1) : 1;
  core::parallel_for(blocks, grain, work, [&](std::int64_t begin, std::int64_t end, int) {
    const int j0 = static_cast<int>(begin * 256);
    const int j1 = static_cast<int>(std::min<std::int64_t>(end * 256, y.cols));
    const std::int8_t* q = w.q8() + static_cast<std::ptrdiff_t>(j0) * kernels::kQ8Block;
    const float* bias = b.empty() ? nullptr : b.data() + j0;
    if (x.rows == 1) {
      // column chunks of at most kGemvChunk: the GEMV sweeps its block rows over all its columns, adding into y each
      // time, so y's chunk stays in L1 (a tied head's 49,152-128,256 columns would not) while each block row's
      // chunk is one contiguous run of 64 KB
      constexpr int kGemvChunk = 2048;
      for (int c0 = j0; c0 < j1; c0 += kGemvChunk) {
        const int c1 = std::min(c0 + kGemvChunk, j1);
        kt.gemv_q8(x.cols, c1 - c0, xq.data(), xs.data(), w.q8() + static_cast<std::ptrdiff_t>(c0) * kernels::kQ8Block,
                   w.scales + c0, y.cols, bias == nullptr ? nullptr : b.data() + c0, y.data + c0);
      }
    } else {
      kt.gemm_nn_q8(x.rows, j1 - j0, x.cols, 1.0f, xd.data(), x.cols, q, w.scales + j0, y.cols, bias, y.data + j0, y.ld);
    }
  });
}

}  // namespace

void matmul_nn(core::ConstMatView a, core::ConstMatView b, core::MatView c, float alpha, const float* bias) {
  gemm(false, a.rows, b.cols, a.cols, alpha, a.data, a.ld, b.data, b.ld, bias, c.data, c.ld,
       kernels::active_kernels().gemm_nn);
}

void matmul_nt(core::ConstMatView a, core::ConstMatView b, core::MatView c, float alpha) {
  gemm(true, a.rows, b.rows, a.cols, alpha, a.data, a.ld, b.data, b.ld, nullptr, c.data, c.ld,
       kernels::active_kernels().gemm_nt);
}

void linear(core::ConstMatView x, const core::WeightSpan& wv, std::span<const float> b, core::MatView y) {
  if (wv.type == core::WeightType::kQ8_0) {
    linear_q8(x, wv, b, y);
    return;
  }
  if (!wv.is_f32()) {
    if (x.rows == 1) {
      const std::array<LinearTarget, 1> one{{{&wv, b, y}}};
      gemv_x16(x, one);
      return;
    }
    const kernels::KernelTable& kt = kernels::active_kernels();
    gemm(false, x.rows, y.cols, x.cols, 1.0f, x.data, x.ld, wv.bits(), y.cols, b.empty() ? nullptr : b.data(), y.data,
         y.ld, wv.type == core::WeightType::kBF16 ? kt.gemm_nn_bf16 : kt.gemm_nn_f16);
    return;
  }
  const std::span<const float> w = wv.f32();
  if (x.rows == 1) {
    // One row (a decoding step): y = b + Σ_k x_k W[k, :], row updates the compiler vectorises. The GEMM would
    // pack all of W into panels first, which for one row costs more than the product (GPT-2: 85 M floats per
    // token).
    // Column blocks go to the pool as the half-width GEMV's (gemv_x16).
    const auto n = static_cast<std::size_t>(y.cols);
    const std::int64_t blocks = (y.cols + kGemvCols - 1) / kGemvCols;
    core::parallel_for(blocks, gemv_grain(blocks, kGemvGrain), gemv_flops(x, y, 4.0),
                       [&](std::int64_t begin, std::int64_t end, int) {
      const auto j0 = static_cast<std::size_t>(begin * kGemvCols);
      const std::size_t j1 = std::min(static_cast<std::size_t>(end * kGemvCols), n);
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
  matmul_nn(x, core::ConstMatView{w.data(), x.cols, y.cols, y.cols}, y, 1.0f, b.empty() ? nullptr : b.data());
}

void linear_many(core::ConstMatView x, std::span<const LinearTarget> targets) {
  // one row, half-width matrices, at most kMaxMany of them: the GEMV over the concatenation of their column blocks
  bool fused = x.rows == 1 && targets.size() <= kMaxMany;
  for (const LinearTarget& t : targets) fused = fused && !t.w->is_f32() && t.w->q8() == nullptr;
  if (!fused) {
    for (const LinearTarget& t : targets) linear(x, *t.w, t.b, t.y);
    return;
  }
  gemv_x16(x, targets);
}

std::vector<float> linear(std::span<const float> x, int n, int in, const core::WeightSpan& w, int out,
                          std::span<const float> b) {
  std::vector<float> y(static_cast<std::size_t>(n) * static_cast<std::size_t>(out));
  linear(core::as_view(x, n, in), w, b, core::MatView{y.data(), n, out, out});
  return y;
}

void weight_row(const core::WeightSpan& w, std::size_t row, std::size_t cols, std::span<float> out) {
  if (w.is_f32()) {
    std::copy_n(w.f32().data() + row * cols, cols, out.begin());
    return;
  }
  if (const std::int8_t* q = w.q8()) {  // kernels.h's Q8_0 layout, ldb = cols
    const auto B = static_cast<std::size_t>(kernels::kQ8Block);
    for (std::size_t j = 0; j < cols; ++j) {
      const std::size_t blk = (row / B) * cols + j;
      out[j] = static_cast<float>(q[blk * B + row % B]) * w.scales[blk];
    }
    return;
  }
  const kernels::KernelTable& kt = kernels::active_kernels();
  (w.type == core::WeightType::kBF16 ? kt.cvt_bf16 : kt.cvt_f16)(cols, w.bits() + row * cols, out.data());
}

void weight_column(const core::WeightSpan& w, std::size_t rows, std::size_t cols, std::size_t col, std::span<float> out) {
  if (w.is_f32()) {
    for (std::size_t r = 0; r < rows; ++r) out[r] = w.f32()[r * cols + col];
    return;
  }
  if (const std::int8_t* q = w.q8()) {
    const auto B = static_cast<std::size_t>(kernels::kQ8Block);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t blk = (r / B) * cols + col;
      out[r] = static_cast<float>(q[blk * B + r % B]) * w.scales[blk];
    }
    return;
  }
  const kernels::KernelTable& kt = kernels::active_kernels();
  const auto cvt = w.type == core::WeightType::kBF16 ? kt.cvt_bf16 : kt.cvt_f16;
  for (std::size_t r = 0; r < rows; ++r) cvt(1, w.bits() + r * cols + col, &out[r]);
}

std::size_t table_rows(const core::WeightSpan& w, std::size_t cols) {
  if (w.q8() == nullptr) return w.size() / cols;
  const auto B = static_cast<std::size_t>(kernels::kQ8Block);
  return w.size() / ((cols + B - 1) / B * B);
}

void table_row(const core::WeightSpan& w, std::size_t row, std::size_t cols, std::span<float> out) {
  if (w.q8() == nullptr) {
    weight_row(w, row, cols, out);
    return;
  }
  weight_column(w, cols, table_rows(w, cols), row, out);  // row `row` of the table = column `row` of its transpose
}

void table_row_dots(std::span<const float> h, const core::WeightSpan& w, std::span<float> out) {
  const std::size_t d = h.size();
  if (w.q8() != nullptr) {
    // the transpose [d, rows] as a weights8 matrix: h · it, one row through linear_q8's integer GEMV
    const std::size_t rows = table_rows(w, d);
    std::vector<float> z(rows);
    linear_q8(core::ConstMatView{h.data(), 1, static_cast<int>(d), static_cast<int>(d)}, w, {},
              core::MatView{z.data(), 1, static_cast<int>(rows), static_cast<int>(rows)});
    std::copy_n(z.begin(), std::min(rows, out.size()), out.begin());
    return;
  }
  // the row-dots kernel over row ranges of the pool (each out[v] is the same operations whatever the split, kernels.h
  // RowDotsFn, so results equal the one-thread ones bit for bit; a 128,256 x 2,048 table is 0.5 GFLOP per token)
  const kernels::KernelTable& kt = kernels::active_kernels();
  core::parallel_for(static_cast<std::int64_t>(out.size()), 256, 2.0 * static_cast<double>(out.size()) * static_cast<double>(d),
                     [&](std::int64_t begin, std::int64_t end, int) {
                       const auto v0 = static_cast<std::size_t>(begin), rows = static_cast<std::size_t>(end - begin);
                       if (w.is_f32()) {
                         kt.row_dots(rows, d, h.data(), w.f32().data() + v0 * d, d, out.data() + v0);
                       } else {
                         (w.type == core::WeightType::kBF16 ? kt.row_dots_bf16 : kt.row_dots_f16)(
                             rows, d, h.data(), w.bits() + v0 * d, d, out.data() + v0);
                       }
                     });
}

}  // namespace attnscope::ops
