// f32-vadd-wasmsimd.cpp: SIMD128 element-wise add y = a + b (8 lanes per iteration, scalar tail).
// Layer: kernels; compiled only with -msimd128. Bit-identical to the scalar twin. y may alias a or b.
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include "kernels/kernel_list.h"

namespace attnscope::kernels {

void f32_vadd__wasmsimd(std::size_t n, const float* a, const float* b, float* y) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t vy0 = wasm_f32x4_add(wasm_v128_load(a + i), wasm_v128_load(b + i));
    const v128_t vy1 = wasm_f32x4_add(wasm_v128_load(a + i + 4), wasm_v128_load(b + i + 4));
    wasm_v128_store(y + i, vy0);
    wasm_v128_store(y + i + 4, vy1);
  }
  for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, wasm_f32x4_add(wasm_v128_load(a + i), wasm_v128_load(b + i)));
  for (; i < n; ++i) y[i] = a[i] + b[i];
}

}  // namespace attnscope::kernels

#endif  // defined(__wasm_simd128__)
