// f32-vadd-scalar.cpp: reference element-wise add y = a + b. Layer: kernels. y may alias a or b.
#include "kernels/kernel_list.h"

namespace attnscope::kernels {

void f32_vadd__scalar(std::size_t n, const float* a, const float* b, float* y) {
  for (std::size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

}  // namespace attnscope::kernels
