// safetensors reading (F32/F16/BF16 -> f32) and writing (F32), every format rule a named check.
// Layer: io (depends on core/ only). Format: https://github.com/huggingface/safetensors (README "Format").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnscope::io {

// One tensor of a safetensors file. dtype is the file's dtype ("F32", "F16" or "BF16"); data is always converted
// to f32 (F16 exactly, subnormals, infinities and NaNs included; BF16 by widening), row-major, product(shape)
// values (a scalar, shape [], holds one value).
struct NamedTensor {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<float> data;
};

// Parses a safetensors buffer: an 8-byte little-endian header length N, N bytes of JSON header
//   {"<name>": {"dtype": "F32"|"F16"|"BF16", "shape": [d0, ...], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"<key>": "<string>", ...}}   (__metadata__ optional, other per-tensor keys ignored)
// then the data section, whose offsets are relative to its start. Tensors are returned in data-section order
// (by begin offset). Every violation returns Error "<fn>: safetensors ..." (argument "safetensors"), fn being the
// public function that was called (e.g. "createModel"):
//   buffer shorter than 8 bytes; header length beyond the buffer; header not JSON; header not an object; a name
//   given twice; a tensor entry not an object; dtype/shape/data_offsets missing or mistyped; unsupported dtype;
//   product(shape) x dtype size != end - begin; offsets beyond the data section; begin > end; two tensors'
//   ranges overlapping; bytes of the data section covered by no tensor (they must tile it contiguously from 0);
//   __metadata__ not an object of strings.
core::Result<std::vector<NamedTensor>> parse_safetensors(std::span<const std::uint8_t> bytes, const char* fn);

// Writes tensors as F32 safetensors, in the given order, data back to back; the header is space-padded to a
// multiple of 8 bytes (as the reference writer does) and has no __metadata__. Each tensor's dtype field is
// ignored (always written as F32); callers keep data.size() == product(shape) and names distinct, otherwise the
// output is not a valid file (parse_safetensors will say why).
std::vector<std::uint8_t> write_safetensors(const std::vector<NamedTensor>& tensors);

}  // namespace attnscope::io
