// BERT's WordPiece tokenizer: Hugging Face's BertNormalizer + BertPreTokenizer + WordPiece model (the original
// BERT BasicTokenizer + WordpieceTokenizer), with tokens, ids and UTF-16 offsets into the original text; special
// tokens such as "[MASK]" written in the text stay whole (added_tokens.h).
// Layer: tokenizers (depends on core/ only). Oracle: tests/fixtures/wordpiece/wordpiece_ref.py.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "tokenizers/added_tokens.h"
#include "tokenizers/word_char.h"

namespace attnscope::tokenizers {

struct WordPieceOptions {
  // BertNormalizer
  bool clean_text = true;            // drop U+0000, U+FFFD and controls (C* but \t \n \r); whitespace -> " "
  bool handle_chinese_chars = true;  // spaces around CJK Unified Ideographs
  std::optional<bool> strip_accents; // NFD, then drop Mn; unset: strip when lowercasing
  bool lowercase = true;
  // WordPiece model
  std::string unk_token = "[UNK]";   // must be in the vocab
  std::string continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
  // WordPiece decoder: Hugging Face's cleanup (" ." -> ".", " n't" -> "n't", ...) on each decoded token.
  bool cleanup = true;
};

class WordPieceTokenizer {
 public:
  // vocab: (token, id) pairs; ids distinct in [0, 2^31). A token listed twice keeps its last id (as BERT's
  // load_vocab), so vocab.txt files with repeated lines load; id -> text keeps every entry.
  // added: tokens kept whole in the text; their ids must be distinct, and a content that is also in the vocab
  // must have the vocab's id. Ids not in the vocab extend it. Errors name `fn`, `arg` and the member as
  // `<where>` (e.g. "tokenizer.model.unk_token"):
  //   "loadPretrained: tokenizer.model.unk_token '[UNK]' is not in the vocab".
  struct Names {
    const char* fn = "createWordPieceTokenizer";
    const char* arg = "vocab";
    std::string vocab = "vocab";            // how messages call the vocab
    std::string added = "added_tokens";     // ... the added tokens (indexed as added_tokens[3])
    std::string options = "";               // prefix of option names, e.g. "tokenizer.model." ("" for none)
  };
  static core::Result<std::unique_ptr<WordPieceTokenizer>> create(std::vector<std::pair<std::string, std::int32_t>> vocab,
                                                                  std::vector<AddedToken> added,
                                                                  const WordPieceOptions& options, const Names& names);

  // BERT vocab.txt text: one token per line ("\n" or "\r\n"), id = line index from 0; a final newline does not
  // add a token; lines are kept verbatim otherwise (an empty line is the token ""). As BertTokenizer's defaults:
  // lowercase also strips accents, CJK characters are split, and [UNK] [SEP] [PAD] [CLS] [MASK] present in the
  // vocab are special tokens kept whole. [UNK] must be present.
  static core::Result<std::unique_ptr<WordPieceTokenizer>> from_vocab_txt(std::string_view vocab_txt, bool lowercase,
                                                                          const Names& names);

  // Encodes UTF-8 text (invalid UTF-8 -> TypeError "encode: text is not valid UTF-8 (...)"):
  //  1. added tokens that are not `normalized` are cut out of the raw text (AddedTokenMatcher);
  //  2. every other piece is normalized: clean text, CJK spacing, strip accents (NFD with canonical reordering,
  //     then drop Mn), lowercase (per character, full mapping: "İ" -> "i̇");
  //  3. `normalized` added tokens are cut out of the normalized text;
  //  4. the rest is split on whitespace (dropped) and punctuation (each a word of its own);
  //  5. each word: greedy longest-match-first WordPiece, continuation pieces prefixed "##"; a word of more than
  //     max_input_chars_per_word code points, or one that cannot be covered, is one unk token.
  // tokens are vocabulary strings ("##ing"), ids their ids, offsets [start, end) in UTF-16 units of the ORIGINAL
  // text: the smallest start and largest end of the characters a token came from ("Café" -> "cafe" [0, 4)).
  // No [CLS]/[SEP] are added.
  core::Result<Tokenization> encode(std::string_view utf8) const;

  // Hugging Face's WordPiece decoder: tokens joined with " ", a token after the first that starts with the
  // continuing prefix is glued to the previous one without it ("un", "##aff" -> "unaff"); with cleanup (the
  // default, as BertTokenizer), spaces before . ? ! , and in "n't", "'m", "'s", "'ve", "'re", " ' " are removed
  // and " do not" becomes " don't", token by token as Hugging Face does. Special tokens are kept.
  // An id not in the vocab -> RangeError "decode: ids[3] (99999) is not in the vocabulary".
  core::Result<std::string> decode(std::span<const std::int32_t> ids) const;

  std::size_t vocab_size() const { return by_id_.size(); }  // entries by id, added tokens included
  std::string token_text(std::int32_t id) const;            // "" if the id is unknown
  std::int32_t id_of(std::string_view token) const;         // -1 if absent (added tokens included)
  std::int32_t unk_id() const { return unk_id_; }
  const WordPieceOptions& options() const { return options_; }

 private:
  struct NormChar {
    char32_t cp;
    std::uint32_t origin;  // code point index in the original text
  };
  WordPieceTokenizer() = default;
  void normalize(std::span<const char32_t> cps, std::size_t origin0, std::vector<NormChar>* out) const;
  void encode_words(const std::vector<NormChar>& chars, std::size_t first, std::size_t last,
                    const std::vector<std::int32_t>& utf16, Tokenization* out) const;
  void wordpiece(const std::vector<NormChar>& chars, std::size_t first, std::size_t last,
                 const std::vector<std::int32_t>& utf16, Tokenization* out) const;

  WordPieceOptions options_;
  bool strip_ = true;
  std::vector<std::pair<std::int32_t, std::string>> by_id_;  // sorted by id
  std::unordered_map<std::string, std::int32_t> ids_;        // token -> id (model vocab and added tokens)
  std::int32_t unk_id_ = -1;
  std::vector<AddedToken> added_;
  AddedTokenMatcher raw_matcher_, normalized_matcher_;        // over added_ (indices into it)
};

}  // namespace attnscope::tokenizers
