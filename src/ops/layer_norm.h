// layer_norm.h: LayerNorm over the last dimension, as torch.nn.LayerNorm(d, eps).
// Layer: ops. Biased variance: y = (x - mean) / sqrt(var + eps) * gamma + beta, per row.
#pragma once

#include <span>
#include <vector>

#include "core/status.h"

namespace attnscope::ops {

// JS layerNorm({ x, n, d, gamma?, beta?, eps = 1e-5 }): x [n, d]; gamma, beta [d] or empty (= 1, 0);
// eps must be a positive finite number (eps = 0 would turn a constant row into NaN).
core::Result<std::vector<float>> layer_norm(std::span<const float> x, int n, int d, std::span<const float> gamma,
                                            std::span<const float> beta, double eps);

// Internal: x [n, d] contiguous into y (may alias x); gamma/beta empty means 1 / 0. No validation.
void layer_norm_rows(std::span<const float> x, int n, int d, std::span<const float> gamma,
                     std::span<const float> beta, float eps, std::span<float> y);

// Internal: the per-row mean and biased variance LayerNorm normalises x [n, d] with (accumulated in double,
// stored as float), for the trace's step-by-step view. mean and var are resized to n.
void layer_norm_stats(std::span<const float> x, int n, int d, std::vector<float>& mean, std::vector<float>& var);

}  // namespace attnscope::ops
