// f32-gemm-4x8-wasmsimd.cpp: SIMD128 GEMMs C = alpha·A·B (+bias) (nn) and C = alpha·A·Bᵀ (+bias) (nt).
// Layer: kernels; <wasm_simd128.h> and the standard library only; compiled only with -msimd128.
// Shape: B is packed, per K block of kc, into panels of 8 columns ([kc][8], alpha folded in, zero-padded past n),
// N blocked by kNc = 256 so a packed block (kc x nc <= kBlockFloats, 256 KiB) stays in L2; kc is kKc = 256, longer
// (up to kKcMax = 1024) when B is narrower than 256 columns (weights·V: head_dim = 64 columns, K = n), which keeps
// the C tiles in registers across 4x more of K (issue 30: the weights·V GEMMs alone +2-17 % at n = 64..1024). Each
// 4-row block of A is packed too, [kc][4] (4-16 KiB, L1), once per B block and reused by all its panels: the
// micro-kernel then broadcasts the 4 A values of one k with v128.load32_splat from ONE pointer at immediate offsets
// 0..12 (one pointer bump per k instead of four; measured +7-9 % over reading the 4 rows of the row-major A in
// place). The 4x8 micro-kernel keeps 8 f32x4 accumulators, reads the 8 B values of one k as two v128 loads, and runs
// all the full panels of a row block in one call (ukernel_4x8_row: Q·Kᵀ's K of 64 made the per-call set-up, an
// indirect call for the relaxed kernel, a visible share). Tails: a row tail (m % 4) packs copies of the last valid
// row (their stores land on that row with equal values); a column tail (n % 8) goes through an 8-wide scratch tile.
// The first K block starts from bias (or 0), later ones from C. Workspace: a thread_local std::vector grown on demand
// (at most kBlockFloats + kNc + 4·kKcMax + 16 floats, 273 KiB), kept for the life of the thread — the only
// allocation in kernels/. Numerics differ from the scalar twin only by summation order and alpha being applied to B
// (round(alpha·b) products); the K block length does not change them (a float32 partial sum stored to C and
// reloaded is unchanged).
// Tile shape (issue 30, measured 2026-11-27 on the 2-core Zen 3 EPYC, Node 20, each against the SIMD128 probe of
// bench/probes.mjs in the same rounds): this 4x8 loop runs at 0.95-1.1x the probe with L1- or L2-resident operands;
// 5x8 and 6x8 (10 and 12 accumulators) at 0.8-0.85x: V8 unrolls the loop twice and, in the first copy, issues every
// A broadcast before the multiplies (14 live v128 values for 4x8, 17-20 for 5x8/6x8 against the 15 xmm registers
// V8 allocates), so the wider tiles spill (seen in --print-wasm-code); a k-unrolled (x2, x4) 4x8 spilled as well.
// A BLIS loop order (the B panel kept in L1, packed A blocks streamed from L2) measured the same as this order.
#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kernel_list.h"
#include "kernels/x16-wasmsimd.h"

