// gru.cpp: torch.nn.GRU forward (see gru.h): one GEMM per layer for the input projections, then the
// recurrence h W_hh + b_hh and the gate update step by step. Layer: ops.
#include "ops/gru.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "core/check.h"
#include "core/tensor.h"
#include "ops/activations.h"
#include "ops/linear.h"
#include "ops/validate.h"

namespace attnscope::ops {

namespace {

std::size_t sz(int n) { return static_cast<std::size_t>(n); }

// σ(x) = 1 / (1 + e^−x): exactly 0 or 1 at the far ends, never NaN for finite x.
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

core::Result<Gru> Gru::create(GruWeights weights, const char* fn) {
  ATTN_TRY(core::check_positive(fn, "inputSize", weights.input_size));
  ATTN_TRY(core::check_positive(fn, "hidden", weights.hidden));
  ATTN_TRY(core::check_positive(fn, "numLayers", static_cast<long long>(weights.layers.size())));
  const int h = weights.hidden;
  for (std::size_t k = 0; k < weights.layers.size(); ++k) {
    const GruLayerWeights& l = weights.layers[k];
    std::string prefix("l");  // appended: chained operator+ trips g++ 12's false -Wrestrict (GCC bug 105329)
    prefix.append(std::to_string(k)).append(".");
    const Dims ih = k == 0 ? Dims{"inputSize*3hidden", weights.input_size, 3LL * h} : Dims{"hidden*3hidden", h, 3LL * h};
    ATTN_TRY(check_array(fn, prefix.c_str(), "w_ih", l.w_ih, ih));
    ATTN_TRY(check_array(fn, prefix.c_str(), "w_hh", l.w_hh, Dims{"hidden*3hidden", h, 3LL * h}));
    ATTN_TRY(check_array(fn, prefix.c_str(), "b_ih", l.b_ih, Dims{"3hidden", 3LL * h}));
    ATTN_TRY(check_array(fn, prefix.c_str(), "b_hh", l.b_hh, Dims{"3hidden", 3LL * h}));
  }
  Gru g;
  g.w_ = std::move(weights);
  g.fn_ = fn;
  return g;
}

void Gru::update(int k, const float* gi, float* gh, float* h) const {
  const int hd = w_.hidden;
  const GruLayerWeights& l = w_.layers[sz(k)];
  // 1. gh = h W_hh + b_hh [1, 3H]
  linear(core::ConstMatView{h, 1, hd, hd}, l.w_hh, l.b_hh, core::MatView{gh, 1, 3 * hd, 3 * hd});
  // 2. r and z into gh's first two thirds; n's pre-activation gi_n + r ⊙ gh_n into its last third
  for (int j = 0; j < hd; ++j) {
    const float r = sigmoid(gi[j] + gh[j]);
    gh[hd + j] = sigmoid(gi[hd + j] + gh[hd + j]);
    gh[2 * hd + j] = gi[2 * hd + j] + r * gh[2 * hd + j];
  }
  // 3. n = tanh(...)
  const std::span<float> n(gh + 2 * hd, sz(hd));
  tanh(n, n);
  // 4. h' = (1 − z) ⊙ n + z ⊙ h
  for (int j = 0; j < hd; ++j) {
    const float z = gh[hd + j];
    h[j] = (1.0f - z) * n[sz(j)] + z * h[j];
  }
}

core::Result<GruOutput> Gru::run(std::span<const float> x, int steps, std::span<const float> h0,
                                 bool keep_states) const {
  const char* fn = fn_.c_str();
  const int hd = w_.hidden, nl = num_layers();
  ATTN_TRY(core::check_positive(fn, "steps", steps));
  ATTN_TRY(check_array(fn, "", "x", x, Dims{"steps*inputSize", steps, w_.input_size}));
  ATTN_TRY(check_array(fn, "", "h0", h0, Dims{"numLayers*hidden", nl, hd}, Need::kOptional));

  GruOutput out;
  out.final_state.assign(sz(nl) * sz(hd), 0.0f);
  if (!h0.empty()) std::copy(h0.begin(), h0.end(), out.final_state.begin());
  if (keep_states) out.states.resize(sz(steps) * sz(nl) * sz(hd));
  std::vector<float> input(x.begin(), x.end());  // the current layer's input [T, in]
  std::vector<float> gi(sz(steps) * 3 * sz(hd)), gh(3 * sz(hd));
  int in = w_.input_size;
  for (int k = 0; k < nl; ++k) {
    const GruLayerWeights& l = w_.layers[sz(k)];
    // gi = input W_ih + b_ih [T, 3H] for every step at once
    linear(core::as_view(input, steps, in), l.w_ih, l.b_ih, core::MatView{gi.data(), steps, 3 * hd, 3 * hd});
    float* h = out.final_state.data() + sz(k) * sz(hd);  // this layer's running state
    input.resize(sz(steps) * sz(hd));                     // becomes this layer's outputs [T, H]
    for (int t = 0; t < steps; ++t) {
      update(k, gi.data() + sz(t) * 3 * sz(hd), gh.data(), h);
      std::copy(h, h + hd, input.begin() + static_cast<std::ptrdiff_t>(sz(t) * sz(hd)));
      if (keep_states) std::copy(h, h + hd, out.states.begin() + static_cast<std::ptrdiff_t>((sz(t) * sz(nl) + sz(k)) * sz(hd)));
    }
    in = hd;
  }
  out.outputs = std::move(input);
  ATTN_TRY(check_result(fn, "outputs", out.outputs));
  ATTN_TRY(check_result(fn, "final_state", out.final_state));
  return out;
}

core::Status Gru::step(std::span<const float> x, std::span<float> state) const {
  const char* fn = fn_.c_str();
  const int hd = w_.hidden, nl = num_layers();
  ATTN_TRY(check_array(fn, "", "x", x, Dims{"inputSize", w_.input_size}));
  ATTN_TRY(check_array(fn, "", "state", std::span<const float>(state), Dims{"numLayers*hidden", nl, hd}));
  std::vector<float> gi(3 * sz(hd)), gh(3 * sz(hd));
  const float* input = x.data();
  int in = w_.input_size;
  for (int k = 0; k < nl; ++k) {
    const GruLayerWeights& l = w_.layers[sz(k)];
    float* h = state.data() + sz(k) * sz(hd);
    linear(core::ConstMatView{input, 1, in, in}, l.w_ih, l.b_ih, core::MatView{gi.data(), 1, 3 * hd, 3 * hd});
    update(k, gi.data(), gh.data(), h);
    input = h;  // the next layer reads this layer's new state
    in = hd;
  }
  return check_result(fn, "state", std::span<const float>(state));
}

core::Result<GruOutput> gru(std::span<const float> x, int steps, const GruWeights& weights, std::span<const float> h0,
                            bool keep_states, const char* fn) {
  auto g = Gru::create(weights, fn);
  if (!g.ok()) return g.status();
  return g.value().run(x, steps, h0, keep_states);
}

core::Status gru_step(std::span<const float> x, const GruWeights& weights, std::span<float> state, const char* fn) {
  auto g = Gru::create(weights, fn);
  if (!g.ok()) return g.status();
  return g.value().step(x, state);
}

}  // namespace attnscope::ops
