// Seeded, reproducible random numbers, identical natively and in wasm (no std:: distributions,
// whose output is implementation-defined). Layer: core.
// Generator: SplitMix64 (Steele, Lea, Flood 2014) over a 64-bit state; uniform floats take the top
// 24 bits; normals use Box-Muller in double precision.
#pragma once

#include <cmath>
#include <cstdint>

namespace attnscope::core {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next_u64() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 24-bit resolution, exact in float32.
  float uniform() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }
  // Uniform in [lo, hi).
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  // Standard normal (Box-Muller, double precision internally, one value per call).
  float normal() {
    const double u1 = (static_cast<double>(next_u64() >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    const double u2 = static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }

  // A generator for stream `key` of `seed` (e.g. one per token id): the same (seed, key) always
  // gives the same numbers, whatever was drawn before.
  static Rng for_key(std::uint64_t seed, std::uint64_t key) {
    Rng r(seed ^ (key * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull));
    r.next_u64();
    return r;
  }

 private:
  std::uint64_t state_;
};

}  // namespace attnscope::core