namespace attnscope::kernels {
namespace {

// Tile names carry the tile: the unity build (CMAKE_UNITY_BUILD) puts every kernel of this folder in one file.
constexpr int kMr4x8 = 4;
constexpr int kNr4x8 = 8;
// kc x nc = 256 x 256 packed floats = 256 KiB: a quarter of this machine's per-core L2, so the block
// survives a busy sibling; 256/512, 128/256 and 512/128 measured the same (~41 GFLOP/s) when quiet.
constexpr int kKc = 256;
constexpr int kNc = 256;
constexpr int kBlockFloats = kKc * kNc;
constexpr int kKcMax = 1024;

// The micro-kernel installed by set_gemm_ukernel_4x8 (the relaxed-SIMD leaf module), or nullptr. One per
// thread: in the threaded module a function pointer is an index into the calling thread's own table, and a
// pool thread uses the kernel only once it has put it into its table (core::set_worker_init).
thread_local GemmUkernel4x8Fn g_ukernel_4x8 = nullptr;

// The packed panels start on a 64-byte boundary (malloc only promises 8 or 16 here), so a panel row
// (8 floats, 32 bytes, two v128 loads) never straddles a cache line.

float* workspace(std::size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats + 16) buffer.resize(floats + 16);
  const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(buffer.data());
  return buffer.data() + ((64 - addr % 64) % 64) / sizeof(float);
}

// The 4x8 micro-kernel (the GemmUkernel4x8Fn contract, kernels.h), over `panels` tiles side by side: for each panel q,
// rows r < mr of tile t + 8q (stride ldt) become (accumulate ? t[r] : bias8 + 8q | 0) + sum_p a[4p + r] * w[8kc·q +
// 8p + 0..8); rows past mr alias row mr - 1. The A block is re-read from L1 for each panel.
void ukernel_4x8_tile(int mr, int kc, int panels, const float* a, const float* w, const float* bias8, bool accumulate,
                      float* t, int ldt) {
  for (int q = 0; q < panels; ++q, w += kNr4x8 * kc, t += kNr4x8) {
    const float* a0 = a;
    float* t0 = t;
    float* t1 = t0 + ldt;
    float* t2 = t1 + ldt;
    float* t3 = t2 + ldt;
    if (mr < 2) t1 = t0;
    if (mr < 3) t2 = t1;
    if (mr < 4) t3 = t2;

    v128_t vacc0x0123, vacc0x4567;
    if (accumulate) {
      vacc0x0123 = wasm_v128_load(t0);
      vacc0x4567 = wasm_v128_load(t0 + 4);
    } else if (bias8 != nullptr) {
      vacc0x0123 = wasm_v128_load(bias8 + kNr4x8 * q);
      vacc0x4567 = wasm_v128_load(bias8 + kNr4x8 * q + 4);
    } else {
      vacc0x0123 = wasm_f32x4_splat(0.0f);
      vacc0x4567 = vacc0x0123;
    }
    v128_t vacc1x0123 = vacc0x0123, vacc1x4567 = vacc0x4567;
    v128_t vacc2x0123 = vacc0x0123, vacc2x4567 = vacc0x4567;
    v128_t vacc3x0123 = vacc0x0123, vacc3x4567 = vacc0x4567;
    if (accumulate) {
      vacc1x0123 = wasm_v128_load(t1);
      vacc1x4567 = wasm_v128_load(t1 + 4);
      vacc2x0123 = wasm_v128_load(t2);
      vacc2x4567 = wasm_v128_load(t2 + 4);
      vacc3x0123 = wasm_v128_load(t3);
      vacc3x4567 = wasm_v128_load(t3 + 4);
    }

    // One k per iteration: 8 accumulators + 2 B + 4 A vectors = 14 live v128 values, which V8's
    // x64 register allocator keeps in xmm registers (unrolling by 2 made it spill accumulators).
    const float* wp = w;
#pragma clang loop unroll(disable)
    for (int p = 0; p < kc; ++p) {
      const v128_t vb0123 = wasm_v128_load(wp);
      const v128_t vb4567 = wasm_v128_load(wp + 4);
      wp += kNr4x8;
      const v128_t va0 = wasm_v128_load32_splat(a0);
      const v128_t va1 = wasm_v128_load32_splat(a0 + 1);
      const v128_t va2 = wasm_v128_load32_splat(a0 + 2);
      const v128_t va3 = wasm_v128_load32_splat(a0 + 3);
      a0 += kMr4x8;
      vacc0x0123 = wasm_f32x4_add(vacc0x0123, wasm_f32x4_mul(va0, vb0123));
      vacc0x4567 = wasm_f32x4_add(vacc0x4567, wasm_f32x4_mul(va0, vb4567));
      vacc1x0123 = wasm_f32x4_add(vacc1x0123, wasm_f32x4_mul(va1, vb0123));
      vacc1x4567 = wasm_f32x4_add(vacc1x4567, wasm_f32x4_mul(va1, vb4567));
      vacc2x0123 = wasm_f32x4_add(vacc2x0123, wasm_f32x4_mul(va2, vb0123));
      vacc2x4567 = wasm_f32x4_add(vacc2x4567, wasm_f32x4_mul(va2, vb4567));
      vacc3x0123 = wasm_f32x4_add(vacc3x0123, wasm_f32x4_mul(va3, vb0123));
      vacc3x4567 = wasm_f32x4_add(vacc3x4567, wasm_f32x4_mul(va3, vb4567));
    }

    // Stored from the last row to the first: aliased tail rows hold identical values.
    wasm_v128_store(t3, vacc3x0123);
    wasm_v128_store(t3 + 4, vacc3x4567);
    wasm_v128_store(t2, vacc2x0123);
    wasm_v128_store(t2 + 4, vacc2x4567);
    wasm_v128_store(t1, vacc1x0123);
    wasm_v128_store(t1 + 4, vacc1x4567);
    wasm_v128_store(t0, vacc0x0123);
    wasm_v128_store(t0 + 4, vacc0x4567);
  }
}

// The micro-kernel in use: the installed one (set_gemm_ukernel_4x8) if any, else ukernel_4x8_tile.
void run_ukernel(int mr, int kc, int panels, const float* a, const float* w, const float* bias8, bool accumulate,
                 float* t, int ldt) {
  if (g_ukernel_4x8 != nullptr) {
    g_ukernel_4x8(mr, kc, panels, a, w, bias8, accumulate ? 1 : 0, t, ldt);
  } else {
    ukernel_4x8_tile(mr, kc, panels, a, w, bias8, accumulate, t, ldt);
  }
}

// One row block of tiles over kc: c[0..mr)[0..nc) = (accumulate ? c : bias|0) + A[0..mr)[0..kc) · B.
// a is the row block packed [kc][4] (pack_a); w the block's packed panels [nc/8][kc][8]; bias8 nc padded floats or
// nullptr. Rows past mr compute pack_a's copies of the last row; their outputs alias that row. The full panels go to
// the micro-kernel in ONE call (its per-call set-up, an indirect call for the relaxed kernel, is paid once per row
// block instead of once per tile: measurable where kc is short, Q·Kᵀ's head_dim of 64); a column tail (nc % 8) goes
// through an 8-wide scratch tile.
void ukernel_4x8_row(int mr, int nc, int kc, const float* a, const float* w, const float* bias8, bool accumulate,
                     float* c, int ldc) {
  const int panels = nc / kNr4x8;
  if (panels > 0) run_ukernel(mr, kc, panels, a, w, bias8, accumulate, c, ldc);
  const int nr = nc - panels * kNr4x8;
  if (nr == 0) return;
  const int j = panels * kNr4x8;
  alignas(16) float scratch[kMr4x8][kNr4x8] = {};
  if (accumulate) {
    for (int r = 0; r < mr; ++r)
      for (int jj = 0; jj < nr; ++jj) scratch[r][jj] = c[static_cast<std::ptrdiff_t>(r) * ldc + j + jj];
  }
  run_ukernel(mr, kc, 1, a, w + static_cast<std::ptrdiff_t>(j) * kc, bias8 != nullptr ? bias8 + j : nullptr, accumulate,
              &scratch[0][0], kNr4x8);
  for (int r = 0; r < mr; ++r)
    for (int jj = 0; jj < nr; ++jj) c[static_cast<std::ptrdiff_t>(r) * ldc + j + jj] = scratch[r][jj];
}

// Pack rows 0..mr of a row-major A block (columns 0..kc) into [kc][4], 4x4 blocks transposed with
// shuffles; a row tail (mr < 4) repeats the last valid row.
void pack_a(int mr, int kc, const float* a, int lda, float* packed) {
  const float* r0 = a;
  const float* r1 = mr > 1 ? r0 + lda : r0;
  const float* r2 = mr > 2 ? r1 + lda : r1;
  const float* r3 = mr > 3 ? r2 + lda : r2;
  int p = 0;
  for (; p + 4 <= kc; p += 4) {
    const v128_t v0 = wasm_v128_load(r0 + p);
    const v128_t v1 = wasm_v128_load(r1 + p);
    const v128_t v2 = wasm_v128_load(r2 + p);
    const v128_t v3 = wasm_v128_load(r3 + p);
    const v128_t vt01lo = wasm_i32x4_shuffle(v0, v1, 0, 4, 1, 5);
    const v128_t vt01hi = wasm_i32x4_shuffle(v0, v1, 2, 6, 3, 7);
    const v128_t vt23lo = wasm_i32x4_shuffle(v2, v3, 0, 4, 1, 5);
    const v128_t vt23hi = wasm_i32x4_shuffle(v2, v3, 2, 6, 3, 7);
    float* dst = packed + p * kMr4x8;
    wasm_v128_store(dst, wasm_i32x4_shuffle(vt01lo, vt23lo, 0, 1, 4, 5));
    wasm_v128_store(dst + 4, wasm_i32x4_shuffle(vt01lo, vt23lo, 2, 3, 6, 7));
    wasm_v128_store(dst + 8, wasm_i32x4_shuffle(vt01hi, vt23hi, 0, 1, 4, 5));
    wasm_v128_store(dst + 12, wasm_i32x4_shuffle(vt01hi, vt23hi, 2, 3, 6, 7));
  }
  for (; p < kc; ++p) {
    float* dst = packed + p * kMr4x8;
    dst[0] = r0[p];
    dst[1] = r1[p];
    dst[2] = r2[p];
    dst[3] = r3[p];
  }
}

// Pack B[k0..k0+kc, j0..j0+nc) of a row-major [k, n] B into panels [nc/8][kc][8], scaled by alpha.
void pack_nn(int kc, int nc, float alpha, const float* b, int ldb, float* packed) {
  const v128_t valpha = wasm_f32x4_splat(alpha);
  for (int j = 0; j < nc; j += kNr4x8) {
    const int nr = std::min(kNr4x8, nc - j);
    float* panel = packed + static_cast<std::ptrdiff_t>(j) * kc;
    const float* b_j = b + j;
    if (nr == kNr4x8) {
      for (int p = 0; p < kc; ++p) {
        const float* b_pj = b_j + static_cast<std::ptrdiff_t>(p) * ldb;
        wasm_v128_store(panel + p * kNr4x8, wasm_f32x4_mul(valpha, wasm_v128_load(b_pj)));
        wasm_v128_store(panel + p * kNr4x8 + 4, wasm_f32x4_mul(valpha, wasm_v128_load(b_pj + 4)));
      }
    } else {
      for (int p = 0; p < kc; ++p) {
        const float* b_pj = b_j + static_cast<std::ptrdiff_t>(p) * ldb;
        for (int jj = 0; jj < kNr4x8; ++jj) panel[p * kNr4x8 + jj] = jj < nr ? alpha * b_pj[jj] : 0.0f;
      }
    }
  }
}

// Pack rows j0..j0+nc, columns k0..k0+kc of a row-major [n, k] B (i.e. Bᵀ) into the same panels,
// transposing 4x4 blocks with shuffles.
void pack_nt(int kc, int nc, float alpha, const float* b, int ldb, float* packed) {
  const v128_t valpha = wasm_f32x4_splat(alpha);
  for (int j = 0; j < nc; j += kNr4x8) {
    const int nr = std::min(kNr4x8, nc - j);
    float* panel = packed + static_cast<std::ptrdiff_t>(j) * kc;
    int p = 0;
    if (nr == kNr4x8) {
      for (; p + 4 <= kc; p += 4) {
        for (int half = 0; half < 2; ++half) {
          const float* b_r = b + static_cast<std::ptrdiff_t>(j + 4 * half) * ldb + p;
          const v128_t vr0 = wasm_v128_load(b_r);
          const v128_t vr1 = wasm_v128_load(b_r + ldb);
          const v128_t vr2 = wasm_v128_load(b_r + 2 * static_cast<std::ptrdiff_t>(ldb));
          const v128_t vr3 = wasm_v128_load(b_r + 3 * static_cast<std::ptrdiff_t>(ldb));
          const v128_t vt01lo = wasm_i32x4_shuffle(vr0, vr1, 0, 4, 1, 5);
          const v128_t vt01hi = wasm_i32x4_shuffle(vr0, vr1, 2, 6, 3, 7);
          const v128_t vt23lo = wasm_i32x4_shuffle(vr2, vr3, 0, 4, 1, 5);
          const v128_t vt23hi = wasm_i32x4_shuffle(vr2, vr3, 2, 6, 3, 7);
          float* dst = panel + p * kNr4x8 + 4 * half;
          wasm_v128_store(dst, wasm_f32x4_mul(valpha, wasm_i32x4_shuffle(vt01lo, vt23lo, 0, 1, 4, 5)));
          wasm_v128_store(dst + kNr4x8, wasm_f32x4_mul(valpha, wasm_i32x4_shuffle(vt01lo, vt23lo, 2, 3, 6, 7)));
          wasm_v128_store(dst + 2 * kNr4x8, wasm_f32x4_mul(valpha, wasm_i32x4_shuffle(vt01hi, vt23hi, 0, 1, 4, 5)));
          wasm_v128_store(dst + 3 * kNr4x8, wasm_f32x4_mul(valpha, wasm_i32x4_shuffle(vt01hi, vt23hi, 2, 3, 6, 7)));
        }
      }
    }
    for (; p < kc; ++p) {
      for (int jj = 0; jj < kNr4x8; ++jj)
        panel[p * kNr4x8 + jj] = jj < nr ? alpha * b[static_cast<std::ptrdiff_t>(j + jj) * ldb + p] : 0.0f;
    }
  }
}

// Pack B[k0..k0+kc, j0..j0+nc) of a half-width row-major [k, n] B (BF16 or F16 bits) into the same f32 panels,
// scaled by alpha: each 8-wide panel row is one v128 load of 8 halves, widened in registers (V: x16-wasmsimd.h).
// The packing buffer is the only float32 copy: one kc x nc block (256 KiB), never the matrix.
template <class V>
void pack_nn_x16(int kc, int nc, float alpha, const std::uint16_t* b, int ldb, float* packed) {
  const v128_t valpha = wasm_f32x4_splat(alpha);
  for (int j = 0; j < nc; j += kNr4x8) {
    const int nr = std::min(kNr4x8, nc - j);
    float* panel = packed + static_cast<std::ptrdiff_t>(j) * kc;
    const std::uint16_t* b_j = b + j;
    if (nr == kNr4x8) {
      for (int p = 0; p < kc; ++p) {
        const v128_t h = wasm_v128_load(b_j + static_cast<std::ptrdiff_t>(p) * ldb);
        wasm_v128_store(panel + p * kNr4x8, wasm_f32x4_mul(valpha, V::lo(h)));
        wasm_v128_store(panel + p * kNr4x8 + 4, wasm_f32x4_mul(valpha, V::hi(h)));
      }
    } else {
      alignas(16) std::uint16_t tail[kNr4x8];
      for (int p = 0; p < kc; ++p) {
        const std::uint16_t* b_pj = b_j + static_cast<std::ptrdiff_t>(p) * ldb;
        for (int jj = 0; jj < kNr4x8; ++jj) tail[jj] = jj < nr ? b_pj[jj] : std::uint16_t{0};
        const v128_t h = wasm_v128_load(tail);
        wasm_v128_store(panel + p * kNr4x8, wasm_f32x4_mul(valpha, V::lo(h)));
        wasm_v128_store(panel + p * kNr4x8 + 4, wasm_f32x4_mul(valpha, V::hi(h)));
      }
    }
  }
}

// Pack B[k0..k0+kc, j0..j0+nc) of a Q8_0 [k, n] B (kernels.h; k0 a multiple of 32, kc too but for the last block
// of a k % 32 != 0 matrix, whose zero padding is read and not written) into the f32 panels,
// dequantised and scaled by alpha: per panel column and block, 32 int8 widened to f32 in registers, times the
// block's scale, then written down the panel column (stride 8).
void pack_nn_q8(int kc, int nc, float alpha, const std::int8_t* q, const float* scales, int ldb, float* packed) {
  alignas(16) float col[kQ8Block];
  for (int j = 0; j < nc; j += kNr4x8) {
    const int nr = std::min(kNr4x8, nc - j);
    float* panel = packed + static_cast<std::ptrdiff_t>(j) * kc;
    for (int b = 0; b * kQ8Block < kc; ++b) {
      const int len = std::min(kQ8Block, kc - b * kQ8Block);
      for (int jj = 0; jj < kNr4x8; ++jj) {
        float* dst = panel + b * kQ8Block * kNr4x8 + jj;
        if (jj >= nr) {
          for (int t = 0; t < len; ++t) dst[t * kNr4x8] = 0.0f;
          continue;
        }
        const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(b) * ldb + j + jj;
        const v128_t vs = wasm_f32x4_splat(alpha * scales[at]);
        for (int h = 0; h < 2; ++h) {
          const v128_t v = wasm_v128_load(q + at * kQ8Block + 16 * h);
          const v128_t lo = wasm_i16x8_extend_low_i8x16(v), hi = wasm_i16x8_extend_high_i8x16(v);
          wasm_v128_store(col + 16 * h, wasm_f32x4_mul(vs, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(lo))));
          wasm_v128_store(col + 16 * h + 4, wasm_f32x4_mul(vs, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(lo))));
          wasm_v128_store(col + 16 * h + 8, wasm_f32x4_mul(vs, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(hi))));
          wasm_v128_store(col + 16 * h + 12, wasm_f32x4_mul(vs, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(hi))));
        }
        for (int t = 0; t < len; ++t) dst[t * kNr4x8] = col[t];
      }
    }
  }
}

