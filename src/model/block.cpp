// block.cpp: the sub-blocks of a transformer block in order (block.h). Layer: model.
#include "model/block.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"

namespace attnscope::model {

std::vector<float> layer_norm(std::span<const float> x, int n, int d_model, const NormWeights& w, double eps) {
  std::vector<float> y(x.size());
  ops::layer_norm_rows(x, n, d_model, w.gamma, w.beta, static_cast<float>(eps), y);
  return y;
}

std::vector<float> normalize(std::span<const float> x, int n, int d, const NormWeights& w, double eps, NormKind kind) {
  if (kind == NormKind::kLayerNorm) return layer_norm(x, n, d, w, eps);
  std::vector<float> y(x.size());
  ops::rms_norm_rows(x, n, d, w.gamma, static_cast<float>(eps), kind == NormKind::kRmsPlusOne, y);
  return y;
}

namespace {

// act(x W1 + b1) (⊙ (x W3 + b3)) for rows x [rows, d_model] -> h [rows, d_ff], in place.
void ff_hidden_rows(std::span<const float> x, int rows, int d_model, int d_ff, const FeedForwardWeights& ff,
                    ops::Activation activation, bool gated, std::span<float> h, std::vector<float>& up) {
  if (!gated) {
    ops::linear(core::as_view(x, rows, d_model), ff.w1, ff.b1, core::MatView{h.data(), rows, d_ff, d_ff});
    ops::activate(activation, h);
    return;
  }
  up.resize(h.size());
  // gate and up in one pool loop for a decoding step's row (ops::linear_many)
  const std::array<ops::LinearTarget, 2> gate_up{{{&ff.w1, ff.b1, core::MatView{h.data(), rows, d_ff, d_ff}},
                                                  {&ff.w3, ff.b3, core::MatView{up.data(), rows, d_ff, d_ff}}}};
  ops::linear_many(core::as_view(x, rows, d_model), gate_up);
  ops::activate_gated(activation, h, up);
}

}  // namespace

std::vector<float> feed_forward(std::span<const float> x, int n, int d_model, int d_ff, const FeedForwardWeights& ff,
                                ops::Activation activation, std::vector<float>* hidden, bool gated) {
  std::vector<float> y(static_cast<std::size_t>(n) * static_cast<std::size_t>(d_model));
  std::vector<float> up;
  const auto D = static_cast<std::size_t>(d_model), F = static_cast<std::size_t>(d_ff);
  if (hidden != nullptr) {  // the whole [n, d_ff] is kept (a full trace): one pass
    std::vector<float> h(static_cast<std::size_t>(n) * F);
    ff_hidden_rows(x, n, d_model, d_ff, ff, activation, gated, h, up);
    ops::linear(core::as_view(h, n, d_ff), ff.w2, ff.b2, core::MatView{y.data(), n, d_model, d_model});
    *hidden = std::move(h);
    return y;
  }
  // Blocks of kFeedForwardRows rows (block.h): h and up are [rows, d_ff] at a time, not [n, d_ff]. Every row is
  // the same GEMM row as in one pass (the products sum over the same k in the same order; blocks start at a
  // multiple of every micro-kernel's row tile and the element-wise kernels' SIMD width), so y is bit for bit the
  // one-pass result; a last block of a single row joins the one before (one row takes the GEMV path, summed in
  // another order).
  std::vector<float> h;
  for (int i0 = 0; i0 < n;) {
    int rows = std::min(kFeedForwardRows, n - i0);
    if (n - i0 - rows == 1) ++rows;
    h.resize(static_cast<std::size_t>(rows) * F);
    ff_hidden_rows(x.subspan(static_cast<std::size_t>(i0) * D, static_cast<std::size_t>(rows) * D), rows, d_model,
                   d_ff, ff, activation, gated, h, up);
    ops::linear(core::as_view(h, rows, d_ff), ff.w2, ff.b2,
                core::MatView{y.data() + static_cast<std::size_t>(i0) * D, rows, d_model, d_model});
    i0 += rows;
  }
  return y;
}

namespace {

attention::MhaOutput attend(const BlockArgs& a, std::span<const float> q_in, std::span<const float> kv_in, int nk,
                            const attention::MhaWeights& w, std::span<const std::uint8_t> mask, bool causal,
                            bool need_weights, std::span<const std::uint8_t> head_keep = {},
                            std::span<const float> head_values = {}) {
  attention::MhaArgs m;
  m.query = q_in;
  m.key = m.value = kv_in;
  m.nq = a.n;
  m.nk = nk;
  m.d_model = m.kdim = m.vdim = a.d_model;
  m.num_heads = a.num_heads;
  m.w = w;
  m.mask = mask;
  m.causal = causal;
  m.need_weights = need_weights;
  m.keep_trace = a.keep_trace;
  m.head_keep = head_keep;
  m.head_values = head_values;
  return attention::detail::multi_head_attention_unchecked(m);
}

// Self- or cross-attention of the new rows q_in [n, d] through the cache: project what is new, attend over
// everything cached. Self: keys j <= position of query i (causal) or all; cross: the whole memory.
attention::MhaOutput attend_cached(const BlockArgs& a, std::span<const float> q_in, const attention::MhaWeights& w,
                                   bool self) {
  KvCache& c = *a.cache;
  const int d = a.d_model;
  std::vector<float> q = ops::linear(q_in, a.n, d, w.wq, d, w.bq);
  attention::MhaArgs m;
  m.nq = a.n;
  m.d_model = m.kdim = m.vdim = d;
  m.num_heads = a.num_heads;
  m.w = w;
  std::vector<std::uint8_t> mask;
  if (self) {
    const std::vector<float> k = ops::linear(q_in, a.n, d, w.wk, d, w.bk);
    const std::vector<float> v = ops::linear(q_in, a.n, d, w.wv, d, w.bv);
    c.k.insert(c.k.end(), k.begin(), k.end());
    c.v.insert(c.v.end(), v.begin(), v.end());
    const int first = c.rows;
    c.rows += a.n;
    m.nk = c.rows;
    if (a.causal) {
      mask.assign(static_cast<std::size_t>(a.n) * static_cast<std::size_t>(m.nk), 0);
      for (int i = 0; i < a.n; ++i) {
        std::fill_n(mask.begin() + static_cast<std::ptrdiff_t>(i) * m.nk, first + i + 1, std::uint8_t{1});
      }
      m.mask = mask;
    }
    m.need_weights = a.weights;
    return attention::detail::attend_projected(q, c.k, c.v, m);
  }
  if (c.memory_k.empty()) {
    c.memory_k = ops::linear(a.memory, a.m, d, w.wk, d, w.bk);
    c.memory_v = ops::linear(a.memory, a.m, d, w.wv, d, w.bv);
  }
  m.nk = a.m;
  m.mask = a.memory_mask;
  return attention::detail::attend_projected(q, c.memory_k, c.memory_v, m);
}

// The self-attention of a decoder checkpoint (Hugging Face's LlamaAttention and its relatives, eager): project
// q [n, nh·hd], k and v [n, nkv·hd]; per-head q/k norm (Qwen3, Gemma 3); RoPE at positions first.. (rotate_half,
// apply_rotary_pos_emb); with a cache, append k and v and attend over every cached row; mask causal and
// (sliding_window) i - j < window; scores · scale, soft-capped, softmax, · v per query head reading kv head
// h / (nh / nkv) (repeat_kv, eager_attention_forward); o_proj.
// Steps 1-3 of attend_decoder (and the tiled path's projections): q [n, nh·hd], k and v [n, nkv·hd].
struct ProjectedQkv {
  std::vector<float> q, k, v;
  int hd = 0, nkv = 0;
};
ProjectedQkv project_decoder(const BlockArgs& a, std::span<const float> in, const attention::MhaWeights& w,
                             int first) {
  const AttentionSettings& s = *a.attn;
  const int n = a.n, d = a.d_model, nh = a.num_heads;
  const int hd = s.head_dim > 0 ? s.head_dim : d / nh, nkv = s.kv_heads > 0 ? s.kv_heads : nh;
  // 1. projections (a decoding step's row: the three in one pool loop, ops::linear_many)
  const auto rows_of = [n](int cols) { return std::vector<float>(static_cast<std::size_t>(n) * static_cast<std::size_t>(cols)); };
  std::vector<float> q = rows_of(nh * hd), k = rows_of(nkv * hd), v = rows_of(nkv * hd);
  const std::array<ops::LinearTarget, 3> qkv{{{&w.wq, w.bq, core::MatView{q.data(), n, nh * hd, nh * hd}},
                                              {&w.wk, w.bk, core::MatView{k.data(), n, nkv * hd, nkv * hd}},
                                              {&w.wv, w.bv, core::MatView{v.data(), n, nkv * hd, nkv * hd}}}};
  ops::linear_many(core::as_view(in, n, d), qkv);
  // 2. per-head q/k norms, before RoPE
  if (s.has_qk_norm) {
    const bool plus_one = s.qk_norm == NormKind::kRmsPlusOne;
    ops::rms_norm_rows(q, n * nh, hd, a.w->q_norm, static_cast<float>(a.eps), plus_one, q);
    ops::rms_norm_rows(k, n * nkv, hd, a.w->k_norm, static_cast<float>(a.eps), plus_one, k);
  }
  // 3. rotary positions
  if (s.rope) {
    const ops::RopeFrequencies f = ops::rope_frequencies(s.rope_spec, first + n);
    ops::apply_rope(q, n, nh, hd, first, f);
    ops::apply_rope(k, n, nkv, hd, first, f);
  }
  return ProjectedQkv{std::move(q), std::move(k), std::move(v), hd, nkv};
}

// Self-attention without the [H, n, n] weights (BlockArgs::tiled): the same projections as attend_decoder (or
// attend's, for the GPT-2/BERT/createModel blocks), then attention::tiled_attention under the same rule (causal,
// window, padding keys, soft-cap, ablation), and W_O. The full maps of want_heads are computed one at a time.
attention::MhaOutput attend_tiled(const BlockArgs& a, std::span<const float> in, const attention::MhaWeights& w,
                                  BlockOutput& out) {
  const int n = a.n, d = a.d_model, nh = a.num_heads;
  ProjectedQkv p;
  if (a.attn != nullptr) {
    p = project_decoder(a, in, w, 0);
  } else {
    p.hd = d / nh;
    p.nkv = nh;
    p.q = ops::linear(in, n, d, w.wq, d, w.bq);
    p.k = ops::linear(in, n, d, w.wk, d, w.bk);
    p.v = ops::linear(in, n, d, w.wv, d, w.bv);
  }
  attention::TiledArgs t;
  t.q = p.q;
  t.k = p.k;
  t.v = p.v;
  t.nq = t.nk = n;
  t.num_heads = nh;
  t.kv_heads = p.nkv;
  t.head_dim = p.hd;
  t.scale = a.attn != nullptr ? a.attn->scale : 0.0;
  t.softcap = a.attn != nullptr ? a.attn->softcap : 0.0;
  t.window = a.attn != nullptr ? a.attn->sliding_window : 0;
  t.causal = a.causal || a.attn != nullptr;  // decoder checkpoints are always causal (attend_decoder's rule)
  t.nk_real = a.n_real;
  t.head_keep = a.head_keep;
  t.summaries = a.summaries;
  t.summary_rows = a.n_real;
  t.top_k = a.top_k;
  attention::TiledOutput o = attention::tiled_attention(t);
  // head_keep 2 (mean ablation, patching): the head's weights · V replaced, as attention::multi_head_attention does
  if (!a.head_values.empty()) {
    const std::size_t inner = static_cast<std::size_t>(nh) * static_cast<std::size_t>(p.hd);
    for (int h = 0; h < nh; ++h) {
      if (a.head_keep.empty() || a.head_keep[static_cast<std::size_t>(h)] != 2) continue;
      for (int i = 0; i < n; ++i) {
        const std::size_t at = static_cast<std::size_t>(i) * inner + static_cast<std::size_t>(h * p.hd);
        std::copy_n(a.head_values.data() + at, p.hd, o.concat.data() + at);
      }
    }
  }
  for (const int h : a.want_heads) out.head_weights.push_back(attention::tiled_head_weights(t, h));
  attention::MhaOutput m;
  m.overflowed = o.overflowed;
  m.output = ops::linear(o.concat, n, nh * p.hd, w.wo, d, w.bo);
  out.summary = std::move(o.summary);
  return m;
}

attention::MhaOutput attend_decoder(const BlockArgs& a, std::span<const float> in, const attention::MhaWeights& w) {
  const AttentionSettings& s = *a.attn;
  const int n = a.n, d = a.d_model, nh = a.num_heads;
  const int first = a.cache != nullptr ? a.cache->rows : 0;
  // 1-3. projections, q/k norms, rotary positions
  ProjectedQkv p = project_decoder(a, in, w, first);
  const int hd = p.hd, nkv = p.nkv;
  std::vector<float>& q = p.q;
  std::vector<float>& k = p.k;
  std::vector<float>& v = p.v;
  // 4. keys and values: this call's, or the cache's with these appended
  std::span<const float> keys = k, values = v;
  int nk = n;
  if (a.cache != nullptr) {
    KvCache& c = *a.cache;
    c.k.insert(c.k.end(), k.begin(), k.end());
    c.v.insert(c.v.end(), v.begin(), v.end());
    c.rows += n;
    nk = c.rows;
    keys = c.k;
    values = c.v;
  }
  // 5. mask [n, nk]: key j visible to query i (position first + i) iff j <= first + i, within the window, and
  // (without a cache) not padding
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(n) * static_cast<std::size_t>(nk), 0);
  for (int i = 0; i < n; ++i) {
    const int pos = first + i;
    const int last = a.causal ? pos : nk - 1;  // T5's encoder: every key (bidirectional)
    for (int j = 0; j <= last && j < nk; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * static_cast<std::size_t>(nk) + static_cast<std::size_t>(j);
      const bool in_window = s.sliding_window <= 0 || pos - j < s.sliding_window;
      const bool not_pad = a.cache != nullptr || a.self_mask.empty() || a.self_mask[at] != 0;
      mask[at] = in_window && not_pad ? 1 : 0;
    }
  }
  // 6-9. scores, softmax, weighted values, o_proj
  attention::MhaArgs m;
  m.nq = n;
  m.nk = nk;
  m.d_model = m.kdim = m.vdim = d;
  m.num_heads = nh;
  m.kv_heads = nkv;
  m.head_dim = hd;
  m.scale = s.scale;
  m.softcap = s.softcap;
  m.score_bias = a.position_bias;  // T5: [nh, n, nk], the stack's shared relative position bias
  m.w = w;
  m.mask = mask;
  m.need_weights = a.weights;
  m.keep_trace = a.keep_trace;
  m.head_keep = a.head_keep;  // run option ablate: per query head
  m.head_values = a.head_values;
  attention::MhaOutput out = attention::detail::attend_projected(q, keys, values, m);
  if (a.keep_trace) {
    // the trace's q/k/v per query head (k and v repeated to nh heads, as repeat_kv gives them)
    const int group = nh / nkv;
    auto repeat = [&](const std::vector<float>& x) {
      std::vector<float> r(static_cast<std::size_t>(nk) * static_cast<std::size_t>(nh * hd));
      for (int j = 0; j < nk; ++j) {
        for (int h = 0; h < nh; ++h) {
          std::copy_n(x.begin() + (static_cast<std::ptrdiff_t>(j) * nkv + h / group) * hd, hd,
                      r.begin() + (static_cast<std::ptrdiff_t>(j) * nh + h) * hd);
        }
      }
      return r;
    };
    out.k = repeat(k);
    out.v = repeat(v);
    out.q = std::move(q);
  }
  return out;
}

// Cross-attention with AttentionSettings (T5's EncDecAttention: head_dim d_kv, no biases, no scaling, no
// position bias): q from the new rows, k and v from the memory (projected once into the cache when decoding).
attention::MhaOutput attend_cross_settings(const BlockArgs& a, std::span<const float> in,
                                           const attention::MhaWeights& w) {
  const AttentionSettings& s = *a.attn;
  const int n = a.n, d = a.d_model, nh = a.num_heads;
  const int hd = s.head_dim > 0 ? s.head_dim : d / nh, nkv = s.kv_heads > 0 ? s.kv_heads : nh;
  std::vector<float> q = ops::linear(in, n, d, w.wq, nh * hd, w.bq);
  std::vector<float> k, v;
  std::span<const float> keys, values;
  if (a.cache != nullptr) {
    KvCache& c = *a.cache;
    if (c.memory_k.empty()) {
      c.memory_k = ops::linear(a.memory, a.m, d, w.wk, nkv * hd, w.bk);
      c.memory_v = ops::linear(a.memory, a.m, d, w.wv, nkv * hd, w.bv);
    }
    keys = c.memory_k;
    values = c.memory_v;
  } else {
    k = ops::linear(a.memory, a.m, d, w.wk, nkv * hd, w.bk);
    v = ops::linear(a.memory, a.m, d, w.wv, nkv * hd, w.bv);
    keys = k;
    values = v;
  }
  attention::MhaArgs m;
  m.nq = n;
  m.nk = a.m;
  m.d_model = m.kdim = m.vdim = d;
  m.num_heads = nh;
  m.kv_heads = nkv;
  m.head_dim = hd;
  m.scale = s.scale;
  m.w = w;
  m.mask = a.memory_mask;
  m.keep_trace = a.keep_trace;
  attention::MhaOutput out = attention::detail::attend_projected(q, keys, values, m);
  if (a.keep_trace) {
    out.q = std::move(q);
    out.k = std::move(k);
    out.v = std::move(v);
  }
  return out;
}

}  // namespace

