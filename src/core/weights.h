// weights.h: a read-only view of a weight matrix stored at its checkpoint's width: float32, or 16-bit BF16 / F16
// bit patterns kept as they were in the file (issue 30: a Llama-3.2-1B is 2.5 GB as BF16 and would be 4.9 GB as
// float32, more than wasm32's 4 GiB). Layer: core. The half-width types are widened only inside the kernels
// (kernels.h *_bf16 / *_f16 slots), panel by panel or in registers; nothing above ops/ reads their bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace attnscope::core {

enum class WeightType : std::uint8_t { kF32, kBF16, kF16 };

struct WeightSpan {
  const void* data = nullptr;
  std::size_t count = 0;  // elements
  WeightType type = WeightType::kF32;

  WeightSpan() = default;
  // float32 weights convert implicitly, so every caller holding a span keeps working unchanged
  WeightSpan(std::span<const float> s) : data(s.data()), count(s.size()) {}  // NOLINT(google-explicit-constructor)
  WeightSpan(const std::vector<float>& v) : data(v.data()), count(v.size()) {}  // NOLINT(google-explicit-constructor)
  WeightSpan(const std::uint16_t* bits, std::size_t n, WeightType t) : data(bits), count(n), type(t) {}

  bool empty() const { return count == 0; }
  std::size_t size() const { return count; }
  bool is_f32() const { return type == WeightType::kF32; }
  // The float32 values (empty unless is_f32()).
  std::span<const float> f32() const {
    return is_f32() ? std::span<const float>(static_cast<const float*>(data), count) : std::span<const float>();
  }
  // The 16-bit patterns (nullptr when is_f32()).
  const std::uint16_t* bits() const { return is_f32() ? nullptr : static_cast<const std::uint16_t*>(data); }
};

}  // namespace attnscope::core
