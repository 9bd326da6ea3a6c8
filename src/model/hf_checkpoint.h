// hf_checkpoint.h: a Hugging Face GPT-2 or BERT checkpoint (config.json + model.safetensors + tokenizer) as an
// attnscope model (JS `as.loadPretrained`). Layer: model (composes io/ and tokenizers/).
//
// config.json -> a ModelDescription (describe_hf): GPT-2 = learned positions, pre-norm causal blocks with
// tanh-GELU (activation_function), final norm ln_f, LM head tied to wte (or lm_head.weight); BERT = word +
// position + token-type embeddings and their LayerNorm, post-norm blocks with exact GELU (hidden_act), [CLS] …
// [SEP], the MLM head when the file has cls.predictions.*. A field value attnscope does not implement is an
// error naming the field.
//
// Weights are read in chunks: begin() takes the file's header (the first bytes and the total size), maps every
// tensor to attnscope's names (docs/model.md; with or without the base-model prefix, LayerNorm gamma/beta too),
// checks that each required tensor is present with its shape and a float dtype, and counts the parameters
// before allocating anything; feed() widens each chunk straight into the parameters (GPT-2's fused c_attn split
// into q/k/v, BERT's Linear weights transposed to [in, out]); finish() builds the model. Tensors the model
// does not use are skipped whatever their dtype or shape. The file never exists twice in memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/safetensors.h"
#include "model/description.h"
#include "model/parameters.h"
#include "model/text_encoder.h"
#include "model/transformer.h"

namespace attnscope::model {

enum class HfFamily { kGpt2, kBert };

struct HfConfig {
  HfFamily family = HfFamily::kGpt2;
  ModelDescription description;  // without the MLM head (it depends on the file)
  bool tied = true;              // GPT-2: the LM head is wte
};

// Parses config.json (messages "<op>: config.<field> ...").
core::Result<HfConfig> describe_hf(std::string_view config_json, const char* op);

// Where one file tensor's values go.
struct TensorTarget {
  std::string name;  // attnscope parameter
  enum class Op { kCopy, kTranspose, kColumns } op = Op::kCopy;  // kColumns: columns [first, first + cols) of [rows, total]
  int rows = 0, cols = 0, total = 0, first = 0;
};

class HfCheckpointLoader {
 public:
  // config: config.json text; tokenizer: the checkpoint's tokenizer (already built); header: the file's first
  // bytes (at least 8 + header length), file_size: its total size.
  static core::Result<std::unique_ptr<HfCheckpointLoader>> begin(std::string_view config_json, TextEncoder tokenizer,
                                                                 std::span<const std::uint8_t> header,
                                                                 std::uint64_t file_size, const char* op);
  // The file's bytes [offset, offset + bytes.size()); chunks arrive in order, any size.
  core::Status feed(std::uint64_t offset, std::span<const std::uint8_t> bytes);
  // All data fed: checks the values and builds the model.
  core::Result<std::unique_ptr<Transformer>> finish();

  std::uint64_t file_size() const { return file_size_; }
  std::uint64_t data_offset() const { return index_.data_offset; }

 private:
  struct Mapped {
    io::TensorEntry entry;
    std::vector<TensorTarget> targets;
    std::vector<std::uint8_t> pending;  // bytes of this tensor received so far, when a chunk splits an element
    std::uint64_t done = 0;             // elements written
  };
  HfCheckpointLoader() = default;
  core::Status write(Mapped& m, const std::uint8_t* src, std::uint64_t first_elem, std::uint64_t count);

  const char* op_ = "create";
  HfConfig cfg_;
  TextEncoder encoder_;
  Parameters params_;
  io::SafetensorsIndex index_;
  std::vector<Mapped> mapped_;  // sorted by begin offset
  std::map<std::string, std::span<float>> storage_;  // each target's storage in params_
  std::uint64_t file_size_ = 0, next_ = 0;
  std::size_t cursor_ = 0;  // first mapped tensor not complete
};

}  // namespace attnscope::model
