// embed.h: one side of a run up to the first block — tokens, ids, offsets, embedding rows, positions, token
// types, the embedding LayerNorm, and '<pad>' rows. Layer: model. Rules (docs/model.md "Token ids and embedding
// rows"): a token's row is the user's row if given, else row `id` of embedding.weight when loaded, else a seeded
// row keyed by the id (fixed vocabularies) or the token text (word/char), scaled by EmbeddingSpec::scale.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "model/description.h"
#include "model/layer_stream.h"
#include "model/parameters.h"
#include "model/text_encoder.h"
#include "model/trace.h"

namespace attnscope::model {

struct UserRows {
  std::unordered_map<std::string, std::vector<float>> by_text;  // word/char: token text -> row
  std::unordered_map<std::int32_t, std::vector<float>> by_id;   // fixed vocabularies: id -> row
};

struct EmbedArgs {
  const ModelDescription* m = nullptr;
  const Parameters* params = nullptr;
  const TextEncoder* encoder = nullptr;
  const UserRows* user = nullptr;
  std::uint64_t seed = 0;
  int max_tokens = 1024;
  const char* op = "run";
  // EmbeddingSpec::per_side: "source." for the source side (its positions and embedding norm), "" otherwise
  const char* side = "";
  // streamWeights: the token tables are in the file (layer_stream.h: the lookup's rows and the head's pieces)
  const LayerStream* stream = nullptr;
};

// What one side of a run reads besides the text (encoder-decoder checkpoints).
struct SideInput {
  bool post_process = true;   // the tokenizer's post-processor (a checkpoint's template) applies
  std::int32_t begin_id = -1; // >= 0: the side starts with this id (the decoder start token)
  const std::vector<std::int32_t>* ids = nullptr;  // the ids themselves instead of the text (run's targetIds)
  bool rows = true;  // false: the tokens, ids and checks only, embeddings left zero (generate embeds with embed_ids)
};

// Tokenizes `text` (argument name `what`), checks its length against max_tokens and the position table, pads
// (pad_to, or pad_multiple: up to the next multiple, at least one '<pad>') and builds the rows up to `input`.
// begin_token: the side starts with the vocabulary's begin token (offsets [0,0]), as a trained decoder reads it.
core::Result<SideTrace> embed(const EmbedArgs& a, std::string_view text, const char* what, RunVocab& vocab, int pad_to,
                              int pad_multiple, bool begin_token = false);
// The same with the side's own input rules (SideInput).
core::Result<SideTrace> embed(const EmbedArgs& a, std::string_view text, const char* what, RunVocab& vocab, int pad_to,
                              int pad_multiple, const SideInput& in);

// The first `rows` rows of the model's positional table [rows, d_model] (sinusoidal: computed; learned: the
// table; none: zeros), for plotting. Learned tables are read from row EmbeddingSpec::positional_offset.
core::Result<std::vector<float>> positional_rows(const EmbedArgs& a, int rows);

// The embedding row of token (id, text) into out [d_model], before the scale (the tied output head reads it).
void token_row(const EmbedArgs& a, std::int32_t id, const std::string& text, std::span<float> out);

// The embedding rows of ids[i] (texts[i] for word/char models) into out[i * d_model ..], before the scale: token_row's
// rules, or (streamWeights) the rows read from the file's table (layer_stream.h: a failed read is the error).
core::Status token_rows(const EmbedArgs& a, std::span<const std::int32_t> ids, const std::vector<std::string>& texts,
                        std::span<float> out);

// Embedding rows for a list of ids (decoding steps): the same rules as embed() for fixed vocabularies, plus
// the position p's row; row i is written to out[i * d_model ..].
core::Status embed_ids(const EmbedArgs& a, const std::vector<std::int32_t>& ids, int first_position, std::vector<float>& out);

}  // namespace attnscope::model
