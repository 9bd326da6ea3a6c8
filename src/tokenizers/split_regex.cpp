// Hand-written scanners for the known Split regexes (split_regex.h). Each alternative of the pattern is one step
// below, tried in the pattern's order at each position, with Oniguruma's backtracking worked out by hand.
// Layer: tokenizers (depends on core/ only).
#include "tokenizers/split_regex.h"

#include "tokenizers/bpe.h"
#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
namespace {

using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

bool is_letter(char32_t c) { return category_of(c) == Category::kLetter; }
bool is_number(char32_t c) { return category_of(c) == Category::kNumber; }
bool is_crlf(char32_t c) { return c == U'\r' || c == U'\n'; }
// [^\s\p{L}\p{N}]
bool is_other(char32_t c) {
  const Category k = category_of(c);
  return k != Category::kSpace && k != Category::kLetter && k != Category::kNumber;
}
// Case-insensitive ASCII letter match as Oniguruma's (?i:) does for these contractions (ſ U+017F folds to s,
// K U+212A to k; only s occurs in the contractions).
bool ci(char32_t c, char lower) {
  if (c == static_cast<char32_t>(lower) || c == static_cast<char32_t>(lower - 'a' + 'A')) return true;
  return lower == 's' && c == 0x017F;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at i: the match length, 0 if none.
std::size_t contraction(std::span<const char32_t> s, std::size_t i) {
  const std::size_t n = s.size();
  if (s[i] != U'\'' || i + 1 >= n) return 0;
  const char32_t a = s[i + 1];
  if (ci(a, 's') || ci(a, 't') || ci(a, 'm') || ci(a, 'd')) return 2;
  if (i + 2 < n) {
    const char32_t b = s[i + 2];
    if ((ci(a, 'r') && ci(b, 'e')) || (ci(a, 'v') && ci(b, 'e')) || (ci(a, 'l') && ci(b, 'l'))) return 3;
  }
  return 0;
}

Ranges split_llama_family(std::span<const char32_t> s, std::size_t max_digits) {
  Ranges out;
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const char32_t c = s[i];
    std::size_t end = 0;  // end of the match at i (0: none yet)
    // 1. contractions
    if (const std::size_t len = contraction(s, i); len > 0) end = i + len;
    // 2. [^\r\n\p{L}\p{N}]?\p{L}+
    if (end == 0) {
      std::size_t j = i;
      if (!is_crlf(c) && !is_letter(c) && !is_number(c) && i + 1 < n && is_letter(s[i + 1])) j = i + 1;
      if (is_letter(s[j])) {
        while (j < n && is_letter(s[j])) ++j;
        end = j;
      }
    }
    // 3. \p{N}{1,max_digits}
    if (end == 0 && is_number(c)) {
      std::size_t j = i;
      while (j < n && j - i < max_digits && is_number(s[j])) ++j;
      end = j;
    }
    // 4. ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    if (end == 0) {
      std::size_t j = i;
      if (c == U' ' && i + 1 < n && is_other(s[i + 1])) j = i + 1;
      if (is_other(s[j])) {
        while (j < n && is_other(s[j])) ++j;
        while (j < n && is_crlf(s[j])) ++j;
        end = j;
      }
    }
    if (end == 0 && is_space(c)) {
      std::size_t run = i;  // the whitespace run [i, run)
      while (run < n && is_space(s[run])) ++run;
      // 5. \s*[\r\n]+ : \s* backs off to the run's last CR/LF, which [\r\n]+ then takes
      std::size_t last_crlf = n;
      for (std::size_t k = run; k > i; --k) {
        if (is_crlf(s[k - 1])) {
          last_crlf = k - 1;
          break;
        }
      }
      if (last_crlf != n) {
        end = last_crlf + 1;
      } else if (run == n) {
        end = n;  // 6. \s+(?!\S) at the end of the text: the whole run
      } else if (run - i >= 2) {
        end = run - 1;  // 6. backs off one so that a space, not \S, follows
      } else {
        end = run;  // 7. \s+
      }
    }
    if (end == 0) end = i + 1;  // unreachable: the alternatives cover every code point
    out.emplace_back(i, end);
    i = end;
  }
  return out;
}

}  // namespace

Ranges split_llama3(std::span<const char32_t> cps) { return split_llama_family(cps, 3); }
Ranges split_qwen2(std::span<const char32_t> cps) { return split_llama_family(cps, 1); }

SplitFn split_for_pattern(std::string_view pattern) {
  static constexpr std::string_view kLlama3 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static constexpr std::string_view kQwen2 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static constexpr std::string_view kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  if (pattern == kLlama3) return &split_llama3;
  if (pattern == kQwen2) return &split_qwen2;
  if (pattern == kGpt2) return &gpt2_pretokenize;
  return nullptr;
}

}  // namespace attnscope::tokenizers
