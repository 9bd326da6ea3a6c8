// f32-layernorm-scalar.cpp: reference LayerNorm over rows. Layer: kernels; standard library only.
// Mean and biased variance are accumulated in double (two passes), so a constant row gives var 0 and
// y = beta exactly. gamma/beta may be nullptr (= 1 / 0). y may alias x.
#include <cmath>

#include "kernels/kernel_list.h"

namespace attnscope::kernels {

void f32_layernorm__scalar(int n, int d, const float* x, const float* gamma, const float* beta, float eps,
                           float* y) {
  for (int r = 0; r < n; ++r) {
    const float* x_r = x + static_cast<std::ptrdiff_t>(r) * d;
    float* y_r = y + static_cast<std::ptrdiff_t>(r) * d;
    double sum = 0.0;
    for (int j = 0; j < d; ++j) sum += x_r[j];
    const double mean = sum / d;
    double sq = 0.0;
    for (int j = 0; j < d; ++j) {
      const double dev = x_r[j] - mean;
      sq += dev * dev;
    }
    const double var = sq / d;
    // mean as a float pair: x − mean_hi is exact when x is near the mean, so a large common offset
    // (e.g. rows around 1000) does not leave float rounding of the mean in the output.
    const float mean_hi = static_cast<float>(mean);
    const float mean_lo = static_cast<float>(mean - static_cast<double>(mean_hi));
    const float rstd = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
    for (int j = 0; j < d; ++j) {
      float v = ((x_r[j] - mean_hi) - mean_lo) * rstd;
      if (gamma != nullptr) v *= gamma[j];
      if (beta != nullptr) v += beta[j];
      y_r[j] = v;
    }
  }
}

}  // namespace attnscope::kernels
