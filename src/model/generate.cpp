// generate.cpp: greedy decoding with a key/value cache (Transformer::generate, transformer.h). Layer: model.
//
// Decoder-only: the prompt's rows go through every block once, filling each block's cache; then each step
// embeds one token at the next position and runs only that row. Encoder-decoder: the source runs through the
// encoder stack once; the target starts with the begin token and grows the same way, cross-attention reading
// the memory's projections cached on the first step. Logits come from the next-token head (heads.h); the
// argmax (ties: smaller id) is appended until the end token or max_new_tokens.
#include <algorithm>

#include "core/check.h"
#include "model/heads.h"
#include "model/transformer.h"

namespace attnscope::model {

StackArgs Transformer::decoding_args(bool source, std::vector<KvCache>* caches) const {
  StackArgs s;
  s.m = &m_;
  s.spec = source ? &m_.source : &m_.main;
  s.w = source ? &source_w_ : &main_w_;
  s.full_all = false;
  s.weights = false;
  s.op = kOpGenerate;
  s.what = "input";
  s.caches = caches;
  return s;
}

int Transformer::decoding_positions() const {
  const bool bounded = m_.embedding.positional == PositionalKind::kLearned || m_.embedding.bounded;
  return std::min(opt_.max_tokens, bounded ? m_.embedding.max_positions : opt_.max_tokens);
}

core::Result<std::vector<std::int32_t>> Transformer::generation_end_ids(int max_new_tokens) const {
  if (max_new_tokens < 0) return core::check_non_negative(kOpGenerate, "maxNewTokens", max_new_tokens);
  const SpecialIds& sp = enc_.specials();
  const std::vector<std::int32_t> ends = !opt_.end_ids.empty() ? opt_.end_ids
                                         : sp.eos >= 0          ? std::vector<std::int32_t>{sp.eos}
                                                                : std::vector<std::int32_t>();
  if (!m_.head.next_token || !enc_.fixed_vocabulary() || ends.empty()) {
    return core::invalid_error(kOpGenerate, "model",
                               "model cannot generate: it has no next-token head over a fixed vocabulary with an "
                               "end token (a language model or an encoder-decoder model can)");
  }
  return ends;
}

core::Result<SideTrace> Transformer::encode_source(const EmbedArgs& ea, std::string_view input, RunVocab& vocab) const {
  auto src = embed(source_args(ea), input, "input", vocab, 0, 0);
  if (!src.ok()) return src.status();
  SideTrace memory = std::move(src).value();
  ATTN_TRY(run_stack(decoding_args(true, nullptr), memory, nullptr));
  return memory;
}

void Transformer::finish_generation(Generation& g, const RunVocab& vocab) const {
  for (const std::int32_t id : g.ids) g.tokens.push_back(enc_.token_text(id, vocab));
  if (opt_.decoder_start < 0) {
    g.text = enc_.decode(g.ids);
    return;
  }
  // an encoder-decoder checkpoint: the text without special tokens (skip_special_tokens)
  const SpecialIds& sp = enc_.specials();
  std::vector<std::int32_t> plain;
  for (const std::int32_t id : g.ids) {
    const bool end = std::find(opt_.end_ids.begin(), opt_.end_ids.end(), id) != opt_.end_ids.end();
    if (!end && id != sp.bos && id != sp.eos && id != sp.pad && id != sp.unk && id != opt_.decoder_start) {
      plain.push_back(id);
    }
  }
  g.text = enc_.decode(plain);
}

core::Result<Generation> Transformer::generate(std::string_view input, int max_new_tokens, int num_beams) const {
  if (num_beams < 1) return core::check_positive(kOpGenerate, "numBeams", num_beams);
  if (num_beams == 1) return generate(input, max_new_tokens);
  if (!m_.has_source) {
    return core::invalid_error(kOpGenerate, "numBeams",
                               "numBeams > 1 (beam search) is implemented for encoder-decoder models only");
  }
  return beam_search(input, max_new_tokens, num_beams);
}

core::Result<Generation> Transformer::generate(std::string_view input, int max_new_tokens) const {
  const SpecialIds& sp = enc_.specials();
  auto end_ids = generation_end_ids(max_new_tokens);
  if (!end_ids.ok()) return end_ids.status();
  const std::vector<std::int32_t> ends = std::move(end_ids).value();
  const EmbedArgs ea = embed_args(kOpGenerate);
  RunVocab vocab;
  const int max_positions = decoding_positions();
  // 1. the first rows: the prompt (decoder-only; the begin token when it is empty) or the begin token
  SideTrace memory;
  SideTrace step;
  if (m_.has_source) {
    auto src = encode_source(ea, input, vocab);
    if (!src.ok()) return src.status();
    memory = std::move(src).value();
    step.ids = {opt_.decoder_start >= 0 ? opt_.decoder_start : sp.bos >= 0 ? sp.bos : ends.front()};
  } else if (input.empty()) {
    step.ids = {sp.bos >= 0 ? sp.bos : ends.front()};
  } else {
    SideInput ids_only;  // the rows come from embed_ids below (streamWeights: read once)
    ids_only.rows = false;
    auto side = embed(ea, input, "input", vocab, 0, 0, ids_only);
    if (!side.ok()) return side.status();
    step.ids = std::move(side.value().ids);
  }
  const std::vector<std::int32_t> prompt = step.ids;
  std::vector<KvCache> caches(m_.main.blocks.size());
  Generation g;
  int position = 0;
  const auto d = static_cast<std::size_t>(m_.d_model);
  while (static_cast<int>(g.ids.size()) < max_new_tokens) {
    const int rows = static_cast<int>(step.ids.size());
    if (position + rows > max_positions) break;  // the position table is full
    // 2. the new rows through every block, reading and extending the caches
    ATTN_TRY(embed_ids(ea, step.ids, position, step.input));
    step.n = step.n_real = rows;
    ATTN_TRY(run_stack(decoding_args(false, &caches), step, m_.has_source ? &memory : nullptr));
    position += rows;
    // 3. the next token from the last row
    const std::span<const float> h(step.output.data() + static_cast<std::size_t>(rows - 1) * d, d);
    auto logits = lm_logits(ea, vocab, h);  // streamWeights: one pass over the head's table a token
    if (!logits.ok()) return logits.status();
    const std::int32_t next = argmax(logits.value());
    if (std::find(ends.begin(), ends.end(), next) != ends.end()) {
      g.stopped_at_end = true;
      break;
    }
    g.ids.push_back(next);
    step.ids = {next};
  }
  finish_generation(g, vocab);
  if (enc_.post_processor() && !m_.has_source) {
    // decoder checkpoints (API.md): decode(prompt + new) minus decode(prompt), so that a SentencePiece model's
    // leading space ("▁world" after "Hello") is kept, which decoding the new ids alone would strip
    std::vector<std::int32_t> all = prompt;
    all.insert(all.end(), g.ids.begin(), g.ids.end());
    const std::string whole = enc_.decode(all), head = enc_.decode(prompt);
    if (whole.compare(0, head.size(), head) == 0) g.text = whole.substr(head.size());
  }
  return g;
}

}  // namespace attnscope::model
