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
// before allocating anything; feed() writes each chunk straight into the parameters: BF16 / F16 matrices keep their
// 16-bit values (widened later inside the kernels, so a 1B model's 2.5 GB of BF16 fits wasm32), everything else is
// widened to f32 (GPT-2's fused c_attn split
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

#include "core/check.h"
#include "core/status.h"
#include "io/safetensors.h"
#include "model/description.h"
#include "model/parameters.h"
#include "model/text_encoder.h"
#include "model/transformer.h"

namespace attnscope::model {

// kDecoder: the decoder-only checkpoints of API.md's "Modern decoder checkpoints" (model_type llama, mistral,
// qwen2, qwen3, gemma, gemma2, gemma3_text, phi3; hf_decoder_config.cpp).
// kSeq2Seq: the encoder-decoder checkpoints of API.md's "Encoder–decoder checkpoints" (model_type t5, mt5, bart,
// mbart, marian; hf_seq2seq_config.cpp).
enum class HfFamily { kGpt2, kBert, kDecoder, kSeq2Seq };

struct HfConfig {
  HfFamily family = HfFamily::kGpt2;
  ModelDescription description;  // without the MLM head (it depends on the file)
  bool tied = true;              // GPT-2: the LM head is wte
  // kDecoder only
  std::string model_type;            // 'llama', ..., 'phi3'
  bool fused = false;                // Phi-3: qkv_proj and gate_up_proj hold q|k|v and gate|up
  std::vector<std::int64_t> eos_ids;  // config.eos_token_id (an id or a list; empty when absent)
  // kSeq2Seq only
  std::int64_t decoder_start = -1;  // config.decoder_start_token_id, else generation config's, else bos_token_id
  std::int64_t bos = -1;            // config.bos_token_id
  std::int64_t generation_start = -1;  // generation_config.json's decoder_start_token_id
  bool t5 = false;                  // T5 tensor names (else BART's)
  double length_penalty = 1.0;      // beam search (generation_config.json, else config.json)
  ModelOptions::EarlyStopping early_stopping = ModelOptions::EarlyStopping::kFalse;
};

class HfFields;
// The decoder-only checkpoints' config.json (hf_decoder_config.cpp), with the defaults of Hugging Face's config
// class for `model_type`.
core::Result<HfConfig> describe_decoder_hf(const HfFields& f, const std::string& model_type, const char* op);
// generation_config.json's eos_token_id (an id or a list; empty when absent): messages name generationConfig.
core::Result<std::vector<std::int64_t>> generation_config_end_ids(std::string_view json_text, const char* op);
// Whether describe_decoder_hf reads this model_type.
bool is_decoder_model_type(std::string_view model_type);
// The encoder-decoder checkpoints' config.json (hf_seq2seq_config.cpp): t5, mt5, bart, mbart, marian.
core::Result<HfConfig> describe_seq2seq_hf(const HfFields& f, const std::string& model_type, const char* op);
bool is_seq2seq_model_type(std::string_view model_type);
// generation_config.json over a config: eos_token_id, decoder_start_token_id, length_penalty, early_stopping
// (messages name generationConfig).
core::Status apply_generation_config(std::string_view json_text, HfConfig& c, const char* op);

// Parses config.json (messages "<op>: config.<field> ...").
core::Result<HfConfig> describe_hf(std::string_view config_json, const char* op);

// Where one file tensor's values go.
struct TensorTarget {
  std::string name;  // attnscope parameter
  // kColumns: columns [first, first + cols) of [rows, total]; kRowsTransposed: rows [first, first + cols) of a
  // PyTorch Linear weight [total, rows] transposed to [rows, cols] (Phi-3's fused qkv_proj / gate_up_proj)
  enum class Op { kCopy, kTranspose, kColumns, kRowsTransposed } op = Op::kCopy;
  int rows = 0, cols = 0, total = 0, first = 0;
};

class HfCheckpointLoader {
 public:
  // config: config.json text; tokenizer: the checkpoint's tokenizer (already built); header: the file's first
  // bytes (at least 8 + header length), file_size: its total size.
  static core::Result<std::unique_ptr<HfCheckpointLoader>> begin(std::string_view config_json, TextEncoder tokenizer,
                                                                 std::span<const std::uint8_t> header,
                                                                 std::uint64_t file_size, const char* op);
  // weights8 (loadPretrained's option): every projection and head matrix is quantised to Q8_0 blocks (32
  // values along the input dimension, the last block zero-padded) as it loads (kernels.h; about 1.06 bytes per weight, approximate results); a
  // tied head's embedding table too (blocks along d_model; the lookup dequantises a row), an untied model's embedding
  // table stays at its stored width.
  // A sharded checkpoint (model.safetensors.index.json's files, in any order): each shard's header and size. A
  // tensor the model needs that is in no shard, or in two, is an error naming it.
  static core::Result<std::unique_ptr<HfCheckpointLoader>> begin_shards(
      std::string_view config_json, TextEncoder tokenizer, const std::vector<std::span<const std::uint8_t>>& headers,
      const std::vector<std::uint64_t>& file_sizes, const char* op, bool weights8 = false);
  // The file's bytes [offset, offset + bytes.size()); chunks arrive in order, any size.
  core::Status feed(std::uint64_t offset, std::span<const std::uint8_t> bytes);
  // The same for shard `shard` (begin_shards' order); each shard's chunks in order, shards in any order.
  core::Status feed_shard(std::size_t shard, std::uint64_t offset, std::span<const std::uint8_t> bytes);
  // generation_config.json's eos_token_id (an id or a list), replacing config.json's for generate.
  void set_end_ids(std::vector<std::int64_t> ids) {
    cfg_.eos_ids = std::move(ids);
    end_ids_arg_ = "generationConfig";
  }
  // generation_config.json (apply_generation_config): end ids, and for encoder-decoders the start token and the
  // beam search settings. End ids it gives are blamed on it in messages.
  core::Status set_generation_config(std::string_view json_text) {
    const std::vector<std::int64_t> before = cfg_.eos_ids;
    ATTN_TRY(apply_generation_config(json_text, cfg_, op_));
    if (cfg_.eos_ids != before) end_ids_arg_ = "generationConfig";
    return core::Status::Ok();
  }
  // All data fed: checks the values and builds the model.
  core::Result<std::unique_ptr<Transformer>> finish();

