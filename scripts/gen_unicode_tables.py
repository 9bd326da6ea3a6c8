#!/usr/bin/python3
"""Generates src/tokenizers/unicode_tables.inc: compact code point range tables used by the tokenizers.

Two tables, each a sorted list of {first, last, value} ranges (code points not listed have value 0):
  kCategoryRanges  - kLetter (General_Category L*), kNumber (N*), kMark (M*), kSpace (White_Space)
  kGraphemeRanges  - Grapheme_Cluster_Break values of UAX #29, plus Extended_Pictographic
and the data of the BERT normalizer (src/tokenizers/wordpiece.cpp):
  kBertRanges      - flag bits: 1 control (General_Category C*), 2 BERT punctuation (ASCII 33-47, 58-64, 91-96,
                     123-126 and P*), 4 nonspacing mark (Mn), 8 non-starter (Canonical_Combining_Class != 0)
  kNonMnCombining  - {cp, cp, ccc} for the non-starters that are not Mn (the only ones whose order survives
                     accent stripping)
  kLowercaseRanges - {first, last, delta, stride}: every stride-th code point from first maps to cp + delta
                     (single-code-point lowercase; U+0130, the one multi-code-point lowercase, is handled in code)
  kStripRanges     - {first | (count - 1) << 21, out}: NFD without Mn marks is the one code point `out` for
                     count code points from first (Hangul syllables are decomposed algorithmically in code)
  kStripMulti      - {cp, {a, b, c}}: NFD without Mn is empty or 2-3 code points (unused slots 0); 0x110000
                     stands for a dropped Mn of combining class 0, which still separates non-starters
tests/fixtures/wordpiece/check_unicode_tables.py compares the C++ lookups of these with unicodedata for every code
point (must print "0 mismatches").

Source: Python's unicodedata (Unicode version printed into the output). unicodedata has General_Category
but neither White_Space, Grapheme_Cluster_Break nor Extended_Pictographic, so those are derived here from
their UAX #29 / UTS #51 definitions with the short hand-written lists below (copied from the Unicode 14.0
PropList.txt, IndicSyllabicCategory.txt and emoji-data.txt). Run with --check-perl to compare every
derived property with Perl's own Unicode tables (\\p{GCB=..}, \\p{ExtPict}, \\p{White_Space}), which are
independent of this script; the check must print "0 mismatches".

Usage: /usr/bin/python3 scripts/gen_unicode_tables.py [--check-perl]   (writes the .inc in place)
"""
import os
import subprocess
import sys
import unicodedata

MAX_CP = 0x10FFFF

# White_Space (PropList.txt). Python's str.isspace() also accepts U+001C..U+001F, which are not White_Space.
WHITE_SPACE = [(0x0009, 0x000D), (0x0020, 0x0020), (0x0085, 0x0085), (0x00A0, 0x00A0), (0x1680, 0x1680),
               (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]

# Other_Grapheme_Extend (PropList.txt, Unicode 14.0): Grapheme_Extend = Mn + Me + these.
OTHER_GRAPHEME_EXTEND = [(0x09BE, 0x09BE), (0x09D7, 0x09D7), (0x0B3E, 0x0B3E), (0x0B57, 0x0B57),
                         (0x0BBE, 0x0BBE), (0x0BD7, 0x0BD7), (0x0CC2, 0x0CC2), (0x0CD5, 0x0CD6),
                         (0x0D3E, 0x0D3E), (0x0D57, 0x0D57), (0x0DCF, 0x0DCF), (0x0DDF, 0x0DDF),
                         (0x1B35, 0x1B35), (0x200C, 0x200C), (0x302E, 0x302F), (0xFF9E, 0xFF9F),
                         (0x1133E, 0x1133E), (0x11357, 0x11357), (0x114B0, 0x114B0), (0x114BD, 0x114BD),
                         (0x115AF, 0x115AF), (0x11930, 0x11930), (0x1D165, 0x1D165), (0x1D16E, 0x1D172),
                         (0xE0020, 0xE007F)]

# Emoji_Modifier (emoji-data.txt): the skin tones, Extend for grapheme purposes.
EMOJI_MODIFIER = [(0x1F3FB, 0x1F3FF)]

# Prepend = Indic_Syllabic_Category Consonant_Preceding_Repha / Consonant_Prefixed, and
# Prepended_Concatenation_Mark (Unicode 14.0).
PREPENDED_CONCATENATION_MARK = [(0x0600, 0x0605), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891),
                                (0x08E2, 0x08E2), (0x110BD, 0x110BD), (0x110CD, 0x110CD)]
PREPEND_INDIC = [(0x0D4E, 0x0D4E), (0x111C2, 0x111C3), (0x1193F, 0x1193F), (0x11941, 0x11941),
                 (0x11A3A, 0x11A3A), (0x11A84, 0x11A89), (0x11D46, 0x11D46)]

