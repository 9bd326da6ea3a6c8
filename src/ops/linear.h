// linear.h: matrix products for the layers above, as thin wrappers over the active KernelTable.
// Layer: ops. These are internal building blocks: they do not validate (callers have checked shapes
// and finiteness) and require every dimension >= 1. Views carry their leading dimension, so a head's
// columns of a [n, d_model] projection are passed without copying (ld = d_model).
#pragma once

#include <span>
#include <vector>

#include "core/tensor.h"
#include "core/weights.h"

namespace attnscope::ops {

// c[m,n] = alpha * a[m,k] · b[k,n] (+ bias[n] when bias != nullptr). Overwrites c.
void matmul_nn(core::ConstMatView a, core::ConstMatView b, core::MatView c, float alpha = 1.0f,
               const float* bias = nullptr);

// c[m,n] = alpha * a[m,k] · b[n,k]ᵀ: the Q·Kᵀ form, each row of b is a key. Overwrites c.
void matmul_nt(core::ConstMatView a, core::ConstMatView b, core::MatView c, float alpha = 1.0f);

// y[n, out] = x[n, in] · w[in, out] + b[out]; w is stored [in, out] (contiguous), b may be empty. w may be
// half-width (BF16 / F16, core/weights.h): widened inside the kernels, never copied whole.
void linear(core::ConstMatView x, const core::WeightSpan& w, std::span<const float> b, core::MatView y);

// One input against several weight matrices of its width (a layer's Q, K and V; the gate and up products): y_i =
// x · w_i + b_i, each exactly what linear(x, w_i, b_i, y_i) gives, bit for bit. One row (a decoding step) against
// half-width matrices runs every matrix's column blocks in one pool loop: one hand-off instead of one a matrix, and a
// matrix too small to split alone (SmolLM2's 576 x 192 K and V) shares the threads too. Otherwise linear() a matrix.
struct LinearTarget {
  const core::WeightSpan* w;
  std::span<const float> b;
  core::MatView y;
};
void linear_many(core::ConstMatView x, std::span<const LinearTarget> targets);

// Allocating form: returns x[n, in] · w[in, out] + b as a new [n, out] row-major vector.
std::vector<float> linear(std::span<const float> x, int n, int in, const core::WeightSpan& w, int out,
                          std::span<const float> b);

// Row `row` of a [rows, cols] weight table (an embedding, a projection), widened to float32 into out (cols floats):
// float32, half-width or Q8_0.
void weight_row(const core::WeightSpan& w, std::size_t row, std::size_t cols, std::span<float> out);
// Column `col` of a [rows, cols] weight matrix (a head's [d, V] lm_head: one token's direction), widened to float32
// into out (rows floats). Float32, half-width and Q8_0 (kernels.h's block layout, ldb = cols).
void weight_column(const core::WeightSpan& w, std::size_t rows, std::size_t cols, std::size_t col, std::span<float> out);

// A [rows, cols] token table (an embedding, a tied head) read by rows. Float32 and half-width tables are row-major; a
// Q8_0 table (weights8's tied head) is quantised along each row and stored as kernels.h's layout of its transpose
// [cols, rows] (model::Parameters::allocate_q8 `table`). table_rows: the rows it holds.
std::size_t table_rows(const core::WeightSpan& w, std::size_t cols);
// Row `row`, widened (Q8_0: dequantised, q · scale) to float32 into out (cols floats).
void table_row(const core::WeightSpan& w, std::size_t row, std::size_t cols, std::span<float> out);
// out[v] = h · row v for v < out.size() (a tied head's logits; h.size() = cols), rows split over the pool. Float32 /
// half-width: the row-dots kernel (kernels.h RowDotsFn: rows against one h a few at a time). Q8_0: h is quantised to
// Q8_0 too and the rows run the integer GEMV (kernels.h GemvQ8Fn), as any weights8 matrix product.
void table_row_dots(std::span<const float> h, const core::WeightSpan& w, std::span<float> out);

}  // namespace attnscope::ops
