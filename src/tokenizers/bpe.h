// GPT-2 byte-level BPE (the JS `createBpeTokenizer({ vocab, merges })`): encoder.json + vocab.bpe in, GPT-2's
// ids out, with token texts and UTF-16 offsets. Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "tokenizers/word_char.h"

namespace attnscope::tokenizers {

// GPT-2's pre-tokenization, a hand-written scanner equivalent to the regex (Python `regex` semantics)
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// with \s = White_Space and \p{L}/\p{N} from unicode.h. A whitespace run followed by a non-space gives all but
// its last code point, which then joins the next piece when it is U+0020 (" world"). Returns the pieces as code
// point index ranges [first, second) covering cps in order.
std::vector<std::pair<std::size_t, std::size_t>> gpt2_pretokenize(std::span<const char32_t> cps);

// GPT-2's bytes_to_unicode(): the printable stand-in code point for each byte (33..126, 161..172, 174..255 map to
// themselves, the other 68 bytes to U+0100.. in byte order), so "Ġ" (U+0120) is the space byte 0x20.
char32_t gpt2_byte_to_unicode(std::uint8_t byte);

class BpeTokenizer {
 public:
  // vocab_json: GPT-2 encoder.json text, a JSON object {byte-level token: id}; ids are distinct integers in
  // [0, 2^31), every token is listed once, non-empty and made of byte-level characters, and all 256 single-byte
  // tokens are present. Members are checked in document order.
  // merges: vocab.bpe text, one "left right" pair per line in priority order; an optional first line starting
  // with "#version", "\r\n" endings and trailing blank lines are accepted. Both tokens and their concatenation
  // must be in the vocab, and a pair may appear once. Every violation is an error naming what and where, e.g.
  // "createBpeTokenizer: merges line 12 must be two tokens separated by a space, got \"Ġt\"",
  // "createBpeTokenizer: vocab is not valid JSON (syntax error ... at byte 17)".
  static core::Result<std::unique_ptr<BpeTokenizer>> create(std::string_view vocab_json, std::string_view merges);

  // The same checks on an already-parsed vocab and merge list (Hugging Face tokenizer.json gives merges as
  // "a b" strings or ["a", "b"] pairs; hf_tokenizer.h parses both). `names` says how messages call things:
  // fn and the Status arguments, the vocab ("tokenizer.model.vocab[\"x\"] ...") and merge i
  // ("tokenizer.model.merges[11]: token ... is not in the vocab"; a repeat names the earlier one with merge_ref).
  struct Names {
    std::string fn = "createBpeTokenizer";
    std::string vocab_arg = "vocab", merges_arg = "merges";
    std::string vocab = "vocab";
    std::function<std::string(std::size_t)> merge;      // e.g. i -> "merges line 12"
    std::function<std::string(std::size_t)> merge_ref;  // e.g. i -> "line 12"
  };
  static core::Result<std::unique_ptr<BpeTokenizer>> create(
      std::span<const std::pair<std::string, std::int64_t>> vocab,
      std::span<const std::pair<std::string_view, std::string_view>> merges, const Names& names);

  // Encodes UTF-8 text (invalid UTF-8 -> "encode: text is not valid UTF-8 (...)") to GPT-2's ids, exactly as
  // GPT-2's encoder.py. tokens[i] is the UTF-8 text of token i's bytes when those bytes are valid UTF-8 on their
  // own, and otherwise (a token holding part of a multi-byte character, e.g. half an emoji) its byte-level vocab
  // string, as token_text(). offsets[2i], offsets[2i+1]: the UTF-16 range of the characters that token i's bytes
  // touch, so tokens sharing one character share its range.
  core::Result<Tokenization> encode(std::string_view utf8) const;

  // Concatenates the ids' bytes and decodes them as UTF-8, each ill-formed sequence becoming U+FFFD (GPT-2's
  // errors='replace'). An id not in the vocab -> RangeError "decode: ids[3] (99999) is not in the vocabulary".
  core::Result<std::string> decode(std::span<const std::int32_t> ids) const;

  std::size_t vocab_size() const;                 // number of vocab entries (GPT-2: 50257)
  std::string token_text(std::int32_t id) const;  // byte-level string of the entry (e.g. "Ġhello"); "" if unknown
  std::int32_t id_of(std::string_view token) const;  // id of a byte-level vocab string ("Ġhello"), -1 if absent

 private:
  // Internally tokens are entry indices (positions in entries_), converted to ids only on output.
  struct Entry {
    std::int32_t id;
    std::uint32_t text_begin, text_size;    // byte-level string in arena_, as in the vocab
    std::uint32_t bytes_begin, bytes_size;  // the raw bytes it stands for, in arena_
  };
  // Merge table, open addressing with linear probing (a node-based map of 50k merges dominated load time in
  // wasm). key = (uint64 left index << 32) | right index; rank < 0 marks an empty slot.
  struct MergeSlot {
    std::uint64_t key;
    std::int32_t rank;    // line order in vocab.bpe: lower merges first
    std::int32_t merged;  // entry index of left+right
  };
  BpeTokenizer() = default;
  std::string_view text_of(const Entry& e) const { return std::string_view(arena_).substr(e.text_begin, e.text_size); }
  std::string_view bytes_of(const Entry& e) const {
    return std::string_view(arena_).substr(e.bytes_begin, e.bytes_size);
  }
  const Entry* find_id(std::int32_t id) const;
  std::int32_t find_text(std::string_view text) const;  // entry index, -1 if absent
  MergeSlot* merge_slot(std::uint64_t key);
  const MergeSlot* find_merge(std::int32_t left, std::int32_t right) const;
  const std::vector<std::int32_t>& bpe(std::string_view bytes) const;

  std::string arena_;
  std::vector<Entry> entries_;       // sorted by id
  std::int32_t byte_index_[256] = {};  // entry index of each single-byte token
  std::vector<std::int32_t> by_text_;  // token text -> entry index: open addressing, -1 empty, power-of-two size
  std::vector<MergeSlot> merges_;    // size a power of two, at most half full
  // Pre-token bytes -> entry indices. Makes encode() non-reentrant on one tokenizer (fine: wasm runs one thread).
  mutable std::unordered_map<std::string, std::vector<std::int32_t>> cache_;
};

}  // namespace attnscope::tokenizers
