// kernel_regression.cpp: Gaussian-kernel scores, softmax, weighted mean of yTrain. Layer: attention.
#include "attention/kernel_regression.h"

#include "core/check.h"
#include "ops/activations.h"
#include "ops/softmax.h"
#include "ops/validate.h"

namespace attnscope::attention {

core::Result<KernelRegressionOutput> kernel_regression(std::span<const float> x_train, std::span<const float> y_train,
                                                       std::span<const float> x_query, double w) {
  constexpr const char* fn = "kernelRegression";
  using ops::Dims;
  const auto n_train = static_cast<long long>(x_train.size());
  const auto n_query = static_cast<long long>(x_query.size());
  ATTN_TRY(core::check_not_empty(fn, "xTrain", x_train.size()));
  ATTN_TRY(core::check_not_empty(fn, "xQuery", x_query.size()));
  ATTN_TRY(ops::check_array(fn, "", "xTrain", x_train, Dims{"nTrain", n_train}));
  ATTN_TRY(ops::check_array(fn, "", "yTrain", y_train, Dims{"nTrain", n_train}));
  ATTN_TRY(ops::check_array(fn, "", "xQuery", x_query, Dims{"nQuery", n_query}));
  ATTN_TRY(ops::check_finite_number(fn, "w", w));
  const int nt = static_cast<int>(n_train), nqr = static_cast<int>(n_query);

  KernelRegressionOutput out;
  out.weights.resize(static_cast<std::size_t>(nqr) * static_cast<std::size_t>(nt));
  // 1. scores[i, j] = -((xQuery_i - xTrain_j) · w)² / 2  (a Gaussian kernel in log space)
  const float wf = static_cast<float>(w);
  for (int i = 0; i < nqr; ++i) {
    float* scores_i = out.weights.data() + static_cast<std::size_t>(i) * nt;
    for (int j = 0; j < nt; ++j) {
      const float z = (x_query[i] - x_train[j]) * wf;
      scores_i[j] = -0.5f * z * z;
    }
  }
  // 2-4. row max, exp and sum, normalize
  ops::masked_softmax_rows(core::MatView{out.weights.data(), nqr, nt, nt});
  // 5. yPred_i = Σ_j weights[i, j] · yTrain_j
  out.y_pred.resize(static_cast<std::size_t>(nqr));
  for (int i = 0; i < nqr; ++i) {
    out.y_pred[i] = ops::dot(std::span<const float>(out.weights.data() + static_cast<std::size_t>(i) * nt, nt), y_train);
  }
  ATTN_TRY(ops::check_result(fn, "weights", out.weights));
  ATTN_TRY(ops::check_result(fn, "yPred", out.y_pred));
  return out;
}

}  // namespace attnscope::attention
