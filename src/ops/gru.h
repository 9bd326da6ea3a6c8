// gru.h: a multi-layer unidirectional GRU, exactly torch.nn.GRU (batch 1, dropout 0, bias=True).
// Layer: ops (reaches kernels only through linear / activations). Used by model/gru_seq2seq.h.
//
// Per layer k and step t, with x the layer's input row and h its previous state (PyTorch's equations):
//   r = σ(x W_ir + b_ir + h W_hr + b_hr)
//   z = σ(x W_iz + b_iz + h W_hz + b_hz)
//   n = tanh(x W_in + b_in + r ⊙ (h W_hn + b_hn))
//   h' = (1 − z) ⊙ n + z ⊙ h
// Layer 0 reads the input sequence, layer k > 0 reads layer k−1's new states; the initial state is h0 or zeros.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnscope::ops {

// One layer's parameters in attnscope's [in, out] layout: w_ih is PyTorch's weight_ih_l{k} [3H, in] transposed.
// Columns of w_ih / w_hh and entries of b_ih / b_hh hold the gates in PyTorch's order: r [0, H), z [H, 2H),
// n [2H, 3H).
struct GruLayerWeights {
  std::span<const float> w_ih;  // [in, 3H]  (in = input_size for layer 0, H above it)
  std::span<const float> w_hh;  // [H, 3H]
  std::span<const float> b_ih;  // [3H]
  std::span<const float> b_hh;  // [3H]
};

struct GruWeights {
  int input_size = 0;                   // features of the input rows (layer 0's in)
  int hidden = 0;                       // H
  std::vector<GruLayerWeights> layers;  // L >= 1 layers, bottom first
};

struct GruOutput {
  std::vector<float> outputs;      // [T, H]: the top layer's state after each step (torch's `output`)
  std::vector<float> final_state;  // [L, H]: every layer's state after the last step (torch's `h_n`)
  std::vector<float> states;       // keep_states only: [T, L, H], every layer's state after each step
};

// A GRU whose weights were checked once (lengths and finiteness) at create(). It keeps views, not copies: the
// weight data must outlive the Gru. run() and step() are const and keep nothing between calls.
class Gru {
 public:
  Gru() = default;  // empty (no layers); only what a failed Result holds

  // Errors name `fn` and the layer's tensor: "gru: hidden (0) must be a positive integer",
  // "gru: l1.w_ih must have length 108 (hidden*3hidden = 6*18), got 72", "gru: l0.b_hh[2] (NaN) must be finite".
  static core::Result<Gru> create(GruWeights weights, const char* fn = "gru");

  int input_size() const { return w_.input_size; }
  int hidden() const { return w_.hidden; }
  int num_layers() const { return static_cast<int>(w_.layers.size()); }

  // The whole sequence x [steps, input_size] from h0 [L, H] (empty = zeros). Layer-major: each layer's input
  // projection for all steps is one GEMM, then its recurrence runs step by step.
  //   "gru: x must have length 20 (steps*inputSize = 5*4), got 19", "gru: h0 must have length 12 (numLayers*hidden
  //   = 2*6), got 6", "gru: steps (0) must be a positive integer".
  core::Result<GruOutput> run(std::span<const float> x, int steps, std::span<const float> h0 = {},
                              bool keep_states = false) const;

  // One step of every layer, for decoding: x [input_size]; state [L, H] is read and overwritten with the new
  // states (the top layer's new state, row L−1, is the step's output). Equals one step of run().
  //   "gru: x must have length 4 (inputSize = 4), got 3", "gru: state must have length 12 (numLayers*hidden =
  //   2*6), got 6", non-finite x or state entries are rejected as in run().
  core::Status step(std::span<const float> x, std::span<float> state) const;

 private:
  // h [H] <- one update of layer k from its input projection gi = x W_ih + b_ih [3H]; gh is scratch [3H].
  void update(int k, const float* gi, float* gh, float* h) const;

  GruWeights w_;
  std::string fn_;
};

// Convenience forms that check the weights on every call (use Gru to check them once).
core::Result<GruOutput> gru(std::span<const float> x, int steps, const GruWeights& weights,
                            std::span<const float> h0 = {}, bool keep_states = false, const char* fn = "gru");
core::Status gru_step(std::span<const float> x, const GruWeights& weights, std::span<float> state,
                      const char* fn = "gru");

}  // namespace attnscope::ops
