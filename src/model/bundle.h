// bundle.h: the bundled trained models (JS `as.loadBundled(name)`): a model folder's config.json
// ("format": "attnscope-model/1", written by training/common.py) and model.safetensors -> a ready model.
// Layer: model (reads io/ safetensors and JSON; no files: the bindings hand over the bytes).
//
// Architectures (config.json "architecture"):
//   'encoder-decoder', 'decoder' -> a Transformer (transformer.h): the description is createModel's for the same
//       config (describe(), so every size check and default is one code path), then a loaded embedding table
//       ("embedding.weight" [vocab, dModel], no seeded rows), rows scaled by config.embeddingScale, a final norm
//       "<stack>.norm.*" when the file holds it, and "lm_head.weight" [dModel, vocab] (+ "lm_head.bias") when
//       the file holds it (else the head is tied to the embedding table). Every parameter is required.
//   'gru-bahdanau' -> a GruSeq2Seq (gru_seq2seq.h) with config embedSize / numHiddens / numLayers /
//       attentionHidden, wrapped with its character tokenizer (BundledGru).
//   'kernel-regression' -> no weights file; its data lives in config.json and is read by the JS layer.
// Tokenizer (config.json "tokenizer"): { kind: 'char', vocab: [...], pad, bos, eos, unk } — one token per code
// point, the special tokens being vocabulary entries named by pad/bos/eos/unk (TextEncoder::char_vocab).
// Errors name `op` (the JS call) and the argument "config" or "weights":
//   "loadBundled: config: format (\"x/2\") must be \"attnscope-model/1\""
//   "loadBundled: config: tokenizer.bos (\"<go>\") is not in tokenizer.vocab"
//   "loadBundled: weights: tensor \"decoder.layers.0.self_attn.wq\" [64,64] is missing"
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/gru_seq2seq.h"
#include "model/text_encoder.h"
#include "model/transformer.h"

namespace attnscope::model {

inline constexpr const char* kBundleFormat = "attnscope-model/1";

// What config.json says about the model (the bundledModels list).
struct BundleInfo {
  std::string name, task, architecture, description;
};

// Parses config.json and checks its format tag; the four descriptive fields must be strings.
core::Result<BundleInfo> read_bundle_info(std::string_view config_json, const char* op);

// 'encoder-decoder' or 'decoder' bundles.
core::Result<std::unique_ptr<Transformer>> load_bundled_transformer(std::string_view config_json,
                                                                    std::span<const std::uint8_t> safetensors,
                                                                    const char* op);

// One run of the GRU model with the texts of its ids: a greedy decoding (generate) or a teacher-forced run
// (the decoder reads bos + target; the last step predicts the end token).
struct GruRun {
  std::vector<std::string> source_tokens;  // [S]
  std::vector<std::int32_t> source_ids;
  std::vector<std::string> input_tokens;   // [T]: the token each decoder step reads (bos, then the previous one)
  std::vector<std::string> tokens;         // [T]: each step's prediction (the argmax), the end token included
  GruSeq2SeqTrace trace;
};

// The 'gru-bahdanau' model: d2l's GRU encoder-decoder with additive attention, with its char tokenizer.
class BundledGru {
 public:
  static core::Result<std::unique_ptr<BundledGru>> load(std::string_view config_json,
                                                        std::span<const std::uint8_t> safetensors, const char* op);

  // Greedy decoding of `source` (stops at the end token or after max_new_tokens): the generated text, ids and
  // tokens (end token excluded) and the trace of every step that ran (also the one predicting the end token).
  // `op` names the JS call in errors (generate, or run without a target).
  core::Result<GruRun> generate(std::string_view source, int max_new_tokens, Generation* out,
                                const char* op = kOpGenerate) const;
  // Teacher forcing: the decoder reads bos + target (T = target tokens + 1 steps).
  core::Result<GruRun> run(std::string_view source, std::string_view target) const;

  const GruSeq2Seq& model() const { return *model_; }
  const TextEncoder& encoder() const { return enc_; }

 private:
  core::Result<tokenizers::Tokenization> encode(std::string_view text, const char* op, const char* what) const;
  GruRun texts_of(tokenizers::Tokenization source, GruSeq2SeqTrace trace) const;

  std::unique_ptr<GruSeq2Seq> model_;
  TextEncoder enc_;
};

}  // namespace attnscope::model
