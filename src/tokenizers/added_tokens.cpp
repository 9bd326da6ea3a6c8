// Added-token matching (Hugging Face tokenizers' AddedVocabulary: leftmost match, then the longest there; lstrip,
// rstrip and single_word). Layer: tokenizers (depends on core/ only).
#include "tokenizers/added_tokens.h"

#include <algorithm>
#include <unordered_map>

#include "core/text.h"
#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
namespace {

// HF's word character for single_word added tokens (regex \w): letters, digits, marks and "_".
bool is_word_char(char32_t cp) {
  const Category c = category_of(cp);
  return c == Category::kLetter || c == Category::kNumber || c == Category::kMark || cp == U'_';
}

}  // namespace

core::Status id_range_error(const char* fn, const std::string& arg, const std::string& what, long long value) {
  return core::range_error(fn, arg, what + " (" + std::to_string(value) + ") must be an id in [0, 2147483647]");
}

core::Status unknown_id_error(std::size_t i, std::int32_t id) {
  return core::range_error("decode", "ids",
                           "ids[" + std::to_string(i) + "] (" + std::to_string(id) + ") is not in the vocabulary");
}

bool split_merge(std::string_view merge, std::string_view* left, std::string_view* right) {
  const std::size_t sp = merge.find(' ');
  if (sp == std::string_view::npos || sp == 0 || sp + 1 == merge.size() ||
      merge.find(' ', sp + 1) != std::string_view::npos) {
    return false;
  }
  *left = merge.substr(0, sp);
  *right = merge.substr(sp + 1);
  return true;
}

core::Result<std::vector<std::size_t>> check_added_tokens(const std::vector<AddedToken>& added,
                                                          const AddedTokenVocab& v) {
  auto fail = [&v](const std::string& text) { return core::invalid_error(v.fn, v.arg, text); };
  std::unordered_map<std::int32_t, std::size_t> first_with_id;
  std::vector<std::size_t> extra;
  for (std::size_t i = 0; i < added.size(); ++i) {
    const AddedToken& a = added[i];
    const std::string where = v.added + "[" + std::to_string(i) + "]";
    // 1. the entry itself
    if (a.content.empty()) return fail(where + ".content must not be empty");
    if (!is_valid_utf8(a.content)) return fail(where + ".content is not valid UTF-8");
    if (a.id < 0) return id_range_error(v.fn, v.arg, where + ".id", a.id);
    const std::string named = where + " (" + core::quote(a.content, '\'') + ")";
    // 2. its id against the added tokens before it
    const auto [earlier, fresh] = first_with_id.emplace(a.id, i);
    if (!fresh) {
      return fail(named + " has the id " + std::to_string(a.id) + " of " + v.added + "[" +
                  std::to_string(earlier->second) + "]");
    }
    // 3./4. its content and id against the vocab
    const std::int32_t vocab_id = v.id_of(a.content);
    if (vocab_id >= 0 && vocab_id != a.id) {
      return fail(named + " has id " + std::to_string(a.id) + " but the " + v.vocab + " gives it " +
                  std::to_string(vocab_id));
    }
    if (vocab_id < 0) {
      const std::optional<std::string> owner = v.token_of(a.id);
      if (owner) {
        return fail(named + " has id " + std::to_string(a.id) + ", which the " + v.vocab + " gives to " +
                    core::quote(*owner, '\''));
      }
      extra.push_back(i);
    }
  }
  return extra;
}

std::u32string added_token_cps(std::string_view content) {
  std::u32string out;
  auto decoded = decode_utf8(content, "", "");
  if (decoded.ok()) out.assign(decoded.value().cps.begin(), decoded.value().cps.end());
  return out;
}

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens,
                                     const std::vector<std::u32string>& patterns) {
  ends_.push_back(-1);  // the root
  for (std::size_t i = 0; i < tokens.size() && i < patterns.size(); ++i) {
    if (patterns[i].empty()) continue;
    std::uint32_t node = 0;
    for (char32_t c : patterns[i]) {
      const std::uint64_t key = (static_cast<std::uint64_t>(node) << 21) | c;
      const auto [it, fresh] = edges_.emplace(key, static_cast<std::uint32_t>(ends_.size()));
      if (fresh) ends_.push_back(-1);
      node = it->second;
    }
    if (ends_[node] >= 0) continue;  // an earlier token has this content
    ends_[node] = static_cast<std::int32_t>(patterns_.size());
    patterns_.push_back(Pattern{patterns[i], i, tokens[i].lstrip, tokens[i].rstrip, tokens[i].single_word});
  }
}

std::vector<AddedTokenMatcher::Match> AddedTokenMatcher::find(std::span<const char32_t> cps) const {
  std::vector<Match> matches;
  if (patterns_.empty()) return matches;
  const std::size_t n = cps.size();
  std::size_t done = 0;  // end of the previous match: lstrip never reaches before it
  std::vector<std::int32_t> ending;  // patterns ending along the walk from i, shortest first
  for (std::size_t i = 0; i < n;) {
    ending.clear();
    std::uint32_t node = 0;
    for (std::size_t j = i; j < n; ++j) {
      const auto it = edges_.find((static_cast<std::uint64_t>(node) << 21) | cps[j]);
      if (it == edges_.end()) break;
      node = it->second;
      if (ends_[node] >= 0) ending.push_back(ends_[node]);
    }
    const Pattern* hit = nullptr;
    for (auto k = ending.rbegin(); k != ending.rend() && hit == nullptr; ++k) {  // longest first
      const Pattern& p = patterns_[static_cast<std::size_t>(*k)];
      const std::size_t end = i + p.cps.size();
      if (p.single_word && ((i > 0 && is_word_char(cps[i - 1])) || (end < n && is_word_char(cps[end])))) continue;
      hit = &p;
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
