// analysis.h: "looking inside" analyses that need only attention weights, query/key vectors or token ids
// (issue 27): head detectors, the repeated-random-token probe, attention flow, the query/key PCA map.
// Layer: attention. Every function validates its values and reports errors naming the JS function and argument.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace attnscope::attention {

// JS headScores({ weights, numHeads, n, ids?, period? }). weights: numLayers layers of [H, n, n] (head, query,
// key), concatenated. Each result has one value per head, [numLayers, H] row-major:
//   previousToken[l,h] = mean_{i=1..n-1} w[i, i-1]                                  (n >= 2)
//   sinkShare[l,h]     = mean_{i=0..n-1} w[i, 0]
//   duplicateToken     = mean over the rows i with some j < i, ids[j] = ids[i] of Σ_{such j} w[i, j]
//                        (only with ids; NaN when no row has an earlier duplicate)
//   induction          = mean_{i=n-T..n-1} w[i, i-T+1], T = period (only with period; 1 <= T, 2T <= n): the
//                        induction stripe of a [BOS?] + R + R input whose halves R have length T, over the second R
struct HeadScoresArgs {
  std::span<const float> weights;
  int num_layers = 1, num_heads = 0, n = 0;
  std::span<const std::int32_t> ids;  // empty: not given
  int period = 0;                     // 0: not given
  bool has_period = false;
};
struct HeadScores {
  std::vector<float> previous_token, sink_share, duplicate_token, induction;  // absent ones are empty
};
core::Result<HeadScores> head_scores(const HeadScoresArgs& a);

// JS repeatedTokens({ vocabSize, length, seed, bos? }): [bos] + R + R with R `length` ids drawn uniformly from
// [0, vocabSize) by core::Rng(seed) (SplitMix64): the same seed gives the same ids natively and in wasm.
// bos < 0: no BOS id.
core::Result<std::vector<std::int32_t>> repeated_tokens(int vocab_size, int length, long long seed, long long bos);

// JS attentionFlow({ layers, numHeads, n, output? }): Abnar & Zuidema (2020) attention flow. Graph: nodes
// (layer 0..L, position); per layer l the head mean with the residual, M_l = row-normalised(mean_h A_l + I); an
// edge from node (l+1, i) to (l, j) of capacity M_l[i, j]. flow[o, v] = the maximum flow from (L, o) to (0, v).
// output >= 0: only that output position (result [1, n]); otherwise every position (result [n, n]).
struct FlowArgs {
  std::span<const float> layers;  // [L, H, n, n]
  int num_layers = 0, num_heads = 0, n = 0;
  int output = -1;
  bool has_output = false;
};
core::Result<std::vector<float>> attention_flow(const FlowArgs& a);

// JS qkMap({ q, k, nq, nk, d, normalize = true }): AttentionViz's joint query/key view projected on the first two
// principal components of the joint set. With normalize (Yeh et al. 2023, §4.1): keys translated so their mean is
// the queries' mean, then queries scaled by c and keys by 1/c, c² = mean‖k‖ / mean‖q‖, so both have the same mean
// norm; every q·k changes by a per-query constant only, which softmax ignores.
struct QkMapArgs {
  std::span<const float> q, k;
  int nq = 0, nk = 0, d = 0;
  bool normalize = true;
};
struct QkMap {
  std::vector<float> queries;             // [nq, 2]
  std::vector<float> keys;                // [nk, 2]
  std::vector<float> explained_variance;  // [2], fractions of the joint set's total variance
  std::vector<float> components;          // [2, d], unit rows, largest-|x| coordinate positive
};
core::Result<QkMap> qk_map(const QkMapArgs& a);

}  // namespace attnscope::attention
