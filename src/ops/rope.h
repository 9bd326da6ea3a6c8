// rope.h: rotary position embeddings as Hugging Face applies them (rotate_half / apply_rotary_pos_emb in
// transformers' modeling_llama.py — NOT the interleaved pairing), with the inverse frequencies of
// modeling_rope_utils.py for every scaling this module implements. Layer: ops. Internal (no validation: the
// config reader checks the values).
//
// Per head of head_dim values, only the first rotary_dim rotate (partial_rotary_factor); pair (i, i + r/2):
//   x'[i]       = x[i]·cosθ − x[i + r/2]·sinθ          θ = position · inv_freq[i], i < r/2
//   x'[i + r/2] = x[i + r/2]·cosθ + x[i]·sinθ
// with cos and sin multiplied by the scaling's attention factor (yarn; 1 otherwise).
#pragma once

#include <span>
#include <vector>

namespace attnscope::ops {

enum class RopeType {
  kDefault,  // _compute_default_rope_parameters: inv_freq[j] = theta^(-2j/r)
  kLinear,   // _compute_linear_scaling_rope_parameters: inv_freq / factor
  kDynamic,  // _compute_dynamic_ntk_parameters: theta grows only when the sequence exceeds max_positions
  kLlama3,   // _compute_llama3_parameters: low frequencies / factor, a smooth blend between
  kYarn,     // _compute_yarn_parameters: ramp between interpolated and extrapolated, cos/sin × attention factor
};

// rope_type's name in config.json: "default", "linear", "dynamic", "llama3", "yarn".
const char* rope_type_name(RopeType t);
inline constexpr RopeType kRopeTypes[] = {RopeType::kDefault, RopeType::kLinear, RopeType::kDynamic, RopeType::kLlama3,
                                          RopeType::kYarn};

struct RopeSpec {
  double theta = 10000.0;  // rope_theta (Gemma 3's sliding layers: rope_local_base_freq)
  int rotary_dim = 0;      // int(head_dim · partial_rotary_factor), even
  int max_positions = 0;   // max_position_embeddings (dynamic, yarn)
  RopeType type = RopeType::kDefault;
  double factor = 1.0;                       // linear, dynamic, llama3, yarn
  double low_freq_factor = 1.0;              // llama3
  double high_freq_factor = 4.0;             // llama3
  int original_max_positions = 0;            // llama3 (required); yarn (when given, else max_positions)
  double attention_factor = 0.0;             // yarn: 0 = 0.1·ln(factor) + 1
  double beta_fast = 32.0, beta_slow = 1.0;  // yarn
};

struct RopeFrequencies {
  std::vector<double> inv_freq;  // [rotary_dim / 2]
  double attention_scaling = 1.0;
};

// The inverse frequencies for a sequence of seq_len positions (only the dynamic type depends on it).
RopeFrequencies rope_frequencies(const RopeSpec& s, int seq_len);

// Rotates x [n, heads · head_dim] in place, row i at position first_position + i.
void apply_rope(std::span<float> x, int n, int heads, int head_dim, int first_position, const RopeFrequencies& f);

// Rotates one vector v [head_dim] in float64 at `position`: the same pairs, angles and attention factor as
// apply_rope (attention/rope_explain.h draws it).
void apply_rope(std::span<double> v, double position, const RopeFrequencies& f);

}  // namespace attnscope::ops
