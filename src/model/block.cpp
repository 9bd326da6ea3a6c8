// block.cpp: the sub-blocks of a transformer block in order (block.h). Layer: model.
#include "model/block.h"

#include <algorithm>
#include <utility>

#include "ops/layer_norm.h"
#include "ops/linear.h"

namespace attnscope::model {

std::vector<float> layer_norm(std::span<const float> x, int n, int d_model, const NormWeights& w, double eps) {
  std::vector<float> y(x.size());
  ops::layer_norm_rows(x, n, d_model, w.gamma, w.beta, static_cast<float>(eps), y);
  return y;
}

std::vector<float> feed_forward(std::span<const float> x, int n, int d_model, int d_ff, const FeedForwardWeights& ff,
                                ops::Activation activation, std::vector<float>* hidden) {
  // 1. h = act(x W1 + b1) [n, d_ff], activation in place
  std::vector<float> h = ops::linear(x, n, d_model, ff.w1, d_ff, ff.b1);
  ops::activate(activation, h);
  // 2. y = h W2 + b2 [n, d_model]
  std::vector<float> y = ops::linear(h, n, d_ff, ff.w2, d_model, ff.b2);
  if (hidden != nullptr) *hidden = std::move(h);
  return y;
}

namespace {

attention::MhaOutput attend(const BlockArgs& a, std::span<const float> q_in, std::span<const float> kv_in, int nk,
                            const attention::MhaWeights& w, std::span<const std::uint8_t> mask, bool causal,
                            std::span<const std::uint8_t> head_keep = {}) {
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
  m.keep_trace = a.keep_trace;
  m.head_keep = head_keep;
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

}  // namespace

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
      y = layer_norm(x, n, d, norm, a.eps);
    }
    const std::span<const float> in = a.norm_first ? std::span<const float>(y) : std::span<const float>(x);
    // 2. F_k(in)
    std::vector<float> f;
    if (ffn) {
      f = feed_forward(in, n, d, a.d_ff, w.ff, a.activation, keep ? &out.ff_hidden : nullptr);
      if (keep) out.ff_output = f;
    } else {
      const bool self = k == 0;
      attention::MhaOutput& o = self ? out.self_attn : out.cross_attn;
      if (a.cache != nullptr) {
        o = attend_cached(a, in, self ? w.self_attn : w.cross_attn, self);
      } else {
        o = self ? attend(a, in, in, n, w.self_attn, a.self_mask, a.causal, a.head_keep)
                 : attend(a, in, a.memory, a.m, w.cross_attn, a.memory_mask, false);
      }
      if (o.overflowed) {
        out.overflowed = self ? "selfWeights" : "crossWeights";
        return out;
      }
      f = keep ? o.output : std::move(o.output);
    }
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
      x = layer_norm(f, n, d, norm, a.eps);
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
