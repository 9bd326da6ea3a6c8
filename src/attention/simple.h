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

}  // namespace attnscope::attention
