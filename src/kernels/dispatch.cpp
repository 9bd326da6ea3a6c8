// dispatch.cpp: fills the KernelTables from kernel_list.h, once, at first use; no per-call branching.
// Entries are assigned in list order, so the last entry of an isa for a slot is the one the table holds
// (the scalar gemm slots: the 4x4 blocked kernels, listed after their plain reference twins).
// Layer: kernels. active_kernels() is the wasmsimd table when compiled with -msimd128 (the SIMD core
// copy), else the scalar one: the choice between the two is made by linking, never at run time.
#include "kernels/kernel_list.h"

namespace attnscope::kernels {

const KernelTable& scalar_kernels() {
  static const KernelTable table = [] {
    KernelTable t{};
#define ATTN_FILL(slot, isa, fn, tile) t.slot = &fn;
    ATTN_KERNELS_SCALAR(ATTN_FILL)
#undef ATTN_FILL
    t.isa = "scalar";
    return t;
  }();
  return table;
}

#if defined(__wasm_simd128__)
const KernelTable& wasmsimd_kernels() {
  static const KernelTable table = [] {
    KernelTable t = scalar_kernels();  // slots without a SIMD kernel (gelu) keep the scalar one
#define ATTN_FILL(slot, isa, fn, tile) t.slot = &fn;
    ATTN_KERNELS_WASMSIMD(ATTN_FILL)
#undef ATTN_FILL
    t.isa = "wasmsimd";
    return t;
  }();
  return table;
}

const KernelTable& active_kernels() { return wasmsimd_kernels(); }
#else
const KernelTable& active_kernels() { return scalar_kernels(); }
bool set_gemm_ukernel_4x8(GemmUkernel4x8Fn) { return false; }  // the scalar GEMMs have no 4x8 micro-kernel
#endif

}  // namespace attnscope::kernels
