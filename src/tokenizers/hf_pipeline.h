// A tokenizer.json BPE pipeline beyond GPT-2's: the file's normalizer, pre-tokenizer, BPE model (byte_fallback,
// fuse_unk, ignore_merges), post-processor and decoder, as Hugging Face tokenizers runs them. Covers the
// SentencePiece-style files (Llama 2, TinyLlama, Mistral, Gemma: "▁" and <0xNN> byte tokens) and the byte-level
// files with a Split regex (Llama 3, Qwen2/3, SmolLM2). Built by HfTokenizer::from_json; every component or value
// it does not implement is an error naming it ("tokenizer.pre_tokenizer.pretokenizers[0].pattern ... is not
// supported"). Implemented: normalizers Prepend, Replace (String pattern), Lowercase, NFC, NFKC, Sequence;
// pre-tokenizers Split (String pattern, or a Regex of split_regex.h; behaviors Removed, Isolated,
// MergedWithPrevious, MergedWithNext; invert false), Metaspace (prepend_scheme always/first/never, split),
// ByteLevel (add_prefix_space; use_regex true = GPT-2's pattern), Digits (individual_digits), Sequence; model BPE (byte_fallback,
// fuse_unk, ignore_merges, unk_token; no dropout or subword affixes); post-processors TemplateProcessing (the
// single template), ByteLevel (no effect on ids), Sequence; decoders Replace, ByteFallback, Fuse, Strip,
// Metaspace, ByteLevel, Sequence; added tokens (matched in the raw text; normalized:true only without a
// normalizer). Layer: tokenizers (depends on core/ and io/'s JSON readers).
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
#include "tokenizers/hf_tokenizer_json.h"
#include "tokenizers/word_char.h"

namespace attnscope::tokenizers {

class HfPipeline {
 public:
  ~HfPipeline();
  HfPipeline(const HfPipeline&) = delete;
  HfPipeline& operator=(const HfPipeline&) = delete;

  // root: the parsed tokenizer.json (model.vocab and model.merges in `file`), added: its added_tokens.
  static core::Result<std::unique_ptr<HfPipeline>> create(const hf_json::Reader& rd, const hf_json::ParsedFile& file,
                                                          std::vector<AddedToken> added);

  // ids, tokens (vocabulary strings, added tokens' contents) and UTF-16 offsets; with_specials applies the
  // post-processor's template (its tokens get offsets [0, 0)).
  core::Result<Tokenization> encode(std::string_view utf8, bool with_specials) const;
  // The file's decoder over the ids' tokens (added tokens included). Unknown id -> RangeError naming ids[i].
  core::Result<std::string> decode(std::span<const std::int32_t> ids) const;
  std::string token_text(std::int32_t id) const;
  std::int32_t id_of(std::string_view token) const;
  std::size_t vocab_size() const;
  std::int32_t bos_id() const { return bos_; }  // the template's first special token, -1 without one

  struct Impl;

 private:
  HfPipeline() = default;
  static core::Status read_unigram(const hf_json::Reader& rd, const nlohmann::json& model, Impl& m);
  static core::Status read_bpe(const hf_json::Reader& rd, const hf_json::ParsedFile& f, const nlohmann::json& model,
                               Impl& m);
  // components, post-processor and added tokens, common to both models
  static core::Result<std::unique_ptr<HfPipeline>> finish(const hf_json::Reader& rd, const hf_json::ParsedFile& f,
                                                          std::vector<AddedToken> added, std::unique_ptr<HfPipeline> out);
  std::unique_ptr<Impl> impl_;
  std::int32_t bos_ = -1;
};

}  // namespace attnscope::tokenizers
