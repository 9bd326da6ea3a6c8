// transformer.h: a model = a description (description.h) + its parameters (parameters.h) + a tokenizer
// (text_encoder.h); run(text) -> every intermediate (trace.h) and the heads' predictions; generate() decodes
// greedily with a key/value cache. Layer: model. Built by create() from a createModel config, or from the
// pieces by a checkpoint loader (hf_checkpoint.h) or the bundled-model loader (bundle.h).
//
// Runs: text -> tokens (text_encoder) -> rows (embed) -> stacks of blocks (stack, block) -> heads (heads).
// Encoder-decoder: the source through the encoder stack, the target through the decoder stack (causal
// self-attention + cross-attention over the encoder output).
//
// A Transformer is immutable after creation: run() is const, keeps nothing between calls and is repeatable bit
// for bit. Errors are values naming the operation (kOpCreate, kOpRun, kOpGenerate) and the argument; the
// bindings name the operation as the JS call the user made. Nothing aborts.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "model/description.h"
#include "model/embed.h"
#include "model/layer_stream.h"
#include "model/model_config.h"
#include "model/parameters.h"
#include "model/stack.h"
#include "model/text_encoder.h"
#include "model/trace.h"

namespace attnscope::model {

// The settings of a model that are not its architecture.
struct ModelOptions {
  std::uint64_t seed = 42;  // seeded parameters and token rows
  int top_k = 5;            // default size of `next` / mask predictions
  int max_tokens = 1024;    // the longest text
  // generate stops at any of these (a decoder checkpoint's config or generation_config eos_token_id, an id or a
  // list); empty: the tokenizer's end token
  std::vector<std::int32_t> end_ids;
  // Encoder-decoder checkpoints (API.md "Encoder–decoder checkpoints"): >= 0 is the decoder start token; then the
  // source is tokenized with the tokenizer's post-processor and the target without it, after this id.
  std::int32_t decoder_start = -1;
  // Beam search (generation_config.json, else config.json): BeamHypotheses' length_penalty and early_stopping
  // (kNever is early_stopping "never").
  double length_penalty = 1.0;
  enum class EarlyStopping { kFalse, kTrue, kNever } early_stopping = EarlyStopping::kFalse;
};

struct Generation {
  std::vector<std::int32_t> ids;  // the new tokens (the end token excluded)
  std::vector<std::string> tokens;
  std::string text;
  bool stopped_at_end = false;  // the end token was produced (else max_new_tokens ran out)
  // beam search: the hypothesis' score, sum of log-probabilities / generated_len^length_penalty (Hugging Face's
  // sequences_scores); NaN for greedy decoding
  double score = std::numeric_limits<double>::quiet_NaN();
};

class Transformer {
 public:
  // createModel: validates the config (messages "create: <arg> ..."), builds the tokenizer, seeds every
  // parameter and loads `weights` over them ("create: weights: ...").
  static core::Result<std::unique_ptr<Transformer>> create(ModelConfig config);
  // A model from its pieces (checkpoints, bundled models): the parameters must be complete.
  // `stream`: the decoder layers' weights stay in the user's file (layer_stream.h), read into one layer buffer
  // before each layer's forward.
  static core::Result<std::unique_ptr<Transformer>> assemble(ModelDescription m, TextEncoder encoder, Parameters params,
                                                             ModelOptions options, const char* op,
                                                             std::unique_ptr<LayerStream> stream = nullptr);
  ~Transformer();

  // Encoder or decoder: one text. Encoder-decoder: the text is both source and target.
  // options.pad_to (JS run option padTo) / pad_multiple: append '<pad>' tokens (id -1, zero embedding row, the
  // usual positional row) up to pad_to positions, blocked as keys for every query (PyTorch key_padding_mask),
  // so the real rows equal the unpadded run's; pad query rows attend to the real keys. Encoder-decoder: each
  // side is padded, and source pads are also blocked in cross-attention. next uses the last real token.
  core::Result<RunTrace> run(std::string_view text, const RunOptions& options) const;
  // Encoder-decoder: source through the encoder, target through the decoder.
  core::Result<RunTrace> run(std::string_view source, std::string_view target, const RunOptions& options) const;
  // Encoder-decoder: the target given as ids (JS run({ source, targetIds })), after the start token.
  core::Result<RunTrace> run_ids(std::string_view source, const std::vector<std::int32_t>& target_ids,
                                 const RunOptions& options) const;
  // Shorthands used by the tests.
  core::Result<RunTrace> run(std::string_view text, TraceLevel level, int pad_to = 0) const;
  core::Result<RunTrace> run(std::string_view source, std::string_view target, TraceLevel level, int pad_to = 0) const;

