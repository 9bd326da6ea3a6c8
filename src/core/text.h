// Text rules every layer's messages share, each written once: UTF-8 well-formedness and repair, quoting user
// text in an error message, and a tensor shape as text. Layer: core (depends on nothing).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::core {

// ---- UTF-8 -------------------------------------------------------------------------------------------------

// Length of the well-formed UTF-8 sequence at s[i] (no overlongs, surrogates or values above U+10FFFF), with its
// code point in *cp; 0 if ill-formed, and then *valid_prefix (>= 1) is the maximal ill-formed subpart to replace or
// skip (Unicode 15 §3.9, "U+FFFD substitution").
std::size_t utf8_sequence_at(std::string_view s, std::size_t i, char32_t* cp, std::size_t* valid_prefix);

bool is_valid_utf8(std::string_view bytes);

// Decodes and re-encodes, replacing every maximal ill-formed subsequence with one U+FFFD — the behaviour of
// Python's bytes.decode('utf-8', errors='replace') and of the WHATWG TextDecoder.
std::string replace_invalid_utf8(std::string_view bytes);

void append_utf8(std::string& out, char32_t cp);

// ---- messages ----------------------------------------------------------------------------------------------

// How many code points of user text a message shows before "...".
inline constexpr std::size_t kQuoteLength = 40;

// User text (a token, a tensor name, a config value) quoted for an error message, so the message stays one
// line of valid UTF-8 whatever the text holds: ill-formed UTF-8 repaired (U+FFFD), the quote mark and "\"
// escaped with "\", control characters written \xHH, and text longer than max_code_points cut with "..."
// (0: never cut). mark is '"', or '\'' where a message quotes JSON values that way (tokenizer.json, config.json).
// quote("a\tb") -> "a\x09b" (with the quotes); quote("it's", '\'') -> 'it\'s'.
std::string quote(std::string_view text, char mark = '"', std::size_t max_code_points = kQuoteLength);

// A name a file gives (a tensor, a JSON member, a dtype, an embedding's token) quoted whole: it is the key to
// look for, so it is not cut. "weights: tensor \"h.0.attn.c_attn.weight\" has shape ..."
inline std::string quote_name(std::string_view name) { return quote(name, '"', 0); }

// A tensor shape as messages write it: [16,8] (no spaces), [] for a scalar.
template <class Int>
std::string shape_text(const std::vector<Int>& shape) {
  std::string t = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) t.append(i == 0 ? "" : ",").append(std::to_string(shape[i]));
  return t + "]";
}

}  // namespace attnscope::core
