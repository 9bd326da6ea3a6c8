// gru_seq2seq.h: the Bahdanau-attention GRU encoder–decoder of d2l.ai ("Bahdanau attention":
// Seq2SeqEncoder + Seq2SeqAttentionDecoder, eval mode), the computation behind the `dates-bahdanau` model.
// Layer: model (composes ops/gru.h, ops/linear.h and attention/additive.h; no kernels, no tokenizer).
//
// Encoder: source ids -> embedding rows [S, E] -> L-layer GRU -> enc_outputs [S, H], final state [L, H].
// Decoder, from state = the encoder's final state; for each step t with input id y (the previous token):
//   query   = state[L-1]                                   the top layer's state before this step [1, H]
//   context = additive attention(query; keys = values = enc_outputs; Wq [H, A], Wk [H, A], wv [A];
//             source positions >= sourceValidLen blocked)  scores / weights [1, S], context [1, H]
//   x       = concat(context, embedding(y))                [H + E], context first (as d2l)
//   state   = one GRU step of every layer on x             [L, H]; output o_t = state[L-1]
//   logits  = o_t · dense.weight + dense.bias              [V]
// Cost per sequence: one encoder pass plus one decoder step per target token (the prefix is never re-run). A step
// costs O(S·H·A) for the attention — additive_attention projects the S keys on every call — plus
// O(L·(H + E)·H + H·V) for the GRU and the dense layer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ops/gru.h"

namespace attnscope::model {

struct GruSeq2SeqConfig {
  int vocab_size = 0;        // V: rows of both embeddings and columns of dense (source and target share ids)
  int embed_size = 0;        // E
  int hidden_size = 0;       // H: GRU state size of encoder and decoder
  int num_layers = 0;        // L: layers of each GRU
  int attention_hidden = 0;  // A: the additive attention's hidden size
};

// Every intermediate of one encoder pass and T decoder steps, row-major.
struct GruSeq2SeqTrace {
  int source_len = 0;  // S
  int steps = 0;       // T
  std::vector<float> encoder_outputs;  // [S, H]: top layer per source position (the attention's keys and values)
  std::vector<float> encoder_states;   // [S, L, H]: every encoder layer's state after each source position
  std::vector<float> encoder_final;    // [L, H]: the decoder's initial state
  std::vector<std::int32_t> inputs;    // [T]: the id fed at step t (teacher forcing: target[t]; generate: bos, then
                                       //      the previous prediction)
  std::vector<float> scores;           // [T, S]: wv · tanh(q Wq + k_j Wk); blocked positions -inf
  std::vector<float> weights;          // [T, S]: the alignment (row softmax of scores)
  std::vector<float> contexts;         // [T, H]: weights · enc_outputs
  std::vector<float> states;           // [T, L, H]: every decoder layer's state after step t
  std::vector<float> outputs;          // [T, H]: the top layer's state after step t (= states[t, L-1])
  std::vector<float> logits;           // [T, V]
  std::vector<std::int32_t> predictions;  // [T]: argmax of each logits row (ties -> smaller id)
};

struct GruSeq2SeqGeneration {
  std::vector<std::int32_t> ids;  // the generated ids, eos excluded
  bool ended_with_eos = false;    // true when a step predicted eos (generation stopped there)
  // Every decoder step that ran: ids.size() steps, plus the step that predicted eos when ended_with_eos
  // (as d2l's predict_seq2seq keeps that step's attention weights). trace.predictions = ids (+ eos).
  GruSeq2SeqTrace trace;
};

class GruSeq2Seq {
 public:
  // One named parameter: shape and row-major float data, in attnscope's [in, out] layout.
  struct Param {
    std::vector<std::int64_t> shape;
    std::vector<float> data;
  };
  using Params = std::map<std::string, Param>;

  // Upper bound of generate()'s max_new_tokens.
  static constexpr int kMaxNewTokens = 4096;

