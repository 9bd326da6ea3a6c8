// rms_norm.cpp: RMSNorm rows (rms_norm.h). Layer: ops.
#include "ops/rms_norm.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/parallel.h"

namespace attnscope::ops {

void rms_norm_rows(std::span<const float> x, int n, int d, std::span<const float> weight, float eps, bool offset_one,
                   std::span<float> y) {
  const std::size_t dd = static_cast<std::size_t>(d);
  // rows on the pool (each row's result is the same whichever thread computes it); ~6 float64 operations an element,
  // ~1.5 ns: 60 GEMM-flop equivalents (core/parallel.h)
  core::parallel_for(n, 16, 60.0 * n * static_cast<double>(d), [&](std::int64_t begin, std::int64_t end, int) {
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
      const float* row = x.data() + i * dd;
      float* out = y.data() + i * dd;
      // 1. mean of squares
      double ss = 0.0;
      for (std::size_t c = 0; c < dd; ++c) ss += static_cast<double>(row[c]) * row[c];
      const double inv = 1.0 / std::sqrt(ss / d + static_cast<double>(eps));
      // 2. scale, then the weight (w or 1 + w)
      for (std::size_t c = 0; c < dd; ++c) {
        const double w = weight.empty() ? 1.0 : offset_one ? 1.0 + weight[c] : static_cast<double>(weight[c]);
        out[c] = static_cast<float>(row[c] * inv * w);
      }
    }
  });
}

}  // namespace attnscope::ops
