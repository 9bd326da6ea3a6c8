// f32-dot-scalar.cpp: reference dot product sum_i a[i] b[i], accumulated in double and rounded once, and the row dots
// of a float32 tied head made of it.
// Layer: kernels; standard library only.
#include "kernels/kernel_list.h"

namespace attnscope::kernels {

float f32_dot__scalar(std::size_t n, const float* a, const float* b) {
  double acc = 0.0;
  for (std::size_t i = 0; i < n; ++i) acc += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(acc);
}

// one f32_dot__scalar per row (a float32 tied head's logits)
void f32_row_dots__scalar(std::size_t rows, std::size_t n, const float* h, const float* t, std::size_t ldt, float* out) {
  for (std::size_t r = 0; r < rows; ++r) out[r] = f32_dot__scalar(n, h, t + r * ldt);
}

}  // namespace attnscope::kernels
