// rope_explain.cpp: the RoPE panel's numbers (rope_explain.h). Layer: attention.
#include "attention/rope_explain.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "core/check.h"

namespace attnscope::attention {

namespace {

constexpr const char* kFn = "ropeExplain";
constexpr int kMaxPosition = 1 << 24;  // positions and offsets: far beyond any context length, exact in float
constexpr int kMaxCurve = 1 << 16;     // points of the offset curve

core::Status check_number(const char* arg, double v, bool positive) {
  if (std::isfinite(v) && (!positive || v > 0)) return core::Status::Ok();
  return core::range_error(kFn, arg, std::string(arg) + " (" + core::format_number(v) + ") must be " +
                                        (positive ? "a positive number" : "finite"));
}

core::Status check_position(const char* arg, long long v) {
  if (v >= 0 && v <= kMaxPosition) return core::Status::Ok();
  return core::range_error(kFn, arg, std::string(arg) + " (" + std::to_string(v) + ") must be from 0 to " +
                                        std::to_string(kMaxPosition));
}

core::Status check(const RopeExplainArgs& a) {
  const ops::RopeSpec& s = a.spec;
  ATTN_TRY(core::check_positive(kFn, "headDim", a.head_dim));
  const double p = a.partial_rotary_factor;
  if (!(std::isfinite(p) && p > 0 && p <= 1)) {
    return core::range_error(kFn, "partialRotaryFactor",
                             "partialRotaryFactor (" + core::format_number(p) + ") must be in (0, 1]");
  }
  if (s.rotary_dim < 2 || s.rotary_dim % 2 != 0 || s.rotary_dim > a.head_dim) {
    return core::range_error(kFn, "partialRotaryFactor",
                             "headDim × partialRotaryFactor (" + std::to_string(s.rotary_dim) +
                                 ") must be an even number from 2 to headDim (" + std::to_string(a.head_dim) + ")");
  }
  ATTN_TRY(check_number("theta", s.theta, true));
  ATTN_TRY(check_number("scaling.factor", s.factor, true));
  ATTN_TRY(core::check_length(kFn, "q", a.q.size(), static_cast<std::size_t>(a.head_dim), "headDim"));
  ATTN_TRY(core::check_length(kFn, "k", a.k.size(), static_cast<std::size_t>(a.head_dim), "headDim"));
  ATTN_TRY(core::check_finite(kFn, "q", a.q));
  ATTN_TRY(core::check_finite(kFn, "k", a.k));
  ATTN_TRY(check_position("m", a.m));
  ATTN_TRY(check_position("n", a.n));
  if (a.from > a.to || a.from < -kMaxPosition || a.to > kMaxPosition ||
      static_cast<long long>(a.to) - a.from + 1 > kMaxCurve) {
    return core::range_error(kFn, "offsets",
                             "offsets (from " + std::to_string(a.from) + " to " + std::to_string(a.to) +
                                 ") must have from <= to, within ±" + std::to_string(kMaxPosition) + ", at most " +
                                 std::to_string(kMaxCurve) + " points");
  }
  switch (s.type) {
    case ops::RopeType::kDynamic:
    case ops::RopeType::kYarn:
      ATTN_TRY(core::check_positive(kFn, "maxPositions", s.max_positions));
      break;
    case ops::RopeType::kLlama3:
      ATTN_TRY(core::check_positive(kFn, "scaling.originalMaxPositions", s.original_max_positions));
      ATTN_TRY(check_number("scaling.lowFreqFactor", s.low_freq_factor, true));
      ATTN_TRY(check_number("scaling.highFreqFactor", s.high_freq_factor, true));
      if (!(s.high_freq_factor > s.low_freq_factor)) {
        return core::range_error(kFn, "scaling.highFreqFactor",
                                 "scaling.highFreqFactor (" + core::format_number(s.high_freq_factor) +
                                     ") must be greater than scaling.lowFreqFactor (" +
                                     core::format_number(s.low_freq_factor) + ")");
      }
      break;
    default:
      break;
  }
  if (s.type == ops::RopeType::kYarn) {
    ATTN_TRY(check_number("scaling.betaFast", s.beta_fast, true));
    ATTN_TRY(check_number("scaling.betaSlow", s.beta_slow, true));
    if (s.attention_factor != 0.0) ATTN_TRY(check_number("scaling.attentionFactor", s.attention_factor, true));
  }
  return core::Status::Ok();
}

// (R(pq) q) · (R(pk) k) in float64.
double rotated_dot(std::span<const float> q, std::span<const float> k, double pq, double pk,
                   const ops::RopeFrequencies& f) {
  std::vector<double> a(q.begin(), q.end()), b(k.begin(), k.end());
  ops::apply_rope(a, pq, f);
  ops::apply_rope(b, pk, f);
  double dot = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) dot += a[i] * b[i];
  return dot;
}

}  // namespace

core::Status parse_rope_type(const std::string& name, ops::RopeType& type) {
  for (ops::RopeType t : ops::kRopeTypes) {
    if (name == ops::rope_type_name(t)) {
      type = t;
      return core::Status::Ok();
    }
  }
  return core::range_error(kFn, "scaling.type",
                           "scaling.type " + core::quote(name, '\'', 0) +
                               " must be one of default, linear, dynamic, llama3, yarn");
}

core::Result<RopeExplain> rope_explain(const RopeExplainArgs& in) {
  RopeExplainArgs a = in;
  if (a.head_dim > 0 && a.partial_rotary_factor > 0 && a.partial_rotary_factor <= 1) {
    a.spec.rotary_dim = static_cast<int>(a.head_dim * a.partial_rotary_factor);
  }
  ATTN_TRY(check(a));
  const int p = std::max(0, -a.from);
  const int longest = std::max({a.m, a.n, p + a.to}) + 1;
  const ops::RopeFrequencies f = ops::rope_frequencies(a.spec, longest);
  RopeExplain r;
  r.rotary_dim = a.spec.rotary_dim;
  r.inv_freq = f.inv_freq;
  r.attention_scaling = f.attention_scaling;
  r.q_rotated.assign(a.q.begin(), a.q.end());
  r.k_rotated.assign(a.k.begin(), a.k.end());
  ops::apply_rope(r.q_rotated, 1, 1, a.head_dim, a.m, f);
  ops::apply_rope(r.k_rotated, 1, 1, a.head_dim, a.n, f);
  for (double w : f.inv_freq) {
    r.angle_q.push_back(a.m * w);
    r.angle_k.push_back(a.n * w);
  }
  r.score = rotated_dot(a.q, a.k, a.m, a.n, f);
  r.curve.reserve(static_cast<std::size_t>(a.to - a.from + 1));
  for (int d = a.from; d <= a.to; ++d) r.curve.push_back(rotated_dot(a.q, a.k, p + d, p, f));
  return r;
}

}  // namespace attnscope::attention
