// feed_forward_rows_test.cpp: model::feed_forward over blocks of kFeedForwardRows rows (what every layer that does
// not keep ffHidden runs, so that a long text's [n, d_ff] gate and up never exist whole) gives bit for bit the
// one-pass result (the path a full trace takes, hidden kept), for row counts around the block size (a last block of
// one row joins the one before), float32 and BF16 weights, gated (SwiGLU) and plain (GELU), with biases; and both
// equal a float64 computation of act(x W1 + b1) (⊙ (x W3 + b3)) W2 + b2 within float32 rounding.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "model/block.h"

namespace {

using attnscope::core::WeightSpan;
using attnscope::core::WeightType;
using attnscope::model::FeedForwardWeights;
using attnscope::model::kFeedForwardRows;

std::vector<float> seeded(std::size_t count, std::uint32_t seed, float scale) {
  std::vector<float> v(count);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = (static_cast<float>(seed) / 4294967296.0f - 0.5f) * scale;
  }
  return v;
}

// BF16 bits of v (truncated) and, in place, v set to exactly the value those bits hold
std::vector<std::uint16_t> to_bf16(std::vector<float>& v) {
  std::vector<std::uint16_t> bits(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint32_t u = 0;
    std::memcpy(&u, &v[i], 4);
    bits[i] = static_cast<std::uint16_t>(u >> 16);
    u = static_cast<std::uint32_t>(bits[i]) << 16;
    std::memcpy(&v[i], &u, 4);
  }
  return bits;
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }
double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// float64: act(x W1 + b1) (⊙ (x W3 + b3)) W2 + b2, W stored [in, out]
std::vector<double> reference(const std::vector<float>& x, int n, int d, int f, const std::vector<float>& w1,
                              const std::vector<float>& b1, const std::vector<float>& w2, const std::vector<float>& b2,
                              const std::vector<float>& w3, const std::vector<float>& b3, bool gated) {
  std::vector<double> y(static_cast<std::size_t>(n) * d), h(static_cast<std::size_t>(f));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < f; ++j) {
      double g = b1[j], u = b3[j];
      for (int k = 0; k < d; ++k) {
        g += static_cast<double>(x[i * d + k]) * w1[k * f + j];
        u += static_cast<double>(x[i * d + k]) * w3[k * f + j];
      }
      h[j] = gated ? silu(g) * u : gelu(g);
    }
    for (int j = 0; j < d; ++j) {
      double s = b2[j];
      for (int k = 0; k < f; ++k) s += h[k] * w2[k * d + j];
      y[i * d + j] = s;
    }
  }
  return y;
}

}  // namespace

TEST_CASE("feed_forward in row blocks equals the one-pass product bit for bit", "[model][feed_forward]") {
  constexpr int d = 24, f = 44;  // d_ff not a multiple of 8: the element-wise kernels' tails move with the blocks
  const int R = kFeedForwardRows;
  for (const bool half : {false, true}) {
    for (const bool gated : {true, false}) {
      std::vector<float> w1 = seeded(d * f, 1, 0.6f), w2 = seeded(f * d, 2, 0.4f), w3 = seeded(d * f, 3, 0.6f);
      const std::vector<float> b1 = seeded(f, 4, 0.2f), b2 = seeded(d, 5, 0.2f), b3 = seeded(f, 6, 0.2f);
      std::vector<std::uint16_t> h1, h2, h3;
      FeedForwardWeights ff;
      if (half) {
        h1 = to_bf16(w1), h2 = to_bf16(w2), h3 = to_bf16(w3);
        ff.w1 = WeightSpan(h1.data(), h1.size(), WeightType::kBF16);
        ff.w2 = WeightSpan(h2.data(), h2.size(), WeightType::kBF16);
        ff.w3 = WeightSpan(h3.data(), h3.size(), WeightType::kBF16);
      } else {
        ff.w1 = w1, ff.w2 = w2, ff.w3 = w3;
      }
      ff.b1 = b1, ff.b2 = b2, ff.b3 = b3;
      const auto act = gated ? attnscope::ops::Activation::kSilu : attnscope::ops::Activation::kGelu;
      for (const int n : {1, 2, 5, R - 1, R, R + 1, R + 2, 2 * R + 1, 2 * R + 7}) {
        const std::string what = std::string(half ? "BF16" : "F32") + (gated ? " gated" : " gelu") + " n=" +
                                 std::to_string(n);
        const std::vector<float> x = seeded(static_cast<std::size_t>(n) * d, 7 + n, 2.0f);
        std::vector<float> hidden;
        const std::vector<float> one = attnscope::model::feed_forward(x, n, d, f, ff, act, &hidden, gated);
        const std::vector<float> blocked = attnscope::model::feed_forward(x, n, d, f, ff, act, nullptr, gated);
        REQUIRE(hidden.size() == static_cast<std::size_t>(n) * f);
        REQUIRE(one.size() == blocked.size());
        INFO(what);
        CHECK(std::memcmp(one.data(), blocked.data(), one.size() * sizeof(float)) == 0);
        if (n > 2 * R) continue;  // the float64 sums are slow; the shorter rows cover every block boundary
        const std::vector<double> want = reference(x, n, d, f, w1, b1, w2, b2, w3, b3, gated);
        double worst = 0.0;
        for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(blocked[i] - want[i]));
        CHECK(worst < 2e-5);
      }
    }
  }
}
