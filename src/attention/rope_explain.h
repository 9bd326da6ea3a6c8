// rope_explain.h: what the page's RoPE panel draws, computed from the model's own RoPE tables (ops/rope.h, the
// one owner of the frequencies and the rotation). Layer: attention.
//
// For one query vector q and one key vector k of head_dim values, at positions m and n:
//   q_rot = R(m) q, k_rot = R(n) k                    (ops::apply_rope: rotate_half pairing, float32 as a model runs)
//   angle_q[i] = m · inv_freq[i], angle_k[i] = n · inv_freq[i]          i < rotary_dim / 2
//   score      = (R(m) q) · (R(n) k)                   (float64 rotation, the dot before the 1/√d scale)
//   curve[j]   = (R(p + Δ_j) q) · (R(p) k), Δ_j = from + j, p = max(0, −from)   (float64)
// Because R(a)ᵀR(b) = R(b − a), the score depends on m − n only: `curve` is the score against the offset.
// Dynamic NTK frequencies depend on the sequence length: they are taken for a sequence long enough to hold every
// position used here (max(m, n, p + to) + 1), as the model does for a text of that length.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "ops/rope.h"

namespace attnscope::attention {

struct RopeExplainArgs {
  ops::RopeSpec spec;  // rotary_dim is set here: int(head_dim × partial_rotary_factor), as config.json's reader does
  int head_dim = 0;
  double partial_rotary_factor = 1.0;  // (0, 1]
  std::span<const float> q, k;  // [head_dim] each
  int m = 0, n = 0;             // query and key positions (>= 0)
  int from = 0, to = 0;         // the offsets m − n of the curve, from <= to
};

struct RopeExplain {
  int rotary_dim = 0;
  std::vector<double> inv_freq;  // [rotary_dim / 2]
  double attention_scaling = 1.0;
  std::vector<float> q_rotated, k_rotated;  // [head_dim]
  std::vector<double> angle_q, angle_k;     // [rotary_dim / 2], radians
  double score = 0.0;
  std::vector<double> curve;  // [to − from + 1]
};

// The scaling's name ('default', 'linear', 'dynamic', 'llama3', 'yarn'; rope_type's values) as a RopeType.
core::Status parse_rope_type(const std::string& name, ops::RopeType& type);

core::Result<RopeExplain> rope_explain(const RopeExplainArgs& a);

}  // namespace attnscope::attention
