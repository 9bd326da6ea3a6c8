// Word and character tokenizers with UTF-16 offsets (the JS `tokenize(text, { kind })`).
// Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace attnscope::tokenizers {

// One tokenized text. offsets holds 2 entries per token, [start, end) in UTF-16 code units of the ORIGINAL
// text (a JS string index: a code point above U+FFFF, such as most emoji, counts 2). ids is filled by BPE only.
struct Tokenization {
  std::vector<std::string> tokens;    // UTF-8 text of each token
  std::vector<std::int32_t> offsets;  // 2 per token
  std::vector<std::int32_t> ids;      // BPE only (empty for word/char)
};

enum class Kind { kWord, kChar };

// Splits UTF-8 text (invalid UTF-8 -> TypeError "tokenize: text is not valid UTF-8 (...)").
// Both kinds work on extended grapheme clusters (UAX #29, Unicode 14; see unicode.h) and skip clusters made only
// of White_Space code points.
//  kChar: every other cluster is one token: "e" + U+0301 is one token, a ZWJ family emoji or a flag is one token,
//         each CJK character is one token.
//  kWord: clusters that start with a letter or digit (General_Category L*, N*; their combining marks belong to
//         the cluster) are joined into maximal runs, one token per run; every other cluster is a token of its own.
//         Example: "don't stop 3.5x" -> "don" "'" "t" "stop" "3" "." "5x".
// A cluster that begins with whitespace but carries a combining mark (" " + U+0301) is not all whitespace and
// is kept as one token, space included.
core::Result<Tokenization> tokenize(std::string_view utf8, Kind kind);

}  // namespace attnscope::tokenizers
