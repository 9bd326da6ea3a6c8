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

}  // namespace attnscope::ops
