// rope.cpp: RoPE frequencies and rotation (rope.h). Layer: ops.
#include "ops/rope.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>

#include "core/parallel.h"

namespace attnscope::ops {

namespace {

// _compute_default_rope_parameters: 1 / base^(2j / dim), j < dim / 2
std::vector<double> default_inv_freq(double base, int dim) {
  std::vector<double> inv(static_cast<std::size_t>(dim / 2));
  for (std::size_t j = 0; j < inv.size(); ++j) inv[j] = 1.0 / std::pow(base, static_cast<double>(2 * j) / dim);
  return inv;
}

// _compute_llama3_parameters: wavelengths longer than orig/low_freq_factor are divided by factor, shorter than
// orig/high_freq_factor kept, those between (boundaries included) blended.
void llama3(const RopeSpec& s, std::vector<double>& inv) {
  const double orig = s.original_max_positions;
  const double low_wl = orig / s.low_freq_factor, high_wl = orig / s.high_freq_factor;
  for (double& f : inv) {
    const double wl = 2.0 * std::numbers::pi / f;
    const double scaled = wl > low_wl ? f / s.factor : f;
    const bool medium = !(wl < high_wl) && !(wl > low_wl);
    if (medium) {
      const double smooth = (orig / wl - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      f = (1.0 - smooth) * scaled / s.factor + smooth * scaled;
    } else {
      f = scaled;
    }
  }
}

// _compute_yarn_parameters (find_correction_range, linear_ramp_factor; truncated bounds).
double yarn(const RopeSpec& s, std::vector<double>& inv) {
  const int dim = s.rotary_dim;
  const double base = s.theta;
  const double max_pos = s.original_max_positions > 0 ? s.original_max_positions : s.max_positions;
  auto correction_dim = [&](double rotations) {
    return dim * std::log(max_pos / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
  };
  const double low = std::max(std::floor(correction_dim(s.beta_fast)), 0.0);
  double high = std::min(std::ceil(correction_dim(s.beta_slow)), static_cast<double>(dim - 1));
  if (low == high) high += 0.001;
  for (std::size_t j = 0; j < inv.size(); ++j) {
    const double extrapolation = inv[j], interpolation = inv[j] / s.factor;
    const double ramp = std::clamp((static_cast<double>(j) - low) / (high - low), 0.0, 1.0);
    const double extra = 1.0 - ramp;
    inv[j] = interpolation * (1.0 - extra) + extrapolation * extra;
  }
  return s.attention_factor > 0.0 ? s.attention_factor : 0.1 * std::log(s.factor) + 1.0;
}

// One pair (a, b) = (x[i], x[i + r/2]) rotated by the angle whose cos and sin (× attention factor) are c and s.
template <class T>
void rotate_pair(T& a, T& b, double c, double s) {
  const double x = a, y = b;
  a = static_cast<T>(x * c - y * s);
  b = static_cast<T>(y * c + x * s);
}

}  // namespace

const char* rope_type_name(RopeType t) {
  switch (t) {
    case RopeType::kDefault: return "default";
    case RopeType::kLinear: return "linear";
    case RopeType::kDynamic: return "dynamic";
    case RopeType::kLlama3: return "llama3";
    case RopeType::kYarn: return "yarn";
  }
  return "default";
}

RopeFrequencies rope_frequencies(const RopeSpec& s, int seq_len) {
  RopeFrequencies f;
  const int dim = s.rotary_dim;
  switch (s.type) {
    case RopeType::kDefault:
      f.inv_freq = default_inv_freq(s.theta, dim);
      break;
    case RopeType::kLinear:
      f.inv_freq = default_inv_freq(s.theta, dim);
      for (double& v : f.inv_freq) v /= s.factor;
      break;
    case RopeType::kDynamic: {
      // _compute_dynamic_ntk_parameters with seq_len clamped below at max_positions (dynamic_rope_update)
      const double len = std::max(seq_len, s.max_positions);
      const double base =
          s.theta * std::pow(s.factor * len / s.max_positions - (s.factor - 1.0), static_cast<double>(dim) / (dim - 2));
      f.inv_freq = default_inv_freq(base, dim);
      break;
    }
    case RopeType::kLlama3:
      f.inv_freq = default_inv_freq(s.theta, dim);
      llama3(s, f.inv_freq);
      break;
    case RopeType::kYarn:
      f.inv_freq = default_inv_freq(s.theta, dim);
      f.attention_scaling = yarn(s, f.inv_freq);
      break;
  }
  return f;
}

void apply_rope(std::span<float> x, int n, int heads, int head_dim, int first_position, const RopeFrequencies& f) {
  const std::size_t half = f.inv_freq.size(), hd = static_cast<std::size_t>(head_dim);
  // rows (positions) on the pool, each computed as in one pass; a cos and sin pair costs ~40 ns, a rotation ~1 ns
  // (in GEMM-flop equivalents, core/parallel.h: 1,600 and 40)
  const double flops = static_cast<double>(n) * static_cast<double>(half) * (1600.0 + 40.0 * heads);
  core::parallel_for(n, 4, flops, [&](std::int64_t begin, std::int64_t end, int) {
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
      const double pos = static_cast<double>(first_position) + static_cast<double>(i);
      for (std::size_t j = 0; j < half; ++j) {
        const double angle = pos * f.inv_freq[j];
        const double c = std::cos(angle) * f.attention_scaling, s = std::sin(angle) * f.attention_scaling;
        for (int h = 0; h < heads; ++h) {
          float* v = x.data() + (i * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)) * hd;
          rotate_pair(v[j], v[j + half], c, s);
        }
      }
    }
  });
}

void apply_rope(std::span<double> v, double position, const RopeFrequencies& f) {
  const std::size_t half = f.inv_freq.size();
  for (std::size_t j = 0; j < half; ++j) {
    const double angle = position * f.inv_freq[j];
    rotate_pair(v[j], v[j + half], std::cos(angle) * f.attention_scaling, std::sin(angle) * f.attention_scaling);
  }
}

}  // namespace attnscope::ops
