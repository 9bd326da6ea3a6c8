// Unicode helpers: range-table lookups, UTF-8 decoding/repair and UAX #29 grapheme segmentation.
// Layer: tokenizers (depends on core/ only).
#include "tokenizers/unicode.h"

#include <cstdio>

namespace attnscope::tokenizers {
namespace {

struct UnicodeRange {
  std::uint32_t first;
  std::uint32_t last;
  std::uint8_t value;
};

#include "tokenizers/unicode_tables.inc"

template <std::size_t N>
std::uint8_t lookup(const UnicodeRange (&table)[N], char32_t cp) {
  std::size_t lo = 0, hi = N;  // binary search for the last range with first <= cp
  while (lo < hi) {
    std::size_t mid = (lo + hi) / 2;
    if (table[mid].first <= cp) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return 0;
  const UnicodeRange& r = table[lo - 1];
  return cp <= r.last ? r.value : 0;
}

// Length of the well-formed UTF-8 sequence at s[i], or 0 if ill-formed; *valid_prefix receives how many bytes
// (>= 1) form the maximal ill-formed subpart to replace / skip (Unicode 15 §3.9, "U+FFFD substitution").
std::size_t sequence_at(std::string_view s, std::size_t i, char32_t* cp, std::size_t* valid_prefix) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  *valid_prefix = 1;
  if (b0 < 0x80) { *cp = b0; return 1; }
  std::size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  char32_t value;
  if (b0 >= 0xC2 && b0 <= 0xDF) { need = 1; value = b0 & 0x1Fu; }
  else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2; value = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3; value = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  for (std::size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return 0;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
    value = (value << 6) | (b & 0x3Fu);
    *valid_prefix = k + 1;
  }
  *cp = value;
  return need + 1;
}

}  // namespace

Category category_of(char32_t cp) { return static_cast<Category>(lookup(kCategoryRanges, cp)); }
GraphemeBreak grapheme_break_of(char32_t cp) { return static_cast<GraphemeBreak>(lookup(kGraphemeRanges, cp)); }
const char* unicode_version() { return kUnicodeVersion; }

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

core::Result<DecodedText> decode_utf8(std::string_view utf8, const char* fn, const char* arg) {
  DecodedText t;
  t.cps.reserve(utf8.size());
  t.byte_offset.reserve(utf8.size() + 1);
  t.utf16_offset.reserve(utf8.size() + 1);
  std::int32_t u16 = 0;
  std::size_t i = 0;
  while (i < utf8.size()) {
    char32_t cp = 0;
    std::size_t prefix = 0;
    const std::size_t len = sequence_at(utf8, i, &cp, &prefix);
    if (len == 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " is not valid UTF-8 (ill-formed sequence starting with byte 0x%02X at byte %zu)",
                    static_cast<unsigned>(static_cast<unsigned char>(utf8[i])), i);
      return core::type_error(fn, arg, std::string(arg) + buf);
    }
    t.cps.push_back(cp);
    t.byte_offset.push_back(static_cast<std::int32_t>(i));
    t.utf16_offset.push_back(u16);
    u16 += cp >= 0x10000 ? 2 : 1;
    i += len;
  }
  t.byte_offset.push_back(static_cast<std::int32_t>(utf8.size()));
  t.utf16_offset.push_back(u16);
  return t;
}

bool is_valid_utf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    char32_t cp;
    std::size_t prefix;
    const std::size_t len = sequence_at(bytes, i, &cp, &prefix);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string replace_invalid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    char32_t cp;
    std::size_t prefix;
    const std::size_t len = sequence_at(bytes, i, &cp, &prefix);
    if (len == 0) {
      append_utf8(out, 0xFFFD);
      i += prefix;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::vector<std::size_t> grapheme_boundaries(std::span<const char32_t> cps) {
  using G = GraphemeBreak;
  std::vector<std::size_t> bounds{0};
  const std::size_t n = cps.size();
  if (n == 0) return bounds;
  G prev = grapheme_break_of(cps[0]);
  // emoji_run: the code points so far end in Extended_Pictographic Extend* (GB11's left context before ZWJ);
  // emoji_run_before_prev is that state one code point earlier, i.e. before `prev`.
  bool emoji_run = prev == G::kExtendedPictographic;
  bool emoji_run_before_prev = false;
  std::size_t ri_run = prev == G::kRegionalIndicator ? 1 : 0;  // regional indicators ending at prev
  for (std::size_t i = 1; i < n; ++i) {
    const G cur = grapheme_break_of(cps[i]);
    bool join;
    if (prev == G::kCR && cur == G::kLF) join = true;                                          // GB3
    else if (prev == G::kControl || prev == G::kCR || prev == G::kLF) join = false;            // GB4
    else if (cur == G::kControl || cur == G::kCR || cur == G::kLF) join = false;               // GB5
    else if (prev == G::kL && (cur == G::kL || cur == G::kV || cur == G::kLV || cur == G::kLVT)) join = true;  // GB6
    else if ((prev == G::kLV || prev == G::kV) && (cur == G::kV || cur == G::kT)) join = true;  // GB7
    else if ((prev == G::kLVT || prev == G::kT) && cur == G::kT) join = true;                   // GB8
    else if (cur == G::kExtend || cur == G::kZWJ || cur == G::kSpacingMark) join = true;        // GB9, GB9a
    else if (prev == G::kPrepend) join = true;                                                  // GB9b
    else if (prev == G::kZWJ && cur == G::kExtendedPictographic && emoji_run_before_prev) join = true;  // GB11
    else if (prev == G::kRegionalIndicator && cur == G::kRegionalIndicator && ri_run % 2 == 1) join = true;  // GB12/13
    else join = false;                                                                          // GB999
    if (!join) bounds.push_back(i);
    emoji_run_before_prev = emoji_run;
    if (cur == G::kExtendedPictographic) emoji_run = true;
    else if (cur != G::kExtend) emoji_run = false;
    ri_run = cur == G::kRegionalIndicator ? ri_run + 1 : 0;
    prev = cur;
  }
  bounds.push_back(n);
  return bounds;
}

}  // namespace attnscope::tokenizers
