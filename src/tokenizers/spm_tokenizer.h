// The Hugging Face slow tokenizers built on SentencePiece model files (sentencepiece.h), as a checkpoint's
// tokenizer: T5Tokenizer (spiece.model) and MarianTokenizer (source.spm / target.spm + vocab.json). Used through
// HfTokenizer::from_sentencepiece / from_marian (hf_tokenizer.h), so the model layer sees one tokenizer interface.
//  - T5 (transformers' tokenization_t5.py, legacy mode, the default of t5-small / flan-t5 / mt5 files): the text is
//    split on the special tokens written whole (the model's control and unknown pieces: "</s>", "<pad>", "<unk>";
//    and "<extra_id_0>".."<extra_id_99>", ids size + 99 - n, which take the whitespace around them), each other part
//    is SentencePiece's encode with the model's ids; with specials, "</s>" is appended unless the ids already end
//    with it. Decoding is SentencePiece's Decode (the extra ids give their text).
//  - Marian (tokenization_marian.py): the same split on "</s>", "<unk>", "<pad>"; a leading language code
//    ">>xx<<" of a part is one token and every ">>…<<" is removed from the part; the rest is the source model's
//    pieces, each mapped through vocab.json (a piece vocab.json lacks is "<unk>"'s id); with specials "</s>" is
//    appended. The target side (encode(..., target = true): MarianTokenizer's text_target / _switch_to_target_mode)
//    reads target.spm's pieces instead, still mapped through the shared vocab.json. Decoding maps ids to vocab strings and decodes runs of them with the target model (special tokens
//    kept as text, followed by a space), U+2581 -> ' ', the result trimmed (convert_tokens_to_string).
// Layer: tokenizers (depends on core/ and io/'s JSON readers).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "tokenizers/added_tokens.h"
#include "tokenizers/sentencepiece.h"
#include "tokenizers/word_char.h"

namespace attnscope::tokenizers {

class SpmTokenizer {
 public:
  // Errors name fn and arg: "<fn>: <arg> is truncated ...", "<fn>: <arg>.vocab is not valid JSON (...)",
  // "<fn>: <arg>.vocab has no '<unk>'".
  static core::Result<std::unique_ptr<SpmTokenizer>> t5(std::span<const std::uint8_t> model, const char* fn,
                                                        const char* arg);
  static core::Result<std::unique_ptr<SpmTokenizer>> marian(std::span<const std::uint8_t> source,
                                                            std::span<const std::uint8_t> target,
                                                            std::string_view vocab_json, const char* fn,
                                                            const char* arg);

  // target: the text is a decoder-side text (Marian: target.spm's pieces; T5 has one model for both sides).
  core::Result<Tokenization> encode(std::string_view utf8, bool with_specials, bool target = false) const;
  core::Result<std::string> decode(std::span<const std::int32_t> ids) const;
  std::string token_text(std::int32_t id) const;  // "" if unknown
  std::int32_t id_of(std::string_view token) const;  // -1 if absent
  std::size_t vocab_size() const;
  std::int32_t eos_id() const { return eos_; }
  std::int32_t pad_id() const { return pad_; }
  std::int32_t unk_id() const { return unk_; }
  std::int32_t bos_id() const { return bos_; }

 private:
  SpmTokenizer() = default;
  void set_specials(std::vector<AddedToken> specials);
  // One part of the text between special tokens: pieces and ids (T5: the model's; Marian: vocab.json's).
  core::Status encode_part(std::string_view utf8, std::int32_t utf16_base, const SentencePiece& sp,
                           Tokenization& out) const;

  bool marian_ = false;
  std::unique_ptr<SentencePiece> source_, target_;  // target_ null for T5
  std::unordered_map<std::string, std::int32_t> vocab_;  // Marian's vocab.json
  std::vector<std::string> by_id_;                        // Marian: id -> piece ("" for holes)
  std::vector<AddedToken> specials_;
  AddedTokenMatcher matcher_;
  std::int32_t eos_ = -1, pad_ = -1, unk_ = -1, bos_ = -1;
};

}  // namespace attnscope::tokenizers
