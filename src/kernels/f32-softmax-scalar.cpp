// f32-softmax-scalar.cpp: reference row softmax. Layer: kernels; standard library only.
// Three passes per row: max, exp(x - max) with sum (float), scale by 1/sum. Entries must be finite or
// -inf; -inf gives exactly 0; a row whose max is -inf (every entry blocked) is written as zeros.
// y may alias x (each pass reads an entry before writing it).
#include <cmath>
#include <limits>

#include "kernels/kernel_list.h"

namespace attnscope::kernels {

void f32_softmax__scalar(int rows, int cols, const float* x, int ldx, float* y, int ldy) {
  for (int r = 0; r < rows; ++r) {
    const float* x_r = x + static_cast<std::ptrdiff_t>(r) * ldx;
    float* y_r = y + static_cast<std::ptrdiff_t>(r) * ldy;
    float row_max = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < cols; ++j) row_max = x_r[j] > row_max ? x_r[j] : row_max;
    if (row_max == -std::numeric_limits<float>::infinity()) {
      for (int j = 0; j < cols; ++j) y_r[j] = 0.0f;
      continue;
    }
    float sum = 0.0f;
    for (int j = 0; j < cols; ++j) {
      const float e = std::exp(x_r[j] - row_max);  // exp(-inf) == 0 exactly
      y_r[j] = e;
      sum += e;
    }
    const float inv_sum = 1.0f / sum;  // sum >= 1: the max entry contributes exp(0)
    for (int j = 0; j < cols; ++j) y_r[j] *= inv_sum;
  }
}

}  // namespace attnscope::kernels
