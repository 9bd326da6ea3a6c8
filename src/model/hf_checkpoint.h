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
#include <set>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/check.h"
#include "core/status.h"
#include "io/safetensors.h"
#include "model/description.h"
#include "model/layer_stream.h"
#include "model/parameters.h"
#include "model/tensor_writer.h"
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
// Those model_types, in the order describe_decoder_hf lists them: the checkpoints whose layers loadPretrained's
// streamWeights keeps in the file (HfCheckpointLoader::begin_shards' stream refuses every other family). JS:
// as.streamableModelTypes, which the page asks before it streams (web/stream-weights.js).
std::vector<std::string> decoder_model_types();
// The encoder-decoder checkpoints' config.json (hf_seq2seq_config.cpp): t5, mt5, bart, mbart, marian.
core::Result<HfConfig> describe_seq2seq_hf(const HfFields& f, const std::string& model_type, const char* op);
bool is_seq2seq_model_type(std::string_view model_type);
// Those model_types, in the order describe_seq2seq_hf's families are written.
std::vector<std::string> seq2seq_model_types();
// generation_config.json over a config: eos_token_id, decoder_start_token_id, length_penalty, early_stopping
// (messages name generationConfig).
core::Status apply_generation_config(std::string_view json_text, HfConfig& c, const char* op);

// The decoder layer a tensor belongs to: N for "layers.N.…" or "….layers.N.…" (a decoder checkpoint's names), else -1.
int hf_layer_index(std::string_view tensor_name);
// Whether a decoder checkpoint's tensor is one of its token tables, which streamWeights keeps in the file with the
// layers (layer_stream.h): "model.embed_tokens.weight" (also the tied head) and "lm_head.weight".
bool hf_streamed_table(std::string_view tensor_name);

// Parses config.json (messages "<op>: config.<field> ...").
core::Result<HfConfig> describe_hf(std::string_view config_json, const char* op);

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
      const std::vector<std::uint64_t>& file_sizes, const char* op, bool weights8 = false, bool stream = false);
  // stream (loadPretrained's streamWeights; decoder-only checkpoints): every decoder layer's tensors stay in the
  // file (layer_stream.h): only their place is kept, and one layer buffer (layer 0's parameters) is allocated. Their
  // bytes need not be fed: feed_shard accepts a chunk past a gap when no tensor it must hold lies in the gap
  // (resident_ranges gives what must be fed), and a last empty chunk at the file's size ends each shard. Each layer's
  // tensors must have layer 0's shapes and dtypes (an error naming the tensor otherwise).
  // The byte ranges [begin, end) of shard `shard` that feed_shard must receive (every tensor it keeps, in order).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> resident_ranges(std::size_t shard) const;
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
  // All data fed: checks the values and builds the model. A streaming load needs `read` (layer_stream.h), which
  // the model keeps; `sizes`: its read piece and head batch (tests make them small).
  core::Result<std::unique_ptr<Transformer>> finish(LayerStream::Read read = nullptr, LayerStream::Sizes sizes = {});

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
    int layer = -1;                     // stream: the decoder layer it belongs to
    bool streamed = false;              // stream: a layer's or a token table's, read when it runs (not fed)
  };
  HfCheckpointLoader() = default;
  // stream: moves every decoder layer's tensors to stream_layers_ (checked against layer 0's); `elsewhere` gets the
  // parameters of layers 1.., which hold nothing.
  core::Status split_layers(std::set<std::string>& elsewhere);
  // stream: the token tables (hf_streamed_table) leave the feed too; `elsewhere` gets their parameters.
  void split_tables(std::set<std::string>& elsewhere);
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
  std::map<std::string, TensorStorage> storage_;
  // stream: each layer's tensors in the files, and the layer buffer's names (layer 0's parameters)
  bool stream_ = false;
  std::vector<std::vector<LayerStream::Tensor>> stream_layers_;
  std::vector<std::string> buffer_names_;
  std::optional<LayerStream::Table> embedding_table_, head_table_;
};

}  // namespace attnscope::model
