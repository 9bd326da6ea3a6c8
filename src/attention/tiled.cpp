// tiled.cpp: online-softmax attention over query blocks and key tiles, and head summaries (tiled.h).
// Layer: attention (composes ops; never includes the kernels layer).
#include "attention/tiled.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "core/tensor.h"
#include "ops/linear.h"
#include "ops/softmax.h"

namespace attnscope::attention {

namespace {

constexpr int kQueryTile = 64;
constexpr int kKeyTile = 256;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The mask rule of TiledArgs: key j visible to query i.
struct VisibleRule {
  bool causal;
  int window, first, nk_real;
  // Visible keys of query i are [lo, hi).
  void range(int i, int nk, int* lo, int* hi) const {
    const int pos = first + i;
    int h = nk_real;
    if (causal) h = std::min(h, pos + 1);
    int l = 0;
    if (window > 0) l = std::max(0, pos - window + 1);
    *lo = l;
    *hi = std::max(l, h);
    (void)nk;
  }
};

VisibleRule rule_of(const TiledArgs& a) {
  return VisibleRule{a.causal, a.window, a.first, a.nk_real < 0 ? a.nk : std::min(a.nk_real, a.nk)};
}

// One row's running top-k by score: (score, key), best first; ties to the smaller key.
struct TopEntry {
  float score;
  int key;
};
bool better(const TopEntry& x, const TopEntry& y) { return x.score > y.score || (x.score == y.score && x.key < y.key); }

void push_top(TopEntry* top, int* count, int k, TopEntry e) {
  if (k <= 0) return;
  if (*count == k && !better(e, top[k - 1])) return;
  int at = *count < k ? (*count)++ : k - 1;
  while (at > 0 && better(e, top[at - 1])) {
    top[at] = top[at - 1];
    --at;
  }
  top[at] = e;
}

float tiled_scale(const TiledArgs& a) {
  return static_cast<float>(a.scale > 0.0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(a.head_dim)));
}

// A head's scores for queries [i0, i0 + bq) and keys [j0, j0 + bk) into s (ld bk): scale, soft-cap, and
// -inf where the rule hides the key. Returns false when a raw score is not finite.
bool score_tile(const TiledArgs& a, const VisibleRule& rule, int h, int i0, int bq, int j0, int bk, float* s) {
  const int group = a.num_heads / a.kv_heads, g = h / group;
  const int inner = a.num_heads * a.head_dim, kv_inner = a.kv_heads * a.head_dim;
  const core::ConstMatView q_b{a.q.data() + static_cast<std::size_t>(i0) * inner + h * a.head_dim, bq, a.head_dim, inner};
  const core::ConstMatView k_t{a.k.data() + static_cast<std::size_t>(j0) * kv_inner + g * a.head_dim, bk, a.head_dim,
                               kv_inner};
  ops::matmul_nt(q_b, k_t, core::MatView{s, bq, bk, bk}, tiled_scale(a));
  bool finite = true;
  const float cap = static_cast<float>(a.softcap);
  for (int r = 0; r < bq; ++r) {
    float* row = s + static_cast<std::size_t>(r) * bk;
    int lo = 0, hi = 0;
    rule.range(i0 + r, a.nk, &lo, &hi);
    for (int c = 0; c < bk; ++c) {
      if (!std::isfinite(row[c])) finite = false;
      if (cap > 0.0f) row[c] = cap * std::tanh(row[c] / cap);
      const int j = j0 + c;
      if (j < lo || j >= hi) row[c] = kNegInf;
    }
  }
  return finite;
}

HeadSummaries empty_summary(int num_heads, int rows, int top_k) {
  HeadSummaries s;
  s.num_heads = num_heads;
  s.rows = rows;
  s.top_k = top_k;
  s.entropy.assign(static_cast<std::size_t>(num_heads), 0.0f);
  s.distance.assign(static_cast<std::size_t>(num_heads), 0.0f);
  s.sink.assign(static_cast<std::size_t>(num_heads), 0.0f);
  const std::size_t cells = static_cast<std::size_t>(num_heads) * static_cast<std::size_t>(rows) * static_cast<std::size_t>(top_k);
  s.top_ids.assign(cells, -1);
  s.top_weights.assign(cells, 0.0f);
  return s;
}

}  // namespace

