// simple.cpp: X Xᵀ -> softmax -> · X. Layer: attention (composes ops).
#include "attention/simple.h"

#include "core/check.h"
#include "ops/linear.h"
#include "ops/mask.h"
#include "ops/softmax.h"
#include "ops/validate.h"

namespace attnscope::attention {

core::Result<AttentionOutput> simple_self_attention(std::span<const float> x, int n, int d) {
  constexpr const char* fn = "simpleSelfAttention";
  ATTN_TRY(core::check_positive(fn, "n", n));
  ATTN_TRY(core::check_positive(fn, "d", d));
  ATTN_TRY(ops::check_array(fn, "", "x", x, ops::Dims{"n*d", n, d}));
  const std::size_t nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const core::ConstMatView xv = core::as_view(x, n, d);
  AttentionOutput out;
  // 1. scores[i, j] = x_i · x_j (each row of X is both a query and a key)
  out.scores.resize(nn);
  ops::matmul_nt(xv, xv, core::MatView{out.scores.data(), n, n, n});
  ATTN_TRY(ops::check_result(fn, "scores", out.scores));
  // 2. weights = row softmax(scores): row max, exp and sum, normalize; 3. context = weights · X
  detail::softmax_and_pool(out, n, n, xv);
  ATTN_TRY(ops::check_result(fn, "weights", out.weights));
  ATTN_TRY(ops::check_result(fn, "context", out.output));
  return out;
}

AttentionOutput simple_self_attention_masked(std::span<const float> x, int n, int d, int valid_keys,
                                             bool* overflowed) {
  const core::ConstMatView xv = core::as_view(x, n, d);
  AttentionOutput out;
  // 1. scores[i, j] = x_i · x_j; 2. keys j >= valid_keys blocked (-inf)
  out.scores.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  const core::MatView s{out.scores.data(), n, n, n};
  ops::matmul_nt(xv, xv, s);
  *overflowed = !ops::all_finite(out.scores);
  if (valid_keys < n) ops::apply_valid_len(s, valid_keys);
  // 3. weights = row softmax(scores); 4. context = weights · X
  detail::softmax_and_pool(out, n, n, xv);
  return out;
}

}  // namespace attnscope::attention
