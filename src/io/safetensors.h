// safetensors reading (F32/F16/BF16 -> f32) and writing (F32), every format rule a named check.
// Layer: io (depends on core/ only). Format: https://github.com/huggingface/safetensors (README "Format").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
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

// One entry of a safetensors header: where its bytes are (relative to the data section) and what they hold.
// Any dtype of the format is accepted here (U8/BOOL buffers, I64 position ids); only F32/F16/BF16 convert to f32.
struct TensorEntry {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0, count = 0;
  std::size_t elem = 0;
};
struct SafetensorsIndex {
  std::uint64_t data_offset = 0;     // 8 + header length: where the data section starts in the file
  std::vector<TensorEntry> tensors;  // sorted by begin offset
  std::vector<std::pair<std::string, std::string>> metadata;  // __metadata__'s entries, in header order
};

// The header length from the first 8 bytes of a file of file_size bytes (errors as parse_safetensors).
core::Result<std::uint64_t> safetensors_header_length(std::span<const std::uint8_t> bytes, std::uint64_t file_size,
                                                      const char* fn);
// Every format rule of parse_safetensors except the dtype restriction, from the file's first bytes (at least the
// 8-byte prefix and the header) and its total size: a file read in chunks is checked before its data arrives.
core::Result<SafetensorsIndex> parse_safetensors_header(std::span<const std::uint8_t> bytes, std::uint64_t file_size,
                                                        const char* fn);
bool is_float_dtype(const std::string& dtype);  // F32, F16, BF16
// count elements of dtype (F32, F16 or BF16) at src (little-endian) into dst, widened exactly.
void to_f32(const std::string& dtype, const std::uint8_t* src, std::size_t count, float* dst);

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
