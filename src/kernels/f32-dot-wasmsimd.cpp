// f32-dot-wasmsimd.cpp: SIMD128 dot product with 4 f32x4 accumulators (16 partial sums), reduced
// pairwise, scalar tail. Layer: kernels; compiled only with -msimd128. Accumulates in float (the
// scalar twin uses double): error bound ~ n·eps·sum|a_i b_i| in the worst case, far less typically.
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include "kernels/kernel_list.h"
#include "kernels/x16-wasmsimd.h"

namespace attnscope::kernels {

float f32_dot__wasmsimd(std::size_t n, const float* a, const float* b) {
  v128_t vacc0 = wasm_f32x4_splat(0.0f), vacc1 = vacc0, vacc2 = vacc0, vacc3 = vacc0;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    vacc0 = wasm_f32x4_add(vacc0, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
    vacc1 = wasm_f32x4_add(vacc1, wasm_f32x4_mul(wasm_v128_load(a + i + 4), wasm_v128_load(b + i + 4)));
    vacc2 = wasm_f32x4_add(vacc2, wasm_f32x4_mul(wasm_v128_load(a + i + 8), wasm_v128_load(b + i + 8)));
    vacc3 = wasm_f32x4_add(vacc3, wasm_f32x4_mul(wasm_v128_load(a + i + 12), wasm_v128_load(b + i + 12)));
  }
  for (; i + 4 <= n; i += 4) vacc0 = wasm_f32x4_add(vacc0, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
  vacc0 = wasm_f32x4_add(wasm_f32x4_add(vacc0, vacc1), wasm_f32x4_add(vacc2, vacc3));
  float acc = (wasm_f32x4_extract_lane(vacc0, 0) + wasm_f32x4_extract_lane(vacc0, 1)) +
              (wasm_f32x4_extract_lane(vacc0, 2) + wasm_f32x4_extract_lane(vacc0, 3));
  for (; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

// a float32 tied head's logits, 4 rows at a time (x16-wasmsimd.h row_dots)
void f32_row_dots_4__wasmsimd(std::size_t rows, std::size_t n, const float* h, const float* t, std::size_t ldt,
                              float* out) {
  x16::row_dots<x16::F32Load8>(rows, n, h, t, ldt, out);
}

}  // namespace attnscope::kernels

#endif  // defined(__wasm_simd128__)
