// The Split pre-tokenizer regexes of today's byte-level BPE checkpoints, as hand-written scanners selected by the
// exact pattern string (tokenizer.json's pre_tokenizer Split.pattern.Regex). Semantics are Oniguruma's (what
// Hugging Face tokenizers compiles these with): leftmost alternative first, greedy with backtracking; \s is
// White_Space, \p{L} / \p{N} the General_Category classes of unicode.h. Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace attnscope::tokenizers {

// Code point ranges [first, second) of the pattern's matches in cps, in order (the gaps between them, if any,
// are not listed).
using SplitFn = std::vector<std::pair<std::size_t, std::size_t>> (*)(std::span<const char32_t> cps);

// Llama 3 / 3.1 / 3.2:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
std::vector<std::pair<std::size_t, std::size_t>> split_llama3(std::span<const char32_t> cps);
// Qwen2 / 2.5 / 3: the same with \p{N} (one digit per piece) instead of \p{N}{1,3}.
std::vector<std::pair<std::size_t, std::size_t>> split_qwen2(std::span<const char32_t> cps);

// The scanner for a pattern string, nullptr when the pattern is not one of the known ones (the GPT-2 pattern
// maps to gpt2_pretokenize of bpe.h).
SplitFn split_for_pattern(std::string_view pattern);

}  // namespace attnscope::tokenizers
