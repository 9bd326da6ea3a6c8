// layer_stream.cpp: reading a streamed decoder layer into the layer buffer (layer_stream.h). Layer: model.
#include "model/layer_stream.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "core/text.h"

namespace attnscope::model {

LayerStream::LayerStream(std::vector<std::vector<Tensor>> layers, std::vector<std::string> shard_names,
                         std::map<std::string, TensorStorage> storage, Read read)
    : layers_(std::move(layers)), shard_names_(std::move(shard_names)), storage_(std::move(storage)),
      read_(std::move(read)) {
  chunk_.resize(kReadBytes);  // held for the model's life: a load allocates nothing
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

core::Status LayerStream::load(std::size_t layer, const char* op) const {
  for (const Tensor& t : layers_.at(layer)) {
    std::vector<TensorStorage*> storage;
    for (const TensorTarget& target : t.targets) storage.push_back(&storage_.at(target.name));
    // pieces of whole elements (kReadBytes is a multiple of every dtype's width)
    for (std::uint64_t at = t.begin; at < t.end;) {
      const std::uint64_t n = std::min<std::uint64_t>(kReadBytes, t.end - at);
      const std::string failed = read_ ? read_(t.shard, at, std::span<std::uint8_t>(chunk_.data(), static_cast<std::size_t>(n)))
                                       : std::string("no reader was given");
      if (!failed.empty()) {
        return core::invalid_error(op, "weights",
                                   "weights: reading layer " + std::to_string(layer) + " (tensor " +
                                       core::quote_name(t.file_name) + ", bytes " + std::to_string(at) + " to " +
                                       std::to_string(at + n) + " of " + shard_names_.at(t.shard) +
                                       ") failed: " + failed);
      }
      write_elements(t.dtype, t.elem, t.targets, storage, chunk_.data(), (at - t.begin) / t.elem, n / t.elem);
      at += n;
    }
    if (params_ != nullptr) {
      for (const TensorTarget& target : t.targets) ATTN_TRY(params_->check_finite(target.name, op, "weights", t.file_name));
    }
  }
  return core::Status::Ok();
}

}  // namespace attnscope::model
