// f32-gemm-4x8-wasmrelaxedsimd.c: the 4x8 GEMM micro-kernel of src/kernels/f32-gemm-4x8-wasmsimd.cpp with
// f32x4.relaxed_madd (fused multiply-add where the engine has it) instead of f32x4.mul + f32x4.add.
// Layer: kernels, built apart as a LEAF wasm module (TOOLCHAIN.md 15): clang-16 --target=wasm32 -O3
// -msimd128 -mrelaxed-simd -c, wasm-ld-16 --no-entry --import-memory --strip-all. No libc, no data, no
// globals, no stack: every value lives in wasm locals, so the module's only import is the main module's
// memory and it cannot clobber anything in it (tests/js/relaxed.test.js reads its sections and checks this).
// bindings/js/loader.js instantiates it with that memory, puts the export in the main module's table and
// hands the index to setGemmMicroKernel (bindings/embind), which sets kernels::GemmUkernel4x8Fn.
// Contract (kernels.h GemmUkernel4x8Fn): for each of `panels` 4x8 tiles side by side (q = 0..panels), rows r < mr of
// tile t + 8q (row stride ldt floats) become
//   (accumulate ? t[r] : bias8 ? bias8 + 8q : 0) + sum_p a[4p + r] * w[8kc·q + 8p + 0..8)
// with a the row block packed [kc][4], w packed panels [panels][kc][8]; rows mr..3 alias row mr-1 (pack_a
// repeats the last row there, so the aliased stores write equal values). Numerics: relaxed_madd may fuse
// (one rounding per k) or not (two, = the SIMD128 kernel); results differ from it in the last bits only.

typedef float v128_f32 __attribute__((vector_size(16), aligned(16)));
typedef float v128_f32u __attribute__((vector_size(16), aligned(4)));

static inline v128_f32 load(const float* p) { return *(const v128_f32u*)p; }
static inline void store(float* p, v128_f32 v) { *(v128_f32u*)p = v; }
static inline v128_f32 splat(float x) { return (v128_f32){x, x, x, x}; }
// a·b + c, fused where the engine can (f32x4.relaxed_madd, opcode fd 85 02)
static inline v128_f32 madd(v128_f32 a, v128_f32 b, v128_f32 c) {
  return __builtin_wasm_relaxed_madd_f32x4(a, b, c);
}

__attribute__((export_name("f32_gemm_ukernel_4x8__wasmrelaxedsimd")))
void f32_gemm_ukernel_4x8__wasmrelaxedsimd(int mr, int kc, int panels, const float* a, const float* w,
                                            const float* bias8, int accumulate, float* t, int ldt) {
  for (int q = 0; q < panels; ++q, w += 8 * kc, t += 8) {
    const float* a0 = a;
    const float* wp = w;
    float* t0 = t;
    float* t1 = mr > 1 ? t0 + ldt : t0;
    float* t2 = mr > 2 ? t1 + ldt : t1;
    float* t3 = mr > 3 ? t2 + ldt : t2;

    v128_f32 vacc0x0123, vacc0x4567, vacc1x0123, vacc1x4567, vacc2x0123, vacc2x4567, vacc3x0123, vacc3x4567;
    if (accumulate) {
      vacc0x0123 = load(t0);
      vacc0x4567 = load(t0 + 4);
      vacc1x0123 = load(t1);
      vacc1x4567 = load(t1 + 4);
      vacc2x0123 = load(t2);
      vacc2x4567 = load(t2 + 4);
      vacc3x0123 = load(t3);
      vacc3x4567 = load(t3 + 4);
    } else {
      if (bias8) {
        vacc0x0123 = load(bias8 + 8 * q);
        vacc0x4567 = load(bias8 + 8 * q + 4);
      } else {
        vacc0x0123 = splat(0.0f);
        vacc0x4567 = vacc0x0123;
      }
      vacc1x0123 = vacc0x0123;
      vacc1x4567 = vacc0x4567;
      vacc2x0123 = vacc0x0123;
      vacc2x4567 = vacc0x4567;
      vacc3x0123 = vacc0x0123;
      vacc3x4567 = vacc0x4567;
    }

    // One k per iteration, as the SIMD128 kernel: 8 accumulators + 2 B + 4 A = 14 live v128 values.
#pragma clang loop unroll(disable)
    for (int p = 0; p < kc; ++p) {
      const v128_f32 vb0123 = load(wp);
      const v128_f32 vb4567 = load(wp + 4);
      wp += 8;
      const v128_f32 va0 = splat(a0[0]);
      const v128_f32 va1 = splat(a0[1]);
      const v128_f32 va2 = splat(a0[2]);
      const v128_f32 va3 = splat(a0[3]);
      a0 += 4;
      vacc0x0123 = madd(va0, vb0123, vacc0x0123);
      vacc0x4567 = madd(va0, vb4567, vacc0x4567);
      vacc1x0123 = madd(va1, vb0123, vacc1x0123);
      vacc1x4567 = madd(va1, vb4567, vacc1x4567);
      vacc2x0123 = madd(va2, vb0123, vacc2x0123);
      vacc2x4567 = madd(va2, vb4567, vacc2x4567);
      vacc3x0123 = madd(va3, vb0123, vacc3x0123);
      vacc3x4567 = madd(va3, vb4567, vacc3x4567);
    }

    // Stored from the last row to the first: aliased tail rows hold identical values.
    store(t3, vacc3x0123);
    store(t3 + 4, vacc3x4567);
    store(t2, vacc2x0123);
    store(t2 + 4, vacc2x4567);
    store(t1, vacc1x0123);
    store(t1 + 4, vacc1x4567);
    store(t0, vacc0x0123);
    store(t0 + 4, vacc0x4567);
  }
}
