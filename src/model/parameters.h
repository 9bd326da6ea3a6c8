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
#include "core/weights.h"
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
    // A checkpoint's BF16 / F16 matrix kept at its stored width (issue 30): its bits, and `data` stays empty.
    std::vector<std::uint16_t> half;
    core::WeightType type = core::WeightType::kF32;
    // loadPretrained's weights8: a [in, out] matrix quantised to Q8_0 blocks (kernels.h layout), `data` empty.
    std::vector<std::int8_t> q8;
    std::vector<float> q8_scales;
    // loadPretrained's streamWeights: a decoder layer's tensor whose values stay in the user's file, read into the
    // layer buffer (layer_stream.h) before each forward of its layer; no storage here.
    bool streamed = false;
  };

  // Every parameter `m` has, with `init_weights` for matrices (kXavier for createModel, kRequired for
  // checkpoints). Counts the floats first: a model above kMaxParameters is an error naming `op` and the sizes.
  // `bytes_of(name, shape)`, when given, counts bytes at the stored width instead (a checkpoint whose BF16
  // matrices stay 2 bytes): a model above kMaxParameterBytes is then the error.
  static core::Result<Parameters> declare(
      const ModelDescription& m, Init init_weights, std::uint64_t seed, const char* op,
      const std::function<long long(const std::string&, const std::vector<int>&)>& bytes_of = nullptr);

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
  // Whether a BF16 / F16 file tensor for parameter `name` stays half-width: the matrices every reader takes through
  // weight() (projections, embedding and head tables); vectors and the position / token-type tables are widened.
  static bool stays_half(const std::string& name, const std::vector<int>& shape);
  // A [in, out] matrix stored as Q8_0 blocks (kernels.h): values [ceil(in/32)·32·out] and scales [ceil(in/32)·out].
  // `table`: a [rows, cols] table (a tied head's embedding) quantised along its rows, stored as the same layout of
  // its transpose [cols, rows] (ops/linear.h table_row: the head's logits are then a GEMV over it).
  struct Q8Storage {
    std::int8_t* q = nullptr;
    float* scales = nullptr;
  };
  Q8Storage allocate_q8(const std::string& name, bool table = false);
  // The same for a matrix kept half-width (type kBF16 or kF16): its 16-bit storage, zeros.
  std::span<std::uint16_t> allocate_half(const std::string& name, core::WeightType type);
  core::Status check_finite(const char* op, const char* arg,
                            const std::function<std::string(const std::string&)>& display) const;
  // One tensor (`shown`: its name in messages): a streamed layer's, each time it is read (layer_stream.h).
  core::Status check_finite(const std::string& name, const char* op, const char* arg, const std::string& shown) const;
  // The tensor's values stay in the file (Tensor::streamed): it counts as present, holds nothing.
  void mark_streamed(const std::string& name);

  bool has(const std::string& name) const;
  // The tensor's float32 values (empty span when absent, not loaded, or kept half-width: use weight()).
  std::span<const float> operator[](const std::string& name) const;
  // The tensor at its stored width: float32 or half-width (empty when absent or not loaded).
  core::WeightSpan weight(const std::string& name) const;
  const std::map<std::string, Tensor>& tensors() const { return tensors_; }
  long long count() const;  // values held (float32 and half-width)

 private:
  void declare_one(const std::string& name, std::vector<int> shape, Init init);
  std::map<std::string, Tensor> tensors_;  // node-stable: the spans handed out point into these vectors
};

// The first value of w (float32 or half-width) that is an infinity or a NaN, as the error every loaded tensor gets
// ("<op>: <arg>: tensor \"<shown>\" has a value (NaN) that is not finite"); Ok when there is none.
core::Status check_finite_values(const core::WeightSpan& w, const char* op, const char* arg, const std::string& shown);

}  // namespace attnscope::model
