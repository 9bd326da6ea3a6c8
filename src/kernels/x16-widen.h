// x16-widen.h: BF16 / F16 bit patterns to float32, one value at a time (the scalar kernels and tails).
// Layer: kernels. BF16 is the top half of a float32 (a 16-bit shift, exact). F16 follows Maratos' FP16 library
// (fp16_ieee_to_fp32_value): normals rebias by scaling with 2^-112, subnormals come out of a magic-number
// subtraction; both exact, and infinities/NaNs stay infinities/NaNs. The SIMD128 twin is in x16-wasmsimd.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace attnscope::kernels::x16 {

inline float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline std::uint32_t to_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

struct Bf16 {
  static float widen(std::uint16_t h) { return from_bits(static_cast<std::uint32_t>(h) << 16); }
};

struct F16 {
  static float widen(std::uint16_t h) {
    const std::uint32_t w = static_cast<std::uint32_t>(h) << 16;
    const std::uint32_t sign = w & 0x80000000u;
    const std::uint32_t two_w = w + w;  // exponent and mantissa, sign shifted out
    const float normalized = from_bits((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    const float denormalized = from_bits((two_w >> 17) | (126u << 23)) - 0.5f;
    return from_bits(sign | (two_w < (1u << 27) ? to_bits(denormalized) : to_bits(normalized)));
  }
};

// float32 itself, so one loop serves f32 and half-width B (gemm_nn_loop).
struct F32 {
  static float widen(float f) { return f; }
};

// The plain i-p-j GEMM C = alpha·A·B (+ bias) with B's element (p, j) given by b_at(p, j) (float32, widened half,
// dequantised 8-bit): the scalar reference twins.
template <class BAt>
void gemm_nn_rows(int m, int n, int k, float alpha, const float* a, int lda, const BAt& b_at, const float* bias,
                  float* c, int ldc) {
  for (int i = 0; i < m; ++i) {
    const float* a_i = a + static_cast<std::ptrdiff_t>(i) * lda;
    float* c_i = c + static_cast<std::ptrdiff_t>(i) * ldc;
    for (int j = 0; j < n; ++j) c_i[j] = 0.0f;
    for (int p = 0; p < k; ++p) {
      const float a_ip = a_i[p];
      for (int j = 0; j < n; ++j) c_i[j] += a_ip * b_at(p, j);
    }
    for (int j = 0; j < n; ++j) c_i[j] = alpha * c_i[j] + (bias != nullptr ? bias[j] : 0.0f);
  }
}

// gemm_nn_rows over a row-major B [k, ldb] of element type T, widened by H.
template <class H, class T>
void gemm_nn_loop(int m, int n, int k, float alpha, const float* a, int lda, const T* b, int ldb, const float* bias,
                  float* c, int ldc) {
  gemm_nn_rows(m, n, k, alpha, a, lda,
               [=](int p, int j) { return H::widen(b[static_cast<std::ptrdiff_t>(p) * ldb + j]); }, bias, c, ldc);
}

}  // namespace attnscope::kernels::x16
