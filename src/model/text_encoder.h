// text_encoder.h: text to token ids for a model — the createModel tokenizers (word/char with the run's own
// vocabulary, GPT-2 BPE), a fixed character vocabulary (the bundled models) and a checkpoint's tokenizer.
// Layer: model (wraps tokenizers/). Errors are reported for the model's operation and argument ("run: source is
// not valid UTF-8 (...)") through core::readdress.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "tokenizers/word_char.h"

namespace attnscope::tokenizers {
class BpeTokenizer;
class HfTokenizer;
}

namespace attnscope::model {

// The run's vocabulary for word/char tokenizers: token text -> id in order of first appearance.
struct RunVocab {
  std::unordered_map<std::string, std::int32_t> ids;
  std::vector<std::string> tokens;
  std::int32_t id_of(const std::string& t);
};

// Ids of the special tokens a model uses (-1: none).
struct SpecialIds {
  std::int32_t bos = -1, eos = -1, unk = -1, pad = -1, cls = -1, sep = -1, mask = -1;
};

class TextEncoder {
 public:
  enum class Kind {
    kWord,       // tokenizers::tokenize kWord; ids = the run's vocabulary
    kChar,       // tokenizers::tokenize kChar (grapheme clusters); ids = the run's vocabulary
    kBpe,        // GPT-2 byte-level BPE (encoder.json + vocab.bpe)
    kCharVocab,  // one token per code point from a fixed vocabulary; unknown -> unk
    kHf,         // a checkpoint's tokenizer (tokenizer.json or vocab files): byte-level BPE or WordPiece
  };

  static TextEncoder word_or_char(bool chars);
  static core::Result<TextEncoder> bpe(std::string_view vocab_json, std::string_view merges, const char* op);
  // vocab in id order; the special tokens are vocabulary entries that never match text.
  // A checkpoint's tokenizer; tokens are reported as vocabulary strings ("Ġworld", "##ing"). The tokenizer is
  // immutable once built, so encoders may share one (a unique_ptr converts).
  static TextEncoder checkpoint(std::shared_ptr<const tokenizers::HfTokenizer> t);
  static core::Result<TextEncoder> char_vocab(std::vector<std::string> vocab, const SpecialIds& specials,
                                              const char* op);

  TextEncoder();  // a word tokenizer
  TextEncoder(TextEncoder&&) noexcept;
  TextEncoder& operator=(TextEncoder&&) noexcept;
  ~TextEncoder();

  Kind kind() const { return kind_; }
  // A decoder checkpoint's tokenizer (Llama, Qwen, Gemma, ...): run() and generate() read the ids the file's
  // post-processor gives (its BOS template), and generate()'s text is decode(prompt + new) minus decode(prompt).
  void use_post_processor() { post_processor_ = true; }
  bool post_processor() const { return post_processor_; }
  bool fixed_vocabulary() const { return kind_ != Kind::kWord && kind_ != Kind::kChar; }
  // UTF-8 text to tokens, UTF-16 offsets and ids. `what` names the argument in errors ("text", "source").
  // post_process false: without the post-processor's special tokens: an encoder-decoder checkpoint's target side
  // (a tokenizer with separate source and target models, Marian's source.spm / target.spm, reads its target model
  // for this call; post_process true is the source side and the decoder-only checkpoints' text).
  core::Result<tokenizers::Tokenization> encode(std::string_view text, RunVocab& vocab, const char* op,
                                                const char* what, bool post_process = true) const;
  // The vocabulary: size and entry text (fixed vocabularies), else the run's.
  std::int32_t vocab_size(const RunVocab& vocab) const;
  std::string token_text(std::int32_t id, const RunVocab& vocab) const;
  std::int32_t id_of(const std::string& token) const;  // fixed vocabularies; -1 when absent
  // Ids to text: BPE bytes decoded; character vocabularies concatenated (special tokens skipped).
  std::string decode(const std::vector<std::int32_t>& ids) const;
  const SpecialIds& specials() const { return specials_; }

 private:
  Kind kind_ = Kind::kWord;
  bool post_processor_ = false;
  std::unique_ptr<tokenizers::BpeTokenizer> bpe_;
  std::shared_ptr<const tokenizers::HfTokenizer> hf_;
  std::vector<std::string> vocab_;                        // kCharVocab
  std::unordered_map<std::string, std::int32_t> lookup_;  // kCharVocab: text -> id
  SpecialIds specials_;
};

}  // namespace attnscope::model
