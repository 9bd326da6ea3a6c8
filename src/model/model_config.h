// model_config.h: what a caller asks for — the configuration of a transformer pipeline (JS
// `createModel(config)`) with every default, the enum spellings of the JS API, and the run options.
// Layer: model. Defaults live here and only here: the JS layer reads them back (`model.config`).
// config.cpp turns a ModelConfig into a ModelDescription (description.h), the one thing the runner reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "model/description.h"

namespace attnscope::model {

enum class Architecture { kEncoder, kDecoder, kEncoderDecoder };  // 'encoder' | 'decoder' | 'encoder-decoder'
enum class TokenizerKind { kWord, kChar, kBpe };                 // 'word' | 'char' | { kind: 'bpe', ... }
enum class FirstAttention { kLearned, kSimple };                 // 'learned' | 'simple'
enum class TraceLevel { kFull, kWeights, kNone };                // run options.trace

struct ModelConfig {
  Architecture architecture = Architecture::kEncoder;
  TokenizerKind tokenizer = TokenizerKind::kWord;
  std::string bpe_vocab, bpe_merges;  // tokenizer kind 'bpe': encoder.json text and vocab.bpe text
  int d_model = 16;
  int num_heads = 2;
  int num_layers = 2;                    // layers of the (first) stack: the encoder, or the decoder-only stack
  std::optional<int> num_decoder_layers;  // encoder-decoder only: decoder layers; default num_layers
  std::optional<int> d_ff;                // default 4 * d_model
  bool norm_first = false;
  Activation activation = Activation::kRelu;
  double eps = 1e-5;
  PositionalKind positional = PositionalKind::kSinusoidal;
  double positional_base = 10000.0;
  int max_positions = 512;  // rows of positional.weight (learned); sequences longer than this are an error
  FirstAttention attention = FirstAttention::kLearned;
  std::uint64_t seed = 42;
  // User rows per token (word/char: the token text; bpe: the vocab entry, e.g. "Ġjourney"), length d_model.
  std::vector<std::pair<std::string, std::vector<float>>> embeddings;
  std::vector<std::uint8_t> weights;  // safetensors bytes (empty: all seeded)
  int top_k = 5;
  int max_tokens = 1024;
};

// What one run keeps (JS run options). `level` applies to every layer; layers listed in `full_layers` (index
// in the stack; the encoder stack of an encoder-decoder is `source`, the decoder stack `target`) keep the full
// trace whatever the level. `positional_rows` > 0 also returns the positional table's first rows (the page's
// plot). `pad_to` / `pad_multiple` (0 = none) append '<pad>' keys (see Transformer::run).
struct RunOptions {
  TraceLevel level = TraceLevel::kFull;
  std::vector<int> full_layers;         // main side (text or target)
  std::vector<int> full_source_layers;  // encoder-decoder: source side
  int positional_rows = 0;
  int pad_to = 0;
  int pad_multiple = 0;
  std::optional<int> top_k;  // default: the model's
  bool log_probs = false;    // JS logProbs: ln p(token i+1 | tokens 0..i) of the main side (RunTrace::log_probs)
  // JS ablate: (layer, head) pairs of the main side whose heads are ablated (MhaArgs::head_keep), 0-based.
  std::vector<std::pair<int, int>> ablate;
  // JS ablate[i].mean: empty (zero ablation) or the values the head's weights · V becomes — head_dim numbers (the
  // same at every position: mean ablation, model/inside.h head_means) or n·head_dim (one row per position).
  std::vector<std::vector<float>> ablate_values;
  // JS lens: the logit lens' top-k at every layer and position of the main side (LayerTrace::lens_*); absent: off.
  std::optional<int> lens;
  // JS heads: which self-attention maps of the main side are materialised. kAll (default): as `level` says.
  // kNone / kList: layers not in full_layers keep no [H, n, n] weights and run tiled attention
  // (attention/tiled.h); the listed (layer, head) maps are computed alone, in RunTrace::heads. Needs level kNone.
  enum class Heads { kAll, kNone, kList };
  Heads heads_mode = Heads::kAll;
  std::vector<std::pair<int, int>> heads;
  // JS summaries: LayerTrace::summary for every self-attention layer of both sides (topK keys per row).
  bool summaries = false;
  int summary_top_k = 5;
  // JS layerOutputs: whether every layer of the main side keeps its [n, d_model] output (LayerTrace::output; layers
  // kept in full always do). Absent: yes, except with heads kNone / kList, where nothing the long view draws reads
  // them (16 MB a layer at 2,048 tokens of a Llama-3.2-1B shape, 1.07 GB for 16 layers at 8,192).
  std::optional<bool> layer_outputs;
};

// Enum spellings of the JS API, in one place. Parsing an unknown spelling is an error naming the argument and
// the accepted values ("architecture ('decoderonly') must be one of 'encoder', 'decoder', 'encoder-decoder'").
core::Result<Architecture> parse_architecture(std::string_view s, const char* op, const char* arg);
core::Result<Activation> parse_activation(std::string_view s, const char* op, const char* arg);
core::Result<PositionalKind> parse_positional(std::string_view s, const char* op, const char* arg);
core::Result<FirstAttention> parse_first_attention(std::string_view s, const char* op, const char* arg);
core::Result<TokenizerKind> parse_tokenizer_kind(std::string_view s, const char* op, const char* arg);
core::Result<TraceLevel> parse_trace_level(std::string_view s, const char* op, const char* arg);
const char* name_of(Architecture a);
const char* name_of(Activation a);
const char* name_of(PositionalKind p);
const char* name_of(FirstAttention a);
const char* name_of(TokenizerKind t);

// Checks a createModel config (sizes, limits, divisibility, combinations; messages "create: dModel (10) must be
// divisible by numHeads (3)"), applies the defaults that depend on other members (dFF, numDecoderLayers) and
// returns the model it describes.
core::Result<ModelDescription> describe(ModelConfig& c);

// Operation names the model layer reports in Status::function; the bindings name them as the JS call the
// user made (createModel / loadPretrained / loadBundled, run / generate).
inline constexpr const char* kOpCreate = "create";
inline constexpr const char* kOpRun = "run";
inline constexpr const char* kOpGenerate = "generate";

}  // namespace attnscope::model
