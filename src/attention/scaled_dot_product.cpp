// scaled_dot_product.cpp: scale·Q·Kᵀ, mask, softmax, ·V. Layer: attention (composes ops).
#include "attention/scaled_dot_product.h"

#include <cmath>

#include "core/check.h"
#include "ops/linear.h"
#include "ops/mask.h"
#include "ops/softmax.h"
#include "ops/validate.h"

namespace attnscope::attention {

core::Result<AttentionOutput> scaled_dot_product_attention(const SdpaArgs& a) {
  constexpr const char* fn = "scaledDotProductAttention";
  ATTN_TRY(core::check_positive(fn, "nq", a.nq));
  ATTN_TRY(core::check_positive(fn, "nk", a.nk));
  ATTN_TRY(core::check_positive(fn, "dk", a.dk));
  ATTN_TRY(core::check_positive(fn, "dv", a.dv));
  ATTN_TRY(ops::check_array(fn, "", "q", a.q, ops::Dims{"nq*dk", a.nq, a.dk}));
  ATTN_TRY(ops::check_array(fn, "", "k", a.k, ops::Dims{"nk*dk", a.nk, a.dk}));
  ATTN_TRY(ops::check_array(fn, "", "v", a.v, ops::Dims{"nk*dv", a.nk, a.dv}));
  ATTN_TRY(ops::check_mask(fn, "mask", a.mask, a.nq, a.nk));
  if (a.scale) ATTN_TRY(ops::check_finite_number(fn, "scale", *a.scale));
  const float scale = static_cast<float>(a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(a.dk)));

  const int nq = a.nq, nk = a.nk;
  const std::size_t n_scores = static_cast<std::size_t>(nq) * static_cast<std::size_t>(nk);
  AttentionOutput out;
  // 1. scores = Q Kᵀ, 2. times scale (folded into the GEMM's alpha)
  out.scores.resize(n_scores);
  const core::MatView scores{out.scores.data(), nq, nk, nk};
  ops::matmul_nt(core::as_view(a.q, nq, a.dk), core::as_view(a.k, nk, a.dk), scores, scale);
  ATTN_TRY(ops::check_result(fn, "scores", out.scores));  // before masking: any inf here is overflow
  // 3. mask: blocked entries become -inf
  ops::apply_attention_mask(scores, a.mask, a.causal);
  // 4-6. row max, exp and sum, normalize (an all-blocked row becomes zeros); 7. weighted sum of the values
  detail::softmax_and_pool(out, nq, nk, core::as_view(a.v, nk, a.dv));
  ATTN_TRY(ops::check_result(fn, "weights", out.weights));
  ATTN_TRY(ops::check_result(fn, "output", out.output));
  return out;
}

}  // namespace attnscope::attention
