// kernel_regression.h: Nadaraya-Watson kernel regression with a Gaussian kernel, the "attention
// pooling" of d2l.ai section 11.2. Layer: attention.
#pragma once

#include <span>
#include <vector>

#include "core/status.h"

namespace attnscope::attention {

struct KernelRegressionOutput {
  std::vector<float> weights;  // [nQuery, nTrain]
  std::vector<float> y_pred;   // [nQuery]
};

// JS kernelRegression({ xTrain, yTrain, xQuery, w = 1 }) -> { weights, yPred }: one feature;
// weights[i, j] = softmax_j(-((xQuery_i - xTrain_j) · w)² / 2), yPred = weights · yTrain.
// xTrain and yTrain have the same length nTrain >= 1; xQuery nQuery >= 1; w any finite number.
core::Result<KernelRegressionOutput> kernel_regression(std::span<const float> x_train, std::span<const float> y_train,
                                                       std::span<const float> x_query, double w);

}  // namespace attnscope::attention
