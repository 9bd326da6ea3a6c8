// GPT-2 byte-level BPE: pre-tokenizer scanner, vocab/merges loading with named checks, rank-ordered merging.
// Layer: tokenizers (depends on core/ only). Reference: openai/gpt-2 src/encoder.py.
#include "tokenizers/bpe.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>

#include "core/text.h"
#include "tokenizers/added_tokens.h"
#include "tokenizers/json_reader.h"
#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
namespace {

constexpr const char* kCreate = "createBpeTokenizer";
constexpr std::size_t kMaxCacheEntries = 1 << 15;

// Inverse of gpt2_byte_to_unicode: byte for a stand-in code point, or -1.
int unicode_to_byte(char32_t cp) {
  static const std::array<int, 324> table = [] {
    std::array<int, 324> t{};
    t.fill(-1);
    for (int b = 0; b < 256; ++b) t[gpt2_byte_to_unicode(static_cast<std::uint8_t>(b))] = b;
    return t;
  }();
  return cp < table.size() ? table[cp] : -1;
}

}  // namespace

char32_t gpt2_byte_to_unicode(std::uint8_t byte) {
  if ((byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174) return byte;
  // The 68 others in byte order: 0..32 -> U+0100..U+0120, 127..160 -> U+0121..U+0142, 173 -> U+0143.
  if (byte <= 32) return 256u + byte;
  if (byte <= 160) return 256u + 33u + (byte - 127u);
  return 256u + 67u;
}

std::vector<std::pair<std::size_t, std::size_t>> gpt2_pretokenize(std::span<const char32_t> cps) {
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  const std::size_t n = cps.size();
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i + 1;
    // 's|'t|'re|'ve|'m|'ll|'d (ASCII, case-sensitive)
    const char32_t c1 = i + 1 < n ? cps[i + 1] : 0, c2 = i + 2 < n ? cps[i + 2] : 0;
    if (cps[i] == U'\'' && (c1 == U's' || c1 == U't' || c1 == U'm' || c1 == U'd')) {
      j = i + 2;
    } else if (cps[i] == U'\'' && ((c1 == U'r' && c2 == U'e') || (c1 == U'v' && c2 == U'e') || (c1 == U'l' && c2 == U'l'))) {
      j = i + 3;
    } else {
      // " ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+": the optional U+0020 then a maximal run of one class.
      const std::size_t start = (cps[i] == U' ' && i + 1 < n) ? i + 1 : i;
      const Category cls = category_of(cps[start]);
      if (cls == Category::kLetter || cls == Category::kNumber) {
        j = start + 1;
        while (j < n && category_of(cps[j]) == cls) ++j;
      } else if (cls != Category::kSpace) {
        j = start + 1;
        for (; j < n; ++j) {
          const Category c = category_of(cps[j]);
          if (c == Category::kSpace || c == Category::kLetter || c == Category::kNumber) break;
        }
      } else {
        // "\s+(?!\S)|\s+": the whole run at the end of text; before a non-space, the run minus its last code
        // point (backtracking until the lookahead sees whitespace), or the single code point if that is all.
        std::size_t k = i;
        while (k < n && category_of(cps[k]) == Category::kSpace) ++k;
        j = (k == n || k - i == 1) ? k : k - 1;
      }
    }
    pieces.emplace_back(i, j);
    i = j;
  }
  return pieces;
}

