// A checkpoint's tokenizer in Hugging Face layout: tokenizer.json (byte-level BPE for GPT-2, WordPiece with the
// BERT normalizer for BERT), or the older vocab files ({ vocab, merges } for GPT-2, { vocab, lowercase } for BERT),
// behind one interface for the model layer. Added tokens ("<|endoftext|>", "[MASK]") written in the text stay whole.
// Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "tokenizers/bpe.h"
#include "tokenizers/hf_pipeline.h"
#include "tokenizers/spm_tokenizer.h"
#include "tokenizers/wordpiece.h"
#include "tokenizers/word_char.h"

namespace attnscope::tokenizers {

// Ids of the tokens the model layer needs, -1 when the vocabulary has none. WordPiece: "[CLS]", "[SEP]",
// "[MASK]", "[PAD]" and the model's unk_token; BPE: bos = eos = "<|endoftext|>".
struct SpecialIds {
  std::int32_t cls = -1, sep = -1, mask = -1, pad = -1, unk = -1, bos = -1, eos = -1;
};

class HfTokenizer {
 public:
  enum class Kind { kBpe, kWordPiece, kSentencePiece };

  // tokenizer.json text. A BPE file with a normalizer, a pre_tokenizer other than ByteLevel(use_regex true),
  // byte_fallback or ignore_merges goes through HfPipeline (hf_pipeline.h: Llama 2/3, Mistral, Qwen, Gemma).
  // Otherwise supported: model.type "BPE" with a ByteLevel pre_tokenizer (add_prefix_space false,
  // use_regex true), no normalizer, vocab {token: id}, merges as "a b" strings or ["a", "b"] pairs, no dropout,
  // byte_fallback, continuing_subword_prefix or end_of_word_suffix; and model.type "WordPiece" with a
  // BertNormalizer (clean_text, handle_chinese_chars, strip_accents (null: strip when lowercasing), lowercase)
  // or none, a BertPreTokenizer, unk_token, continuing_subword_prefix, max_input_chars_per_word. decoder: null,
  // ByteLevel (BPE) or WordPiece (its `cleanup` is honoured). post_processor and truncation/padding are not used
  // (encode adds no [CLS]/[SEP]). added_tokens [{id, content, single_word, lstrip, rstrip, normalized, special}]
  // stay whole in the text. Errors name fn, arg and the member, e.g.
  //   "loadPretrained: tokenizer.model.type 'WordLevel' is not supported (BPE, WordPiece, Unigram)"
  //   "loadPretrained: tokenizer is not valid JSON (syntax error ... at byte 17)"
  //   "loadPretrained: tokenizer.added_tokens[2].id must be an integer, got string".
  static core::Result<std::unique_ptr<HfTokenizer>> from_json(std::string_view tokenizer_json, const char* fn,
                                                              const char* arg);
  // GPT-2 encoder.json / vocab.json text + vocab.bpe / merges.txt text (rules of BpeTokenizer::create; messages
  // say "<arg>.vocab" and "<arg>.merges line N"). "<|endoftext|>", when in the vocab, is a special token.
  static core::Result<std::unique_ptr<HfTokenizer>> from_bpe_files(std::string_view vocab_json,
                                                                   std::string_view merges, const char* fn,
                                                                   const char* arg);
  // BERT vocab.txt text (WordPieceTokenizer::from_vocab_txt; messages say "<arg>.vocab").
  static core::Result<std::unique_ptr<HfTokenizer>> from_vocab_txt(std::string_view vocab_txt, bool lowercase,
                                                                   const char* fn, const char* arg);

  // A SentencePiece model file's bytes (T5's spiece.model): ids as transformers' T5Tokenizer (spm_tokenizer.h);
  // encode_with_post_processor appends "</s>". Messages say "<arg>" ("loadPretrained: tokenizer.sentencepiece is
  // truncated ...": pass arg "tokenizer.sentencepiece").
  static core::Result<std::unique_ptr<HfTokenizer>> from_sentencepiece(std::span<const std::uint8_t> model,
                                                                       const char* fn, const char* arg);
  // Marian's source.spm / target.spm bytes and vocab.json text: ids as MarianTokenizer (a piece vocab.json lacks is
  // "<unk>"); encode_with_post_processor appends "</s>"; decode uses the target model. Messages say
  // "<arg>.source", "<arg>.target", "<arg>.vocab".
  static core::Result<std::unique_ptr<HfTokenizer>> from_marian(std::span<const std::uint8_t> source,
                                                                std::span<const std::uint8_t> target,
                                                                std::string_view vocab_json, const char* fn,
                                                                const char* arg);

  // Tokens (vocabulary strings: "Ġworld", "##ing"; a BPE token whose bytes are valid UTF-8 on their own is given
  // as that text, as BpeTokenizer::encode does), ids, and [start, end) UTF-16 offsets into `utf8`.
  // No special tokens are added. Invalid UTF-8 -> TypeError "encode: text is not valid UTF-8 (...)".
  core::Result<Tokenization> encode(std::string_view utf8) const;
  // encode() with the tokenizer.json post-processor's single-sequence template applied (Llama 3.2's
  // "<|begin_of_text|> $A", Gemma's "<bos> $A"; the added tokens' offsets are [0, 0)): the ids Hugging Face's
  // Tokenizer.encode(text) gives. The GPT-2 / BERT kinds (and vocab-file tokenizers) give encode()'s result.
  core::Result<Tokenization> encode_with_post_processor(std::string_view utf8) const;
  // encode() of an encoder-decoder checkpoint's target text: Marian reads target.spm (MarianTokenizer's
  // text_target), every other kind gives encode()'s result.
  core::Result<Tokenization> encode_target(std::string_view utf8) const;
  // BPE: the bytes of the ids as UTF-8 (ill-formed sequences -> U+FFFD); added tokens give their content.
  // WordPiece: WordPieceTokenizer::decode. Unknown id -> RangeError "decode: ids[3] (99999) is not in the vocabulary".
  core::Result<std::string> decode(std::span<const std::int32_t> ids) const;
  std::string token_text(std::int32_t id) const;     // vocabulary string ("Ġhello", "##ing"), "" if unknown
  std::int32_t id_of(std::string_view token) const;  // -1 if absent; added tokens included
  std::size_t vocab_size() const;                    // ids in use, added tokens included (GPT-2: 50257)
  Kind kind() const { return kind_; }
  const SpecialIds& special_ids() const { return special_; }

 private:
  HfTokenizer() = default;
  static core::Result<std::unique_ptr<HfTokenizer>> from_spm(core::Result<std::unique_ptr<SpmTokenizer>> t);
  void find_special_ids();

  Kind kind_ = Kind::kBpe;
  std::unique_ptr<BpeTokenizer> bpe_;
  std::unique_ptr<WordPieceTokenizer> wordpiece_;
  // tokenizer.json BPE files other than GPT-2's layout (normalizer, Split regex, byte_fallback, templates): the
  // whole pipeline, bpe_ unused.
  std::unique_ptr<HfPipeline> pipeline_;
  // SentencePiece model files (T5, Marian): the whole tokenizer.
  std::unique_ptr<SpmTokenizer> spm_;
  // BPE only (WordPiece matches its own): added tokens, their matcher over the raw text, and those whose ids
  // are not in the BPE vocab.
  std::vector<AddedToken> added_;
  AddedTokenMatcher matcher_;
  SpecialIds special_;
};

}  // namespace attnscope::tokenizers
