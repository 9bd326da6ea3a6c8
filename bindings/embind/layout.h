// The layout of a model assembled from a description (a checkpoint): what a one-line summary of its architecture
// needs (the page's "Llama · 16 layers · 32 query heads sharing 8 K/V heads · RoPE θ 500000, llama3 ×32 · RMSNorm ·
// SwiGLU"), read from the description the core runs, so nothing is re-parsed in JS. Layer: bindings.
#pragma once

#include <emscripten/val.h>

#include <algorithm>

#include "model/description.h"
#include "model/model_config.h"

namespace attnscope::bindings {

inline const char* rope_type_name(ops::RopeType t) {
  switch (t) {
    case ops::RopeType::kLinear: return "linear";
    case ops::RopeType::kDynamic: return "dynamic";
    case ops::RopeType::kLlama3: return "llama3";
    case ops::RopeType::kYarn: return "yarn";
    case ops::RopeType::kDefault: break;
  }
  return "default";
}

inline const char* norm_name(model::NormKind k) {
  return k == model::NormKind::kLayerNorm ? "layernorm" : k == model::NormKind::kRms ? "rmsnorm" : "rmsnorm1p";
}

// { numKeyValueHeads, headDim, norm, gated, rope: { theta, type, factor, rotaryDim } | null, slidingWindow,
//   globalLayers (layers without a window), attnSoftcap, finalSoftcap, qkNorm } of the main stack's first block.
inline void set_layout(emscripten::val& o, const model::ModelDescription& m) {
  using emscripten::val;
  if (m.main.blocks.empty()) return;
  const model::BlockSpec& b = m.main.blocks[0];
  const int head_dim = b.attn.head_dim > 0 ? b.attn.head_dim : m.d_model / std::max(1, m.num_heads);
  o.set("numKeyValueHeads", val(b.attn.kv_heads > 0 ? b.attn.kv_heads : m.num_heads));
  o.set("headDim", val(head_dim));
  o.set("norm", val(norm_name(b.norm)));
  o.set("gated", val(b.ff.gated));
  // every activation a checkpoint block may have (createModel's own names do not include SiLU)
  o.set("activation", val(b.activation == ops::Activation::kSilu ? "silu"
                          : b.activation == ops::Activation::kGeluTanh ? "gelu-tanh"
                          : b.activation == ops::Activation::kGelu ? "gelu" : "relu"));
  if (b.attn.rope) {
    val r = val::object();
    r.set("theta", val(b.attn.rope_spec.theta));
    r.set("type", val(rope_type_name(b.attn.rope_spec.type)));
    r.set("factor", val(b.attn.rope_spec.factor));
    r.set("rotaryDim", val(b.attn.rope_spec.rotary_dim));
    o.set("rope", r);
  } else {
    o.set("rope", val::null());
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
