// The kernel interface: raw-pointer float32 loops behind one table of function pointers.
// Layer: kernels (depends on nothing but the standard library). Kernels never allocate user-visible
// memory, never validate user input and never fail; ops/ checks arguments before calling them.
// Two ISAs: `scalar` (portable, compiled everywhere, the reference twin) and `wasmsimd` (SIMD128,
// compiled only when __wasm_simd128__ is defined). ops/ reaches kernels only via active_kernels().
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnscope::kernels {

// C[m,n] = alpha * A[m,k] · B[k,n] (+ bias[n] if bias != nullptr). Overwrites C.
// Row-major with leading dimensions lda >= k, ldb >= n, ldc >= n. m, n, k >= 1.
using GemmNNFn = void (*)(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                          const float* bias, float* c, int ldc);
// C[m,n] = alpha * A[m,k] · B[n,k]ᵀ (+ bias[n]). B is given row-major as [n, k] with ldb >= k
// (the Q·Kᵀ form: each row of B is a key). Overwrites C.
using GemmNTFn = void (*)(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                          const float* bias, float* c, int ldc);
// Row softmax of x [rows, cols] (ldx) into y (ldy); y may alias x. Max-subtracted; -inf entries give 0;
// a row whose max is -inf (every entry blocked) is written as zeros. No other sentinel.
using SoftmaxRowsFn = void (*)(int rows, int cols, const float* x, int ldx, float* y, int ldy);
// LayerNorm per row of x [n, d] (contiguous) into y (may alias x): biased variance,
// y = (x - mean) / sqrt(var + eps) * gamma + beta; gamma/beta may be nullptr (= 1 / 0).
using LayerNormRowsFn = void (*)(int n, int d, const float* x, const float* gamma, const float* beta, float eps,
                                 float* y);
// Element-wise y[i] = f(x[i]) for i < n; y may alias x.
using UnaryFn = void (*)(std::size_t n, const float* x, float* y);
// y[i] = a[i] + b[i]; y may alias a or b.
using AddFn = void (*)(std::size_t n, const float* a, const float* b, float* y);
// sum_i a[i] * b[i]
using DotFn = float (*)(std::size_t n, const float* a, const float* b);
// out[r] = sum_i h[i] * t[r·ldt + i] for r < rows (a float32 tied head's logits; ldt >= n), each out[r] independent
// of `rows` and of r's place among them, as RowDotsHalfFn (below).
using RowDotsFn = void (*)(std::size_t rows, std::size_t n, const float* h, const float* t, std::size_t ldt, float* out);

// Half-width weights (issue 30): B / W / x hold 16-bit patterns as a checkpoint stores them, BF16 (the top half of
// a float32: widened by a 16-bit shift, exact) or IEEE F16 (widened exactly by bit manipulation: normals,
// subnormals, infinities). They are widened in registers, or panel by panel into the GEMM's packing buffer;
// never into a float32 copy of the matrix. Each slot has a _bf16 and an _f16 kernel.
// C[m,n] = alpha * A[m,k] · B[k,n] (+ bias[n]), B half-width row-major [k, n] (ldb >= n). Overwrites C.
using GemmNNHalfFn = void (*)(int m, int n, int k, float alpha, const float* a, int lda, const std::uint16_t* b,
                              int ldb, const float* bias, float* c, int ldc);
// One row (a decoding step): y[j] = (bias ? bias[j] : 0) + sum_p x[p] * W[p, j] for j < n, W half-width [k, n]
// row-major (ldw >= n). Overwrites y. Reads each weight once: bound by memory bandwidth.
using GemvHalfFn = void (*)(int k, int n, const float* x, const std::uint16_t* w, int ldw, const float* bias,
                            float* y);
// out[r] = sum_i h[i] * widen(t[r·ldt + i]) for r < rows, i < n (a tied head's logits against `rows` half-width
// embedding rows; ldt >= n). Each out[r] is the same operations in the same order whatever `rows` is and wherever row
// r falls among them, so the rows may be split anyhow (over threads) without changing a bit of any result.
using RowDotsHalfFn = void (*)(std::size_t rows, std::size_t n, const float* h, const std::uint16_t* t, std::size_t ldt,
                               float* out);
// y[i] = widen(x[i]) (an embedding row).
using CvtHalfFn = void (*)(std::size_t n, const std::uint16_t* x, float* y);

// Q8_0 weights (issue 30's optional weights8, GGUF's Q8_0 block: 32 int8 values and one scale, value = q · scale):
// a [k, n] matrix is stored as ceil(k/32) block rows of n blocks; block (b, j) holds W[32b .. 32b+32, j] as
// q[(b·ldb + j)·32 + t] and scales[b·ldb + j] (ldb >= n); a last partial block (k % 32 != 0) is zero-padded. Dequantised while packing (GEMM); the GEMV stays in integers (below).
inline constexpr int kQ8Block = 32;
using GemmNNQ8Fn = void (*)(int m, int n, int k, float alpha, const float* a, int lda, const std::int8_t* q,
                            const float* scales, int ldb, const float* bias, float* c, int ldc);
// A decoding step's one row against Q8_0 weights runs in integers, as llama.cpp's ggml_vec_dot_q8_0_q8_0: the
// activation row x [k] is quantised once to Q8_0 blocks of its own (ggml's quantize_row_q8_0, with a float32 scale
// where ggml rounds it to F16): xs[b] = max|x[32b .. 32b+32)| / 127, xq[32b + t] = round-to-nearest-even(x · (1 /
// xs[b])) in [-127, 127] (0 when xs[b] = 0), ceil(k/32) blocks, a last partial block zero-padded to 32.
using QuantizeQ8Fn = void (*)(int k, const float* x, std::int8_t* xq, float* xs);
// y[j] = (bias ? bias[j] : 0) + Σ_b float(Σ_t xq[32b+t] · q[(b·ldb + j)·32 + t]) · (scales[b·ldb + j] · xs[b]), the
// block sums exact in int32, the float sum over b in order b = 0, 1, … then the bias added (every ISA the same
// operations in the same order: bit-equal results). xq/xs as QuantizeQ8Fn writes them (k padded to whole blocks:
// a weight block's zero padding meets zeros of xq). Overwrites y.
using GemvQ8Fn = void (*)(int k, int n, const std::int8_t* xq, const float* xs, const std::int8_t* q,
                          const float* scales, int ldb, const float* bias, float* y);

// The 4x8 micro-kernel inside the SIMD128 GEMMs, over `panels` tiles side by side (one call per row block and K
// block): for q < panels, rows r < mr of the 4x8 tile t + 8q (row stride ldt) become (accumulate ? t[r] : bias8 ?
// bias8 + 8q : 0) + sum_p a[4p + r] * w[8kc·q + 8p + 0..8), a packed [kc][4], w packed [panels][kc][8];
// rows mr..3 alias row mr - 1. The built-in one uses f32x4.mul + add; a replacement (the relaxed-SIMD leaf
// module, kernels-relaxed/) is installed from outside with set_gemm_ukernel_4x8.
using GemmUkernel4x8Fn = void (*)(int mr, int kc, int panels, const float* a, const float* w, const float* bias8,
                                  int accumulate, float* t, int ldt);

struct KernelTable {
  GemmNNFn gemm_nn;
  GemmNTFn gemm_nt;
  SoftmaxRowsFn softmax_rows;
  LayerNormRowsFn layer_norm_rows;
  UnaryFn relu;
  UnaryFn gelu;  // exact: 0.5 x (1 + erf(x / sqrt 2))
  UnaryFn tanh;
  AddFn add;
  DotFn dot;
  RowDotsFn row_dots;
  GemmNNHalfFn gemm_nn_bf16, gemm_nn_f16;
  GemvHalfFn gemv_bf16, gemv_f16;
  RowDotsHalfFn row_dots_bf16, row_dots_f16;
  CvtHalfFn cvt_bf16, cvt_f16;
  GemmNNQ8Fn gemm_nn_q8;
  QuantizeQ8Fn quantize_q8;
  GemvQ8Fn gemv_q8;
  const char* isa;  // "scalar" or "wasmsimd"
};

// The portable reference table; exists in every build.
const KernelTable& scalar_kernels();
// The table ops use: the wasmsimd one when compiled with -msimd128, else scalar_kernels().
const KernelTable& active_kernels();
#if defined(__wasm_simd128__)
const KernelTable& wasmsimd_kernels();
#endif
// Installs fn as the SIMD128 GEMMs' micro-kernel on the calling thread (nullptr: the built-in one again);
// every thread that runs GEMM pieces (core/parallel.h's pool) installs its own. Call it while no GEMM runs on
// that thread. Returns false, changing nothing, in a build without the SIMD128 GEMM (the scalar core).
bool set_gemm_ukernel_4x8(GemmUkernel4x8Fn fn);

}  // namespace attnscope::kernels
