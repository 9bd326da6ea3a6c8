// layer_norm.cpp: validated layerNorm and the wrapper over the layer-norm kernel. Layer: ops.
#include "ops/layer_norm.h"

#include "core/check.h"
#include "kernels/kernels.h"
#include "ops/validate.h"

namespace attnscope::ops {

void layer_norm_rows(std::span<const float> x, int n, int d, std::span<const float> gamma,
                     std::span<const float> beta, float eps, std::span<float> y) {
  kernels::active_kernels().layer_norm_rows(n, d, x.data(), gamma.empty() ? nullptr : gamma.data(),
                                            beta.empty() ? nullptr : beta.data(), eps, y.data());
}

core::Result<std::vector<float>> layer_norm(std::span<const float> x, int n, int d, std::span<const float> gamma,
                                            std::span<const float> beta, double eps) {
  constexpr const char* fn = "layerNorm";
  ATTN_TRY(core::check_positive(fn, "n", n));
  ATTN_TRY(core::check_positive(fn, "d", d));
  ATTN_TRY(check_array(fn, "", "x", x, Dims{"n*d", n, d}));
  ATTN_TRY(check_array(fn, "", "gamma", gamma, Dims{"d", d}, Need::kOptional));
  ATTN_TRY(check_array(fn, "", "beta", beta, Dims{"d", d}, Need::kOptional));
  ATTN_TRY(check_positive_finite(fn, "eps", eps));
  std::vector<float> y(x.size());
  layer_norm_rows(x, n, d, gamma, beta, static_cast<float>(eps), y);
  return y;
}

void layer_norm_stats(std::span<const float> x, int n, int d, std::vector<float>& mean, std::vector<float>& var) {
  mean.resize(static_cast<std::size_t>(n));
  var.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const float* row = x.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(d);
    double mu = 0.0;
    for (int c = 0; c < d; ++c) mu += row[c];
    mu /= d;
    double v = 0.0;
    for (int c = 0; c < d; ++c) v += (row[c] - mu) * (row[c] - mu);
    mean[static_cast<std::size_t>(i)] = static_cast<float>(mu);
    var[static_cast<std::size_t>(i)] = static_cast<float>(v / d);
  }
}

}  // namespace attnscope::ops
