// additive.h: additive (Bahdanau) attention, as d2l.ai's AdditiveAttention (dropout off).
// Layer: attention.
#pragma once

#include <optional>
#include <span>

#include "attention/attention_output.h"
#include "core/status.h"

namespace attnscope::attention {

struct AdditiveArgs {
  std::span<const float> queries, keys, values;  // [nq, dq], [nk, dk], [nk, dv]
  int nq = 0, nk = 0, dq = 0, dk = 0, dv = 0, hidden = 0;
  std::span<const float> wq, wk, wv;  // [dq,hidden], [dk,hidden], [hidden]
  std::optional<int> valid_len;       // absent: all keys valid; 0 blocks every key (zero weights and output)
};

// JS additiveAttention(...) -> { scores, weights, output }:
// score[i, j] = wv · tanh(q_i Wq + k_j Wk) [nq, nk], keys j >= validLen get -inf;
// weights = row softmax [nq, nk]; output = weights · values [nq, dv].
core::Result<AttentionOutput> additive_attention(const AdditiveArgs& a);

}  // namespace attnscope::attention