namespace {

// Open-addressing slot for a 64-bit key in a power-of-two table (Fibonacci hashing).
std::size_t slot_of(std::uint64_t key, std::size_t mask) {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

std::uint64_t text_hash(std::string_view s) {  // FNV-1a
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

std::size_t table_size(std::size_t n) {  // power of two >= 2n
  std::size_t size = 16;
  while (size < 2 * n) size *= 2;
  return size;
}

}  // namespace

core::Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::create(std::string_view vocab_json,
                                                                  std::string_view merges) {
  using core::invalid_error;
  using core::range_error;
  using core::type_error;
  const detail::FlatIntObject vocab = detail::read_flat_int_object(vocab_json);
  if (!vocab.parsed) return invalid_error(kCreate, "vocab", "vocab is not valid JSON (" + vocab.reason + ")");
  if (std::string_view(vocab.top_type) != "object") {
    return type_error(kCreate, "vocab",
                      std::string("vocab must be a JSON object mapping each token to its id, got ") + vocab.top_type);
  }
  if (vocab.bad_type[0] != '\0') {
    const std::string where = "vocab[" + core::quote(vocab.bad_key) + "]";
    if (vocab.integer_too_large) return range_error(kCreate, "vocab", where + " must be an id in [0, 2147483647]");
    return type_error(kCreate, "vocab", where + " must be an integer id, got " + vocab.bad_type);
  }
  // Merges: "left right" per line; line numbers count every line of the text from 1.
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  std::vector<std::size_t> line_of;  // line number of each pair
  std::size_t pos = 0, line_no = 0, blank_line = 0;
  while (pos < merges.size()) {
    std::size_t nl = merges.find('\n', pos);
    if (nl == std::string_view::npos) nl = merges.size();
    std::string_view line = merges.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_no == 1 && line.substr(0, 8) == "#version") continue;
    if (line.empty()) {
      if (blank_line == 0) blank_line = line_no;
      continue;
    }
    if (blank_line != 0) {
      return invalid_error(kCreate, "merges", "merges line " + std::to_string(blank_line) +
                                                  " is empty (blank lines are only allowed at the end)");
    }
    std::string_view left, right;
    if (!split_merge(line, &left, &right)) {
      return invalid_error(kCreate, "merges", "merges line " + std::to_string(line_no) +
                                                  " must be two tokens separated by a space, got " + core::quote(line));
    }
    pairs.emplace_back(left, right);
    line_of.push_back(line_no);
  }
  Names names;
  names.merge = [&line_of](std::size_t i) { return "merges line " + std::to_string(line_of[i]); };
  names.merge_ref = [&line_of](std::size_t i) { return "line " + std::to_string(line_of[i]); };
  return create(vocab.entries, pairs, names);
}

core::Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::create(
    std::span<const std::pair<std::string, std::int64_t>> vocab,
    std::span<const std::pair<std::string_view, std::string_view>> merges, const Names& names) {
  using core::invalid_error;
  using core::range_error;
  const std::string& fn = names.fn;
  std::unique_ptr<BpeTokenizer> tok(new BpeTokenizer());
  std::size_t arena_size = 0;
  for (const auto& kv : vocab) arena_size += 2 * kv.first.size();
  if (arena_size > UINT32_MAX) {
    return range_error(fn, names.vocab_arg, names.vocab + " is too large (tokens above 2 GiB in all)");
  }
  tok->arena_.reserve(arena_size);
  tok->entries_.reserve(vocab.size());

  // 1. Entries in document order: id range, non-empty, byte-level characters only.
  for (const auto& [key, value] : vocab) {
    const std::string& token = key;  // named: clang < 16 (em++ 3.1.6) cannot capture structured bindings
    auto where = [&token, &names] { return names.vocab + "[" + core::quote(token) + "]"; };
    if (value < 0 || value > INT32_MAX) return id_range_error(fn.c_str(), names.vocab_arg, where(), value);
    const auto id = static_cast<std::int32_t>(value);
    if (key.empty()) {
      return invalid_error(fn, names.vocab_arg, names.vocab + " has an empty token (id " + std::to_string(id) + ")");
    }
    if (!is_valid_utf8(key)) return invalid_error(fn, names.vocab_arg, where() + " is not valid UTF-8");
    Entry e{id, static_cast<std::uint32_t>(tok->arena_.size()), static_cast<std::uint32_t>(key.size()), 0, 0};
    tok->arena_ += key;
    e.bytes_begin = static_cast<std::uint32_t>(tok->arena_.size());
    for (std::size_t i = 0; i < key.size();) {
      const auto b0 = static_cast<unsigned char>(key[i]);
      char32_t cp = b0;
      std::size_t len = 1;
      if (b0 >= 0xF0) { len = 4; cp = b0 & 0x07u; }
      else if (b0 >= 0xE0) { len = 3; cp = b0 & 0x0Fu; }
      else if (b0 >= 0xC0) { len = 2; cp = b0 & 0x1Fu; }
      for (std::size_t k = 1; k < len && i + k < key.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(key[i + k]) & 0x3Fu);
      i += len;
      const int b = unicode_to_byte(cp);
      if (b < 0) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
        return invalid_error(fn, names.vocab_arg, where() + " contains " + buf +
                                                      ", which is not a GPT-2 byte-level character");
      }
      tok->arena_.push_back(static_cast<char>(b));
    }
    e.bytes_size = static_cast<std::uint32_t>(tok->arena_.size() - e.bytes_begin);
    tok->entries_.push_back(e);
  }

