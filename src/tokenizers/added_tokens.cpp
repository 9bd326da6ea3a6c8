// Added-token matching (Hugging Face tokenizers' AddedVocabulary: leftmost match, then the longest there; lstrip,
// rstrip and single_word). Layer: tokenizers (depends on core/ only).
#include "tokenizers/added_tokens.h"

#include <algorithm>

#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
namespace {

// HF's word character for single_word added tokens (regex \w): letters, digits, marks and "_".
bool is_word_char(char32_t cp) {
  const Category c = category_of(cp);
  return c == Category::kLetter || c == Category::kNumber || c == Category::kMark || cp == U'_';
}

}  // namespace

std::u32string added_token_cps(std::string_view content) {
  std::u32string out;
  auto decoded = decode_utf8(content, "", "");
  if (decoded.ok()) out.assign(decoded.value().cps.begin(), decoded.value().cps.end());
  return out;
}

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens,
                                     const std::vector<std::u32string>& patterns) {
  for (std::size_t i = 0; i < tokens.size() && i < patterns.size(); ++i) {
    if (patterns[i].empty()) continue;
    patterns_.push_back(Pattern{patterns[i], i, tokens[i].lstrip, tokens[i].rstrip, tokens[i].single_word});
  }
  std::stable_sort(patterns_.begin(), patterns_.end(), [](const Pattern& a, const Pattern& b) {
    return a.cps[0] != b.cps[0] ? a.cps[0] < b.cps[0] : a.cps.size() > b.cps.size();
  });
  for (std::size_t i = 0; i < patterns_.size();) {
    std::size_t j = i;
    while (j < patterns_.size() && patterns_[j].cps[0] == patterns_[i].cps[0]) ++j;
    by_first_[patterns_[i].cps[0]] = {i, j};
    i = j;
  }
}

std::vector<AddedTokenMatcher::Match> AddedTokenMatcher::find(std::span<const char32_t> cps) const {
  std::vector<Match> matches;
  if (patterns_.empty()) return matches;
  const std::size_t n = cps.size();
  std::size_t done = 0;  // end of the previous match: lstrip never reaches before it
  for (std::size_t i = 0; i < n;) {
    const auto it = by_first_.find(cps[i]);
    const Pattern* hit = nullptr;
    if (it != by_first_.end()) {
      for (std::size_t k = it->second.first; k < it->second.second && hit == nullptr; ++k) {
        const Pattern& p = patterns_[k];  // longest first
        if (p.cps.size() > n - i || !std::equal(p.cps.begin(), p.cps.end(), cps.begin() + static_cast<std::ptrdiff_t>(i))) {
          continue;
        }
        const std::size_t end = i + p.cps.size();
        if (p.single_word && ((i > 0 && is_word_char(cps[i - 1])) || (end < n && is_word_char(cps[end])))) continue;
        hit = &p;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    std::size_t first = i, last = i + hit->cps.size();
    if (hit->lstrip) {
      while (first > done && is_space(cps[first - 1])) --first;
    }
    if (hit->rstrip) {
      while (last < n && is_space(cps[last])) ++last;
    }
    matches.push_back(Match{first, last, hit->token});
    done = i = last;
  }
  return matches;
}

}  // namespace attnscope::tokenizers
