// attention_output.h: the result record shared by the single-head attention functions.
// Layer: attention (depends on core/ops only; never on the kernels layer).
#pragma once

#include <vector>

namespace attnscope::attention {

// Every intermediate the page shows, row-major:
// scores [nq, nk] (blocked entries -inf), weights [nq, nk] (row softmax of scores), output [nq, dv].
struct AttentionOutput {
  std::vector<float> scores, weights, output;
};

}  // namespace attnscope::attention
