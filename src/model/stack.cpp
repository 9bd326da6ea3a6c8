// stack.cpp: the block loop of one stack and what each layer keeps (stack.h). Layer: model.
#include "model/stack.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "attention/simple.h"
#include "core/check.h"
#include "ops/mask.h"
#include "ops/validate.h"

namespace attnscope::model {

namespace {

core::Status layer_failed(const StackArgs& a, std::size_t i) {
  // Only reachable when values overflow float32 inside the stack (finite weights, huge magnitudes).
  return core::range_error(a.op, a.what,
                           std::string(a.what) + ": layer " + std::to_string(i) +
                               " produced non-finite values (embeddings or weights too large)");
}

// The factor multi_head_attention applies to q·k (float32, as attention/multi_head.cpp computes it).
double mha_scale(int head_dim) {
  return static_cast<double>(static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))));
}

}  // namespace

core::Status run_stack(const StackArgs& a, SideTrace& side, const SideTrace* memory) {
  const ModelDescription& m = *a.m;
  const int n = side.n, d = m.d_model, head_dim = m.d_model / m.num_heads;
  std::vector<float> x = side.input;
  side.layers.clear();
  side.layers.reserve(a.spec->blocks.size());
  const std::vector<std::uint8_t> self_mask = ops::key_padding_mask(n, n, side.n_real);
  const std::vector<std::uint8_t> memory_mask =
      memory != nullptr ? ops::key_padding_mask(n, memory->n, memory->n_real) : std::vector<std::uint8_t>();
  // T5: one relative position bias for the whole stack, from block 0's table (T5Stack: position_bias of the
  // first layer is passed on to the others); with a cache the queries are at positions first..
  std::vector<float> position_bias;
  if (!a.spec->blocks.empty() && a.spec->blocks[0].attn.relative_buckets > 0) {
    const int first = a.caches != nullptr && !a.caches->empty() ? (*a.caches)[0].rows : 0;
    position_bias = relative_position_bias(a.w->blocks[0].relative_bias, m.num_heads, n, first + n, first,
                                           a.spec->blocks[0].attn);
  }
  for (std::size_t li = a.first_block; li < a.spec->blocks.size(); ++li) {
    const BlockSpec& spec = a.spec->blocks[li];
    if (a.w->stream != nullptr) ATTN_TRY(a.w->stream->load(li, a.op));  // this thread: the read may call JS
    const bool full = a.full_all || (a.full_layers != nullptr &&
                                     std::find(a.full_layers->begin(), a.full_layers->end(), static_cast<int>(li)) !=
                                         a.full_layers->end());
    LayerTrace t;
    t.full = full;
    t.kind = spec.kind == BlockKind::kSimple ? LayerKind::kSimple : spec.causal ? LayerKind::kDecoder : LayerKind::kEncoder;
    if (full) t.input = x;
    if (spec.kind == BlockKind::kSimple) {
      bool overflowed = false;
      attention::AttentionOutput o = attention::simple_self_attention_masked(x, n, d, side.n_real, &overflowed);
      if (overflowed) return layer_failed(a, li);
      const std::uint8_t keep = a.head_keep.empty() ? 1 : a.head_keep[li * static_cast<std::size_t>(m.num_heads)];
      if (keep == 0) {
        std::fill(o.weights.begin(), o.weights.end(), 0.0f);  // its one head ablated: weights and weights · X
        std::fill(o.output.begin(), o.output.end(), 0.0f);
      } else if (keep == 2) {
        o.output = a.head_values[li];  // its weights · X replaced (mean ablation, patching)
      }
      if (a.summaries) {
        t.has_summary = true;
        t.summary = attention::summarize_weights(o.weights, 1, n, n, side.n_real, a.top_k);
      }
      for (const auto& [layer, head] : a.heads) {
        if (layer != static_cast<int>(li)) continue;
        t.head_maps_heads.push_back(head);
        t.head_maps.push_back(o.weights);  // one head: [n, n]
      }
      if (full || a.weights) t.attention.weights = std::move(o.weights);
      if (full) {
        t.attention.scores = std::move(o.scores);
        t.attention.output = o.output;
        t.attention.scale = 1.0;
        fill_attention_details(t.attention, 1, n, n, d);
      }
      x = std::move(o.output);
    } else {
      BlockArgs b;
      b.x = x;
      b.n = n, b.d_model = d, b.num_heads = m.num_heads, b.d_ff = m.d_ff;
      b.w = &a.w->blocks[li];
      b.cross = spec.cross;
      if (spec.cross) {
        b.memory = memory->output;
        b.m = memory->n;
        b.memory_mask = memory_mask;
      }
      b.norm_first = spec.norm_first;
      b.activation = spec.activation;
      b.eps = spec.eps;
      b.causal = spec.causal;
      b.self_mask = self_mask;
      if (!a.head_keep.empty()) b.head_keep = a.head_keep.subspan(li * static_cast<std::size_t>(m.num_heads), static_cast<std::size_t>(m.num_heads));
      if (!a.head_values.empty()) b.head_values = a.head_values[li];
      b.keep_trace = full && a.caches == nullptr;
      b.norm_stats = b.keep_trace;
      if (a.caches != nullptr) b.cache = &(*a.caches)[li];
      b.n_real = side.n_real;
      b.summaries = a.summaries && a.caches == nullptr;
      b.top_k = a.top_k;
      // tiled unless the layer keeps its trace, reads a cache or adds T5's relative bias (the tiled pass has none)
      b.tiled = a.tiled && !full && a.caches == nullptr && position_bias.empty();
      std::vector<int> want;  // this layer's requested maps
      for (const auto& [layer, head] : a.heads) {
        if (layer == static_cast<int>(li)) want.push_back(head);
      }
      if (b.tiled) b.want_heads = want;
      // the materialised [H, n, n] only where something reads it (trace 'weights' or 'full', summaries, head maps)
      b.weights = full || a.weights || b.summaries || !want.empty();
      // decoder checkpoints (description.h's AttentionSettings and friends)
      if (spec.attn.rope || spec.norm != NormKind::kLayerNorm) b.attn = &spec.attn;
      b.norm_kind = spec.norm;
      b.ff = spec.ff;
      b.post_norms = spec.post_norms;
      b.position_bias = position_bias;
      BlockOutput o = run_block(b);
      if (o.overflowed != nullptr) return layer_failed(a, li);
      t.has_cross = spec.cross;
      if (b.summaries) {
        t.has_summary = true;
        t.summary = std::move(o.summary);
      }
      const auto cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
      for (std::size_t k = 0; k < want.size(); ++k) {
        t.head_maps_heads.push_back(want[k]);
        if (b.tiled) {
          t.head_maps.push_back(std::move(o.head_weights[k]));
        } else {  // materialised: the head's slice of [H, n, n]
          const auto from = o.self_attn.weights.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(want[k]) * cells);
          t.head_maps.emplace_back(from, from + static_cast<std::ptrdiff_t>(cells));
        }
      }
      if (full || a.weights) {
        keep_attention(t.attention, o.self_attn, full);
        if (spec.cross) keep_attention(t.cross, o.cross_attn, full);
      }
      if (full) {
        const int hd = spec.attn.head_dim > 0 ? spec.attn.head_dim : head_dim;
        t.attention.scale = spec.attn.scale > 0.0 ? static_cast<double>(static_cast<float>(spec.attn.scale)) : mha_scale(hd);
        fill_attention_details(t.attention, m.num_heads, n, n, hd);
        if (spec.cross) {
          t.cross.scale = t.attention.scale;
          fill_attention_details(t.cross, m.num_heads, n, memory->n, spec.attn.cross ? hd : head_dim);
        }
        for (int k = 0; k < o.sub_blocks; ++k) {
          t.residual[k] = std::move(o.residual[k]);
          t.norm[k] = std::move(o.norm[k]);
          t.norm_mean[k] = std::move(o.norm_mean[k]);
          t.norm_var[k] = std::move(o.norm_var[k]);
        }
        t.ff_hidden = std::move(o.ff_hidden);
        t.ff_output = std::move(o.ff_output);
      }
      x = std::move(o.output);
    }
    // The learned layers report overflow in their scores; this covers everything else.
    if (!ops::all_finite(x)) return layer_failed(a, li);
    if (a.keep_outputs || full) t.output = x;
    side.layers.push_back(std::move(t));
  }
  if (a.spec->final_norm) {
    side.last_layer_output = x;
    x = normalize(x, n, d, a.w->final_norm, a.spec->final_norm_eps, a.spec->final_norm_kind);
  }
  side.output = std::move(x);
  return core::Status::Ok();
}

}  // namespace attnscope::model
