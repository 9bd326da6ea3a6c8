// Added tokens (tokenizer.json's "added_tokens", BERT's special tokens): the entry, the matcher that finds them
// in text before the model's own splitting, as Hugging Face's AddedVocabulary does, and the one validator of an
// added token against its vocabulary; with the other vocabulary rules BPE, WordPiece and tokenizer.json share (id
// range, unknown id, merge spelling). Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"

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
  std::vector<Pattern> patterns_;
  // A trie over the patterns (Gemma 3 has 6,415 added tokens, 6,322 of them starting with '<'): edges keyed by
  // (node << 21 | code point), and per node the pattern ending there (-1 if none; the first of equal contents).
  std::unordered_map<std::uint64_t, std::uint32_t> edges_;
  std::vector<std::int32_t> ends_;
};

// A token's content as code points (the matcher's pattern); empty when the content is not valid UTF-8.
std::u32string added_token_cps(std::string_view content);

// ---- rules every vocabulary shares, written once for BPE, WordPiece and tokenizer.json ---------------------------

// "<fn>: <what> (<value>) must be an id in [0, 2147483647]" (RangeError, argument arg).
core::Status id_range_error(const char* fn, const std::string& arg, const std::string& what, long long value);

// decode(): "decode: ids[<i>] (<id>) is not in the vocabulary" (RangeError).
core::Status unknown_id_error(std::size_t i, std::int32_t id);

// One merge written "left right": true with the two tokens when there is exactly one space, not at either end.
bool split_merge(std::string_view merge, std::string_view* left, std::string_view* right);

// How the added-token rules see a vocabulary, and how messages name things.
struct AddedTokenVocab {
  std::function<std::int32_t(const std::string& content)> id_of;  // the vocab's id of a content, -1 if absent
  std::function<std::optional<std::string>(std::int32_t id)> token_of;  // the vocab's token with this id
  const char* fn = "";
  const char* arg = "";
  std::string added = "added_tokens";  // added[i] in messages
  std::string vocab = "vocab";         // "... but the <vocab> gives it 0"
};

// The rules an added token obeys against its vocabulary (as Hugging Face's AddedVocabulary), in this order:
//  1. content non-empty and valid UTF-8, id in [0, 2^31):  "<added>[0].content must not be empty"
//  2. an id no earlier added token has:                    "<added>[1] ('<y>') has the id 1 of <added>[0]"
//  3. a content the vocab has keeps the vocab's id:        "<added>[0] ('[UNK]') has id 1 but the <vocab> gives it 0"
//  4. a content the vocab lacks takes an id it lacks:      "<added>[0] ('<x>') has id 0, which the <vocab> gives to
//                                                           '[UNK]'"
// Returns the indices of the tokens whose content the vocab lacks (the entries a tokenizer adds to its vocab).
core::Result<std::vector<std::size_t>> check_added_tokens(const std::vector<AddedToken>& added,
                                                          const AddedTokenVocab& vocab);

}  // namespace attnscope::tokenizers
