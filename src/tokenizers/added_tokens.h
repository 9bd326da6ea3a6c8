// Added tokens (tokenizer.json's "added_tokens", BERT's special tokens): the entry, and the matcher that finds them
// in text before the model's own splitting, as Hugging Face's AddedVocabulary does. Shared by the WordPiece and the
// tokenizer.json (BPE) tokenizers. Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnscope::tokenizers {

// One entry of tokenizer.json's "added_tokens" (or a BERT special token): written in the text, it is one token.
struct AddedToken {
  std::string content;      // non-empty UTF-8
  std::int32_t id = -1;
  bool special = true;
  bool normalized = false;  // matched in the normalized text (WordPiece) instead of the raw text
  bool lstrip = false;      // the match takes the whitespace on its left ...
  bool rstrip = false;      // ... / on its right (that whitespace is then part of the token's offsets)
  bool single_word = false; // only matches when no letter, digit, mark or "_" touches it on either side
};

// Finds added tokens in a code point sequence as Hugging Face's AddedVocabulary does: scanning left to right,
// the first position where one matches, then the longest one there; matches do not overlap.
class AddedTokenMatcher {
 public:
  struct Match {
    std::size_t first, last;  // code point range [first, last), stripped whitespace included
    std::size_t token;        // index into the tokens given to the constructor
  };
  AddedTokenMatcher() = default;
  // Patterns are the tokens' contents as code points (contents must be valid UTF-8; empty ones never match).
  explicit AddedTokenMatcher(const std::vector<AddedToken>& tokens, const std::vector<std::u32string>& patterns);
  bool empty() const { return patterns_.empty(); }
  std::vector<Match> find(std::span<const char32_t> cps) const;

 private:
  struct Pattern {
    std::u32string cps;
    std::size_t token;
    bool lstrip, rstrip, single_word;
  };
  std::vector<Pattern> patterns_;                                   // sorted by first code point, longest first
  std::unordered_map<char32_t, std::pair<std::size_t, std::size_t>> by_first_;  // first cp -> [begin, end)
};

// A token's content as code points (the matcher's pattern); empty when the content is not valid UTF-8.
std::u32string added_token_cps(std::string_view content);

}  // namespace attnscope::tokenizers
