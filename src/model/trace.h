// trace.h: every intermediate of one model run, as plain structs of row-major float vectors — what the caller
// reads. Layer: model. Empty vectors mean "not kept": per layer, trace level 'full' (or the layer listed in
// RunOptions::full_layers) keeps everything, 'weights' only the attention weights and the output, 'none' only
// the output. trace.cpp fills the derived numbers the step-by-step view shows (dot products, softmax max and
// sum, LayerNorm statistics) so views draw and never compute.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attention/multi_head.h"
#include "attention/tiled.h"

namespace attnscope::model {

enum class LayerKind { kEncoder, kDecoder, kSimple };  // JS 'encoder' | 'decoder' | 'simple'

struct AttentionTrace {
  std::vector<float> q, k, v;  // [n, d_model] / [m, d_model]; head h = columns h*head_dim ..
  std::vector<float> dots;     // [H, n, m] q_i·k_j per head before the scale and the mask (simple: = scores)
  std::vector<float> scores;   // [H, n, m] scaled (simple: unscaled X Xᵀ, H = 1); -inf where masked
  std::vector<float> row_max;  // [H, n] the softmax's row max over unmasked scores (0 for a fully blocked row)
  std::vector<float> row_sum;  // [H, n] Σ_j exp(score - row max) over unmasked keys (0 for a fully blocked row)
  std::vector<float> weights;  // [H, n, m]
  std::vector<float> concat;   // [n, d_model] heads before W_O
  std::vector<float> output;   // [n, d_model] after W_O (simple: the context weights · X)
  double scale = 0.0;          // full trace: the factor applied to q·k (float32 1/√head_dim; simple: 1); 0 = not kept
};

struct LayerTrace {
  LayerKind kind = LayerKind::kEncoder;
  bool full = false;         // this layer kept the full trace
  std::vector<float> input;  // [n, d_model]
  AttentionTrace attention;  // self-attention
  bool has_cross = false;
  AttentionTrace cross;  // encoder-decoder decoder layers: cross-attention over the encoder output
  // Full trace only, [n, d_model] (JS names residual1 ... norm3, ffOutput). Sub-block k (encoder: 1 self-
  // attention, 2 feed-forward; decoder with cross-attention: 1 self-attention, 2 cross-attention, 3 feed-
  // forward): residualK = the block's residual input + the block's output; normK = the LayerNorm with normK
  // weights: post-norm normK(residualK) (the block's result), pre-norm normK(block input) (what the block reads).
  // Empty for 'simple' layers; residual3/norm3 only with cross-attention.
  std::vector<float> residual[3], norm[3];
  std::vector<float> norm_mean[3], norm_var[3];  // [n] the mean and biased variance normK normalised with
  std::vector<float> ff_hidden;  // [n, d_ff] activation(y W1 + b1), y the feed-forward input
  std::vector<float> ff_output;  // [n, d_model] ff_hidden W2 + b2, before the residual
  std::vector<float> output;     // [n, d_model]
  // Run option lens (the logit lens): at every position the top lens_k of softmax(LM head(final norm(output))),
  // [n, lens_k] row-major, descending, ties to the smaller id (what `next` computes at the last position).
  int lens_k = 0;
  std::vector<std::int32_t> lens_ids;
  std::vector<float> lens_probs;
  std::vector<std::string> lens_tokens;  // the ids' vocabulary texts (JS lens.tokens), for labels
  // Run option summaries: the self-attention's per-head entropy, distance, sink share and top-k keys per row
  // (attention/tiled.h), from the materialised weights or the tiled pass alike.
  bool has_summary = false;
  attention::HeadSummaries summary;
  // Run option heads (list): the [n, n] maps of this layer's listed heads, in head_maps_heads' order.
  std::vector<int> head_maps_heads;
  std::vector<std::vector<float>> head_maps;
};

// One side of the model: the text through tokenizer, embedding, positions and a stack of layers.
struct SideTrace {
  std::vector<std::string> tokens;
  std::vector<std::int32_t> ids;      // vocabulary ids (word/char createModel: index in the run's vocabulary)
  std::vector<std::int32_t> offsets;  // 2 per token: [start, end) in UTF-16 code units ([0,0) for [CLS] etc.)
  int n = 0;       // tokens including padding (run option pad_to)
  int n_real = 0;  // tokens of the text; rows n_real.. are '<pad>' (id -1), blocked as keys
  std::vector<float> embeddings;  // [n, d_model] token rows (× the embedding scale)
  std::vector<float> positional;  // [n, d_model] (zeros for 'none'; token-type rows added here when the model has them)
  std::vector<float> input;       // [n, d_model] = embeddings + positional (then the embedding LayerNorm, BERT)
  std::vector<LayerTrace> layers;
  std::vector<float> output;  // [n, d_model] the stack's result (after its final norm when it has one)
  std::vector<float> last_layer_output;  // stacks with a final norm: the last block's output before it
};

struct TopK {
  std::vector<std::string> tokens;
  std::vector<std::int32_t> ids;
  std::vector<float> probs;  // descending; ties: smaller id first
};

// RunTrace::log_probs (run option logProbs): for i in [0, n_real - 1), ln p(ids[i+1] | tokens 0..i) under the
// next-token head, from float64 logits with a max-subtracted log-sum-exp; −mean is Hugging Face's
// labels = input_ids loss (GPT-2), or the per-character loss of a char LM. Encoder-decoder: the target side
// (after <s>), the end token not included.

struct MaskPrediction {
  int position = 0;  // index of the [MASK] token in tokens
  TopK top;
};

struct RunTrace {
  int d_model = 0, num_heads = 0, head_dim = 0, d_ff = 0;
  SideTrace main;  // the text (encoder / decoder), or the target side of an encoder-decoder
  bool has_source = false;
  SideTrace source;  // encoder-decoder: the source through the encoder stack
  TopK next;         // next-token top-k of the last real token (models with a next-token head)
  std::vector<MaskPrediction> masks;  // BERT with an MLM head: top-k at each [MASK]
  std::vector<float> log_probs;       // RunOptions::log_probs: [n_real - 1] (see above)
  std::vector<float> positional_table;  // RunOptions::positional_rows rows of the positional table, [rows, d_model]
  int positional_rows = 0;
  // RunOptions::heads (list): the requested self-attention maps of the main side, in the order asked.
  struct HeadMap {
    int layer = 0, head = 0;
    std::vector<float> weights;  // [n, n]
  };
  std::vector<HeadMap> heads;
};

// The derived numbers of an attention trace kept in full: dots (from q, k), row_max and row_sum (from scores).
void fill_attention_details(AttentionTrace& t, int num_heads, int n, int m, int head_dim);

// What a layer keeps of its attention at each level (weights always; the rest in full).
void keep_attention(AttentionTrace& t, attention::MhaOutput& m, bool full);

}  // namespace attnscope::model