// The blocked driver shared by nn and nt; `pack` packs one (kc x nc) block of alpha·B.
// pack(p0, j0, kc, nc, packed) packs the block of alpha·B at (p0, j0).
template <class Pack>
void gemm_4x8(int m, int n, int k, const float* a, int lda, const float* bias, float* c, int ldc, const Pack& pack) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // outside the contract (k >= 1), but cheap to get right: C = bias or 0, as the scalar twin
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) c[static_cast<std::ptrdiff_t>(i) * ldc + j] = bias != nullptr ? bias[j] : 0.0f;
    return;
  }
  const int nc_max = std::min(n, kNc);
  const int nc_pad = (nc_max + kNr4x8 - 1) / kNr4x8 * kNr4x8;
  // K block: kKc, longer for a narrow B (weights·V's head_dim columns) so that its packed block is still kBlockFloats:
  // fewer round trips of the C tiles through memory (bit-identical: a float32 partial sum stored and reloaded is
  // unchanged), at most kKcMax so that a packed A row block (4 x kc) stays in L1.
  const int kc_blk = std::clamp(kBlockFloats / nc_pad / kQ8Block * kQ8Block, kKc, kKcMax);
  const int kc_max = std::min(k, kc_blk);
  // [packed B block][bias][packed A row block]; every part a multiple of 16 floats (64 bytes)
  const std::size_t kc_size = static_cast<std::size_t>(kc_max);
  float* packed = workspace(kc_size * nc_pad + nc_pad + kc_size * kMr4x8);
  float* bias_packed = packed + static_cast<std::size_t>(kc_max) * nc_pad;
  float* a_packed = bias_packed + nc_pad;

  for (int j0 = 0; j0 < n; j0 += kNc) {
    const int nc = std::min(kNc, n - j0);
    if (bias != nullptr) {
      for (int j = 0; j < nc_pad; ++j) bias_packed[j] = j < nc ? bias[j0 + j] : 0.0f;
    }
    for (int p0 = 0; p0 < k; p0 += kc_blk) {
      const int kc = std::min(kc_blk, k - p0);
      pack(p0, j0, kc, nc, packed);
      const bool accumulate = p0 != 0;
      for (int i0 = 0; i0 < m; i0 += kMr4x8) {
        const int mr = std::min(kMr4x8, m - i0);
        pack_a(mr, kc, a + static_cast<std::ptrdiff_t>(i0) * lda + p0, lda, a_packed);
        float* c_i = c + static_cast<std::ptrdiff_t>(i0) * ldc + j0;
        ukernel_4x8_row(mr, nc, kc, a_packed, packed, bias != nullptr ? bias_packed : nullptr, accumulate, c_i, ldc);
      }
    }
  }
}

}  // namespace