  // 2. Sorted by id (stable: a duplicate id names the earlier token first); ids must be distinct.
  std::stable_sort(tok->entries_.begin(), tok->entries_.end(),
                   [](const Entry& a, const Entry& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < tok->entries_.size(); ++i) {
    const Entry& a = tok->entries_[i - 1];
    const Entry& b = tok->entries_[i];
    if (a.id == b.id) {
      return invalid_error(fn, names.vocab_arg,
                           names.vocab + "[" + core::quote(tok->text_of(a)) + "] and " + names.vocab + "[" +
                               core::quote(tok->text_of(b)) + "] have the same id " + std::to_string(a.id));
    }
  }

  // 3. Token text -> entry index (open addressing; -1 empty), kept for id_of().
  tok->by_text_.assign(table_size(tok->entries_.size()), -1);
  const std::size_t text_mask = tok->by_text_.size() - 1;
  for (std::size_t i = 0; i < tok->entries_.size(); ++i) {
    const std::string_view text = tok->text_of(tok->entries_[i]);
    std::size_t s = slot_of(text_hash(text), text_mask);
    for (; tok->by_text_[s] >= 0; s = (s + 1) & text_mask) {
      if (tok->text_of(tok->entries_[static_cast<std::size_t>(tok->by_text_[s])]) == text) {
        return invalid_error(fn, names.vocab_arg, names.vocab + " lists the token " + core::quote(text) + " twice");
      }
    }
    tok->by_text_[s] = static_cast<std::int32_t>(i);
  }
  for (int b = 0; b < 256; ++b) {
    std::string s;
    append_utf8(s, gpt2_byte_to_unicode(static_cast<std::uint8_t>(b)));
    const std::int32_t index = tok->find_text(s);
    if (index < 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02X", b);
      return invalid_error(fn, names.vocab_arg,
                           names.vocab + " has no entry for " + core::quote(s) + ", the token of byte " + buf);
    }
    tok->byte_index_[b] = index;
  }

  // 4. Merges in priority order: both tokens and their concatenation in the vocab, each pair once.
  tok->merges_.assign(table_size(merges.size() + 1), MergeSlot{0, -1, 0});
  std::string joined;  // left + right, reused
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const auto [left, right] = merges[i];
    joined.assign(left).append(right);
    const std::int32_t l = tok->find_text(left), r = tok->find_text(right), m = tok->find_text(joined);
    if (l < 0) {
      return invalid_error(fn, names.merges_arg,
                           names.merge(i) + ": token " + core::quote(left) + " is not in the vocab");
    }
    if (r < 0) {
      return invalid_error(fn, names.merges_arg,
                           names.merge(i) + ": token " + core::quote(right) + " is not in the vocab");
    }
    if (m < 0) {
      return invalid_error(fn, names.merges_arg,
                           names.merge(i) + ": merged token " + core::quote(joined) + " is not in the vocab");
    }
    MergeSlot* slot = tok->merge_slot(pair_key(l, r));
    if (slot->rank >= 0) {
      return invalid_error(fn, names.merges_arg,
                           names.merge(i) + " repeats the merge " +
                               core::quote(std::string(left) + " " + std::string(right)) +
                               " of " + names.merge_ref(static_cast<std::size_t>(slot->rank)));
    }
    *slot = MergeSlot{pair_key(l, r), static_cast<std::int32_t>(i), m};
  }
  return tok;
}

std::int32_t BpeTokenizer::find_text(std::string_view text) const {
  const std::size_t mask = by_text_.size() - 1;
  for (std::size_t s = slot_of(text_hash(text), mask);; s = (s + 1) & mask) {
    if (by_text_[s] < 0) return -1;
    if (text_of(entries_[static_cast<std::size_t>(by_text_[s])]) == text) return by_text_[s];
  }
}

std::int32_t BpeTokenizer::id_of(std::string_view token) const {
  const std::int32_t index = find_text(token);
  return index < 0 ? -1 : entries_[static_cast<std::size_t>(index)].id;
}

BpeTokenizer::MergeSlot* BpeTokenizer::merge_slot(std::uint64_t key) {
  const std::size_t mask = merges_.size() - 1;
  std::size_t s = slot_of(key, mask);
  while (merges_[s].rank >= 0 && merges_[s].key != key) s = (s + 1) & mask;
  return &merges_[s];
}

