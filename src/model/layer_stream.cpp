// layer_stream.cpp: reading a streamed decoder layer into the layer buffer, and the token tables' rows and pieces
// (layer_stream.h). Layer: model.
#include "model/layer_stream.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "core/text.h"
#include "ops/linear.h"

namespace attnscope::model {

namespace {

core::WeightType type_of(const std::string& dtype) {
  return dtype == "BF16" ? core::WeightType::kBF16 : dtype == "F16" ? core::WeightType::kF16 : core::WeightType::kF32;
}

// `count` values at `data` as a weight span of the file's dtype (the bytes are little-endian, as wasm and x86 are).
core::WeightSpan span_of(const std::string& dtype, const void* data, std::size_t count) {
  const core::WeightType t = type_of(dtype);
  if (t == core::WeightType::kF32) return std::span<const float>(static_cast<const float*>(data), count);
  return core::WeightSpan(static_cast<const std::uint16_t*>(data), count, t);
}

}  // namespace

LayerStream::LayerStream(std::vector<std::vector<Tensor>> layers, std::vector<std::string> shard_names,
                         std::map<std::string, TensorStorage> storage, Read read, Sizes sizes)
    : layers_(std::move(layers)), shard_names_(std::move(shard_names)), storage_(std::move(storage)),
      read_(std::move(read)), sizes_(sizes) {
  sizes_.read_bytes = std::max<std::size_t>(4, sizes_.read_bytes / 4 * 4);
  chunk_.resize(sizes_.read_bytes);  // held for the model's life: a load allocates nothing
}

int LayerStream::head_batch(std::size_t vocab) const {
  return static_cast<int>(std::clamp(sizes_.head_batch_bytes / (4.0 * static_cast<double>(std::max<std::size_t>(vocab, 1))),
                                     1.0, 1e9));
}

void LayerStream::set_tables(Table embedding, std::optional<Table> head) {
  embedding_ = std::move(embedding);
  head_ = std::move(head);
  // a piece holds at least one row (a d_model of 4,096 float32 is 16 KB of the 8 MiB)
  std::size_t row = embedding_->cols * embedding_->where.elem;
  if (head_) {
    row = std::max(row, head_->cols * head_->where.elem);
    // the untied head's transposed piece: as large as a piece (held, like chunk_)
    transposed_.resize(rows_per_piece(*head_) * head_->cols * head_->where.elem);
  }
  if (chunk_.size() < row) chunk_.resize(row);
}

std::uint64_t LayerStream::layer_bytes() const {
  std::uint64_t most = 0;
  for (const auto& layer : layers_) {
    std::uint64_t bytes = 0;
    for (const Tensor& t : layer) bytes += t.end - t.begin;
    most = std::max(most, bytes);
  }
  return most;
}

core::Status LayerStream::read_piece(const Tensor& t, const std::string& what, std::uint64_t at, std::uint64_t n,
                                     const char* op) const {
  const std::string failed = read_ ? read_(t.shard, at, std::span<std::uint8_t>(chunk_.data(), static_cast<std::size_t>(n)))
                                   : std::string("no reader was given");
  if (failed.empty()) return core::Status::Ok();
  return core::invalid_error(op, "weights",
                             "weights: reading " + what + " (tensor " + core::quote_name(t.file_name) + ", bytes " +
                                 std::to_string(at) + " to " + std::to_string(at + n) + " of " +
                                 shard_names_.at(t.shard) + ") failed: " + failed);
}

core::Status LayerStream::load(std::size_t layer, const char* op) const {
  const std::string what = "layer " + std::to_string(layer);
  for (const Tensor& t : layers_.at(layer)) {
    std::vector<TensorStorage*> storage;
    for (const TensorTarget& target : t.targets) storage.push_back(&storage_.at(target.name));
    // pieces of whole elements (read_bytes is a multiple of every dtype's width)
    for (std::uint64_t at = t.begin; at < t.end;) {
      const std::uint64_t n = std::min<std::uint64_t>(sizes_.read_bytes, t.end - at);
      ATTN_TRY(read_piece(t, what, at, n, op));
      write_elements(t.dtype, t.elem, t.targets, storage, chunk_.data(), (at - t.begin) / t.elem, n / t.elem);
      at += n;
    }
    if (params_ != nullptr) {
      for (const TensorTarget& target : t.targets) ATTN_TRY(params_->check_finite(target.name, op, "weights", t.file_name));
    }
  }
  return core::Status::Ok();
}

core::Result<core::WeightSpan> LayerStream::read_rows(const Table& table, const std::string& what, std::size_t first,
                                                      std::size_t count, const char* op) const {
  const std::uint64_t row = table.cols * table.where.elem;
  ATTN_TRY(read_piece(table.where, what, table.where.begin + first * row, count * row, op));
  const core::WeightSpan span = span_of(table.where.dtype, chunk_.data(), count * table.cols);
  // a streamed table is checked as it is read, as a streamed layer is (a resident load checks it once)
  ATTN_TRY(check_finite_values(span, op, "weights", table.where.file_name));
  return span;
}

core::Status LayerStream::embedding_rows(std::span<const std::int32_t> ids, std::span<float> out, const char* op) const {
  const Table& e = *embedding_;
  // the positions in order of their ids: each distinct id read once, adjacent ids in one read
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= 0 && static_cast<std::size_t>(ids[i]) < e.rows) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ids[a] < ids[b]; });
  const std::size_t most = rows_per_piece(e);
  for (std::size_t i = 0; i < order.size();) {
    const auto first = static_cast<std::size_t>(ids[order[i]]);
    std::size_t last = first, j = i;  // the run of adjacent ids first..last, positions order[i..j)
    while (j < order.size()) {
      const auto id = static_cast<std::size_t>(ids[order[j]]);
      if (id > last + 1 || (id == last + 1 && id - first + 1 > most)) break;
      last = id;
      ++j;
    }
    auto rows = read_rows(e, "the embedding table", first, last - first + 1, op);
    if (!rows.ok()) return rows.status();
    for (; i < j; ++i) {
      ops::table_row(rows.value(), static_cast<std::size_t>(ids[order[i]]) - first, e.cols,
                     out.subspan(order[i] * e.cols, e.cols));
    }
  }
  return core::Status::Ok();
}