  // The parameter table for a config, in this order (names and [in, out] shapes):
  //   encoder.embedding.weight [V, E]
  //   encoder.gru.l{k}.w_ih [E (k = 0) or H, 3H], .w_hh [H, 3H], .b_ih [3H], .b_hh [3H]   k = 0 .. L-1
  //   decoder.embedding.weight [V, E]
  //   decoder.attention.wq [H, A], decoder.attention.wk [H, A], decoder.attention.wv [A]
  //   decoder.gru.l{k}.w_ih [H + E (k = 0) or H, 3H], .w_hh, .b_ih, .b_hh
  //   decoder.dense.weight [H, V], decoder.dense.bias [V]
  // GRU gates are in PyTorch's order r, z, n (ops/gru.h); PyTorch matrices are stored transposed.
  static std::vector<std::pair<std::string, std::vector<std::int64_t>>> parameter_shapes(const GruSeq2SeqConfig& c);

  // Checks the config and every tensor once (presence, shape, value count, finiteness) and takes ownership.
  // `fn` is the public function named in messages, with argument "config" or "weights":
  //   "loadBundled: config: hiddenSize (0) must be a positive integer"
  //   "loadBundled: weights: tensor \"decoder.dense.bias\" is missing (expected shape [11])"
  //   "loadBundled: weights: tensor \"decoder.gru.l0.w_ih\" has shape [8,24], expected [12,24]"
  //   "loadBundled: weights: tensor \"decoder.dense.bias\" has 10 values, its shape [11] needs 11"
  //   "loadBundled: weights: tensor \"encoder.gru.l0.b_hh\"[3] (NaN) must be finite"
  //   "loadBundled: weights: tensor \"encoder.rnn.weight\" is not a parameter of this model"
  static core::Result<std::unique_ptr<GruSeq2Seq>> create(const GruSeq2SeqConfig& config, Params params,
                                                          const char* fn);

  // Teacher forcing: encode `source` (S >= 1 ids), then one decoder step per id of `target_input` (T >= 1; the
  // decoder's inputs, i.e. bos followed by the target shifted right). source_valid_len (-1 = S) blocks source
  // positions >= it in the attention (d2l's enc_valid_lens, for a padded source); the encoder still reads all S.
  //   "run: source[2] (12) must be an integer from 0 to 10 (vocabSize - 1)", "run: source must not be empty",
  //   "run: sourceValidLen (9) must be an integer from 0 to 4 (source length)"
  core::Result<GruSeq2SeqTrace> run(std::span<const std::int32_t> source, std::span<const std::int32_t> target_input,
                                    int source_valid_len = -1, const char* fn = "run") const;

  // Greedy decoding from bos: each step's prediction (argmax of logits, ties -> smaller id) is the next step's
  // input; stops after the step that predicts eos (eos not in ids) or after max_new_tokens steps
  // (0 .. kMaxNewTokens). Same checks as run(), plus bos / eos ids and
  //   "generate: maxNewTokens (5000) must be an integer from 0 to 4096".
  core::Result<GruSeq2SeqGeneration> generate(std::span<const std::int32_t> source, std::int32_t bos, std::int32_t eos,
                                              int max_new_tokens, int source_valid_len = -1,
                                              const char* fn = "generate") const;

  const GruSeq2SeqConfig& config() const { return cfg_; }
  // Every parameter by name (as given to create()).
  const Params& parameters() const { return params_; }

 private:
  GruSeq2Seq() = default;
  core::Status check_ids(const char* fn, const char* arg, std::span<const std::int32_t> ids) const;
  core::Result<GruSeq2SeqTrace> encode(std::span<const std::int32_t> source, int source_valid_len,
                                       const char* fn) const;
  // One decoder step from `state` [L, H] (updated) on input id y; appends row t of every per-step trace.
  core::Status decode_step(GruSeq2SeqTrace& tr, std::vector<float>& state, std::int32_t y, int valid,
                           const char* fn) const;
  std::span<const float> param(const std::string& name) const { return params_.at(name).data; }

  GruSeq2SeqConfig cfg_;
  Params params_;  // node-stable: the GRUs' views point into it
  ops::Gru encoder_gru_, decoder_gru_;
};

}  // namespace attnscope::model
