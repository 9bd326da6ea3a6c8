// scaled_dot_product.h: scaled dot-product attention (Vaswani et al. 2017, eq. 1), one head.
// Layer: attention.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "attention/attention_output.h"
#include "core/status.h"

namespace attnscope::attention {

struct SdpaArgs {
  std::span<const float> q, k, v;  // [nq, dk], [nk, dk], [nk, dv]
  int nq = 0, nk = 0, dk = 0, dv = 0;
  std::span<const std::uint8_t> mask;  // empty or nq*nk, 1 = may attend
  bool causal = false;                 // block key j > i (top-left); combines with mask
  std::optional<double> scale;         // default 1/sqrt(dk); must be finite
};

// JS scaledDotProductAttention(...) -> { scores, weights, output }:
// scores = scale · Q Kᵀ [nq, nk] with blocked entries -inf, weights = row softmax [nq, nk],
// output = weights V [nq, dv]. A row with every key blocked gets zero weights and a zero output row.
core::Result<AttentionOutput> scaled_dot_product_attention(const SdpaArgs& a);

}  // namespace attnscope::attention
