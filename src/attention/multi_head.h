// multi_head.h: multi-head attention as torch.nn.MultiheadAttention(batch_first=True, kdim, vdim) with
// need_weights=True, average_attn_weights=False. Layer: attention.
//
// Shapes: query [nq, d_model], key [nk, kdim], value [nk, vdim]; weights stored [in, out]
// (PyTorch stores [out, in]): wq [d_model, d_model], wk [kdim, d_model], wv [vdim, d_model],
// wo [d_model, d_model]; biases [d_model] or empty (= zero). head_dim = d_model / num_heads; head h
// owns columns h*head_dim .. of the projections. Scale 1/sqrt(head_dim).
// Difference from PyTorch: a query row whose keys are all blocked gets zero weights and a zero
// attention row before W_O, so its output row is exactly bo; PyTorch returns NaN for that row.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/weights.h"

namespace attnscope::attention {

struct MhaWeights {
  core::WeightSpan wq, wk, wv, wo;  // [in,out] layout; a checkpoint's may be half-width (core/weights.h)
  std::span<const float> bq, bk, bv, bo;  // biases optional (empty = zero)
};

struct MhaArgs {
  std::span<const float> query, key, value;  // key/value: the caller passes query/key when not given
  int nq = 0, nk = 0, d_model = 0, num_heads = 0, kdim = 0, vdim = 0;
  MhaWeights w;
  std::span<const std::uint8_t> mask;  // empty or nq*nk, 1 = may attend
  bool causal = false;                 // block key j > i (top-left); combines with mask
  bool need_weights = true;
  bool keep_trace = false;               // fill q/k/v/scores/concat below (for the visualiser)
  // Empty, or num_heads entries: a head with 0 is ablated (run option `ablate`): its weights are zero, as Hugging
  // Face's head_mask multiplies them, and so is its weights · V (its columns of concat, before W_O).
  std::span<const std::uint8_t> head_keep;
  // With head_keep: a head whose entry is 2 keeps its weights but its weights · V (its columns of concat) is
  // replaced by these columns, [nq, num_heads·head_dim] (mean ablation, activation patching: model/inside.h).
  std::span<const float> head_values;
  // The weights w passed detail::check_mha_config for these d_model/num_heads/kdim/vdim when the caller
  // stored them (a prepared module): skip re-scanning them on every call.
  bool weights_checked = false;
  const char* fn = "multiHeadAttention";  // name used in error messages (layers pass their own)
  // Decoder checkpoints (Llama, Gemma, ...), read by detail::attend_projected only; 0 = the defaults above.
  // Grouped-query attention: q [nq, num_heads·head_dim], k and v [nk, kv_heads·head_dim], query head h reading
  // kv head h / (num_heads / kv_heads) (Hugging Face's repeat_kv); the output projection wo is
  // [num_heads·head_dim, d_model].
  int kv_heads = 0;      // default num_heads
  int head_dim = 0;      // default d_model / num_heads
  double scale = 0.0;    // default 1 / sqrt(head_dim) (Gemma 2/3: query_pre_attn_scalar^-0.5)
  double softcap = 0.0;  // > 0: scores = tanh(scores / softcap) · softcap after scaling, before the mask (Gemma 2)
  // Empty, or [num_heads, nq, nk]: added to the scaled scores before the mask (T5's relative position bias).
  std::span<const float> score_bias;
};

struct MhaOutput {
  std::vector<float> output;   // [nq, d_model]
  std::vector<float> weights;  // [num_heads, nq, nk] if need_weights or keep_trace (never averaged)
  // keep_trace only: projections (head h = columns h*head_dim..), scaled+masked scores (-inf where
  // blocked), concat of heads before W_O
  std::vector<float> q, k, v;   // [nq,d_model], [nk,d_model], [nk,d_model]
  std::vector<float> scores;    // [num_heads, nq, nk]
  std::vector<float> concat;    // [nq, d_model]
  // Set when a raw score (before masking) was not finite although every input was: float32 overflow.
  // multi_head_attention() and the layers turn it into an error ("scores is not finite: ...").
  bool overflowed = false;
};

// JS multiHeadAttention(...) -> { output, weights }. Validates sizes, lengths, finiteness, the mask
// and dModel % numHeads (messages use a.fn and the JS argument names).
core::Result<MhaOutput> multi_head_attention(const MhaArgs& a);

namespace detail {

// For the layers (model/): checks the weights of one attention block, naming them prefix + "wq" etc.
// (e.g. "params.self.wq"). Sizes must already be known positive and d_model % num_heads == 0.
// Layers have no kdim/vdim arguments (kv_dims_named = false): their messages say "dModel*dModel".
core::Status check_mha_weights(const char* fn, const char* prefix, const MhaWeights& w, int d_model, int kdim,
                               int vdim, bool kv_dims_named = true);

// The part of multi_head_attention's checks that does not depend on the call's inputs: dModel, numHeads,
// kdim, vdim positive, dModel % numHeads == 0, and every weight (length and finiteness). A prepared module
// (bindings: createMultiHeadAttention) runs it once when it stores the weights.
core::Status check_mha_config(const char* fn, int d_model, int num_heads, int kdim, int vdim, const MhaWeights& w);

// The computation without any validation: callers have checked everything multi_head_attention checks.
MhaOutput multi_head_attention_unchecked(const MhaArgs& a);

// Steps 2-9 (scores, scale, mask, softmax, weighted sum, W_O) on projections already made: q [nq, d_model],
// k and v [nk, d_model] (a.query/key/value are not read). Decoding with a key/value cache calls it with the
// cached projections; q/k/v are not copied into the trace.
MhaOutput attend_projected(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                           const MhaArgs& a);

}  // namespace detail

}  // namespace attnscope::attention
