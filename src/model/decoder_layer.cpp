// decoder_layer.cpp: causal self-attention, cross-attention, feed-forward; residuals and LayerNorms.
// Layer: model.
#include "model/decoder_layer.h"

#include "core/check.h"
#include "ops/activations.h"
#include "ops/validate.h"

namespace attnscope::model {

namespace {

core::Status check_attention_block(const char* fn, const char* prefix, const attention::MhaWeights& w, int d_model) {
  using ops::Dims;
  ATTN_TRY(attention::detail::check_mha_weights(fn, prefix, w, d_model, d_model, d_model, false));
  // The layer's attention biases are required (PyTorch's bias=True).
  ATTN_TRY(ops::check_array(fn, prefix, "bq", w.bq, Dims{"dModel", d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "bk", w.bk, Dims{"dModel", d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "bv", w.bv, Dims{"dModel", d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "bo", w.bo, Dims{"dModel", d_model}));
  return core::Status::Ok();
}

// One attention sub-block: query rows q_in [nq, d_model] attend to kv_in [nk, d_model].
attention::MhaOutput attend(const DecoderLayerArgs& a, std::span<const float> q_in, int nq,
                            std::span<const float> kv_in, int nk, const attention::MhaWeights& w,
                            std::span<const std::uint8_t> mask, bool causal) {
  attention::MhaArgs m;
  m.query = q_in;
  m.key = m.value = kv_in;
  m.nq = nq;
  m.nk = nk;
  m.d_model = m.kdim = m.vdim = a.d_model;
  m.num_heads = a.num_heads;
  m.w = w;
  m.mask = mask;
  m.causal = causal;
  m.keep_trace = a.keep_trace;
  m.fn = "transformerDecoderLayer";
  return attention::detail::multi_head_attention_unchecked(m);
}

// residual + block output, in place in the block output unless the trace keeps it.
std::vector<float> residual(std::span<const float> x, attention::MhaOutput& block, bool keep) {
  std::vector<float> r = keep ? block.output : std::move(block.output);
  ops::add(x, r, r);
  return r;
}

}  // namespace

core::Result<DecoderLayerOutput> decoder_layer(const DecoderLayerArgs& a) {
  constexpr const char* fn = "transformerDecoderLayer";
  ATTN_TRY(core::check_positive(fn, "n", a.n));
  ATTN_TRY(core::check_positive(fn, "m", a.m));
  ATTN_TRY(core::check_positive(fn, "dModel", a.d_model));
  ATTN_TRY(core::check_positive(fn, "numHeads", a.num_heads));
  ATTN_TRY(core::check_positive(fn, "dFF", a.d_ff));
  ATTN_TRY(ops::check_divisible(fn, a.d_model, a.num_heads));
  ATTN_TRY(ops::check_array(fn, "", "x", a.x, ops::Dims{"n*dModel", a.n, a.d_model}));
  ATTN_TRY(ops::check_array(fn, "", "memory", a.memory, ops::Dims{"m*dModel", a.m, a.d_model}));
  ATTN_TRY(check_attention_block(fn, "params.self.", a.self_attn, a.d_model));
  ATTN_TRY(check_attention_block(fn, "params.cross.", a.cross_attn, a.d_model));
  ATTN_TRY(detail::check_feed_forward(fn, a.ff, a.d_model, a.d_ff));
  ATTN_TRY(detail::check_norm(fn, "norm1Gamma", "norm1Beta", a.norm1, a.d_model));
  ATTN_TRY(detail::check_norm(fn, "norm2Gamma", "norm2Beta", a.norm2, a.d_model));
  ATTN_TRY(detail::check_norm(fn, "norm3Gamma", "norm3Beta", a.norm3, a.d_model));
  ATTN_TRY(ops::check_positive_finite(fn, "eps", a.eps));
  ATTN_TRY(ops::check_mask(fn, "memoryMask", a.memory_mask, a.n, a.m, "n*m"));
  ATTN_TRY(ops::check_mask(fn, "selfMask", a.self_mask, a.n, a.n, "n*n"));

  const int n = a.n, d_model = a.d_model;
  const bool keep = a.keep_trace;
  DecoderLayerOutput out;
  std::vector<float> x1, x2;
  if (!a.norm_first) {
    // Post-norm.
    // 1. x1 = norm1(x + SA(x)), causal self-attention
    attention::MhaOutput sa = attend(a, a.x, n, a.x, n, a.self_attn, a.self_mask, a.causal);
    if (sa.overflowed) return ops::overflow_error(fn, "selfWeights");
    std::vector<float> r1 = residual(a.x, sa, keep);
    x1 = detail::norm(r1, n, d_model, a.norm1, a.eps);
    // 2. x2 = norm2(x1 + CA(x1, memory))
    attention::MhaOutput ca = attend(a, x1, n, a.memory, a.m, a.cross_attn, a.memory_mask, false);
    if (ca.overflowed) return ops::overflow_error(fn, "crossWeights");
    std::vector<float> r2 = residual(x1, ca, keep);
    x2 = detail::norm(r2, n, d_model, a.norm2, a.eps);
    // 3. out = norm3(x2 + FF(x2))
    std::vector<float> f = detail::feed_forward(x2, n, d_model, a.d_ff, a.ff, a.activation,
                                                keep ? &out.ff_hidden : nullptr);
    if (keep) out.ff_output = f;
    ops::add(x2, f, f);
    out.output = detail::norm(f, n, d_model, a.norm3, a.eps);
    out.self_weights = keep ? sa.weights : std::move(sa.weights);
    out.cross_weights = keep ? ca.weights : std::move(ca.weights);
    if (keep) {
      out.self_attn = std::move(sa);
      out.cross_attn = std::move(ca);
      out.residual1 = std::move(r1);
      out.norm1 = std::move(x1);
      out.residual2 = std::move(r2);
      out.norm2 = std::move(x2);
      out.residual3 = std::move(f);
      out.norm3 = out.output;
    }
  } else {
    // Pre-norm.
    // 1. x1 = x + SA(norm1(x)), causal self-attention
    std::vector<float> xn1 = detail::norm(a.x, n, d_model, a.norm1, a.eps);
    attention::MhaOutput sa = attend(a, xn1, n, xn1, n, a.self_attn, a.self_mask, a.causal);
    if (sa.overflowed) return ops::overflow_error(fn, "selfWeights");
    x1 = residual(a.x, sa, keep);
    // 2. x2 = x1 + CA(norm2(x1), memory)
    std::vector<float> xn2 = detail::norm(x1, n, d_model, a.norm2, a.eps);
    attention::MhaOutput ca = attend(a, xn2, n, a.memory, a.m, a.cross_attn, a.memory_mask, false);
    if (ca.overflowed) return ops::overflow_error(fn, "crossWeights");
    x2 = residual(x1, ca, keep);
    // 3. out = x2 + FF(norm3(x2))
    std::vector<float> xn3 = detail::norm(x2, n, d_model, a.norm3, a.eps);
    std::vector<float> f = detail::feed_forward(xn3, n, d_model, a.d_ff, a.ff, a.activation,
                                                keep ? &out.ff_hidden : nullptr);
    if (keep) out.ff_output = f;
    ops::add(x2, f, f);
    out.output = std::move(f);
    out.self_weights = keep ? sa.weights : std::move(sa.weights);
    out.cross_weights = keep ? ca.weights : std::move(ca.weights);
    if (keep) {
      out.self_attn = std::move(sa);
      out.cross_attn = std::move(ca);
      out.residual1 = std::move(x1);
      out.norm1 = std::move(xn1);
      out.residual2 = std::move(x2);
      out.norm2 = std::move(xn2);
      out.residual3 = out.output;
      out.norm3 = std::move(xn3);
    }
  }
  ATTN_TRY(ops::check_result(fn, "output", out.output));
  ATTN_TRY(ops::check_result(fn, "selfWeights", out.self_weights));
  ATTN_TRY(ops::check_result(fn, "crossWeights", out.cross_weights));
  return out;
}

}  // namespace attnscope::model
