// f32-vunary-scalar.cpp: reference element-wise activations relu, gelu (exact, via erf) and tanh.
// Layer: kernels; standard library only. y may alias x. relu(-0) = 0, relu(NaN) = 0.
#include <cmath>

#include "kernels/kernel_list.h"

namespace attnscope::kernels {

void f32_vrelu__scalar(std::size_t n, const float* x, float* y) {
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

// gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), as torch.nn.GELU() (approximate='none').
void f32_vgelu__scalar(std::size_t n, const float* x, float* y) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (std::size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
}

void f32_vtanh__scalar(std::size_t n, const float* x, float* y) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

}  // namespace attnscope::kernels