bool set_gemm_ukernel_4x8(GemmUkernel4x8Fn fn) {
  g_ukernel_4x8 = fn;
  return true;
}

// C[m,n] = alpha * A[m,k] · B[k,n] (+ bias[n]); lda >= k, ldb >= n, ldc >= n; C must not overlap A/B.
void f32_gemm_nn_4x8__wasmsimd(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                               const float* bias, float* c, int ldc) {
  gemm_4x8(m, n, k, a, lda, bias, c, ldc, [=](int p0, int j0, int kc, int nc, float* packed) {
    pack_nn(kc, nc, alpha, b + static_cast<std::ptrdiff_t>(p0) * ldb + j0, ldb, packed);
  });
}

// C[m,n] = alpha * A[m,k] · B[n,k]ᵀ (+ bias[n]); B packed from its [n, k] layout (no caller transpose).
void f32_gemm_nt_4x8__wasmsimd(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                               const float* bias, float* c, int ldc) {
  gemm_4x8(m, n, k, a, lda, bias, c, ldc, [=](int p0, int j0, int kc, int nc, float* packed) {
    pack_nt(kc, nc, alpha, b + static_cast<std::ptrdiff_t>(j0) * ldb + p0, ldb, packed);
  });
}

// C[m,n] = alpha * A[m,k] · B[k,n] (+ bias[n]) with B half-width (BF16 / F16 bits), widened while packing.
void bf16_gemm_nn_4x8__wasmsimd(int m, int n, int k, float alpha, const float* a, int lda, const std::uint16_t* b,
                                int ldb, const float* bias, float* c, int ldc) {
  gemm_4x8(m, n, k, a, lda, bias, c, ldc, [=](int p0, int j0, int kc, int nc, float* packed) {
    pack_nn_x16<x16::Bf16x8>(kc, nc, alpha, b + static_cast<std::ptrdiff_t>(p0) * ldb + j0, ldb, packed);
  });
}
// C[m,n] = alpha * A[m,k] · B[k,n] (+ bias[n]) with B Q8_0 (kernels.h; k % 32 == 0), dequantised while packing.
void q8_gemm_nn_4x8__wasmsimd(int m, int n, int k, float alpha, const float* a, int lda, const std::int8_t* q,
                              const float* scales, int ldb, const float* bias, float* c, int ldc) {
  gemm_4x8(m, n, k, a, lda, bias, c, ldc, [=](int p0, int j0, int kc, int nc, float* packed) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(p0 / kQ8Block) * ldb + j0;
    pack_nn_q8(kc, nc, alpha, q + at * kQ8Block, scales + at, ldb, packed);
  });
}

void f16_gemm_nn_4x8__wasmsimd(int m, int n, int k, float alpha, const float* a, int lda, const std::uint16_t* b,
                               int ldb, const float* bias, float* c, int ldc) {
  gemm_4x8(m, n, k, a, lda, bias, c, ldc, [=](int p0, int j0, int kc, int nc, float* packed) {
    pack_nn_x16<x16::F16x8>(kc, nc, alpha, b + static_cast<std::ptrdiff_t>(p0) * ldb + j0, ldb, packed);
  });
}

}  // namespace attnscope::kernels

#endif  // defined(__wasm_simd128__)
