// heads.h: what a model predicts from its last hidden states — the next-token top-k of a language-model head
// (tied to the token embeddings, or "lm_head.weight"/"lm_head.bias") and BERT's masked-token top-k.
// Layer: model. Logits and the softmax are computed in double; top-k ties go to the smaller id.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/status.h"
#include "model/embed.h"
#include "model/trace.h"

namespace attnscope::model {

// logits [vocab] of the language-model head for the hidden state h [d_model].
core::Result<std::vector<double>> lm_logits(const EmbedArgs& a, const RunVocab& vocab, std::span<const float> h);

// The same for `rows` hidden states, handed to each(r, logits) for r = 0, 1, ... in order (an error from `each`
// ends the pass and is returned). A resident head computes one row at a time; a streamed one (streamWeights:
// layer_stream.h) reads its table once per batch of rows (LayerStream::head_batch: 64 MiB of float32 logits), and
// does each piece's products with the resident head's kernels, so every row's logits are the resident ones bit for bit.
core::Status lm_logits_rows(const EmbedArgs& a, const RunVocab& vocab, int rows,
                            const std::function<std::span<const float>(int)>& row,
                            const std::function<core::Status(int, const std::vector<double>&)>& each);

// lm_logits' size (the rows the head scores), without computing them.
std::int32_t lm_vocab_size(const EmbedArgs& a, const RunVocab& vocab);

// The head's column for token `id` [d_model] (lm_head.weight[:, id], or the tied row): logit_id = h · it (+ the
// head's bias, + soft-capping). Direct logit attribution (inside.h) reads it; zeros for an id outside the head.
core::Result<std::vector<double>> lm_direction(const EmbedArgs& a, const RunVocab& vocab, std::int32_t id);

// The k most probable ids of softmax(logits) with their texts (k is capped at the vocabulary size).
TopK top_k(const std::vector<double>& logits, int k, const EmbedArgs& a, const RunVocab& vocab);

// The masked-language-model head at every [MASK] of the side (BERT): transform, act, LayerNorm, tied decoder +
// "mlm.bias", top-k.
core::Result<std::vector<MaskPrediction>> mask_predictions(const EmbedArgs& a, const SideTrace& side, int k);

// ln softmax(logits)[id], max-subtracted (finite for any finite logits).
double log_prob(const std::vector<double>& logits, std::int32_t id);

// Greedy decoding's choice, for every model: the id with the largest logit; ties (std::max_element keeps the
// first) go to the smaller id. logits must not be empty.
template <class T>
std::int32_t argmax(std::span<const T> logits) {
  return static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}
inline std::int32_t argmax(const std::vector<double>& logits) { return argmax(std::span<const double>(logits)); }
inline std::int32_t argmax(const std::vector<float>& logits) { return argmax(std::span<const float>(logits)); }

}  // namespace attnscope::model