HeadSummaries summarize_weights(std::span<const float> weights, int num_heads, int nq, int nk, int rows, int top_k,
                                int first) {
  HeadSummaries s = empty_summary(num_heads, rows, top_k);
  std::vector<TopEntry> top(static_cast<std::size_t>(std::max(top_k, 1)));
  for (int h = 0; h < num_heads; ++h) {
    double entropy = 0.0, distance = 0.0, sink = 0.0;
    for (int i = 0; i < rows; ++i) {
      const float* w = weights.data() + (static_cast<std::size_t>(h) * nq + i) * static_cast<std::size_t>(nk);
      int count = 0;
      for (int j = 0; j < nk; ++j) {
        const double p = w[j];
        if (!(p > 0.0)) continue;
        entropy -= p * std::log(p);
        distance += p * std::abs(first + i - j);
        push_top(top.data(), &count, top_k, TopEntry{w[j], j});
      }
      sink += w[0];
      const std::size_t at = (static_cast<std::size_t>(h) * rows + i) * static_cast<std::size_t>(top_k);
      for (int t = 0; t < count; ++t) {
        s.top_ids[at + t] = top[static_cast<std::size_t>(t)].key;
        s.top_weights[at + t] = top[static_cast<std::size_t>(t)].score;
      }
    }
    const double r = rows > 0 ? rows : 1;
    s.entropy[static_cast<std::size_t>(h)] = static_cast<float>(entropy / r);
    s.distance[static_cast<std::size_t>(h)] = static_cast<float>(distance / r);
    s.sink[static_cast<std::size_t>(h)] = static_cast<float>(sink / r);
  }
  return s;
}

