// PrecompiledCharsmap (precompiled_charsmap.h): Darts-clone's double-array unit layout (darts.h, DoubleArrayUnit:
// has_leaf bit 8, value = low 31 bits, label = bit 31 | low 8 bits, offset = (unit >> 10) << ((unit & 512) >> 6)).
// Layer: tokenizers.
#include "tokenizers/precompiled_charsmap.h"

#include <cstring>

namespace attnscope::tokenizers {
namespace darts_unit {  // named: the unity build joins this file with others

bool has_leaf(std::uint32_t u) { return ((u >> 8) & 1) == 1; }
std::uint32_t value_of(std::uint32_t u) { return u & ((1U << 31) - 1); }
std::uint32_t label_of(std::uint32_t u) { return u & ((1U << 31) | 0xFF); }
std::uint32_t offset_of(std::uint32_t u) { return (u >> 10) << ((u & (1U << 9)) >> 6); }

}  // namespace darts_unit

using namespace darts_unit;  // NOLINT

core::Result<PrecompiledCharsmap> PrecompiledCharsmap::create(std::string_view blob, const char* fn, const char* arg,
                                                              const std::string& where) {
  PrecompiledCharsmap m;
  if (blob.empty()) return m;
  std::uint32_t trie_size = 0;
  if (blob.size() <= 4) {
    return core::invalid_error(fn, arg, where + " is broken (" + std::to_string(blob.size()) + " bytes)");
  }
  std::memcpy(&trie_size, blob.data(), 4);  // little-endian, as sentencepiece writes it
  if (trie_size >= blob.size() - 4 + 1 || trie_size % 4 != 0 || trie_size == 0) {
    return core::invalid_error(fn, arg, where + " is broken (its trie size " + std::to_string(trie_size) +
                                            " does not fit the " + std::to_string(blob.size()) + " bytes)");
  }
  m.units_.resize(trie_size / 4);
  std::memcpy(m.units_.data(), blob.data() + 4, trie_size);
  m.normalized_.assign(blob.substr(4 + trie_size));
  return m;
}

core::Result<PrecompiledCharsmap> PrecompiledCharsmap::from_base64(std::string_view text, const char* fn,
                                                                   const char* arg, const std::string& where) {
  std::string bytes;
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t pad = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') {
      ++pad;
      continue;
    }
    if (v < 0 || pad > 0) {
      return core::invalid_error(fn, arg, where + " is not base64 (character " + std::to_string(i) + ")");
    }
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (pad > 2) return core::invalid_error(fn, arg, where + " is not base64 (padding)");
  return create(bytes, fn, arg, where);
}

template <class OnMatch>
void PrecompiledCharsmap::search(std::string_view s, bool stop_at_nul, OnMatch on_match) const {
  if (units_.empty()) return;
  std::size_t node = offset_of(units_[0]);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<std::uint8_t>(s[i]);
    if (stop_at_nul && c == 0) return;
    node ^= c;
    if (node >= units_.size()) return;
    const std::uint32_t unit = units_[node];
    if (label_of(unit) != c) return;
    node ^= offset_of(unit);
    if (has_leaf(unit)) {
      if (node >= units_.size()) return;
      if (!on_match(i + 1, value_of(units_[node]))) return;
    }
  }
}

std::string_view PrecompiledCharsmap::replacement_at(std::uint32_t value) const {
  if (value >= normalized_.size()) return {};
  const char* start = normalized_.data() + value;
  const void* nul = std::memchr(start, 0, normalized_.size() - value);
  const std::size_t n = nul == nullptr ? normalized_.size() - value : static_cast<const char*>(nul) - start;
  return {start, n};
}

std::size_t PrecompiledCharsmap::longest_prefix(std::string_view s, std::string_view* replacement) const {
  std::size_t longest = 0, count = 0;
  std::uint32_t value = 0;
  search(s, false, [&](std::size_t length, std::uint32_t v) {
    if (count++ >= 32) return false;  // Normalizer::kMaxTrieResultsSize
    if (longest == 0 || length > longest) {
      longest = length;
      value = v;
    }
    return true;
  });
  if (longest > 0) *replacement = replacement_at(value);
  return longest;
}

bool PrecompiledCharsmap::first_prefix(std::string_view s, std::string_view* replacement) const {
  bool found = false;
  search(s, true, [&](std::size_t, std::uint32_t v) {
    *replacement = replacement_at(v);
    found = true;
    return false;
  });
  return found;
}

}  // namespace attnscope::tokenizers
