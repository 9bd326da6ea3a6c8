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
  double scale = 0.0;          // full trace: the factor applied to q·k (float32 1/√head_dim; simple: 1); 0 = not kept
};

struct LayerTrace {
  LayerKind kind = LayerKind::kEncoder;
  std::vector<float> input;  // [n, d_model]
  AttentionTrace attention;  // self-attention
  bool has_cross = false;
  AttentionTrace cross;        // encoder-decoder decoder layers: cross-attention over the encoder output
  // Full trace only, [n, d_model] (JS names residual1 ... norm3, ffOutput). Sub-block k (encoder: 1 self-
  // attention, 2 feed-forward; decoder with cross-attention: 1 self-attention, 2 cross-attention, 3 feed-
  // forward): residualK = the block's residual input + the block's output; normK = the LayerNorm with normK
  // weights: post-norm normK(residualK) (the block's result), pre-norm normK(block input) (what the block reads).
  // Empty for 'simple' layers; residual3/norm3 only with cross-attention.
  std::vector<float> residual1, norm1, residual2, norm2, residual3, norm3;
  std::vector<float> ff_hidden;  // [n, d_ff] activation(y W1 + b1), y the feed-forward input
  std::vector<float> ff_output;  // [n, d_model] ff_hidden W2 + b2, before the residual
  std::vector<float> output;     // [n, d_model]
};

// One side of the model: the text through tokenizer, embedding, positions and a stack of layers.
struct SideTrace {
  std::vector<std::string> tokens;
  std::vector<std::int32_t> ids;      // word/char: index in the run's vocabulary; bpe: GPT-2 id
  std::vector<std::int32_t> offsets;  // 2 per token: [start, end) in UTF-16 code units
  int n = 0;       // tokens including padding (run option pad_to)
  int n_real = 0;  // tokens of the text; rows n_real.. are '<pad>' (id -1), blocked as keys
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
