// Unicode helpers: range-table lookups, UTF-8 decoding with offsets and UAX #29 grapheme segmentation (UTF-8
// well-formedness and repair are core/text.h's).
// Layer: tokenizers (depends on core/ only).
#include "tokenizers/unicode.h"

#include <cstdio>
#include <iterator>

namespace attnscope::tokenizers {
namespace {

struct UnicodeRange {
  std::uint32_t first;
  std::uint32_t last;
  std::uint8_t value;
};

// Lowercase: every stride-th code point of [first, last] maps to cp + delta.
struct DeltaRange {
  std::uint32_t first;
  std::uint32_t last;
  std::int32_t delta;
  std::uint32_t stride;
};
// Accent stripping: code points [first, first + count) with count = (code >> 21) + 1 all become `out`.
struct StripRange {
  std::uint32_t code;  // first | (count - 1) << 21
  std::uint32_t out;
};
struct StripMulti {
  std::uint32_t cp;
  std::uint32_t out[3];  // 0 = unused
};
enum BertFlag : std::uint8_t { kControl = 1, kPunctuation = 2, kNonspacingMark = 4, kNonStarter = 8 };

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


}  // namespace

Category category_of(char32_t cp) { return static_cast<Category>(lookup(kCategoryRanges, cp)); }
GraphemeBreak grapheme_break_of(char32_t cp) { return static_cast<GraphemeBreak>(lookup(kGraphemeRanges, cp)); }
const char* unicode_version() { return kUnicodeVersion; }

bool is_other_category(char32_t cp) { return (lookup(kBertRanges, cp) & kControl) != 0; }
bool is_bert_punctuation(char32_t cp) { return (lookup(kBertRanges, cp) & kPunctuation) != 0; }
bool is_nonspacing_mark(char32_t cp) { return (lookup(kBertRanges, cp) & kNonspacingMark) != 0; }

std::uint8_t combining_class_unless_mn(char32_t cp) {
  const std::uint8_t flags = lookup(kBertRanges, cp);
  if ((flags & kNonStarter) == 0) return 0;
  return (flags & kNonspacingMark) != 0 ? 255 : lookup(kNonMnCombining, cp);
}

std::size_t lowercase(char32_t cp, char32_t out[2]) {
  if (cp == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE -> "i" + COMBINING DOT ABOVE (SpecialCasing.txt)
    out[0] = U'i';
    out[1] = 0x307;
    return 2;
  }
  std::size_t lo = 0, hi = std::size(kLowercaseRanges);  // last range with first <= cp
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (kLowercaseRanges[mid].first <= cp) lo = mid + 1; else hi = mid;
  }
  out[0] = cp;
  if (lo > 0) {
    const DeltaRange& r = kLowercaseRanges[lo - 1];
    if (cp <= r.last && (cp - r.first) % r.stride == 0) out[0] = static_cast<char32_t>(static_cast<std::int64_t>(cp) + r.delta);
  }
  return 1;
}

std::size_t decompose_without_marks(char32_t cp, char32_t out[3]) {
  if (cp >= 0xAC00 && cp <= 0xD7A3) {  // Hangul syllable: L V (T), Unicode 14 §3.12
    const char32_t s = cp - 0xAC00;
    out[0] = 0x1100 + s / 588;
    out[1] = 0x1161 + (s % 588) / 28;
    if (s % 28 == 0) return 2;
    out[2] = 0x11A7 + s % 28;
    return 3;
  }
  std::size_t lo = 0, hi = std::size(kStripRanges);
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if ((kStripRanges[mid].code & 0x1FFFFFu) <= cp) lo = mid + 1; else hi = mid;
  }
  if (lo > 0) {
    const StripRange& r = kStripRanges[lo - 1];
    if (cp - (r.code & 0x1FFFFFu) <= (r.code >> 21)) {
      out[0] = r.out;
      return 1;
    }
  }
  lo = 0;
  hi = std::size(kStripMulti);
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (kStripMulti[mid].cp < cp) lo = mid + 1; else hi = mid;
  }
  if (lo < std::size(kStripMulti) && kStripMulti[lo].cp == cp) {
    std::size_t n = 0;
    for (std::uint32_t c : kStripMulti[lo].out) {
      if (c != 0) out[n++] = c;
    }
    return n;
  }
  const std::uint8_t flags = lookup(kBertRanges, cp);
  if ((flags & kNonspacingMark) != 0) {
    if ((flags & kNonStarter) != 0) return 0;
    out[0] = kReorderBarrier;
    return 1;
  }
  out[0] = cp;
  return 1;
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
    const std::size_t len = core::utf8_sequence_at(utf8, i, &cp, &prefix);
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
