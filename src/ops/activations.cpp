// activations.cpp: element-wise wrappers over kernels::active_kernels(). Layer: ops.
#include "ops/activations.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/parallel.h"
#include "kernels/kernels.h"

namespace attnscope::ops {

namespace {

// Element-wise work over [0, n) on the pool (core/parallel.h): pieces start at multiples of kElementBlock, which
// every element-wise kernel's SIMD width (4, 8, 16) divides, so each element takes the same code path as in one call
// over the whole span and the result is the one-thread result bit for bit. `cost` is one element's work in GEMM
// flops (kMinParallelFlops is ~0.2 ms of GEMM), from the one-thread profile of a Llama forward in Node: SiLU (a
// float64 exp) ~9 ns an element, the SIMD GELU/tanh kernels ~1 ns.
constexpr std::size_t kElementBlock = 64;
template <class F>
void elementwise(std::size_t n, double cost, F&& f) {
  const auto blocks = static_cast<std::int64_t>((n + kElementBlock - 1) / kElementBlock);
  core::parallel_for(blocks, 16, cost * static_cast<double>(n), [&](std::int64_t begin, std::int64_t end, int) {
    const std::size_t i0 = static_cast<std::size_t>(begin) * kElementBlock;
    f(i0, std::min(static_cast<std::size_t>(end) * kElementBlock, n));
  });
}

// Flop-equivalent cost of one element of each activation (above).
double activation_cost(Activation a) { return a == Activation::kSilu ? 360.0 : a == Activation::kRelu ? 4.0 : 40.0; }

void activate_range(Activation a, std::span<float> x) {
  switch (a) {
    case Activation::kRelu: relu(x, x); return;
    case Activation::kGelu: gelu(x, x); return;
    case Activation::kGeluTanh: gelu_tanh(x, x); return;
    case Activation::kSilu: silu(x, x); return;
  }
}

}  // namespace

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
  elementwise(x.size(), activation_cost(a),
              [&](std::size_t i0, std::size_t i1) { activate_range(a, x.subspan(i0, i1 - i0)); });
}
void activate_gated(Activation a, std::span<float> x, std::span<const float> gate) {
  elementwise(x.size(), activation_cost(a) + 1.0, [&](std::size_t i0, std::size_t i1) {
    activate_range(a, x.subspan(i0, i1 - i0));
    for (std::size_t i = i0; i < i1; ++i) x[i] *= gate[i];
  });
}
void tanh(std::span<const float> x, std::span<float> out) { kernels::active_kernels().tanh(x.size(), x.data(), out.data()); }
void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  kernels::active_kernels().add(a.size(), a.data(), b.data(), out.data());
}
float dot(std::span<const float> a, std::span<const float> b) {
  return kernels::active_kernels().dot(a.size(), a.data(), b.data());
}

}  // namespace attnscope::ops
