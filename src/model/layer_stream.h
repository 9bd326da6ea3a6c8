// layer_stream.h: a decoder checkpoint whose layers' weights and token tables stay in the user's file
// (loadPretrained's streamWeights). Layer: model.
//
// The loader (hf_checkpoint.h) keeps, for every decoder layer, where its tensors are in the file (shard, byte
// range, dtype, shape) instead of their bytes; what every forward needs and is small (final norm, RoPE tables)
// stays resident. All layers share ONE layer buffer: layer 0's parameters, whose storage every block of the stack
// reads (their shapes and dtypes are checked equal when the checkpoint loads). Before each layer's forward,
// run_stack (stack.h) calls load(layer) on the orchestrating thread — never from a pool thread, since the read
// callback may call into JS — which reads the layer's bytes through `Read` in pieces of kReadBytes, writes them to
// the buffer exactly as the loader writes a resident layer (tensor_writer.h: BF16 / F16 matrices stay 2 bytes a
// value) and checks them finite. The forward is therefore bit-identical to a resident model's; its cost is one read
// of the layer's bytes per layer and run (and per generated token).
//
// The token tables stay in the file too (Table): the embedding [vocab, d_model] (a Llama-3.2-1B's is 525 MB of BF16,
// also its tied head) and an untied head's lm_head.weight. The embedding lookup reads the rows of a run's ids
// (embedding_rows); the head reads its whole table once per batch of hidden states (head_pieces, in the same pieces
// through the same buffer), and heads.cpp does each piece's products with the resident head's kernels.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/weights.h"
#include "model/parameters.h"
#include "model/tensor_writer.h"

namespace attnscope::model {

// What a streamed model reads at once, and how its head batches hidden states (heads.h lm_logits_rows: as many as
// kHeadBatchBytes of float32 logits hold, each batch one pass over the head's table). Tests give smaller sizes to
// see many pieces and batches on a small checkpoint.
struct StreamSizes {
  static constexpr std::size_t kReadBytes = 8u << 20;
  static constexpr double kHeadBatchBytes = 64.0 * 1048576.0;
  std::size_t read_bytes = kReadBytes;  // a multiple of 4 (whole elements of every dtype)
  double head_batch_bytes = kHeadBatchBytes;
};

class LayerStream {
 public:
  // Reads bytes [offset, offset + dst.size()) of shard `shard` into dst; returns "" or what went wrong (e.g. the
  // file changed size). Called on the orchestrating thread only.
  using Read = std::function<std::string(std::size_t shard, std::uint64_t offset, std::span<std::uint8_t> dst)>;
  using Sizes = StreamSizes;
  static constexpr std::size_t kReadBytes = StreamSizes::kReadBytes;
  static constexpr double kHeadBatchBytes = StreamSizes::kHeadBatchBytes;

  // One file tensor of a layer: where it is, and the layer buffer's targets it goes to.
  struct Tensor {
    std::string file_name;  // as the file names it (messages)
    std::size_t shard = 0;
    std::uint64_t begin = 0, end = 0;  // absolute byte offsets in the shard's file
    std::string dtype;
    std::size_t elem = 0;
    std::vector<TensorTarget> targets;  // their names are layer 0's parameters (the buffer)
  };

  // A token table in the file, [rows, cols] row-major (a PyTorch Embedding, or a Linear [out, in]): F32, BF16, F16.
  struct Table {
    Tensor where;  // targets unused
    std::size_t rows = 0, cols = 0;
  };

  // layers[i]: layer i's tensors; shard_names: "weights" or "weights[s]" (messages); storage: the buffer, by layer 0
  // parameter name (pointers into the model's Parameters, which outlive the stream).
  LayerStream(std::vector<std::vector<Tensor>> layers, std::vector<std::string> shard_names,
              std::map<std::string, TensorStorage> storage, Read read, Sizes sizes = {});

  // The token tables (streamWeights keeps them in the file): the embedding, and lm_head.weight when the head is not
  // tied to it.
  void set_tables(Table embedding, std::optional<Table> head);
  bool has_tables() const { return embedding_.has_value(); }
  // The model's parameters, for the finiteness check (set by the Transformer that owns both).
  void bind(const Parameters* params) { params_ = params; }
  // Reads layer `layer` into the buffer. Errors name `op` (run, generate) and the file and tensor.
  core::Status load(std::size_t layer, const char* op) const;
  std::size_t layers() const { return layers_.size(); }
  // The bytes one load reads (the largest layer's).
  std::uint64_t layer_bytes() const;

  // Rows ids[i] of the embedding table widened to float32 into out[i * cols ..] (ops::table_row), for the ids in
  // [0, rows); other ids' rows are left as they are. Each distinct id is read once, one read per run of adjacent ids.
  core::Status embedding_rows(std::span<const std::int32_t> ids, std::span<float> out, const char* op) const;
  // The head's table (lm_head.weight, else the embedding), every row once, in pieces of whole rows: each(piece,
  // first, count) with piece rows [first, first + count) as the resident head holds them: a tied table's rows as
  // stored ([count, cols]); an untied lm_head transposed to [cols, count] as the loader writes lm_head.weight
  // (ops::linear's [in, out]). The piece is valid during the call.
  core::Status head_pieces(const char* op,
                           const std::function<void(const core::WeightSpan&, std::size_t, std::size_t)>& each) const;
  // Row `row` of the head's table ([rows, cols] as the file stores it: the tied row, or lm_head.weight[:, row] of
  // the resident [d, vocab]), widened to float32 into out (cols floats).
  core::Status head_row(std::size_t row, std::span<float> out, const char* op) const;
  // The head's table's rows (the vocabulary it scores) and bytes (what one head_pieces pass reads).
  std::size_t head_rows() const { return head_table().rows; }
  std::uint64_t head_bytes() const { return head_table().where.end - head_table().where.begin; }
  // The embedding table's rows (the ids embedding_rows reads).
  std::size_t embedding_table_rows() const { return embedding_->rows; }
  // The hidden states one pass over the head's table serves (at least 1): head_batch_bytes of float32 logits.
  int head_batch(std::size_t vocab) const;
  // The bytes of one embedding row.
  std::uint64_t embedding_row_bytes() const { return embedding_->cols * embedding_->where.elem; }

 private:
  // Reads [at, at + n) of tensor t into chunk_; the error names `what` (e.g. "layer 3"), the tensor and the bytes.
  core::Status read_piece(const Tensor& t, const std::string& what, std::uint64_t at, std::uint64_t n, const char* op) const;
  // Rows [first, first + count) of `table` into chunk_, checked finite; their span at the table's width.
  core::Result<core::WeightSpan> read_rows(const Table& table, const std::string& what, std::size_t first,
                                           std::size_t count, const char* op) const;
  const Table& head_table() const { return head_ ? *head_ : *embedding_; }
  std::size_t rows_per_piece(const Table& t) const { return std::max<std::size_t>(1, sizes_.read_bytes / (t.cols * t.where.elem)); }

  std::vector<std::vector<Tensor>> layers_;
  std::vector<std::string> shard_names_;
  mutable std::map<std::string, TensorStorage> storage_;  // written by load(), which is const for the model's runs
  Read read_;
  const Parameters* params_ = nullptr;
  Sizes sizes_;
  mutable std::vector<std::uint8_t> chunk_;  // one piece of a read (read_bytes, held: a load allocates nothing)
  std::optional<Table> embedding_, head_;
  mutable std::vector<std::uint8_t> transposed_;  // an untied head's piece as [cols, count] (held, like chunk_)
};

}  // namespace attnscope::model
