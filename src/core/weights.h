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

// kQ8_0: 8-bit blocks of 32 values with one float32 scale each (loadPretrained's weights8; layout: kernels.h).
// Values per Q8_0 block (GGUF's QK8_0); kernels.h's kQ8Block is the same number (ops/linear.cpp checks).
inline constexpr int kQ8Block = 32;

enum class WeightType : std::uint8_t { kF32, kBF16, kF16, kQ8_0 };

struct WeightSpan {
  const void* data = nullptr;
  std::size_t count = 0;  // elements
  WeightType type = WeightType::kF32;
  const float* scales = nullptr;  // kQ8_0 only

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
  static WeightSpan q8_0(const std::int8_t* q, const float* block_scales, std::size_t n) {
    WeightSpan w;
    w.data = q;
    w.count = n;
    w.type = WeightType::kQ8_0;
    w.scales = block_scales;
    return w;
  }
  // The 16-bit patterns (nullptr unless BF16 / F16).
  const std::uint16_t* bits() const {
    return type == WeightType::kBF16 || type == WeightType::kF16 ? static_cast<const std::uint16_t*>(data) : nullptr;
  }
  const std::int8_t* q8() const { return type == WeightType::kQ8_0 ? static_cast<const std::int8_t*>(data) : nullptr; }
};

}  // namespace attnscope::core
