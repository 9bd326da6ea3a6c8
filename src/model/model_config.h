// model_config.h: the configuration of a transformer pipeline (JS `createModel(config)`), already
// normalised: every default applied. Layer: model. Defaults and semantics: docs/model.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/encoder_layer.h"

namespace attnscope::model {

enum class Architecture { kEncoder, kDecoder, kEncoderDecoder };  // 'encoder' | 'decoder' | 'encoder-decoder'
enum class TokenizerKind { kWord, kChar, kBpe };                 // 'word' | 'char' | { kind: 'bpe', ... }
enum class PositionalKind { kSinusoidal, kLearned, kNone };      // 'sinusoidal' | 'learned' | 'none'
enum class FirstAttention { kLearned, kSimple };                 // 'learned' | 'simple'
enum class TraceLevel { kFull, kWeights, kNone };                // run options.trace

struct ModelConfig {
  Architecture architecture = Architecture::kEncoder;
  TokenizerKind tokenizer = TokenizerKind::kWord;
  std::string bpe_vocab, bpe_merges;  // tokenizer kind 'bpe': encoder.json text and vocab.bpe text
  int d_model = 16;
  int num_heads = 2;
  int num_layers = 2;          // layers of the (first) stack: the encoder, or the decoder-only stack
  int num_decoder_layers = 0;  // encoder-decoder only: decoder layers; 0 = num_layers
  int d_ff = 0;                // 0 = 4 * d_model
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

}  // namespace attnscope::model
