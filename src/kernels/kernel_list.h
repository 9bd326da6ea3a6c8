// kernel_list.h: the one X-macro list of every (slot, isa, function, tile) kernel entry.
// Layer: kernels. Dispatch (dispatch.cpp), tests (tests/cpp/kernels_test.cpp) and the benchmark
// (bench/kernels_bench.cpp) all expand this list, so a kernel is tested and benchmarked by being listed.
// X(slot, isa, fn, tile): `slot` is the KernelTable member the entry fills, `isa` is scalar|wasmsimd,
// `fn` the symbol (namespace attnscope::kernels), `tile` a short string-able token (`1` when untiled).
// The scalar list fills every slot; the wasmsimd list may leave a slot to its scalar kernel (gelu).
// A slot may have several entries of one isa: the LAST one fills that isa's table, the earlier ones
// are kept (tested and benchmarked) as references — f32_gemm_{nn,nt}__scalar, the plain loops every
// other GEMM is compared against in tests, are listed before the register-blocked 4x4 kernels the
// scalar table runs.
// tests/cpp/kernels_test.cpp checks that every table slot is filled.
#pragma once

#include <type_traits>

#include "kernels/kernels.h"

#define ATTN_KERNELS_SCALAR(X)                                 \
  X(gemm_nn, scalar, f32_gemm_nn__scalar, 1x1)                 \
  X(gemm_nt, scalar, f32_gemm_nt__scalar, 1x1)                 \
  X(gemm_nn, scalar, f32_gemm_nn_4x4__scalar, 4x4)             \
  X(gemm_nt, scalar, f32_gemm_nt_4x4__scalar, 4x4)             \
  X(softmax_rows, scalar, f32_softmax__scalar, 1)              \
  X(layer_norm_rows, scalar, f32_layernorm__scalar, 1)         \
  X(relu, scalar, f32_vrelu__scalar, 1)                        \
  X(gelu, scalar, f32_vgelu__scalar, 1)                        \
  X(tanh, scalar, f32_vtanh__scalar, 1)                        \
  X(add, scalar, f32_vadd__scalar, 1)                          \
  X(dot, scalar, f32_dot__scalar, 1)                          \
  X(row_dots, scalar, f32_row_dots__scalar, 1)                \
  X(gemm_nn_bf16, scalar, bf16_gemm_nn__scalar, 1x1)          \
  X(gemm_nn_f16, scalar, f16_gemm_nn__scalar, 1x1)            \
  X(gemv_bf16, scalar, bf16_gemv__scalar, 1)                  \
  X(gemv_f16, scalar, f16_gemv__scalar, 1)                    \
  X(row_dots_bf16, scalar, bf16_row_dots__scalar, 1)          \
  X(row_dots_f16, scalar, f16_row_dots__scalar, 1)            \
  X(cvt_bf16, scalar, bf16_cvt__scalar, 1)                    \
  X(cvt_f16, scalar, f16_cvt__scalar, 1)                      \
  X(gemm_nn_q8, scalar, q8_gemm_nn__scalar, 1x1)              \
  X(quantize_q8, scalar, q8_quantize__scalar, 1)             \
  X(gemv_q8, scalar, q8_gemv__scalar, 1)

#if defined(__wasm_simd128__)
// gelu has no SIMD twin: an accurate vector erf is not worth it for the sizes the page uses
// (d_ff x n), so the wasmsimd table points gelu at the scalar kernel (it is listed under scalar only).
#define ATTN_KERNELS_WASMSIMD(X)                               \
  X(gemm_nn, wasmsimd, f32_gemm_nn_4x8__wasmsimd, 4x8)         \
  X(gemm_nt, wasmsimd, f32_gemm_nt_4x8__wasmsimd, 4x8)         \
  X(softmax_rows, wasmsimd, f32_softmax__wasmsimd_p5, 4)       \
  X(layer_norm_rows, wasmsimd, f32_layernorm__wasmsimd, 4)     \
  X(relu, wasmsimd, f32_vrelu__wasmsimd, 4)                    \
  X(tanh, wasmsimd, f32_vtanh__wasmsimd_p5, 4)                 \
  X(add, wasmsimd, f32_vadd__wasmsimd, 4)                      \
  X(dot, wasmsimd, f32_dot__wasmsimd, 4)                      \
  X(row_dots, wasmsimd, f32_row_dots_4__wasmsimd, 4)          \
  X(gemm_nn_bf16, wasmsimd, bf16_gemm_nn_4x8__wasmsimd, 4x8)  \
  X(gemm_nn_f16, wasmsimd, f16_gemm_nn_4x8__wasmsimd, 4x8)    \
  X(gemv_bf16, wasmsimd, bf16_gemv_32__wasmsimd, 32)          \
  X(gemv_f16, wasmsimd, f16_gemv_32__wasmsimd, 32)            \
  X(row_dots_bf16, wasmsimd, bf16_row_dots_4__wasmsimd, 4)    \
  X(row_dots_f16, wasmsimd, f16_row_dots_4__wasmsimd, 4)      \
  X(cvt_bf16, wasmsimd, bf16_cvt__wasmsimd, 8)                \
  X(cvt_f16, wasmsimd, f16_cvt__wasmsimd, 8)                  \
  X(gemm_nn_q8, wasmsimd, q8_gemm_nn_4x8__wasmsimd, 4x8)      \
  X(quantize_q8, wasmsimd, q8_quantize__wasmsimd, 32)       \
  X(gemv_q8, wasmsimd, q8_gemv_4__wasmsimd, 4)
#else
#define ATTN_KERNELS_WASMSIMD(X)
#endif

#define ATTN_KERNEL_LIST(X) ATTN_KERNELS_SCALAR(X) ATTN_KERNELS_WASMSIMD(X)

namespace attnscope::kernels {

// Declare every listed symbol with the function type of its slot (a function typedef may declare
// a function), so a listed kernel whose signature drifts from its slot fails to compile.
#define ATTN_DECLARE_KERNEL(slot, isa, fn, tile) std::remove_pointer_t<decltype(KernelTable::slot)> fn;
ATTN_KERNEL_LIST(ATTN_DECLARE_KERNEL)
#undef ATTN_DECLARE_KERNEL

}  // namespace attnscope::kernels