int relative_position_bucket(int relative_position, bool bidirectional, int num_buckets, int max_distance) {
  // T5Attention._relative_position_bucket (modeling_t5.py), in torch's float32 for the logarithmic part
  int bucket = 0, nb = num_buckets, rp = relative_position;
  if (bidirectional) {
    nb /= 2;
    if (rp > 0) bucket += nb;
    rp = rp < 0 ? -rp : rp;
  } else {
    rp = rp < 0 ? -rp : 0;  // -min(rp, 0)
  }
  const int max_exact = nb / 2;
  if (rp < max_exact) return bucket + rp;
  float large = std::log(static_cast<float>(rp) / static_cast<float>(max_exact));
  large /= static_cast<float>(std::log(static_cast<double>(max_distance) / max_exact));
  large *= static_cast<float>(nb - max_exact);
  // min(max_exact + trunc(large), nb - 1), clamped before the conversion (an int cannot hold every float; the bound is
  // a whole number, so truncating the clamped value gives the same bucket)
  return bucket + max_exact + static_cast<int>(std::min(large, static_cast<float>(nb - 1 - max_exact)));
}

std::vector<float> relative_position_bias(std::span<const float> table, int num_heads, int n, int nk, int first,
                                          const AttentionSettings& s) {
  const auto N = static_cast<std::size_t>(n), K = static_cast<std::size_t>(nk);
  std::vector<float> bias(static_cast<std::size_t>(num_heads) * N * K);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < nk; ++j) {
      const int b = relative_position_bucket(j - (first + i), s.relative_bidirectional, s.relative_buckets,
                                             s.relative_max_distance);
      for (int h = 0; h < num_heads; ++h) {
        bias[(static_cast<std::size_t>(h) * N + static_cast<std::size_t>(i)) * K + static_cast<std::size_t>(j)] =
            table[static_cast<std::size_t>(b) * static_cast<std::size_t>(num_heads) + static_cast<std::size_t>(h)];
      }
    }
  }
  return bias;
}