TiledOutput tiled_attention(const TiledArgs& a) {
  const int nq = a.nq, nk = a.nk, nh = a.num_heads, hd = a.head_dim;
  const int inner = nh * hd, kv_inner = a.kv_heads * hd, group = nh / a.kv_heads;
  const int rows = a.summary_rows < 0 ? nq : std::min(a.summary_rows, nq);
  const int top_k = a.summaries ? a.top_k : 0;
  const VisibleRule rule = rule_of(a);
  TiledOutput out;
  out.concat.assign(static_cast<std::size_t>(nq) * static_cast<std::size_t>(inner), 0.0f);
  if (a.summaries) out.summary = empty_summary(nh, rows, top_k);
  // each summarised row's entropy, distance and sink, [nh, rows]: summed per head in row order after the loop (the
  // sums of one pass over the rows, whichever piece computed a row)
  const std::size_t row_cells = a.summaries ? static_cast<std::size_t>(nh) * static_cast<std::size_t>(rows) : 0;
  std::vector<double> entropy(row_cells, 0.0), distance(row_cells, 0.0), sink(row_cells, 0.0);

  // Work items: (head, block of kQueryTile queries), head-major, to the pool when there are at least as many heads as
  // threads (with fewer, the heads run in turn and their GEMMs split). Blocks of one head are independent (each
  // starts its row state afresh), so the items of 9 heads (SmolLM2) divide evenly over 2 threads where whole heads
  // gave one thread 5 and the other 4; causal blocks late in a head see more keys, which the pool's several pieces
  // a thread even out. Per-chunk scratch (the pool thread's slot): score tile, tile · V, accumulator, row state,
  // top-k.
  const int blocks = (nq + kQueryTile - 1) / kQueryTile;
  const std::int64_t items = static_cast<std::int64_t>(nh) * blocks;
  const double flops = 4.0 * nq * static_cast<double>(nk) * hd * nh;
  const int chunks = nh >= core::thread_count() ? core::parallel_chunks(items, 1, flops) : 1;
  const std::size_t s_size = static_cast<std::size_t>(kQueryTile) * kKeyTile;
  const std::size_t acc_size = static_cast<std::size_t>(kQueryTile) * hd;
  std::vector<float> s_buf(chunks * s_size), pv_buf(chunks * acc_size), acc_buf(chunks * acc_size);
  std::vector<double> state(static_cast<std::size_t>(chunks) * kQueryTile * 5);  // m, l, T, D, S0 per row
  std::vector<TopEntry> top_buf(static_cast<std::size_t>(chunks) * kQueryTile * std::max(top_k, 1));
  std::vector<int> top_count(static_cast<std::size_t>(chunks) * kQueryTile);
  std::atomic<bool> overflowed{false};

  // Query block i0.. of head h.
  const auto run_query_block = [&](int h, int i0, int chunk) {
    const bool ablated = !a.head_keep.empty() && a.head_keep[static_cast<std::size_t>(h)] == 0;
    if (ablated) return;  // zero columns of concat; zero summaries (as its weights are zero)
    float* s = s_buf.data() + chunk * s_size;
    float* pv = pv_buf.data() + chunk * acc_size;
    float* acc = acc_buf.data() + chunk * acc_size;
    double* st = state.data() + static_cast<std::size_t>(chunk) * kQueryTile * 5;
    TopEntry* tops = top_buf.data() + static_cast<std::size_t>(chunk) * kQueryTile * std::max(top_k, 1);
    int* counts = top_count.data() + static_cast<std::size_t>(chunk) * kQueryTile;
    const int g = h / group;
    const int bq = std::min(kQueryTile, nq - i0);
    std::fill_n(acc, static_cast<std::size_t>(bq) * hd, 0.0f);
    for (int r = 0; r < bq; ++r) {
      st[r * 5 + 0] = -std::numeric_limits<double>::infinity();
      st[r * 5 + 1] = st[r * 5 + 2] = st[r * 5 + 3] = st[r * 5 + 4] = 0.0;
      counts[r] = 0;
    }
    // keys any row of the block may see
    int lo_all = nk, hi_all = 0;
    for (int r = 0; r < bq; ++r) {
      int lo = 0, hi = 0;
      rule.range(i0 + r, nk, &lo, &hi);
      if (hi > lo) lo_all = std::min(lo_all, lo), hi_all = std::max(hi_all, hi);
    }
    for (int j0 = lo_all - lo_all % kKeyTile; j0 < hi_all; j0 += kKeyTile) {
      const int bk = std::min(kKeyTile, nk - j0);
      if (!score_tile(a, rule, h, i0, bq, j0, bk, s)) overflowed.store(true, std::memory_order_relaxed);
      for (int r = 0; r < bq; ++r) {
        float* row = s + static_cast<std::size_t>(r) * bk;
        double* rs = st + r * 5;
        float tile_max = kNegInf;
        for (int c = 0; c < bk; ++c) tile_max = std::max(tile_max, row[c]);
        if (tile_max == kNegInf) {  // nothing visible here: this tile adds nothing to the row
          std::fill_n(row, bk, 0.0f);
          continue;
        }
        const double m_old = rs[0], m_new = std::max(m_old, static_cast<double>(tile_max));
        const double alpha = std::exp(m_old - m_new);  // 0 when m_old is -inf
        double sum = 0.0, t = 0.0, d = 0.0;
        const int pos = a.first + i0 + r;
        for (int c = 0; c < bk; ++c) {
          const float sc = row[c];
          if (sc == kNegInf) {
            row[c] = 0.0f;
            continue;
          }
          const double p = std::exp(static_cast<double>(sc) - m_new);
          sum += p;
          if (a.summaries) {
            t += p * sc;
            d += p * std::abs(pos - (j0 + c));
            if (j0 + c == 0) rs[4] = rs[4] * alpha + p;
            push_top(tops + static_cast<std::size_t>(r) * top_k, counts + r, top_k, TopEntry{sc, j0 + c});
          }
          row[c] = static_cast<float>(p);
        }
        if (a.summaries && j0 > 0) rs[4] *= alpha;
        rs[0] = m_new;
        rs[1] = rs[1] * alpha + sum;
        rs[2] = rs[2] * alpha + t;
        rs[3] = rs[3] * alpha + d;
        float* acc_r = acc + static_cast<std::size_t>(r) * hd;
        const float fa = static_cast<float>(alpha);
        for (int c = 0; c < hd; ++c) acc_r[c] *= fa;
      }
      // acc += P · V_tile
      const core::ConstMatView v_t{a.v.data() + static_cast<std::size_t>(j0) * kv_inner + g * hd, bk, hd, kv_inner};
      ops::matmul_nn(core::ConstMatView{s, bq, bk, bk}, v_t, core::MatView{pv, bq, hd, hd});
      for (std::size_t x = 0; x < static_cast<std::size_t>(bq) * hd; ++x) acc[x] += pv[x];
    }
    // finish: concat = acc / l; the summaries from the row's final max and sum
    for (int r = 0; r < bq; ++r) {
      const double* rs = st + r * 5;
      const double l = rs[1];
      float* dst = out.concat.data() + static_cast<std::size_t>(i0 + r) * inner + h * hd;
      if (l > 0.0) {
        const float inv = static_cast<float>(1.0 / l);
        for (int c = 0; c < hd; ++c) dst[c] = acc[static_cast<std::size_t>(r) * hd + c] * inv;
      }
      const int i = i0 + r;
      if (!a.summaries || i >= rows || !(l > 0.0)) continue;
      const std::size_t hi = static_cast<std::size_t>(h) * rows + i;
      entropy[hi] = rs[0] + std::log(l) - rs[2] / l;
      distance[hi] = rs[3] / l;
      sink[hi] = rs[4] / l;
      const std::size_t at = hi * static_cast<std::size_t>(top_k);
      int kept = 0;
      for (int t = 0; t < counts[r]; ++t) {
        const TopEntry& e = tops[static_cast<std::size_t>(r) * top_k + t];
        const float w = static_cast<float>(std::exp(static_cast<double>(e.score) - rs[0]) / l);
        if (!(w > 0.0f)) continue;
        out.summary.top_ids[at + kept] = e.key;
        out.summary.top_weights[at + kept] = w;
        ++kept;
      }
    }
  };
  const auto run_items = [&](std::int64_t begin, std::int64_t end, int chunk) {
    for (auto t = begin; t < end; ++t) {
      run_query_block(static_cast<int>(t / blocks), static_cast<int>(t % blocks) * kQueryTile, chunk);
    }
  };
  if (chunks > 1) {
    core::parallel_for(items, 1, flops, run_items);
  } else {
    run_items(0, items, 0);
  }
  out.overflowed = overflowed.load(std::memory_order_relaxed);
  if (a.summaries) {
    const double r = rows > 0 ? rows : 1;
    for (int h = 0; h < nh; ++h) {
      const auto hh = static_cast<std::size_t>(h);
      double e = 0.0, d = 0.0, s0 = 0.0;
      for (std::size_t i = hh * rows; i < (hh + 1) * rows; ++i) e += entropy[i], d += distance[i], s0 += sink[i];
      out.summary.entropy[hh] = static_cast<float>(std::max(0.0, e) / r);
      out.summary.distance[hh] = static_cast<float>(d / r);
      out.summary.sink[hh] = static_cast<float>(s0 / r);
    }
  }
  return out;
}

std::vector<float> tiled_head_weights(const TiledArgs& a, int head) {
  std::vector<float> w(static_cast<std::size_t>(a.nq) * static_cast<std::size_t>(a.nk), 0.0f);
  if (!a.head_keep.empty() && a.head_keep[static_cast<std::size_t>(head)] == 0) return w;  // ablated: zeros
  const VisibleRule rule = rule_of(a);
  for (int i0 = 0; i0 < a.nq; i0 += kQueryTile) {
    const int bq = std::min(kQueryTile, a.nq - i0);
    float* s = w.data() + static_cast<std::size_t>(i0) * a.nk;
    score_tile(a, rule, head, i0, bq, 0, a.nk, s);
    ops::masked_softmax_rows(core::MatView{s, bq, a.nk, a.nk});
  }
  return w;
}

}  // namespace attnscope::attention
