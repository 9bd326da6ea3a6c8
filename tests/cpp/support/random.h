// Seeded test data shared by the Catch2 suites: normal(0, scale²) vectors from core::Rng, and a
// finiteness check. Same numbers natively and in wasm.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/rng.h"

namespace attnscope::test {

inline std::vector<float> random_vec(std::size_t n, std::uint64_t seed, float scale = 1.0f, float shift = 0.0f) {
  core::Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = shift + scale * rng.normal();
  return v;
}

inline bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace attnscope::test
