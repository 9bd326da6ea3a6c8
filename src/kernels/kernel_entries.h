// Every (kernel, isa) pair of kernel_list.h as data: one vector per KernelTable slot, in list order.
// Layer: kernels. The kernel tests sweep these entries and the kernel benchmark times them, so a kernel
// is tested and benchmarked by being listed (dispatch.cpp expands the same list into the tables).
#pragma once

#include <string>
#include <vector>

#include "kernels/kernel_list.h"

namespace attnscope::kernels {

template <class Fn>
struct KernelEntry {
  std::string isa;   // "scalar" or "wasmsimd"
  std::string name;  // the symbol, e.g. "f32_gemm_nn_4x8__wasmsimd"
  std::string tile;  // e.g. "4x8", or "1" for element-wise kernels
  Fn fn;
};

struct KernelEntries {
  std::vector<KernelEntry<GemmNNFn>> gemm_nn;
  std::vector<KernelEntry<GemmNTFn>> gemm_nt;
  std::vector<KernelEntry<SoftmaxRowsFn>> softmax_rows;
  std::vector<KernelEntry<LayerNormRowsFn>> layer_norm_rows;
  std::vector<KernelEntry<UnaryFn>> relu, gelu, tanh;
  std::vector<KernelEntry<AddFn>> add;
  std::vector<KernelEntry<DotFn>> dot;
  std::vector<KernelEntry<RowDotsFn>> row_dots;
  std::vector<KernelEntry<GemmNNHalfFn>> gemm_nn_bf16, gemm_nn_f16;
  std::vector<KernelEntry<GemvHalfFn>> gemv_bf16, gemv_f16;
  std::vector<KernelEntry<RowDotsHalfFn>> row_dots_bf16, row_dots_f16;
  std::vector<KernelEntry<CvtHalfFn>> cvt_bf16, cvt_f16;
  std::vector<KernelEntry<GemmNNQ8Fn>> gemm_nn_q8;
  std::vector<KernelEntry<QuantizeQ8Fn>> quantize_q8;
  std::vector<KernelEntry<GemvQ8Fn>> gemv_q8;
};

inline const KernelEntries& kernel_entries() {
  static const KernelEntries all = [] {
    KernelEntries e;
#define ATTN_COLLECT(slot, isa, fn, tile) e.slot.push_back({#isa, #fn, #tile, &attnscope::kernels::fn});
    ATTN_KERNEL_LIST(ATTN_COLLECT)
#undef ATTN_COLLECT
    return e;
  }();
  return all;
}

}  // namespace attnscope::kernels