core::Status LayerStream::head_pieces(
    const char* op, const std::function<void(const core::WeightSpan&, std::size_t, std::size_t)>& each) const {
  const Table& t = head_table();
  const std::string what = head_ ? "the LM head" : "the embedding table";
  const std::size_t step = rows_per_piece(t);
  for (std::size_t first = 0; first < t.rows; first += step) {
    const std::size_t count = std::min(step, t.rows - first);
    auto rows = read_rows(t, what, first, count, op);
    if (!rows.ok()) return rows.status();
    if (!head_) {
      each(rows.value(), first, count);
      continue;
    }
    // lm_head.weight [vocab, d] is held transposed, [d, vocab] (the loader's kTranspose): this piece's rows become
    // the columns of a [d, count] matrix through the same writer, so the head's GEMV sees what a resident one sees
    TensorStorage st;
    const bool half = !rows.value().is_f32();
    if (half) {
      st.half = reinterpret_cast<std::uint16_t*>(transposed_.data());
    } else {
      st.f32 = reinterpret_cast<float*>(transposed_.data());
    }
    const TensorTarget target{"lm_head.weight", TensorTarget::Op::kTranspose, static_cast<int>(count),
                              static_cast<int>(t.cols), 0, 0};
    write_elements(t.where.dtype, t.where.elem, {target}, {&st}, chunk_.data(), 0, count * t.cols);
    each(span_of(t.where.dtype, transposed_.data(), count * t.cols), first, count);
  }
  return core::Status::Ok();
}

core::Status LayerStream::head_row(std::size_t row, std::span<float> out, const char* op) const {
  const Table& t = head_table();
  auto rows = read_rows(t, head_ ? "the LM head" : "the embedding table", row, 1, op);
  if (!rows.ok()) return rows.status();
  ops::table_row(rows.value(), 0, t.cols, out);
  return core::Status::Ok();
}

}  // namespace attnscope::model
