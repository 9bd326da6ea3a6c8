// parameters.h: a model's parameters by name — which ones a description has, their shapes, seeded values, and
// loading from a file. Layer: model. Names and layouts: description.h and docs/model.md ([in, out]).
// Every tensor is checked once, when it is stored (shape and finiteness); runs never re-check weights.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/description.h"

namespace attnscope::model {

class Parameters {
 public:
  enum class Init {
    kXavier,    // seeded Xavier/Glorot-uniform [in, out] (embedding.h)
    kZeros,     // biases, LayerNorm beta
    kOnes,      // LayerNorm gamma
    kPositions, // seeded rows of the learned positional table
    kRequired,  // no value until loaded: a model from a checkpoint
    kOptional,  // may be loaded (createModel's embedding.weight for BPE); absent otherwise
  };
  struct Tensor {
    std::vector<int> shape;
    std::vector<float> data;  // empty until loaded for kRequired / kOptional
    Init init = Init::kZeros;
  };

  // Every parameter `m` has, with `init_weights` for matrices (kXavier for createModel, kRequired for
  // checkpoints). Counts the floats first: a model above kMaxParameters is an error naming `op` and the sizes.
  static core::Result<Parameters> declare(const ModelDescription& m, Init init_weights, std::uint64_t seed,
                                          const char* op);

  // Fills the seeded tensors (kXavier / kZeros / kOnes / kPositions); call after declare() for createModel.
  void seed(std::uint64_t seed);

  // Stores one tensor by name after checking it is a parameter, has the declared shape and finite values.
  // Errors: "<op>: <arg>: tensor \"x\" has shape [16,8], expected [16,16]" etc.
  core::Status store(const std::string& name, const std::vector<int>& shape, std::vector<float> data, const char* op,
                     const char* arg);
  // After loading a checkpoint: every kRequired tensor must be present ("... tensor \"x\" is missing").
  // `display` names a parameter as the file names it (the Hugging Face name for checkpoints).
  core::Status check_complete(const char* op, const char* arg,
                              const std::function<std::string(const std::string&)>& display) const;

  // Streaming loads (checkpoints): the tensor's storage, allocated (zeros) to its shape, written in place; then
  // check_finite() once everything has arrived.
  std::span<float> allocate(const std::string& name);
  core::Status check_finite(const char* op, const char* arg,
                            const std::function<std::string(const std::string&)>& display) const;

  bool has(const std::string& name) const;
  // The tensor's values (empty span when absent or not loaded).
  std::span<const float> operator[](const std::string& name) const;
  const std::map<std::string, Tensor>& tensors() const { return tensors_; }
  long long count() const;  // floats held

 private:
  void declare_one(const std::string& name, std::vector<int> shape, Init init);
  std::map<std::string, Tensor> tensors_;  // node-stable: the spans handed out point into these vectors
};

}  // namespace attnscope::model
