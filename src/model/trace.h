// trace.h: every intermediate of one Transformer::run, as plain structs of row-major float vectors.
// Layer: model. Empty vectors mean "not kept" (see TraceLevel): 'full' keeps everything, 'weights' keeps
// only each layer's attention weights and output, 'none' only each layer's output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::model {

enum class LayerKind { kEncoder, kDecoder, kSimple };  // JS 'encoder' | 'decoder' | 'simple'

struct AttentionTrace {
  std::vector<float> q, k, v;  // [n, d_model] / [m, d_model]; head h = columns h*head_dim ..
  std::vector<float> scores;   // [H, n, m] scaled (simple: unscaled X Xᵀ, H = 1); -inf where masked
  std::vector<float> weights;  // [H, n, m]
  std::vector<float> concat;   // [n, d_model] heads before W_O
  std::vector<float> output;   // [n, d_model] after W_O (simple: the context weights · X)
};

struct LayerTrace {
  LayerKind kind = LayerKind::kEncoder;
  std::vector<float> input;  // [n, d_model]
  AttentionTrace attention;  // self-attention
  bool has_cross = false;
  AttentionTrace cross;        // encoder-decoder decoder layers: cross-attention over the encoder output
  std::vector<float> ff_hidden;  // [n, d_ff]
  std::vector<float> output;     // [n, d_model]
};

// One side of the model: the text through tokenizer, embedding, positions and a stack of layers.
struct SideTrace {
  std::vector<std::string> tokens;
  std::vector<std::int32_t> ids;      // word/char: index in the run's vocabulary; bpe: GPT-2 id
  std::vector<std::int32_t> offsets;  // 2 per token: [start, end) in UTF-16 code units
  int n = 0;
  std::vector<float> embeddings;  // [n, d_model]
  std::vector<float> positional;  // [n, d_model] (zeros for 'none')
  std::vector<float> input;       // [n, d_model] = embeddings + positional
  std::vector<LayerTrace> layers;
  std::vector<float> output;  // [n, d_model] output of the last layer (input when there are no layers)
};

struct NextToken {
  std::vector<std::string> tokens;
  std::vector<std::int32_t> ids;
  std::vector<float> probs;  // descending
};

struct RunTrace {
  int d_model = 0, num_heads = 0, head_dim = 0, d_ff = 0;
  SideTrace main;    // the text (encoder / decoder), or the target side of an encoder-decoder
  bool has_source = false;
  SideTrace source;  // encoder-decoder: the source through the encoder stack
  NextToken next;
};

}  // namespace attnscope::model
