// activations.h: element-wise functions and vector helpers over the active KernelTable.
// Layer: ops. Internal (no validation); every function works in place when out aliases x.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace attnscope::ops {

// The feed-forward activations of the transformer layers: JS 'relu' | 'gelu' (exact, erf) | 'gelu-tanh'
// (the tanh approximation, Hugging Face's gelu_new / gelu_pytorch_tanh, torch's approximate='tanh').
// kSilu (x · sigmoid(x)) is the gate of the decoder checkpoints' gated MLPs (Llama's hidden_act 'silu'); createModel
// does not offer it.
enum class Activation { kRelu, kGelu, kGeluTanh, kSilu };

// out[i] = max(x[i], 0)
void relu(std::span<const float> x, std::span<float> out);
// out[i] = 0.5 x (1 + erf(x / sqrt 2)): the exact GELU (torch's approximate='none').
void gelu(std::span<const float> x, std::span<float> out);
// out[i] = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in float32 as torch computes it; in place allowed.
void gelu_tanh(std::span<const float> x, std::span<float> out);
// out[i] = x[i] / (1 + exp(-x[i])): SiLU (torch.nn.functional.silu); in place allowed.
void silu(std::span<const float> x, std::span<float> out);
// The activation `a` over x, in place; large spans in pieces on the thread pool (the one-thread result bit for bit).
void activate(Activation a, std::span<float> x);
// x[i] = act(x[i]) · gate[i] (a gated MLP's act(x W1) ⊙ (x W3)), in place, as activate then a float32 product.
void activate_gated(Activation a, std::span<float> x, std::span<const float> gate);
// out[i] = tanh(x[i])
void tanh(std::span<const float> x, std::span<float> out);
// out[i] = a[i] + b[i]; a, b, out have the same size.
void add(std::span<const float> a, std::span<const float> b, std::span<float> out);
// sum_i a[i] * b[i]
float dot(std::span<const float> a, std::span<const float> b);

}  // namespace attnscope::ops
