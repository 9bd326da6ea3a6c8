// The layout of a model assembled from a description (a checkpoint): what a one-line summary of its architecture
// needs (the page's "Llama · 16 layers · 32 query heads sharing 8 K/V heads · RoPE θ 500000, llama3 ×32 · RMSNorm ·
// SwiGLU"), read from the description the core runs, so nothing is re-parsed in JS. Layer: bindings.
#pragma once

#include <emscripten/val.h>

#include <algorithm>
#include <string>

#include "model/description.h"
#include "model/model_config.h"
#include "ops/rope.h"

namespace attnscope::bindings {

inline const char* norm_name(model::NormKind k) {
  return k == model::NormKind::kLayerNorm ? "layernorm" : k == model::NormKind::kRms ? "rmsnorm" : "rmsnorm1p";
}

// { numKeyValueHeads, headDim, norm, gated, rope: { theta, type, factor, rotaryDim, maxPositions, lowFreqFactor,
//   highFreqFactor, originalMaxPositions, attentionFactor, betaFast, betaSlow } | null, relativeBias: { buckets,
//   maxDistance } | null, slidingWindow,
//   globalLayers (layers without a window), attnSoftcap, finalSoftcap, qkNorm } of the main stack's first block.
inline void set_layout(emscripten::val& o, const model::ModelDescription& m) {
  using emscripten::val;
  if (m.main.blocks.empty()) return;
  const model::BlockSpec& b = m.main.blocks[0];
  o.set("numKeyValueHeads", val(b.attn.kv_heads > 0 ? b.attn.kv_heads : m.num_heads));
  o.set("headDim", val(model::model_head_dim(m)));
  o.set("norm", val(norm_name(b.norm)));
  o.set("gated", val(b.ff.gated));
  o.set("activation", val(model::name_of(b.activation)));
  if (b.attn.rope) {  // every setting of the RoPE tables, which the page's RoPE panel passes to as.ropeExplain
    const ops::RopeSpec& s = b.attn.rope_spec;
    val r = val::object();
    r.set("theta", val(s.theta));
    r.set("type", val(std::string(ops::rope_type_name(s.type))));
    r.set("factor", val(s.factor));
    r.set("rotaryDim", val(s.rotary_dim));
    r.set("maxPositions", val(s.max_positions));
    r.set("lowFreqFactor", val(s.low_freq_factor));
    r.set("highFreqFactor", val(s.high_freq_factor));
    r.set("originalMaxPositions", val(s.original_max_positions));
    r.set("attentionFactor", val(s.attention_factor));
    r.set("betaFast", val(s.beta_fast));
    r.set("betaSlow", val(s.beta_slow));
    o.set("rope", r);
  } else {
    o.set("rope", val::null());
  }
  if (b.attn.relative_buckets > 0) {  // T5's relative position bias: positions enter as a bias on the scores
    val r = val::object();
    r.set("buckets", val(b.attn.relative_buckets));
    r.set("maxDistance", val(b.attn.relative_max_distance));
    o.set("relativeBias", r);
  } else {
    o.set("relativeBias", val::null());
  }
  int window = 0, global = 0;
  for (const model::BlockSpec& x : m.main.blocks) {
    window = std::max(window, x.attn.sliding_window);
    global += x.attn.sliding_window > 0 ? 0 : 1;
  }
  o.set("slidingWindow", val(window));
  o.set("globalLayers", val(global));
  o.set("attnSoftcap", val(b.attn.softcap));
  o.set("finalSoftcap", val(m.head.softcap));
  o.set("qkNorm", val(b.attn.has_qk_norm));
}

}  // namespace attnscope::bindings
