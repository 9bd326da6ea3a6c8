// A SentencePiece model (.model / .spm, read by sentencepiece_model.h) encoding and decoding as sentencepiece
// 0.1.97's SentencePieceProcessor does (the reference the tests use: Debian's python3-sentencepiece):
//  - normalizer.cc Normalizer::Normalize: the precompiled charsmap's longest rule at each position (user-defined
//    pieces are left as they are), remove_extra_whitespaces (leading, repeated and trailing spaces),
//    add_dummy_prefix, escape_whitespaces (' ' -> U+2581), treat_whitespace_as_suffix;
//  - unigram_model.cc Model::EncodeOptimized: Viterbi over the pieces' scores (user-defined pieces score
//    length * max_score - 0.1, unused pieces are skipped, a character no piece starts with is <unk> scored
//    min_score - 10);
//  - bpe_model.cc Model::SampleEncode (alpha 0): merges of adjacent symbols by the merged piece's score, ties to the
//    leftmost, user-defined pieces frozen, unused pieces re-segmented;
//  - sentencepiece_processor.cc PopulateSentencePieceText: an unknown piece becomes its <0xNN> byte pieces when the
//    model has byte_fallback, otherwise consecutive unknown pieces are merged into one <unk>;
//  - Decode: control pieces give "", <unk> gives unk_surface (" ⁇ "), byte pieces are joined into UTF-8 (U+FFFD
//    per invalid byte), U+2581 -> ' ', the first piece's leading U+2581 dropped, then the denormalizer if any.
// Unigram and BPE models; WORD and CHAR models are refused (an error naming trainer_spec.model_type).
// Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "tokenizers/precompiled_charsmap.h"
#include "tokenizers/sentencepiece_model.h"
#include "tokenizers/unicode.h"
#include "tokenizers/word_char.h"

namespace attnscope::tokenizers {

// For each byte offset of the UTF-8 text `text` was decoded from (nbytes + 1 entries), the UTF-16 offset of the
// character holding that byte.
std::vector<std::int32_t> utf16_of_bytes(const DecodedText& text, std::size_t nbytes);

// A byte trie over vocabulary strings (the Unigram lattice's dictionary: Darts in sentencepiece, the Trie of
// tokenizers' models/unigram/trie.rs). step() follows one byte; value[node] is the id ending there, -1 if none.
struct PieceTrie {
  std::vector<std::int32_t> value{-1};
  std::unordered_map<std::uint64_t, std::uint32_t> next;  // (node << 8 | byte) -> node
  void insert(std::string_view key, std::int32_t id);
  bool step(std::uint32_t& node, char c) const {
    const auto it = next.find((static_cast<std::uint64_t>(node) << 8) | static_cast<std::uint8_t>(c));
    if (it == next.end()) return false;
    node = it->second;
    return true;
  }
};

// util.h OneCharLen: the length a UTF-8 lead byte announces (1 for a trail byte).
inline std::size_t utf8_lead_length(char c) {
  return static_cast<std::size_t>("\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[(c & 0xFF) >> 4]);
}

// s with every occurrence of pat (non-empty) replaced by with.
std::string replace_text(std::string_view s, std::string_view pat, std::string_view with);

class SentencePiece {
 public:
  ~SentencePiece();
  SentencePiece(const SentencePiece&) = delete;
  SentencePiece& operator=(const SentencePiece&) = delete;

  // The bytes of a .model / .spm file. Errors name fn and arg ("loadTokenizer: sentencepiece is truncated ...",
  // "... sentencepiece.trainer_spec.model_type 3 (WORD) is not supported (UNIGRAM, BPE)", "... pieces[5] '▁a' is
  // already defined", "... has no <unk> piece").
  static core::Result<std::unique_ptr<SentencePiece>> load(std::span<const std::uint8_t> bytes, const char* fn,
                                                           const char* arg);

  // SentencePieceProcessor::Encode: ids, pieces, [start, end) UTF-16 offsets into utf8 (byte pieces of one
  // character: all but the last get [start, start)). Invalid UTF-8 -> TypeError "encode: text is not valid UTF-8".
  core::Result<Tokenization> encode(std::string_view utf8) const;
  // SentencePieceProcessor::Decode of pieces (a piece not in the model is unknown: decoded as itself).
  std::string decode_pieces(std::span<const std::string> pieces) const;
  // Decode of ids; an id outside [0, size) -> RangeError "decode: ids[i] (v) is not in the vocabulary".
  core::Result<std::string> decode(std::span<const std::int32_t> ids) const;
  // The normalized text (Normalizer::Normalize), for tests.
  std::string normalize(std::string_view utf8) const;

  std::size_t size() const { return proto_.pieces.size(); }
  const std::string& id_to_piece(std::int32_t id) const;  // "" outside [0, size)
  std::int32_t piece_to_id(std::string_view piece) const;  // unk_id() for a piece the model lacks
  std::int32_t find(std::string_view piece) const;         // -1 for a piece the model lacks
  bool is_control(std::int32_t id) const { return type_of(id) == SpmModelProto::kControl; }
  bool is_unknown(std::int32_t id) const { return type_of(id) == SpmModelProto::kUnknown; }
  bool is_byte(std::int32_t id) const { return type_of(id) == SpmModelProto::kByte; }
  std::int32_t unk_id() const { return unk_id_; }
  std::int32_t bos_id() const { return valid(proto_.bos_id) ? proto_.bos_id : -1; }
  std::int32_t eos_id() const { return valid(proto_.eos_id) ? proto_.eos_id : -1; }
  std::int32_t pad_id() const { return valid(proto_.pad_id) ? proto_.pad_id : -1; }
  const SpmModelProto& proto() const { return proto_; }

 private:
  SentencePiece() = default;
  using Encoded = std::vector<std::pair<std::string_view, std::int32_t>>;

  bool valid(std::int32_t id) const { return id >= 0 && static_cast<std::size_t>(id) < proto_.pieces.size(); }
  int type_of(std::int32_t id) const { return valid(id) ? proto_.pieces[static_cast<std::size_t>(id)].type : 0; }
  // normalizer.cc PrefixMatcher::PrefixMatch over the user-defined pieces: the longest one at the start of s
  // (*found true), else one UTF-8 character.
  std::size_t prefix_match(std::string_view s, bool* found) const;
  void normalize_with(const SpmNormalizerSpec& spec, const PrecompiledCharsmap& map, bool user_defined,
                      std::string_view input, std::string& out, std::vector<std::size_t>& norm_to_orig) const;
  Encoded encode_unigram(std::string_view normalized) const;
  Encoded encode_bpe(std::string_view normalized) const;

  SpmModelProto proto_;
  PrecompiledCharsmap charsmap_, decharsmap_;
  std::unordered_map<std::string, std::int32_t> pieces_;    // NORMAL, USER_DEFINED, UNUSED
  std::unordered_map<std::string, std::int32_t> reserved_;  // the other types
  std::unordered_map<std::string, std::int32_t> user_defined_;
  std::vector<std::size_t> user_lengths_;  // distinct lengths of the user-defined pieces, longest first
  std::unique_ptr<PieceTrie> trie_;  // Unigram: the pieces_ keys
  std::int32_t unk_id_ = -1;
  float min_score_ = 0, max_score_ = 0;
  std::int32_t byte_ids_[256];
};

}  // namespace attnscope::tokenizers