  std::uint64_t file_size() const { return shards_.front().size; }
  // config.model_type for the decoder and encoder-decoder checkpoints, else 'gpt2' / 'bert' (before finish()).
  std::string model_type() const {
    if (cfg_.family == HfFamily::kDecoder || cfg_.family == HfFamily::kSeq2Seq) return cfg_.model_type;
    return cfg_.family == HfFamily::kBert ? "bert" : "gpt2";
  }
  std::uint64_t data_offset() const { return shards_.front().index.data_offset; }

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
  const char* end_ids_arg_ = "config";  // where cfg_.eos_ids came from, for messages
  HfConfig cfg_;
  TextEncoder encoder_;
  Parameters params_;
  struct Shard {
    std::string name;  // "weights", or "weights[i]" for shard i
    io::SafetensorsIndex index;
    std::vector<Mapped> mapped;  // sorted by begin offset
    std::uint64_t size = 0, next = 0;
    std::size_t cursor = 0;  // first mapped tensor not complete
  };
  std::vector<Shard> shards_;
  // each target's storage in params_: float32, or (a BF16 / F16 matrix, kept at its width: issue 30) 16-bit
  struct Storage {
    float* f32 = nullptr;
    std::uint16_t* half = nullptr;
    Parameters::Q8Storage q8;           // weights8: quantised block by block as the file's rows arrive
    std::vector<float> pending;         // weights8: the current block's values (32)
    int out = 0, in = 0;                // weights8: the PyTorch weight's [out, in]
  };
  std::map<std::string, Storage> storage_;
};

}  // namespace attnscope::model
