// multi_head.cpp: W_Q/W_K/W_V projections, per-head scaled dot-product attention on strided views,
// concat, W_O. Layer: attention (composes ops; never includes the kernels layer).
#include "attention/multi_head.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "core/check.h"
#include "core/parallel.h"
#include "ops/linear.h"
#include "ops/mask.h"
#include "ops/softmax.h"
#include "ops/validate.h"

namespace attnscope::attention {

namespace detail {

core::Status check_mha_weights(const char* fn, const char* prefix, const MhaWeights& w, int d_model, int kdim,
                               int vdim, bool kv_dims_named) {
  using ops::Dims;
  using ops::Need;
  ATTN_TRY(ops::check_array(fn, prefix, "wq", w.wq.f32(), Dims{"dModel*dModel", d_model, d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "wk", w.wk.f32(), Dims{kv_dims_named ? "kdim*dModel" : "dModel*dModel", kdim, d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "wv", w.wv.f32(), Dims{kv_dims_named ? "vdim*dModel" : "dModel*dModel", vdim, d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "wo", w.wo.f32(), Dims{"dModel*dModel", d_model, d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "bq", w.bq, Dims{"dModel", d_model}, Need::kOptional));
  ATTN_TRY(ops::check_array(fn, prefix, "bk", w.bk, Dims{"dModel", d_model}, Need::kOptional));
  ATTN_TRY(ops::check_array(fn, prefix, "bv", w.bv, Dims{"dModel", d_model}, Need::kOptional));
  ATTN_TRY(ops::check_array(fn, prefix, "bo", w.bo, Dims{"dModel", d_model}, Need::kOptional));
  return core::Status::Ok();
}

MhaOutput attend_projected(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                           const MhaArgs& a) {
  const int nq = a.nq, nk = a.nk, d_model = a.d_model, num_heads = a.num_heads;
  const int head_dim = a.head_dim > 0 ? a.head_dim : d_model / num_heads;
  const int kv_heads = a.kv_heads > 0 ? a.kv_heads : num_heads, group = num_heads / kv_heads;
  const int inner = num_heads * head_dim, kv_inner = kv_heads * head_dim;  // row strides of q / concat and k, v
  const std::size_t n_scores = static_cast<std::size_t>(nq) * static_cast<std::size_t>(nk);
  MhaOutput out;

  // Per-head weights [num_heads, nq, nk]; without need_weights one [nq, nk] buffer per pool thread is reused by
  // the pieces that thread runs.
  const bool all_heads = a.need_weights || a.keep_trace;
  // Heads go to the thread pool (core/parallel.h) when there are enough of them and enough work, cut into `parts`
  // ranges of query rows (multiples of 4, the GEMM's row tile) so that the pieces divide evenly over the threads
  // whatever the head count: 9 heads (SmolLM2) on 2 threads are 18 half-heads, 9 a thread, where whole heads gave
  // one thread 5 and the other 4. Each piece writes only its own rows of its head's weights, scores and concat
  // columns, and a row's scores, softmax and weights · V are the same computation in any piece (the GEMMs' rows
  // are independent), so the results do not depend on the split. With fewer heads than threads the heads run in
  // turn and their GEMMs split instead.
  const double head_flops = 2.0 * nq * nk * (2.0 * head_dim) + 5.0 * nq * nk;
  const int threads = core::thread_count();
  const int parts = num_heads >= threads && nq >= 8 * threads ? threads / std::gcd(num_heads, threads) : 1;
  const std::int64_t pieces = static_cast<std::int64_t>(num_heads) * parts;
  const int chunks = num_heads >= threads ? core::parallel_chunks(pieces, 1, head_flops * num_heads) : 1;
  std::vector<float> weights((all_heads ? static_cast<std::size_t>(num_heads) : static_cast<std::size_t>(chunks)) *
                             n_scores);
  if (a.keep_trace) out.scores.resize(static_cast<std::size_t>(num_heads) * n_scores);
  std::vector<float> concat(static_cast<std::size_t>(nq) * static_cast<std::size_t>(inner));
  std::atomic<bool> overflowed{false};  // set by any head (no allocation: see core::LoopBody)
  const float scale = static_cast<float>(a.scale > 0.0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(head_dim)));
  const float softcap = static_cast<float>(a.softcap);

  // Query rows [r0, r1) of head h.
  const auto attend_rows = [&](int h, int r0, int r1, int chunk) {
    // Head h is columns [h*head_dim, (h+1)*head_dim) of Q and concat, and of K, V kv head g = h / group
    // (repeat_kv): strided views, ld = inner or kv_inner (both d_model without grouping).
    const int g = h / group, rows = r1 - r0;
    const std::size_t row0 = static_cast<std::size_t>(r0), cells = static_cast<std::size_t>(rows) * nk;
    const core::ConstMatView q_h{q.data() + row0 * inner + h * head_dim, rows, head_dim, inner};
    const core::ConstMatView k_h{k.data() + g * head_dim, nk, head_dim, kv_inner};
    const core::ConstMatView v_h{v.data() + g * head_dim, nk, head_dim, kv_inner};
    const core::MatView concat_h{concat.data() + row0 * inner + h * head_dim, rows, head_dim, inner};
    const std::size_t at = static_cast<std::size_t>(h) * n_scores + row0 * nk;  // rows r0.. of head h in [H, nq, nk]
    float* weights_h = weights.data() + static_cast<std::size_t>(all_heads ? h : chunk) * n_scores + row0 * nk;
    const core::MatView att_h{weights_h, rows, nk, nk};
    // 2. scores = Q_h K_hᵀ (GEMM nt form), 3. times 1/sqrt(head_dim) (the GEMM's alpha)
    ops::matmul_nt(q_h, k_h, att_h, scale);
    if (!ops::all_finite(std::span<const float>(weights_h, cells))) overflowed.store(true, std::memory_order_relaxed);
    // 3b. soft-capping (Gemma 2's attn_logit_softcapping): tanh(s / c) · c
    if (softcap > 0.0f) {
      for (std::size_t i = 0; i < cells; ++i) weights_h[i] = softcap * std::tanh(weights_h[i] / softcap);
    }
    // 3c. an additive bias per head (T5's position_bias, T5Attention.forward: scores += position_bias)
    if (!a.score_bias.empty()) {
      const float* b = a.score_bias.data() + at;
      for (std::size_t i = 0; i < cells; ++i) weights_h[i] += b[i];
    }
    // 4. mask: blocked entries become -inf
    ops::apply_attention_mask(att_h, a.mask.empty() ? a.mask : a.mask.subspan(row0 * nk, cells), a.causal, r0);
    if (a.keep_trace) std::copy(weights_h, weights_h + cells, out.scores.data() + at);
    // 5-7. row max, exp and sum, normalize (in place; an all-blocked row becomes zeros)
    ops::masked_softmax_rows(att_h);
    if (!a.head_keep.empty() && a.head_keep[static_cast<std::size_t>(h)] == 0) std::fill_n(weights_h, cells, 0.0f);
    // 8. weighted sum of the values into this head's columns of concat
    ops::matmul_nn(att_h, v_h, concat_h);
    if (!a.head_keep.empty() && a.head_keep[static_cast<std::size_t>(h)] == 2) {
      for (int i = r0; i < r1; ++i) {
        const std::size_t c = static_cast<std::size_t>(i) * inner + static_cast<std::size_t>(h) * head_dim;
        std::copy_n(a.head_values.data() + c, head_dim, concat.data() + c);
      }
    }
  };
  if (chunks > 1) {
    // piece p: head p / parts, rows part p % parts
    const auto row = [&](int part) { return part == parts ? nq : nq * part / parts / 4 * 4; };
    core::parallel_for(pieces, 1, head_flops * num_heads,
                       [&](std::int64_t begin, std::int64_t end, int chunk) {
                         for (auto p = begin; p < end; ++p) {
                           const int h = static_cast<int>(p / parts), part = static_cast<int>(p % parts);
                           attend_rows(h, row(part), row(part + 1), chunk);
                         }
                       });
  } else {
    for (int h = 0; h < num_heads; ++h) attend_rows(h, 0, nq, 0);
  }
  out.overflowed = overflowed.load(std::memory_order_relaxed);

  // 9. output = concat · W_O + b_O [nq, d_model]
  out.output = ops::linear(concat, nq, inner, a.w.wo, d_model, a.w.bo);
  if (all_heads) out.weights = std::move(weights);
  if (a.keep_trace) out.concat = std::move(concat);
  return out;
}

MhaOutput multi_head_attention_unchecked(const MhaArgs& a) {
  // 1. projections: Q = query·W_Q + b_Q [nq, d_model], K = key·W_K + b_K [nk, d_model], V likewise.
  std::vector<float> q = ops::linear(a.query, a.nq, a.d_model, a.w.wq, a.d_model, a.w.bq);
  std::vector<float> k = ops::linear(a.key, a.nk, a.kdim, a.w.wk, a.d_model, a.w.bk);
  std::vector<float> v = ops::linear(a.value, a.nk, a.vdim, a.w.wv, a.d_model, a.w.bv);
  // 2-9.
  MhaOutput out = attend_projected(q, k, v, a);
  if (a.keep_trace) {
    out.q = std::move(q);
    out.k = std::move(k);
    out.v = std::move(v);
  }
  return out;
}

namespace {
core::Status check_mha_dims(const char* fn, int d_model, int num_heads, int kdim, int vdim) {
  ATTN_TRY(core::check_positive(fn, "dModel", d_model));
  ATTN_TRY(core::check_positive(fn, "numHeads", num_heads));
  ATTN_TRY(core::check_positive(fn, "kdim", kdim));
  ATTN_TRY(core::check_positive(fn, "vdim", vdim));
  return ops::check_divisible(fn, d_model, num_heads);
}
}  // namespace

core::Status check_mha_config(const char* fn, int d_model, int num_heads, int kdim, int vdim, const MhaWeights& w) {
  ATTN_TRY(check_mha_dims(fn, d_model, num_heads, kdim, vdim));
  return check_mha_weights(fn, "", w, d_model, kdim, vdim);
}

}  // namespace detail

core::Result<MhaOutput> multi_head_attention(const MhaArgs& a) {
  const char* fn = a.fn;
  ATTN_TRY(core::check_positive(fn, "nq", a.nq));
  ATTN_TRY(core::check_positive(fn, "nk", a.nk));
  ATTN_TRY(detail::check_mha_dims(fn, a.d_model, a.num_heads, a.kdim, a.vdim));
  ATTN_TRY(ops::check_array(fn, "", "query", a.query, ops::Dims{"nq*dModel", a.nq, a.d_model}));
  // key/value default to query/key: skip re-scanning the same memory.
  if (a.key.data() != a.query.data() || a.key.size() != a.query.size()) {
    ATTN_TRY(ops::check_array(fn, "", "key", a.key, ops::Dims{"nk*kdim", a.nk, a.kdim}));
  } else if (a.nk != a.nq || a.kdim != a.d_model) {
    ATTN_TRY(core::check_length(fn, "key", a.key.size(), ops::Dims{"nk*kdim", a.nk, a.kdim}.count(),
                                ops::Dims{"nk*kdim", a.nk, a.kdim}.text()));
  }
  if (a.value.data() != a.key.data() || a.value.size() != a.key.size()) {
    ATTN_TRY(ops::check_array(fn, "", "value", a.value, ops::Dims{"nk*vdim", a.nk, a.vdim}));
  } else if (a.vdim != a.kdim) {
    ATTN_TRY(core::check_length(fn, "value", a.value.size(), ops::Dims{"nk*vdim", a.nk, a.vdim}.count(),
                                ops::Dims{"nk*vdim", a.nk, a.vdim}.text()));
  }
  if (!a.weights_checked) ATTN_TRY(detail::check_mha_weights(fn, "", a.w, a.d_model, a.kdim, a.vdim));
  ATTN_TRY(ops::check_mask(fn, "mask", a.mask, a.nq, a.nk));
  MhaOutput out = detail::multi_head_attention_unchecked(a);
  if (out.overflowed) return ops::overflow_error(fn, "scores");
  ATTN_TRY(ops::check_result(fn, "weights", out.weights));
  ATTN_TRY(ops::check_result(fn, "output", out.output));
  return out;
}

}  // namespace attnscope::attention
