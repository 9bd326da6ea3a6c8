// softmax.cpp: validated softmax and the in-place wrapper over the softmax kernel. Layer: ops.
#include "ops/softmax.h"

#include <cmath>
#include <string>

#include "core/check.h"
#include "kernels/kernels.h"

namespace attnscope::ops {

void masked_softmax_rows(core::MatView s) {
  kernels::active_kernels().softmax_rows(s.rows, s.cols, s.data, s.ld, s.data, s.ld);
}

core::Result<std::vector<float>> softmax(std::span<const float> x, int rows, int cols) {
  constexpr const char* fn = "softmax";
  ATTN_TRY(core::check_positive(fn, "rows", rows));
  ATTN_TRY(core::check_positive(fn, "cols", cols));
  const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if (x.empty()) return core::type_error(fn, "x", "x is required");
  ATTN_TRY(core::check_length(fn, "x", x.size(), count,
                              "rows*cols = " + std::to_string(rows) + "*" + std::to_string(cols)));
  for (std::size_t i = 0; i < x.size(); ++i) {
    // -inf is a blocked entry (gives 0); NaN and +inf have no meaningful softmax.
    if (std::isnan(x[i]) || x[i] == INFINITY) {
      return core::range_error(fn, "x", "x[" + std::to_string(i) + "] (" + core::format_number(x[i]) +
                                            ") must be finite or -Infinity");
    }
  }
  std::vector<float> y(x.begin(), x.end());
  masked_softmax_rows(core::MatView{y.data(), rows, cols, cols});
  return y;
}

}  // namespace attnscope::ops
