// f32-dot-scalar.cpp: reference dot product sum_i a[i] b[i], accumulated in double and rounded once.
// Layer: kernels; standard library only.
#include "kernels/kernel_list.h"

namespace attnscope::kernels {

float f32_dot__scalar(std::size_t n, const float* a, const float* b) {
  double acc = 0.0;
  for (std::size_t i = 0; i < n; ++i) acc += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(acc);
}

}  // namespace attnscope::kernels
