// transformer.h: the model pipeline behind JS `createModel(config)` / `model.run(text)`:
//   text -> tokens -> embedding rows (+ positional encodings) -> a stack of attention layers -> every
//   intermediate (trace.h) and a top-k next-token distribution.
// Layer: model (composes tokenizers/, io/, ops/, attention/ and the encoder/decoder layers). Full design,
// defaults and the safetensors naming table: docs/model.md.
//
// Architectures: 'encoder' (numLayers encoder layers, bidirectional self-attention), 'decoder' (numLayers
// layers with causal self-attention and no cross-attention, i.e. encoder layers with the causal mask; GPT
// style), 'encoder-decoder' (encoder stack over the source, then a decoder stack — causal self-attention +
// cross-attention over the encoder output — over the target, as torch.nn.Transformer without its final norms).
// attention 'simple' makes the first layer of the first stack the weightless X·Xᵀ -> softmax -> ·X attention
// (its output is the context; no residual, no FFN).
//
// Token ids: bpe -> GPT-2 ids; word/char -> the run's vocabulary, built from the text in order of first
// appearance (encoder-decoder: the source, then the target), so ids are 0, 1, 2, ... per run.
// Embedding row of a token: the user's `embeddings[token]` if given, else row `id` of the loaded
// `embedding.weight` (bpe only), else the seeded row (embedding.h) keyed by the id (bpe) or the FNV-1a hash of
// the token text (word/char) — the same word always gets the same vector whatever the text.
// Next token: logits = h_last · Eᵀ over the vocabulary (word/char: the run's vocabulary; bpe: ids
// 0..vocab_size-1) with the same rows (tied), softmax in double, the top_k largest (ties: smaller id first).
//
// A Transformer is immutable after create(): run() is const, keeps nothing between calls and is repeatable
// bit for bit. Errors are values naming "createModel" or "run" and the argument; nothing aborts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attention/multi_head.h"
#include "core/status.h"
#include "model/encoder_layer.h"
#include "model/model_config.h"
#include "model/trace.h"

namespace attnscope::tokenizers {
class BpeTokenizer;
}

namespace attnscope::model {

class Transformer {
 public:
  // Validates the config (messages "createModel: <arg> ..."), builds the tokenizer, loads `weights`
  // (messages "createModel: weights: ...") and seeds every parameter the file does not hold.
  static core::Result<std::unique_ptr<Transformer>> create(ModelConfig config);
  ~Transformer();

  // Encoder or decoder architecture: one text. Encoder-decoder: the text is both source and target.
  // pad_to (JS run option padTo; 0 = none): append '<pad>' tokens (id -1, zero embedding row, the usual
  // positional row) up to pad_to positions, blocked as keys for every query (PyTorch key_padding_mask), so the
  // real rows equal the unpadded run's; pad query rows attend to the real keys. Encoder-decoder: each side is
  // padded to pad_to, and source pads are also blocked in cross-attention. next uses the last real token.
  core::Result<RunTrace> run(std::string_view text, TraceLevel level, int pad_to = 0) const;
  // Encoder-decoder: source through the encoder, target through the decoder.
  core::Result<RunTrace> run(std::string_view source, std::string_view target, TraceLevel level,
                             int pad_to = 0) const;

  const ModelConfig& config() const { return cfg_; }
  // Names and shapes of every parameter the model has (the safetensors table for this config).
  std::vector<std::pair<std::string, std::vector<int>>> parameter_shapes() const;
  // Every parameter (seeded or loaded) by name, [in, out] layout — what write_safetensors would need to
  // reproduce this model exactly.
  const std::map<std::string, std::vector<float>>& parameters() const { return params_; }

 private:
  struct AttnRefs {
    attention::MhaWeights w;
  };
  struct Layer {
    LayerKind kind = LayerKind::kEncoder;
    bool causal = false;
    bool has_cross = false;
    attention::MhaWeights self_attn, cross_attn;
    FeedForwardWeights ff;
    NormWeights norm1, norm2, norm3;
  };
  struct Param {
    std::vector<int> shape;
  };
  struct Vocab;  // a run's word/char vocabulary

  Transformer() = default;
  core::Status declare_and_load();
  void declare(const std::string& name, std::vector<int> shape, bool is_bias_or_norm, float fill);
  core::Status build_layers();
  core::Result<SideTrace> embed(std::string_view text, const char* what, Vocab& vocab, int pad_to) const;
  void embedding_row(std::int32_t id, const std::string& token, std::span<float> out) const;
  core::Status run_stack(SideTrace& side, const std::vector<Layer>& layers, const SideTrace* memory,
                         TraceLevel level) const;
  void next_token(const SideTrace& side, const Vocab& vocab, NextToken& next) const;
  core::Result<RunTrace> run_impl(std::string_view source, std::string_view target, bool two_sided,
                                  TraceLevel level, int pad_to) const;

  ModelConfig cfg_;
  std::unique_ptr<tokenizers::BpeTokenizer> bpe_;
  std::map<std::string, std::vector<float>> params_;  // name -> data (node-stable: spans below point in)
  std::map<std::string, Param> shapes_;
  std::vector<Layer> first_, second_;  // first: encoder or decoder-only stack; second: enc-dec decoder stack
  std::unordered_map<std::string, std::vector<float>> user_rows_;  // word/char token text -> row
  std::unordered_map<std::int32_t, std::vector<float>> user_rows_by_id_;  // bpe id -> row
  std::span<const float> embedding_table_;  // loaded embedding.weight [rows, d_model] (bpe), or empty
  int embedding_rows_ = 0;
  std::span<const float> positional_table_;  // positional.weight [max_positions, d_model] (learned)
};

}  // namespace attnscope::model
