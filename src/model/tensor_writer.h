// tensor_writer.h: one file tensor's elements to their places in the model's storage — the one owner of how a
// checkpoint's bytes become attnscope parameters, used by the chunked loader (hf_checkpoint.h) while a checkpoint
// loads and by the layer stream (layer_stream.h) each time a streamed layer is read again. Layer: model.
//
// A file tensor goes to one or more targets (TensorTarget::Op: a copy, a PyTorch Linear weight [out, in]
// transposed to [in, out], a range of columns, Phi-3's fused rows); each target's storage is float32, half-width
// (BF16 / F16 bits kept as they are: Parameters::stays_half) or Q8_0 blocks (weights8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/parameters.h"

namespace attnscope::model {

// Where one file tensor's values go.
struct TensorTarget {
  std::string name;  // attnscope parameter
  // kColumns: columns [first, first + cols) of [rows, total]; kRowsTransposed: rows [first, first + cols) of a
  // PyTorch Linear weight [total, rows] transposed to [rows, cols] (Phi-3's fused qkv_proj / gate_up_proj)
  enum class Op { kCopy, kTranspose, kColumns, kRowsTransposed } op = Op::kCopy;
  int rows = 0, cols = 0, total = 0, first = 0;
};

// A target's storage in the parameters: float32, or (a BF16 / F16 matrix, kept at its width: issue 30) 16-bit.
struct TensorStorage {
  float* f32 = nullptr;
  std::uint16_t* half = nullptr;
  Parameters::Q8Storage q8;    // weights8: quantised block by block as the file's rows arrive
  std::vector<float> pending;  // weights8: the current block's values (32)
  int out = 0, in = 0;         // weights8: the PyTorch weight's [out, in]
};

// Writes `count` whole elements of a file tensor (dtype "F32" / "F16" / "BF16", `elem` bytes each) from `src`,
// elements first.. first + count - 1 in file order, into each target's storage (storage[i] is targets[i]'s).
void write_elements(const std::string& dtype, std::size_t elem, const std::vector<TensorTarget>& targets,
                    const std::vector<TensorStorage*>& storage, const std::uint8_t* src, std::uint64_t first,
                    std::uint64_t count);

}  // namespace attnscope::model