const BpeTokenizer::MergeSlot* BpeTokenizer::find_merge(std::int32_t left, std::int32_t right) const {
  const std::uint64_t key = pair_key(left, right);
  const std::size_t mask = merges_.size() - 1;
  for (std::size_t s = slot_of(key, mask);; s = (s + 1) & mask) {
    if (merges_[s].rank < 0) return nullptr;
    if (merges_[s].key == key) return &merges_[s];
  }
}

const BpeTokenizer::Entry* BpeTokenizer::find_id(std::int32_t id) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), id,
                             [](const Entry& e, std::int32_t v) { return e.id < v; });
  return it != entries_.end() && it->id == id ? &*it : nullptr;
}

const std::vector<std::int32_t>& BpeTokenizer::bpe(std::string_view bytes) const {
  auto hit = cache_.find(std::string(bytes));
  if (hit != cache_.end()) return hit->second;
  std::vector<std::int32_t> word, next;
  word.reserve(bytes.size());
  for (char c : bytes) word.push_back(byte_index_[static_cast<unsigned char>(c)]);
  // As encoder.py: repeatedly take the adjacent pair with the lowest merge rank and merge every occurrence of it,
  // left to right without overlap, until no adjacent pair is a merge.
  while (word.size() > 1) {
    const MergeSlot* best = nullptr;
    std::int32_t best_left = 0, best_right = 0;
    for (std::size_t k = 0; k + 1 < word.size(); ++k) {
      const MergeSlot* m = find_merge(word[k], word[k + 1]);
      if (m != nullptr && (best == nullptr || m->rank < best->rank)) {
        best = m;
        best_left = word[k];
        best_right = word[k + 1];
      }
    }
    if (best == nullptr) break;
    next.clear();
    for (std::size_t k = 0; k < word.size();) {
      if (k + 1 < word.size() && word[k] == best_left && word[k + 1] == best_right) {
        next.push_back(best->merged);
        k += 2;
      } else {
        next.push_back(word[k++]);
      }
    }
    word.swap(next);
  }
  if (cache_.size() >= kMaxCacheEntries) cache_.clear();
  return cache_.emplace(std::string(bytes), std::move(word)).first->second;
}

core::Result<Tokenization> BpeTokenizer::encode(std::string_view utf8) const {
  auto decoded = decode_utf8(utf8, "encode", "text");
  if (!decoded.ok()) return decoded.status();
  const DecodedText& t = decoded.value();
  // Code point index of every byte, to turn token byte ranges into UTF-16 ranges.
  std::vector<std::int32_t> cp_of_byte(utf8.size());
  for (std::size_t p = 0; p < t.cps.size(); ++p) {
    for (auto b = t.byte_offset[p]; b < t.byte_offset[p + 1]; ++b) {
      cp_of_byte[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(p);
    }
  }
  Tokenization out;
  for (const auto& [first, last] : gpt2_pretokenize(t.cps)) {
    auto byte = static_cast<std::size_t>(t.byte_offset[first]);
    const auto end = static_cast<std::size_t>(t.byte_offset[last]);
    const std::vector<std::int32_t> pieces = bpe(utf8.substr(byte, end - byte));  // copy: the cache may be cleared
    for (std::int32_t index : pieces) {
      const Entry& e = entries_[static_cast<std::size_t>(index)];
      const std::string_view bytes = bytes_of(e);
      out.ids.push_back(e.id);
      out.tokens.emplace_back(is_valid_utf8(bytes) ? bytes : text_of(e));
      const auto cp_first = static_cast<std::size_t>(cp_of_byte[byte]);
      const auto cp_last = static_cast<std::size_t>(cp_of_byte[byte + bytes.size() - 1]);
      out.offsets.push_back(t.utf16_offset[cp_first]);
      out.offsets.push_back(t.utf16_offset[cp_last + 1]);
      byte += bytes.size();
    }
  }
  return out;
}

core::Result<std::string> BpeTokenizer::decode(std::span<const std::int32_t> ids) const {
  std::string bytes;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Entry* e = find_id(ids[i]);
    if (e == nullptr) return unknown_id_error(i, ids[i]);
    bytes += bytes_of(*e);
  }
  return replace_invalid_utf8(bytes);
}

std::size_t BpeTokenizer::vocab_size() const { return entries_.size(); }

std::string BpeTokenizer::token_text(std::int32_t id) const {
  const Entry* e = find_id(id);
  return e == nullptr ? std::string() : std::string(text_of(*e));
}

}  // namespace attnscope::tokenizers
