// embedding.cpp: seeded rows and weights (see embedding.h). Layer: model.
#include "model/embedding.h"

#include <cmath>

#include "core/rng.h"

namespace attnscope::model {

std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : s) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

void seeded_row(std::uint64_t seed, std::uint64_t key, std::span<float> out) {
  core::Rng rng = core::Rng::for_key(seed, key);
  const float a = 1.7320508075688772f;  // sqrt(3): unit variance
  for (float& x : out) x = rng.uniform(-a, a);
}

std::vector<float> xavier_uniform(std::uint64_t seed, std::string_view name, int fan_in, int fan_out) {
  core::Rng rng = core::Rng::for_key(seed ^ kWeightDomain, fnv1a64(name));
  const float a = static_cast<float>(std::sqrt(6.0 / (static_cast<double>(fan_in) + fan_out)));
  std::vector<float> w(static_cast<std::size_t>(fan_in) * static_cast<std::size_t>(fan_out));
  for (float& x : w) x = rng.uniform(-a, a);
  return w;
}

}  // namespace attnscope::model
