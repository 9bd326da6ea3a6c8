// analysis.cpp: head detectors, the repeated-token probe, attention flow (max-flow) and the query/key PCA map.
// Layer: attention (uses ops/max_flow and ops/pca). Sums run in float64.
#include "attention/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include "core/check.h"
#include "core/rng.h"
#include "ops/max_flow.h"
#include "ops/pca.h"
#include "ops/validate.h"

namespace attnscope::attention {

namespace {

using core::range_error;
using std::size_t;

inline size_t idx(long long i) { return static_cast<size_t>(i); }

// "fn: n (1) must be at least 2"
core::Status check_at_least(const char* fn, const char* arg, long long value, long long min) {
  if (value >= min) return core::Status::Ok();
  return range_error(fn, arg, std::string(arg) + " (" + std::to_string(value) + ") must be at least " + std::to_string(min));
}

}  // namespace

// ---- head detectors

core::Result<HeadScores> head_scores(const HeadScoresArgs& a) {
  constexpr const char* fn = "headScores";
  ATTN_TRY(core::check_positive(fn, "numHeads", a.num_heads));
  ATTN_TRY(core::check_positive(fn, "n", a.n));
  ATTN_TRY(core::check_positive(fn, "numLayers", a.num_layers));
  ATTN_TRY(check_at_least(fn, "n", a.n, 2));
  const long long L = a.num_layers, H = a.num_heads, n = a.n;
  ATTN_TRY(ops::check_array(fn, "", "weights", a.weights, ops::Dims{"numLayers*numHeads*n*n", L * H * n * n}));
  if (!a.ids.empty()) ATTN_TRY(core::check_length(fn, "ids", a.ids.size(), idx(n), "n = " + std::to_string(n)));
  const long long T = a.period;
  if (a.has_period) {
    ATTN_TRY(core::check_positive(fn, "period", T));
    if (2 * T > n) {
      return range_error(fn, "period", "period (" + std::to_string(T) + ") must be at most n/2 (n = " +
                                           std::to_string(n) + "): the input is [BOS?] + R + R with R of length period");
    }
  }

  // earlier occurrences of each row's id, for the duplicate-token score: dup[i] = { j < i : ids[j] = ids[i] }
  std::vector<std::vector<int>> dup;
  long long dup_rows = 0;
  if (!a.ids.empty()) {
    dup.resize(idx(n));
    for (long long i = 0; i < n; ++i) {
      for (long long j = 0; j < i; ++j)
        if (a.ids[idx(j)] == a.ids[idx(i)]) dup[idx(i)].push_back(static_cast<int>(j));
      if (!dup[idx(i)].empty()) ++dup_rows;
    }
  }

  HeadScores out;
  const size_t heads = idx(L * H);
  out.previous_token.resize(heads);
  out.sink_share.resize(heads);
  if (!a.ids.empty()) out.duplicate_token.resize(heads);
  if (a.has_period) out.induction.resize(heads);
  for (size_t h = 0; h < heads; ++h) {
    const float* w = a.weights.data() + h * idx(n * n);  // [n, n] of head h (layer-major)
    auto at = [&](long long i, long long j) { return static_cast<double>(w[idx(i * n + j)]); };
    double prev = 0.0, sink = 0.0;
    for (long long i = 0; i < n; ++i) {
      sink += at(i, 0);
      if (i >= 1) prev += at(i, i - 1);
    }
    out.previous_token[h] = static_cast<float>(prev / static_cast<double>(n - 1));
    out.sink_share[h] = static_cast<float>(sink / static_cast<double>(n));
    if (!a.ids.empty()) {
      double s = 0.0;
      for (long long i = 0; i < n; ++i)
        for (const int j : dup[idx(i)]) s += at(i, j);
      out.duplicate_token[h] = dup_rows > 0 ? static_cast<float>(s / static_cast<double>(dup_rows))
                                            : std::numeric_limits<float>::quiet_NaN();
    }
    if (a.has_period) {
      double s = 0.0;
      for (long long i = n - T; i < n; ++i) s += at(i, i - T + 1);
      out.induction[h] = static_cast<float>(s / static_cast<double>(T));
    }
  }
  return out;
}

// ---- repeated random tokens

core::Result<std::vector<std::int32_t>> repeated_tokens(int vocab_size, int length, long long seed, long long bos) {
  constexpr const char* fn = "repeatedTokens";
  ATTN_TRY(core::check_positive(fn, "vocabSize", vocab_size));
  ATTN_TRY(core::check_positive(fn, "length", length));
  ATTN_TRY(core::check_non_negative(fn, "seed", seed));
  if (bos >= vocab_size) {
    return range_error(fn, "bos", "bos (" + std::to_string(bos) + ") must be less than vocabSize (" +
                                      std::to_string(vocab_size) + ")");
  }
  core::Rng rng(static_cast<std::uint64_t>(seed));
  std::vector<std::int32_t> ids;
  ids.reserve(idx(2LL * length + 1));
  if (bos >= 0) ids.push_back(static_cast<std::int32_t>(bos));
  const size_t start = ids.size();
  for (int t = 0; t < length; ++t) {
    // 64-bit draw reduced by multiply-shift (Lemire 2019): uniform up to a bias below 2^-32 for vocabSize < 2^31
    const std::uint64_t r = rng.next_u64() >> 32;
    ids.push_back(static_cast<std::int32_t>((r * static_cast<std::uint64_t>(vocab_size)) >> 32));
  }
  for (int t = 0; t < length; ++t) ids.push_back(ids[start + idx(t)]);
  return ids;
}

// ---- attention flow

core::Result<std::vector<float>> attention_flow(const FlowArgs& a) {
  constexpr const char* fn = "attentionFlow";
  ATTN_TRY(core::check_positive(fn, "numHeads", a.num_heads));
  ATTN_TRY(core::check_positive(fn, "n", a.n));
  ATTN_TRY(core::check_positive(fn, "layers", a.num_layers));
  const long long L = a.num_layers, H = a.num_heads, n = a.n;
  // the graph holds up to L*n*n edges (two arcs of 24 bytes each): a bound keeps it within a wasm32 heap
  constexpr long long kMaxEdges = 1LL << 22;
  if (L * n * n > kMaxEdges) {
    return range_error(fn, "layers", "layers: numLayers*n*n (" + std::to_string(L * n * n) + ") must be at most " +
                                         std::to_string(kMaxEdges) + " (the flow graph's edges)");
  }
  ATTN_TRY(ops::check_array(fn, "", "layers", a.layers, ops::Dims{"numLayers*numHeads*n*n", L * H * n * n}));
  if (a.has_output && (a.output < 0 || a.output >= n)) {
    return range_error(fn, "output", "output (" + std::to_string(a.output) + ") must be a position from 0 to n-1 = " +
                                         std::to_string(n - 1));
  }
  // 1. M_l = (mean_h A_l + I), rows renormalised, as Abnar & Zuidema's get_flow_relevance builds res_att_mat
  //    (github.com/samiraabnar/attention_flow, attention_graph_util.py / bert_example.ipynb); the same matrices
  //    feed their rollout (compute_joint_attention) and their flow graph (get_adjmat).
  const int nodes = static_cast<int>((L + 1) * n);
  ops::MaxFlow graph(nodes);
  std::vector<double> cap(idx(L * n * n));  // cap[l][i][j]: edge (l+1, i) -> (l, j)
  for (long long l = 0; l < L; ++l) {
    for (long long i = 0; i < n; ++i) {
      double* row = cap.data() + idx((l * n + i) * n);
      double sum = 0.0;
      for (long long j = 0; j < n; ++j) {
        double s = 0.0;
        for (long long h = 0; h < H; ++h) s += a.layers[idx(((l * H + h) * n + i) * n + j)];
        row[j] = s / static_cast<double>(H) + (i == j ? 1.0 : 0.0);
        sum += row[j];
      }
      // 2. edges (l+1, i) -> (l, j); a row that sums to 0 or less (negative weights cancelling) carries no flow
      for (long long j = 0; j < n; ++j) {
        row[j] = sum > 0.0 && row[j] > 0.0 ? row[j] / sum : 0.0;
        if (row[j] > 0.0) graph.add_edge(static_cast<int>((l + 1) * n + i), static_cast<int>(l * n + j), row[j]);
      }
    }
  }
  // 3. one maximum flow per (output o, input v): source (L, o), sink (0, v), searched only over the nodes that can
  //    reach the sink (every source-sink path lies among them; in a causal model, positions >= v), built once per v
  const long long first = a.has_output ? a.output : 0, last = a.has_output ? a.output + 1 : n;
  std::vector<float> flow(idx((last - first) * n));
  // One thread: dealing the inputs round-robin to the pool (a graph copy each) measured 2x slower in the threaded
  // wasm module on the shared 2-core machine (bench/analysis_bench.mjs, 2026-11-26), so the loop stays serial.
  std::vector<std::uint8_t> reach(idx(nodes));
  for (long long v = 0; v < n; ++v) {
    std::fill(reach.begin(), reach.end(), std::uint8_t{0});
    reach[idx(v)] = 1;
    for (long long l = 0; l < L; ++l) {
      for (long long i = 0; i < n; ++i) {
        const double* row = cap.data() + idx((l * n + i) * n);
        // the residual diagonal first: it carries capacity in every row that carries any
        bool any = row[i] > 0.0 && reach[idx(l * n + i)] != 0;
        for (long long j = 0; j < n && !any; ++j) any = row[j] > 0.0 && reach[idx(l * n + j)] != 0;
        reach[idx((l + 1) * n + i)] = any ? 1 : 0;
      }
    }
    for (long long o = first; o < last; ++o) {
      const int source = static_cast<int>(L * n + o);
      flow[idx((o - first) * n + v)] =
          reach[idx(source)] != 0 ? static_cast<float>(graph.solve(source, static_cast<int>(v), &reach)) : 0.0f;
    }
  }
  return flow;
}

// ---- query/key map

core::Result<QkMap> qk_map(const QkMapArgs& a) {
  constexpr const char* fn = "qkMap";
  ATTN_TRY(core::check_positive(fn, "nq", a.nq));
  ATTN_TRY(core::check_positive(fn, "nk", a.nk));
  ATTN_TRY(core::check_positive(fn, "d", a.d));
  ATTN_TRY(check_at_least(fn, "d", a.d, 2));
  constexpr int kMaxD = 1024;  // the Jacobi solver is O(d^3) per sweep
  if (a.d > kMaxD) {
    return range_error(fn, "d", "d (" + std::to_string(a.d) + ") must be at most " + std::to_string(kMaxD));
  }
  const long long nq = a.nq, nk = a.nk, d = a.d;
  ATTN_TRY(ops::check_array(fn, "", "q", a.q, ops::Dims{"nq*d", nq, d}));
  ATTN_TRY(ops::check_array(fn, "", "k", a.k, ops::Dims{"nk*d", nk, d}));

  // 1. the joint set X = [q; k] in float64   [nq + nk, d]
  std::vector<double> x(idx((nq + nk) * d));
  for (size_t i = 0; i < a.q.size(); ++i) x[i] = a.q[i];
  for (size_t i = 0; i < a.k.size(); ++i) x[a.q.size() + i] = a.k[i];
  double* xq = x.data();
  double* xk = x.data() + a.q.size();
  if (a.normalize) {
    // 2. key translation: k += mean(q) - mean(k)   (each q·k shifts by q·(mean(q) - mean(k)), constant per query)
    for (long long j = 0; j < d; ++j) {
      double mq = 0.0, mk = 0.0;
      for (long long i = 0; i < nq; ++i) mq += xq[idx(i * d + j)];
      for (long long i = 0; i < nk; ++i) mk += xk[idx(i * d + j)];
      const double shift = mq / static_cast<double>(nq) - mk / static_cast<double>(nk);
      for (long long i = 0; i < nk; ++i) xk[idx(i * d + j)] += shift;
    }
    // 3. scaling: q *= c, k /= c with c = sqrt(mean‖k‖ / mean‖q‖): equal mean norms, every q·k unchanged
    auto mean_norm = [d](const double* rows, long long count) {
      double s = 0.0;
      for (long long i = 0; i < count; ++i) {
        double r = 0.0;
        for (long long j = 0; j < d; ++j) r += rows[idx(i * d + j)] * rows[idx(i * d + j)];
        s += std::sqrt(r);
      }
      return s / static_cast<double>(count);
    };
    const double nq_norm = mean_norm(xq, nq), nk_norm = mean_norm(xk, nk);
    if (nq_norm > 0.0 && nk_norm > 0.0) {
      const double c = std::sqrt(nk_norm / nq_norm);
      for (long long i = 0; i < nq * d; ++i) xq[idx(i)] *= c;
      for (long long i = 0; i < nk * d; ++i) xk[idx(i)] /= c;
    }
  }
  // 4. PCA of the joint set; projections (x - mean) · component
  const ops::Pca p = ops::pca(x, static_cast<int>(nq + nk), static_cast<int>(d), 2);
  QkMap out;
  out.queries.resize(idx(nq * 2));
  out.keys.resize(idx(nk * 2));
  for (long long r = 0; r < nq + nk; ++r) {
    for (long long c = 0; c < 2; ++c) {
      double s = 0.0;
      for (long long j = 0; j < d; ++j) s += (x[idx(r * d + j)] - p.mean[idx(j)]) * p.components[idx(c * d + j)];
      if (r < nq) out.queries[idx(r * 2 + c)] = static_cast<float>(s);
      else out.keys[idx((r - nq) * 2 + c)] = static_cast<float>(s);
    }
  }
  out.explained_variance.resize(2);
  for (size_t c = 0; c < 2; ++c) {
    out.explained_variance[c] = p.total_variance > 0.0 ? static_cast<float>(p.variances[c] / p.total_variance) : 0.0f;
  }
  out.components.assign(p.components.begin(), p.components.end());
  ATTN_TRY(ops::check_result(fn, "queries", out.queries));
  ATTN_TRY(ops::check_result(fn, "keys", out.keys));
  return out;
}

}  // namespace attnscope::attention
