// simple.h: the simplest self-attention, with no trainable weights (Raschka, "Build a Large Language
// Model (From Scratch)", ch. 3.3). Layer: attention.
#pragma once

#include <span>

#include "attention/attention_output.h"
#include "core/status.h"

namespace attnscope::attention {

// JS simpleSelfAttention({ x, n, d }) -> { scores, weights, context }: x is [n, d];
// scores = X Xᵀ (unscaled) [n, n], weights = row softmax(scores) [n, n], output (JS: context) = weights X [n, d].
core::Result<AttentionOutput> simple_self_attention(std::span<const float> x, int n, int d);

// Internal (no validation; the model's 'simple' layer): the same with keys j >= valid_keys blocked for every
// query (padding): their scores are -inf and weights 0; valid_keys = n blocks nothing. overflowed reports
// scores that overflowed float32 (finite inputs).
AttentionOutput simple_self_attention_masked(std::span<const float> x, int n, int d, int valid_keys, bool* overflowed);

}  // namespace attnscope::attention
