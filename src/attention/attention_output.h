// attention_output.h: the result record shared by the single-head attention functions.
// Layer: attention (depends on core/ops only; never on the kernels layer).
#pragma once

#include <vector>

#include "core/tensor.h"

namespace attnscope::attention {

// Every intermediate the page shows, row-major:
// scores [nq, nk] (blocked entries -inf), weights [nq, nk] (row softmax of scores), output [nq, dv].
struct AttentionOutput {
  std::vector<float> scores, weights, output;
};

namespace detail {
// The steps every single-head attention shares once out.scores [nq, nk] holds the (scaled, masked)
// scores: weights = row softmax(scores) — row max, exp and sum, normalize; an all-blocked row becomes
// zeros — then output = weights · values [nq, dv].
void softmax_and_pool(AttentionOutput& out, int nq, int nk, core::ConstMatView values);
}  // namespace detail

}  // namespace attnscope::attention
