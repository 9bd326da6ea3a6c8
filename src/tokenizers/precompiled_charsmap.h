// SentencePiece's precompiled normalization rules ("precompiled_charsmap": nmt_nfkc, nfkc_cf, a custom rule TSV),
// as stored in a .model file's normalizer_spec and in tokenizer.json's Precompiled normalizer (base64): a 4-byte
// little-endian size, a Darts double-array trie over the source byte strings whose values are offsets into the
// second part, the '\0'-terminated replacement strings. Lookups follow Darts::DoubleArray::commonPrefixSearch
// (darts.h, used by sentencepiece's normalizer.cc) and the Rust spm_precompiled crate (used by Hugging Face
// tokenizers), every array access bounds-checked so that a corrupt trie gives "no match", never a crash.
// Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace attnscope::tokenizers {

class PrecompiledCharsmap {
 public:
  PrecompiledCharsmap() = default;
  // blob empty -> no rules. Error (naming `where`, e.g. "sentencepiece.normalizer_spec.precompiled_charsmap"):
  // shorter than its stated trie size, or a trie size that is not a multiple of 4.
  static core::Result<PrecompiledCharsmap> create(std::string_view blob, const char* fn, const char* arg,
                                                  const std::string& where);
  // The same from base64 text (tokenizer.json's Precompiled.precompiled_charsmap); bad base64 is an error.
  static core::Result<PrecompiledCharsmap> from_base64(std::string_view text, const char* fn, const char* arg,
                                                       const std::string& where);
  bool empty() const { return units_.empty(); }

  // sentencepiece Normalizer::NormalizePrefix: the longest rule matching a prefix of s (among the first 32
  // matches, as kMaxTrieResultsSize). Returns the source length (0: no rule) and sets *replacement.
  std::size_t longest_prefix(std::string_view s, std::string_view* replacement) const;
  // spm_precompiled's transform(): the FIRST (shortest) rule matching a prefix of s, the walk stopping at a '\0'
  // byte. Returns false when none matches.
  bool first_prefix(std::string_view s, std::string_view* replacement) const;

 private:
  template <class OnMatch>
  void search(std::string_view s, bool stop_at_nul, OnMatch on_match) const;
  std::string_view replacement_at(std::uint32_t value) const;

  std::vector<std::uint32_t> units_;
  std::string normalized_;
};

}  // namespace attnscope::tokenizers
