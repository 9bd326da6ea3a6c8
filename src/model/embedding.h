// embedding.h: seeded initialisation for the model pipeline — token embedding rows generated per token on
// demand, learned positional rows, Xavier/Glorot-uniform weight matrices. Layer: model (depends on core).
//
// All numbers come from core::Rng uniform draws only (no log/cos), so native and wasm builds agree bit for bit.
// Three independent key spaces ("domains") of one seed:
//   token row      Rng::for_key(seed, key)                      key = GPT-2 id (bpe) or fnv1a64(token UTF-8)
//   position row   Rng::for_key(seed ^ kPositionalDomain, p)
//   weight tensor  Rng::for_key(seed ^ kWeightDomain, fnv1a64(name)), name as in the safetensors table
// Token and position rows are d_model draws uniform in [-sqrt(3), sqrt(3)) (zero mean, unit variance).
// A weight [fan_in, fan_out] is fan_in*fan_out draws uniform in [-a, a), a = sqrt(6 / (fan_in + fan_out)),
// in row-major order of our [in, out] layout.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace attnscope::model {

inline constexpr std::uint64_t kPositionalDomain = 0x706F736974696F6Eull;  // "position"
inline constexpr std::uint64_t kWeightDomain = 0x7765696768747321ull;      // "weights!"

// 64-bit FNV-1a of the bytes of s (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
std::uint64_t fnv1a64(std::string_view s);

// out.size() draws uniform in [-sqrt(3), sqrt(3)) from Rng::for_key(seed, key).
void seeded_row(std::uint64_t seed, std::uint64_t key, std::span<float> out);

// Xavier/Glorot-uniform [fan_in, fan_out] for the tensor called `name`.
std::vector<float> xavier_uniform(std::uint64_t seed, std::string_view name, int fan_in, int fan_out);

}  // namespace attnscope::model
