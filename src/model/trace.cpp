// trace.cpp: what a layer keeps of its attention, and the derived numbers of a full trace. Layer: model.
#include "model/trace.h"

#include <cmath>
#include <limits>
#include <span>
#include <utility>

#include "ops/linear.h"

namespace attnscope::model {

void keep_attention(AttentionTrace& t, attention::MhaOutput& m, bool full) {
  t.weights = std::move(m.weights);
  if (!full) return;
  t.q = std::move(m.q);
  t.k = std::move(m.k);
  t.v = std::move(m.v);
  t.scores = std::move(m.scores);
  t.concat = std::move(m.concat);
  t.output = std::move(m.output);
}

void fill_attention_details(AttentionTrace& t, int num_heads, int n, int m, int head_dim) {
  const auto H = static_cast<std::size_t>(num_heads), N = static_cast<std::size_t>(n),
             M = static_cast<std::size_t>(m), D = static_cast<std::size_t>(head_dim);
  // dots[h, i, j] = q_i · k_j over head h's columns (what the scale multiplies)
  if (!t.q.empty() && !t.k.empty()) {
    t.dots.resize(H * N * M);
    const int hd = head_dim, dm = num_heads * head_dim;
    for (std::size_t h = 0; h < H; ++h) {
      // Q_h K_hᵀ, the GEMM of the attention's step 2 without its scale
      ops::matmul_nt(core::ConstMatView{t.q.data() + h * D, n, hd, dm}, core::ConstMatView{t.k.data() + h * D, m, hd, dm},
                     core::MatView{t.dots.data() + h * N * M, n, m, m});
    }
  } else {
    t.dots = t.scores;  // the weightless attention: scores are the dot products
  }
  // the softmax's row max and Σ exp(s − max) over the unmasked (finite) scores
  t.row_max.assign(H * N, 0.0f);
  t.row_sum.assign(H * N, 0.0f);
  for (std::size_t r = 0; r < H * N; ++r) {
    const float* s = t.scores.data() + r * M;
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < M; ++j) mx = s[j] > mx ? s[j] : mx;
    if (std::isinf(mx)) continue;
    double sum = 0.0;
    for (std::size_t j = 0; j < M; ++j) sum += std::exp(static_cast<double>(s[j]) - mx);
    t.row_max[r] = mx;
    t.row_sum[r] = static_cast<float>(sum);
  }
}

}  // namespace attnscope::model
