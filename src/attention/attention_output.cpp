// attention_output.cpp: softmax and weighted sum shared by the single-head attention functions.
// Layer: attention (composes ops).
#include "attention/attention_output.h"

#include "ops/linear.h"
#include "ops/softmax.h"

namespace attnscope::attention::detail {

void softmax_and_pool(AttentionOutput& out, int nq, int nk, core::ConstMatView values) {
  out.weights = out.scores;
  const core::MatView weights{out.weights.data(), nq, nk, nk};
  ops::masked_softmax_rows(weights);
  out.output.resize(static_cast<std::size_t>(nq) * static_cast<std::size_t>(values.cols));
  ops::matmul_nn(weights, values, core::MatView{out.output.data(), nq, values.cols, values.cols});
}

}  // namespace attnscope::attention::detail
