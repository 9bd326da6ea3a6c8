// activations.cpp: element-wise wrappers over kernels::active_kernels(). Layer: ops.
#include "ops/activations.h"

#include "kernels/kernels.h"

namespace attnscope::ops {

void relu(std::span<const float> x, std::span<float> out) { kernels::active_kernels().relu(x.size(), x.data(), out.data()); }
void gelu(std::span<const float> x, std::span<float> out) { kernels::active_kernels().gelu(x.size(), x.data(), out.data()); }
void tanh(std::span<const float> x, std::span<float> out) { kernels::active_kernels().tanh(x.size(), x.data(), out.data()); }
void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  kernels::active_kernels().add(a.size(), a.data(), b.data(), out.data());
}
float dot(std::span<const float> a, std::span<const float> b) {
  return kernels::active_kernels().dot(a.size(), a.data(), b.data());
}

}  // namespace attnscope::ops