BlockOutput run_block(const BlockArgs& a) {
  const int n = a.n, d = a.d_model;
  const bool keep = a.keep_trace;
  const BlockWeights& w = *a.w;
  BlockOutput out;
  out.sub_blocks = a.cross ? 3 : 2;
  std::vector<float> x(a.x.begin(), a.x.end());
  for (int k = 0; k < out.sub_blocks; ++k) {
    const bool ffn = k == out.sub_blocks - 1;
    const NormWeights& norm = w.norm[k];
    // 1. the sub-block's input: x (post-norm) or LN_k(x) (pre-norm)
    std::vector<float> y;
    if (a.norm_first) {
      if (keep && a.norm_stats) ops::layer_norm_stats(x, n, d, out.norm_mean[k], out.norm_var[k]);
      y = normalize(x, n, d, norm, a.eps, a.norm_kind);
    }
    const std::span<const float> in = a.norm_first ? std::span<const float>(y) : std::span<const float>(x);
    // 2. F_k(in)
    std::vector<float> f;
    if (ffn) {
      f = feed_forward(in, n, d, a.d_ff, w.ff, a.activation, keep ? &out.ff_hidden : nullptr, a.ff.gated);
      if (keep) out.ff_output = f;
    } else {
      const bool self = k == 0;
      attention::MhaOutput& o = self ? out.self_attn : out.cross_attn;
      if (self && a.tiled && a.cache == nullptr && !keep) {
        o = attend_tiled(a, in, w.self_attn, out);
      } else if (self && a.attn != nullptr) {
        o = attend_decoder(a, in, w.self_attn);
      } else if (!self && a.attn != nullptr && a.attn->cross) {
        o = attend_cross_settings(a, in, w.cross_attn);
      } else if (a.cache != nullptr) {
        o = attend_cached(a, in, self ? w.self_attn : w.cross_attn, self);
      } else {
        o = self ? attend(a, in, in, n, w.self_attn, a.self_mask, a.causal, a.weights, a.head_keep, a.head_values)
                 : attend(a, in, a.memory, a.m, w.cross_attn, a.memory_mask, false, true);
      }
      if (o.overflowed) {
        out.overflowed = self ? "selfWeights" : "crossWeights";
        return out;
      }
      // run option summaries on the materialised weights (the tiled path made its own)
      if (self && a.summaries && a.cache == nullptr && !o.weights.empty()) {
        out.summary = attention::summarize_weights(o.weights, a.num_heads, n, n, a.n_real < 0 ? n : a.n_real, a.top_k);
      }
      f = keep ? o.output : std::move(o.output);
    }
    // 2b. Gemma 2/3: the sub-block's output normalised before the residual (post_attention_layernorm,
    // post_feedforward_layernorm)
    if (a.post_norms) f = normalize(f, n, d, w.post[ffn ? 1 : 0], a.eps, a.norm_kind);
    // 3. residual r_k = x + F_k, in place in f
    ops::add(x, f, f);
    // 4. post-norm: x <- LN_k(r_k); pre-norm: x <- r_k
    if (a.norm_first) {
      if (keep) {
        out.residual[k] = f;
        out.norm[k] = std::move(y);
      }
      x = std::move(f);
    } else {
      if (keep && a.norm_stats) ops::layer_norm_stats(f, n, d, out.norm_mean[k], out.norm_var[k]);
      x = normalize(f, n, d, norm, a.eps, a.norm_kind);
      if (keep) {
        out.residual[k] = std::move(f);
        out.norm[k] = x;
      }
    }
  }
  out.output = std::move(x);
  return out;
}

}  // namespace attnscope::model