# SpacingMark = Mc that is not Grapheme_Extend, minus these exceptions, plus U+0E33 and U+0EB3 (UAX #29).
SPACING_MARK_EXCEPTIONS = [(0x102B, 0x102C), (0x1038, 0x1038), (0x1062, 0x1064), (0x1067, 0x106D),
                           (0x1083, 0x1083), (0x1087, 0x108C), (0x108F, 0x108F), (0x109A, 0x109C),
                           (0x1A61, 0x1A61), (0x1A63, 0x1A64), (0xAA7B, 0xAA7B), (0xAA7D, 0xAA7D),
                           (0x11720, 0x11721)]
SPACING_MARK_EXTRA = [(0x0E33, 0x0E33), (0x0EB3, 0x0EB3)]

# Control also takes unassigned Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 14.0).
UNASSIGNED_DEFAULT_IGNORABLE = [(0x2065, 0x2065), (0xFFF0, 0xFFF8), (0xE0000, 0xE0000), (0xE0002, 0xE001F),
                                (0xE0080, 0xE00FF), (0xE01F0, 0xE0FFF)]

# Extended_Pictographic (emoji-data.txt, Unicode 14.0), as ranges.
EXTENDED_PICTOGRAPHIC = [
    (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122),
    (0x2139, 0x2139), (0x2194, 0x2199), (0x21A9, 0x21AA), (0x231A, 0x231B), (0x2328, 0x2328),
    (0x2388, 0x2388), (0x23CF, 0x23CF), (0x23E9, 0x23F3), (0x23F8, 0x23FA), (0x24C2, 0x24C2),
    (0x25AA, 0x25AB), (0x25B6, 0x25B6), (0x25C0, 0x25C0), (0x25FB, 0x25FE), (0x2600, 0x2605),
    (0x2607, 0x2612), (0x2614, 0x2685), (0x2690, 0x2705), (0x2708, 0x2712), (0x2714, 0x2714),
    (0x2716, 0x2716), (0x271D, 0x271D), (0x2721, 0x2721), (0x2728, 0x2728), (0x2733, 0x2734),
    (0x2744, 0x2744), (0x2747, 0x2747), (0x274C, 0x274C), (0x274E, 0x274E), (0x2753, 0x2755),
    (0x2757, 0x2757), (0x2763, 0x2767), (0x2795, 0x2797), (0x27A1, 0x27A1), (0x27B0, 0x27B0),
    (0x27BF, 0x27BF), (0x2934, 0x2935), (0x2B05, 0x2B07), (0x2B1B, 0x2B1C), (0x2B50, 0x2B50),
    (0x2B55, 0x2B55), (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3297), (0x3299, 0x3299),
    (0x1F000, 0x1F0FF), (0x1F10D, 0x1F10F), (0x1F12F, 0x1F12F), (0x1F16C, 0x1F171), (0x1F17E, 0x1F17F),
    (0x1F18E, 0x1F18E), (0x1F191, 0x1F19A), (0x1F1AD, 0x1F1E5), (0x1F201, 0x1F20F), (0x1F21A, 0x1F21A),
    (0x1F22F, 0x1F22F), (0x1F232, 0x1F23A), (0x1F23C, 0x1F23F), (0x1F249, 0x1F3FA), (0x1F400, 0x1F53D),
    (0x1F546, 0x1F64F), (0x1F680, 0x1F6FF), (0x1F774, 0x1F77F), (0x1F7D5, 0x1F7FF), (0x1F80C, 0x1F80F),
    (0x1F848, 0x1F84F), (0x1F85A, 0x1F85F), (0x1F888, 0x1F88F), (0x1F8AE, 0x1F8FF), (0x1F90C, 0x1F93A),
    (0x1F93C, 0x1F945), (0x1F947, 0x1FAFF), (0x1FC00, 0x1FFFD)]

# Value names, in the order of the C++ enums in unicode.h.
CATEGORY = ["Other", "Letter", "Number", "Mark", "Space"]
GCB = ["Other", "CR", "LF", "Control", "Extend", "ZWJ", "RegionalIndicator", "Prepend", "SpacingMark",
       "L", "V", "T", "LV", "LVT", "ExtendedPictographic"]


def in_ranges(cp, ranges):
    return any(a <= cp <= b for a, b in ranges)


def expand(ranges):
    out = set()
    for a, b in ranges:
        out.update(range(a, b + 1))
    return out


def category(cp):
    if cp in WS:
        return "Space"
    gc = unicodedata.category(chr(cp))
    return {"L": "Letter", "N": "Number", "M": "Mark"}.get(gc[0], "Other")