  // Greedy decoding (argmax, ties to the smaller id) with a key/value cache: decoder-only models continue the
  // text; encoder-decoder models read it as the source and return the target. Stops at the end token or after
  // max_new_tokens. Models without a next-token head or end token cannot generate (an error saying so).
  core::Result<Generation> generate(std::string_view input, int max_new_tokens) const;
  // Beam search (num_beams > 1, encoder-decoder models; generate_beam.cpp): Hugging Face's BeamSearchScorer with
  // length_penalty and early_stopping (ModelOptions); num_beams 1 is generate().
  core::Result<Generation> generate(std::string_view input, int max_new_tokens, int num_beams) const;

  // createModel's config with its defaults; nullptr for a model assembled from a description (a checkpoint or a
  // bundled model), whose facts are description().
  const ModelConfig* config() const { return cfg_ ? &*cfg_ : nullptr; }
  const ModelDescription& description() const { return m_; }
  const ModelOptions& options() const { return opt_; }
  const TextEncoder& encoder() const { return enc_; }
  // Names and shapes of every parameter the model holds (the safetensors table).
  std::vector<std::pair<std::string, std::vector<int>>> parameter_shapes() const;
  const Parameters& parameters() const { return params_; }
  // The layer stream of a model loaded with streamWeights (nullptr otherwise).
  const LayerStream* stream() const { return stream_.get(); }

 private:
  friend class Inside;  // inside.h: re-runs the stack from a layer on (patching, ablation sweeps)
  Transformer(ModelDescription m, TextEncoder enc, Parameters params, ModelOptions opt);
  void bind_weights();
  EmbedArgs embed_args(const char* op) const;
  // What run reads through the next-token head: next (top k), the lens (run option lens: every layer's lens_* of
  // the main side, trace.h) and logProbs, in one lm_logits_rows call (a streamed head reads its table once for all).
  core::Status run_heads(const EmbedArgs& ea, const RunVocab& vocab, const RunOptions& o, int k, RunTrace& out) const;
  core::Result<RunTrace> run_impl(std::string_view source, std::string_view target, bool two_sided,
                                  const RunOptions& o, const std::vector<std::int32_t>* target_ids = nullptr) const;
  // The source side's embedding arguments (EmbeddingSpec::per_side: its own positions and norm).
  EmbedArgs source_args(const EmbedArgs& a) const;
  // Greedy or beam decoding's shared first step: the source through the encoder stack.
  core::Result<SideTrace> encode_source(const EmbedArgs& ea, std::string_view input, RunVocab& vocab) const;
  core::Result<Generation> beam_search(std::string_view input, int max_new_tokens, int num_beams) const;
  // The stack arguments of decoding (nothing traced): the encoder (source) or the decoder with its caches.
  StackArgs decoding_args(bool source, std::vector<KvCache>* caches) const;
  // The ids generation stops at, or the error of a model that cannot generate (or of a negative max_new_tokens).
  core::Result<std::vector<std::int32_t>> generation_end_ids(int max_new_tokens) const;
  // How many decoder positions generation may fill (the position table, maxTokens).
  int decoding_positions() const;
  // tokens and text of the new ids (an encoder-decoder checkpoint's text skips its special tokens)
  void finish_generation(Generation& g, const RunVocab& vocab) const;

  std::optional<ModelConfig> cfg_;
  ModelDescription m_;
  TextEncoder enc_;
  Parameters params_;
  ModelOptions opt_;
  UserRows user_;
  StackWeights main_w_, source_w_;
  std::unique_ptr<LayerStream> stream_;
};

}  // namespace attnscope::model
