// Attention files (API.md "Attention files — extension, 2026-11-26"): attention computed elsewhere (PyTorch
// `output_attentions=True`, python/attnscope.save) stored as safetensors, read as attnscope's own weights.
// Layer: io (depends on core/ only; the format rules are io/safetensors.h's, the JSON reader io/json_reader.h's).
//
//   tensors     attentions.<i>        [heads, n, n] or [1, heads, n, n]  F32 | F16 | BF16, i = 0 ... L-1
//               cross_attentions.<i>  [heads, n, m] or [1, heads, n, m]  optional, for any i < L
//   __metadata__ tokens         a JSON array of n strings (required)
//                source_tokens  a JSON array of m strings (required with cross_attentions)
//                model          a name (optional)
// Head counts may differ between layers. Every weight must be finite and >= 0 and every row sum at most
// 1 + 1e-3 (F32) or 1 + 1e-2 (F16/BF16: their rounding alone can add ~2e-3 to a row of 1024).
//
// Lazy reading: parse_attention_file_header needs only the file's first 8 + header-length bytes and its size; it
// returns an index of every tensor with its absolute byte offset. head_range says which bytes hold one head
// ([rows, cols] of one tensor), and read_head widens and checks just those. A 32 x 32 x 1024 x 1024 F32 file (4 GiB)
// therefore opens by reading its header, and a view of one head reads 4 MiB (bindings/js/attention_file.js does
// this from a Node file handle or a Blob). read_attention_file reads a whole buffer the same way, head by head.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnscope::io {

// The largest header accepted (bytes): the reference implementation's MAX_HEADER_SIZE (huggingface/safetensors
// safetensors/src/tensor.rs, 100 MB). A length field above it is refused before anything is allocated or read.
inline constexpr std::uint64_t kMaxAttentionHeader = 100'000'000;

// One stored tensor: `heads` matrices [rows, cols] of dtype, back to back from `offset` (absolute, in the file).
struct AttentionTensor {
  std::string name;   // "attentions.3"
  std::string dtype;  // "F32", "F16" or "BF16"
  std::int64_t heads = 0, rows = 0, cols = 0;
  std::uint64_t offset = 0;
  std::size_t elem = 0;  // bytes per value
};
struct AttentionLayer {
  AttentionTensor self;
  std::optional<AttentionTensor> cross;
};
struct AttentionFileIndex {
  std::vector<std::string> tokens;         // n query (and self-attention key) tokens
  std::vector<std::string> source_tokens;  // m cross-attention key tokens (empty without source_tokens)
  bool has_source_tokens = false;
  std::optional<std::string> model;
  std::vector<AttentionLayer> layers;
  std::uint64_t header_end = 0;  // 8 + header length: bytes parse_attention_file_header needs
  std::int64_t max_heads() const;
};
struct ByteRange {
  std::uint64_t offset = 0, length = 0;
};

// The header length from the first 8 bytes of a file of file_size bytes, refused above kMaxAttentionHeader or
// beyond the file. Errors: Error "<fn>: bytes: safetensors ..." / "<fn>: bytes: header length ...".
core::Result<std::uint64_t> attention_file_header_length(std::span<const std::uint8_t> first8, std::uint64_t file_size,
                                                         const char* fn);
// Every rule except the weights' values, from the file's first header_end bytes (or more) and its size.
core::Result<AttentionFileIndex> parse_attention_file_header(std::span<const std::uint8_t> bytes,
                                                             std::uint64_t file_size, const char* fn);
// Where head `head` of tensor t is in the file (t.rows * t.cols values).
ByteRange head_range(const AttentionTensor& t, std::int64_t head);
// Head `head` of t from exactly head_range(t, head).length bytes, widened to f32 and checked (finite, >= 0, rows
// summing to at most 1 + tolerance). Errors name the tensor, the head, the row and the column.
core::Result<std::vector<float>> read_head(const AttentionTensor& t, std::int64_t head,
                                           std::span<const std::uint8_t> head_bytes, const char* fn);
// The row-sum tolerance of a dtype: 1e-3 for F32, 1e-2 for F16 / BF16.
double row_sum_tolerance(const std::string& dtype);

// A whole file in memory: the index and every layer's weights [heads, rows, cols] (cross empty when absent).
struct AttentionFile {
  AttentionFileIndex index;
  std::vector<std::vector<float>> self, cross;
};
core::Result<AttentionFile> read_attention_file(std::span<const std::uint8_t> bytes, const char* fn);

}  // namespace attnscope::io
