// layer_stream.h: a decoder checkpoint whose layers' weights stay in the user's file (loadPretrained's
// streamWeights). Layer: model.
//
// The loader (hf_checkpoint.h) keeps, for every decoder layer, where its tensors are in the file (shard, byte
// range, dtype, shape) instead of their bytes; what every forward needs (embedding table and tied head, final norm,
// RoPE tables) stays resident. All layers share ONE layer buffer: layer 0's parameters, whose storage every block
// of the stack reads (their shapes and dtypes are checked equal when the checkpoint loads). Before each layer's
// forward, run_stack (stack.h) calls load(layer) on the orchestrating thread — never from a pool thread, since the
// read callback may call into JS — which reads the layer's bytes through `Read` in pieces of kReadBytes, writes
// them to the buffer exactly as the loader writes a resident layer (tensor_writer.h: BF16 / F16 matrices stay 2
// bytes a value) and checks them finite. The forward is therefore bit-identical to a resident model's; its cost is
// one read of the layer's bytes per layer and run (and per generated token).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/parameters.h"
#include "model/tensor_writer.h"

namespace attnscope::model {

class LayerStream {
 public:
  // Reads bytes [offset, offset + dst.size()) of shard `shard` into dst; returns "" or what went wrong (e.g. the
  // file changed size). Called on the orchestrating thread only.
  using Read = std::function<std::string(std::size_t shard, std::uint64_t offset, std::span<std::uint8_t> dst)>;
  static constexpr std::size_t kReadBytes = 8u << 20;

  // One file tensor of a layer: where it is, and the layer buffer's targets it goes to.
  struct Tensor {
    std::string file_name;  // as the file names it (messages)
    std::size_t shard = 0;
    std::uint64_t begin = 0, end = 0;  // absolute byte offsets in the shard's file
    std::string dtype;
    std::size_t elem = 0;
    std::vector<TensorTarget> targets;  // their names are layer 0's parameters (the buffer)
  };

  // layers[i]: layer i's tensors; shard_names: "weights" or "weights[s]" (messages); storage: the buffer, by layer 0
  // parameter name (pointers into the model's Parameters, which outlive the stream).
  LayerStream(std::vector<std::vector<Tensor>> layers, std::vector<std::string> shard_names,
              std::map<std::string, TensorStorage> storage, Read read);

  // The model's parameters, for the finiteness check (set by the Transformer that owns both).
  void bind(const Parameters* params) { params_ = params; }
  // Reads layer `layer` into the buffer. Errors name `op` (run, generate) and the file and tensor.
  core::Status load(std::size_t layer, const char* op) const;
  std::size_t layers() const { return layers_.size(); }
  // The bytes one load reads (the largest layer's).
  std::uint64_t layer_bytes() const;

 private:
  std::vector<std::vector<Tensor>> layers_;
  std::vector<std::string> shard_names_;
  mutable std::map<std::string, TensorStorage> storage_;  // written by load(), which is const for the model's runs
  Read read_;
  const Parameters* params_ = nullptr;
  mutable std::vector<std::uint8_t> chunk_;  // one piece of a read (kReadBytes, held: a load allocates nothing)
};

}  // namespace attnscope::model