def grapheme(cp):
    gc = unicodedata.category(chr(cp))
    if cp == 0x0D:
        return "CR"
    if cp == 0x0A:
        return "LF"
    if cp == 0x200D:
        return "ZWJ"
    if 0x1F1E6 <= cp <= 0x1F1FF:
        return "RegionalIndicator"
    if gc in ("Mn", "Me") or cp in OGE or cp in EMOD:
        return "Extend"
    if cp in PREPEND:
        return "Prepend"
    if gc in ("Zl", "Zp", "Cc", "Cs", "Cf") or cp in UDI:
        return "Control"
    if (gc == "Mc" and cp not in SM_EXC) or cp in SM_EXTRA:
        return "SpacingMark"
    if 0x1100 <= cp <= 0x115F or 0xA960 <= cp <= 0xA97C:
        return "L"
    if 0x1160 <= cp <= 0x11A7 or 0xD7B0 <= cp <= 0xD7C6:
        return "V"
    if 0x11A8 <= cp <= 0x11FF or 0xD7CB <= cp <= 0xD7FB:
        return "T"
    if 0xAC00 <= cp <= 0xD7A3:
        return "LV" if (cp - 0xAC00) % 28 == 0 else "LVT"
    if cp in EP:
        return "ExtendedPictographic"
    return "Other"


WS = expand(WHITE_SPACE)
OGE = expand(OTHER_GRAPHEME_EXTEND)
EMOD = expand(EMOJI_MODIFIER)
PREPEND = expand(PREPENDED_CONCATENATION_MARK + PREPEND_INDIC)
SM_EXC = expand(SPACING_MARK_EXCEPTIONS)
SM_EXTRA = expand(SPACING_MARK_EXTRA)
UDI = expand(UNASSIGNED_DEFAULT_IGNORABLE)
EP = expand(EXTENDED_PICTOGRAPHIC)


def ranges_of(fn):
    """[(first, last, name)] over all code points, name != 'Other', adjacent equal values merged."""
    out = []
    for cp in range(MAX_CP + 1):
        v = fn(cp)
        if v == "Other":
            continue
        if out and out[-1][2] == v and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp, v])
    return out


def check_perl(cat_ranges, gcb_ranges):
    """Compares the derived properties with Perl's Unicode tables; returns the mismatch count."""
    perl = r'''
use strict; binmode STDOUT;
my @gcb = qw(CR LF Control Extend ZWJ Regional_Indicator Prepend SpacingMark L V T LV LVT);
for my $cp (0 .. 0x10FFFF) {
  next if $cp >= 0xD800 && $cp <= 0xDFFF;
  my $c = chr($cp); my $g = "Other";
  for my $v (@gcb) { if ($c =~ /\p{GCB=$v}/) { $g = $v; last; } }
  my $ep = ($c =~ /\p{Extended_Pictographic}/) ? 1 : 0;
  my $ws = ($c =~ /\p{White_Space}/) ? 1 : 0;
  print "$cp $g $ep $ws\n";
}'''
    out = subprocess.run(["perl", "-e", perl], capture_output=True, text=True, check=True).stdout
    gmap = {"Regional_Indicator": "RegionalIndicator"}
    mismatches = 0
    for line in out.splitlines():
        cp_s, g, ep, ws = line.split()
        cp = int(cp_s)
        mine = grapheme(cp)
        want = gmap.get(g, g)
        if want == "Other" and ep == "1":
            want = "ExtendedPictographic"
        if mine != want or (cp in WS) != (ws == "1"):
            mismatches += 1
            if mismatches <= 20:
                print(f"mismatch U+{cp:04X}: mine {mine} ws {cp in WS}, perl {want} ws {ws}")
    print(f"{mismatches} mismatches")
    return mismatches


BARRIER = 0x110000


def bert_flags(cp):
    ch = chr(cp)
    gc = unicodedata.category(ch)
    flags = 0
    if gc[0] == "C":
        flags |= 1
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or gc[0] == "P":
        flags |= 2
    if gc == "Mn":
        flags |= 4
    if unicodedata.combining(ch) != 0:
        flags |= 8
    return flags


