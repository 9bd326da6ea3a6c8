// activations.cpp: element-wise wrappers over kernels::active_kernels(). Layer: ops.
#include "ops/activations.h"

#include <cmath>

#include "kernels/kernels.h"

namespace attnscope::ops {

void relu(std::span<const float> x, std::span<float> out) { kernels::active_kernels().relu(x.size(), x.data(), out.data()); }
void gelu(std::span<const float> x, std::span<float> out) { kernels::active_kernels().gelu(x.size(), x.data(), out.data()); }
void gelu_tanh(std::span<const float> x, std::span<float> out) {
  constexpr float kC = 0.7978845608028654f;  // sqrt(2 / pi)
  std::vector<float> u(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) u[i] = kC * (x[i] + 0.044715f * (x[i] * x[i] * x[i]));
  tanh(u, u);
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = 0.5f * x[i] * (1.0f + u[i]);
}
void silu(std::span<const float> x, std::span<float> out) {
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(x[i] / (1.0 + std::exp(-static_cast<double>(x[i]))));
}
void activate(Activation a, std::span<float> x) {
  switch (a) {
    case Activation::kRelu: relu(x, x); return;
    case Activation::kGelu: gelu(x, x); return;
    case Activation::kGeluTanh: gelu_tanh(x, x); return;
    case Activation::kSilu: silu(x, x); return;
  }
}
void tanh(std::span<const float> x, std::span<float> out) { kernels::active_kernels().tanh(x.size(), x.data(), out.data()); }
void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  kernels::active_kernels().add(a.size(), a.data(), b.data(), out.data());
}
float dot(std::span<const float> a, std::span<const float> b) {
  return kernels::active_kernels().dot(a.size(), a.data(), b.data());
}

}  // namespace attnscope::ops
