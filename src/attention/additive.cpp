// additive.cpp: project queries and keys, tanh of their sums, score with wv, mask, softmax, ·V.
// Layer: attention (composes ops).
#include "attention/additive.h"

#include <string>
#include <vector>

#include "core/check.h"
#include "ops/activations.h"
#include "ops/linear.h"
#include "ops/mask.h"
#include "ops/softmax.h"
#include "ops/validate.h"

namespace attnscope::attention {

core::Result<AttentionOutput> additive_attention(const AdditiveArgs& a) {
  constexpr const char* fn = "additiveAttention";
  using ops::Dims;
  ATTN_TRY(core::check_positive(fn, "nq", a.nq));
  ATTN_TRY(core::check_positive(fn, "nk", a.nk));
  ATTN_TRY(core::check_positive(fn, "dq", a.dq));
  ATTN_TRY(core::check_positive(fn, "dk", a.dk));
  ATTN_TRY(core::check_positive(fn, "dv", a.dv));
  ATTN_TRY(core::check_positive(fn, "hidden", a.hidden));
  ATTN_TRY(ops::check_array(fn, "", "queries", a.queries, Dims{"nq*dq", a.nq, a.dq}));
  ATTN_TRY(ops::check_array(fn, "", "keys", a.keys, Dims{"nk*dk", a.nk, a.dk}));
  ATTN_TRY(ops::check_array(fn, "", "values", a.values, Dims{"nk*dv", a.nk, a.dv}));
  ATTN_TRY(ops::check_array(fn, "", "wq", a.wq, Dims{"dq*hidden", a.dq, a.hidden}));
  ATTN_TRY(ops::check_array(fn, "", "wk", a.wk, Dims{"dk*hidden", a.dk, a.hidden}));
  ATTN_TRY(ops::check_array(fn, "", "wv", a.wv, Dims{"hidden", a.hidden}));
  if (a.valid_len && (*a.valid_len < 0 || *a.valid_len > a.nk)) {
    return core::range_error(fn, "validLen", "validLen (" + std::to_string(*a.valid_len) +
                                                 ") must be an integer from 0 to nk (" + std::to_string(a.nk) + ")");
  }
  const int nq = a.nq, nk = a.nk, hidden = a.hidden;
  const int valid = a.valid_len.value_or(nk);

  // 1. projections: qp = queries·Wq [nq, hidden], kp = keys·Wk [nk, hidden] (no biases, as d2l).
  const std::vector<float> qp = ops::linear(a.queries, nq, a.dq, a.wq, hidden, {});
  const std::vector<float> kp = ops::linear(a.keys, nk, a.dk, a.wk, hidden, {});

  AttentionOutput out;
  out.scores.resize(static_cast<std::size_t>(nq) * static_cast<std::size_t>(nk));
  const core::MatView scores{out.scores.data(), nq, nk, nk};
  // 2. scores[i, j] = wv · tanh(qp_i + kp_j) for the valid keys; the feature buffer is reused.
  std::vector<float> feature(static_cast<std::size_t>(hidden));
  for (int i = 0; i < nq; ++i) {
    const std::span<const float> qp_i(qp.data() + static_cast<std::size_t>(i) * hidden, hidden);
    for (int j = 0; j < valid; ++j) {
      const std::span<const float> kp_j(kp.data() + static_cast<std::size_t>(j) * hidden, hidden);
      ops::add(qp_i, kp_j, feature);
      ops::tanh(feature, feature);
      scores.at(i, j) = ops::dot(a.wv, feature);
    }
  }
  for (int i = 0; i < nq; ++i) {  // the unmasked scores: any inf here is float32 overflow
    ATTN_TRY(ops::check_result(fn, "scores", std::span<const float>(&scores.at(i, 0), static_cast<std::size_t>(valid))));
  }
  // 3. mask: keys j >= validLen become -inf
  ops::apply_valid_len(scores, valid);
  // 4-6. row max, exp and sum, normalize (validLen 0: every row is zeros); 7. weighted sum of the values
  detail::softmax_and_pool(out, nq, nk, core::as_view(a.values, nk, a.dv));
  ATTN_TRY(ops::check_result(fn, "weights", out.weights));
  ATTN_TRY(ops::check_result(fn, "output", out.output));
  return out;
}

}  // namespace attnscope::attention