def bert_tables():
    """Rows of kBertRanges, kNonMnCombining, kLowercaseRanges, kStripRanges, kStripPairs (see the docstring)."""
    flags = []
    for cp in range(MAX_CP + 1):
        f = bert_flags(cp)
        if f and flags and flags[-1][1] == cp - 1 and flags[-1][2] == f:
            flags[-1][1] = cp
        elif f:
            flags.append([cp, cp, f])
    non_mn = [(cp, cp, unicodedata.combining(chr(cp))) for cp in range(MAX_CP + 1)
              if unicodedata.combining(chr(cp)) and unicodedata.category(chr(cp)) != "Mn"]
    lower = []  # [first, last, delta, stride]; stride 0 while a run has one member
    for cp in range(MAX_CP + 1):
        low = chr(cp).lower()
        if len(low) != 1 or low == chr(cp):
            continue
        delta = ord(low) - cp
        if lower and lower[-1][2] == delta and (cp - lower[-1][1] == lower[-1][3] or
                                               (lower[-1][3] == 0 and cp - lower[-1][1] in (1, 2))):
            lower[-1][3] = cp - lower[-1][1]
            lower[-1][1] = cp
        else:
            lower.append([cp, cp, delta, 0])
    lower = [(a, b, d, st or 1) for a, b, d, st in lower]
    strip, pairs = [], []
    for cp in range(MAX_CP + 1):
        if 0xAC00 <= cp <= 0xD7A3 or 0xD800 <= cp <= 0xDFFF:
            continue
        nfd = unicodedata.normalize("NFD", chr(cp))
        if nfd == chr(cp):
            continue
        # A dropped Mn that is a starter (ccc 0) still ends a run of non-starters for canonical reordering: it
        # stays as BARRIER (0x110000, not a code point).
        out = [ord(c) if unicodedata.category(c) != "Mn" else BARRIER for c in nfd
               if unicodedata.category(c) != "Mn" or unicodedata.combining(c) == 0]
        if len(out) == 1 and out[0] != BARRIER:
            if strip and strip[-1][1] == cp - 1 and strip[-1][2] == out[0] and strip[-1][1] - strip[-1][0] < 2047:
                strip[-1][1] = cp
            else:
                strip.append([cp, cp, out[0]])
        else:
            assert len(out) <= 3, hex(cp)
            out += [0] * (3 - len(out))
            pairs.append((cp, out[0], out[1], out[2]))
    return flags, non_mn, lower, strip, pairs


def emit_rows(decl, rows, fmt, per_row):
    lines = [decl + " = {"]
    for i in range(0, len(rows), per_row):
        lines.append("    " + ",".join(fmt(r) for r in rows[i:i + per_row]) + ",")
    lines.append("};")
    return "\n".join(lines)


def emit(name, enum, ranges):
    lines = [f"inline constexpr UnicodeRange {name}[] = {{"]
    row = []
    for a, b, v in ranges:
        row.append(f"{{0x{a:X},0x{b:X},{enum.index(v)}}}")
        if len(row) == 6:
            lines.append("    " + ",".join(row) + ",")
            row = []
    if row:
        lines.append("    " + ",".join(row) + ",")
    lines.append("};")
    return "\n".join(lines)


def main():
    cat_ranges = ranges_of(category)
    gcb_ranges = ranges_of(grapheme)
    if "--check-perl" in sys.argv:
        sys.exit(1 if check_perl(cat_ranges, gcb_ranges) else 0)
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "src", "tokenizers", "unicode_tables.inc")
    flags, non_mn, lower, strip, pairs = bert_tables()
    text = "\n".join([
        "// GENERATED by scripts/gen_unicode_tables.py from Python unicodedata "
        f"{unicodedata.unidata_version}; do not edit.",
        "// Included only by src/tokenizers/unicode.cpp. Values index the enums in unicode.h:",
        "//   category: " + ", ".join(f"{i}={n}" for i, n in enumerate(CATEGORY)),
        "//   grapheme: " + ", ".join(f"{i}={n}" for i, n in enumerate(GCB)),
        f'inline constexpr const char kUnicodeVersion[] = "{unicodedata.unidata_version}";',
        emit("kCategoryRanges", CATEGORY, cat_ranges),
        emit("kGraphemeRanges", GCB, gcb_ranges),
        "// BERT normalizer data (see scripts/gen_unicode_tables.py).",
        emit_rows("inline constexpr UnicodeRange kBertRanges[]", flags, lambda r: f"{{0x{r[0]:X},0x{r[1]:X},{r[2]}}}", 6),
        emit_rows("inline constexpr UnicodeRange kNonMnCombining[]", non_mn,
                  lambda r: f"{{0x{r[0]:X},0x{r[1]:X},{r[2]}}}", 6),
        emit_rows("inline constexpr DeltaRange kLowercaseRanges[]", lower,
                  lambda r: f"{{0x{r[0]:X},0x{r[1]:X},{r[2]},{r[3]}}}", 5),
        emit_rows("inline constexpr StripRange kStripRanges[]", strip,
                  lambda r: f"{{0x{r[0] | (r[1] - r[0]) << 21:X},0x{r[2]:X}}}", 6),
        emit_rows("inline constexpr StripMulti kStripMulti[]", pairs, lambda r: f"{{0x{r[0]:X},{{0x{r[1]:X},0x{r[2]:X},0x{r[3]:X}}}}}", 5),
        "",
    ])
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}: {len(cat_ranges)} category ranges, {len(gcb_ranges)} grapheme ranges, {len(flags)} BERT "
          f"ranges, {len(lower)} lowercase ranges, {len(strip)} + {len(pairs)} accent-stripping rows")


if __name__ == "__main__":
    main()
