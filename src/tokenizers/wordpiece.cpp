// BERT WordPiece: the BertNormalizer, BertPreTokenizer and greedy WordPiece, and the
// WordPiece decoder. Layer: tokenizers (depends on core/ only). References: google-research/bert tokenization.py,
// Hugging Face tokenizers (normalizers/bert.rs, pre_tokenizers/bert.rs, models/wordpiece, decoders/wordpiece.rs).
#include "tokenizers/wordpiece.h"

#include <algorithm>
#include <climits>
#include <optional>

#include "core/text.h"
#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
namespace {

// HF's is_chinese_char: the CJK Unified Ideographs blocks. HF has 0x2B920 where BERT's Python has 0x2B820; we
// follow HF (tokenizer.json is its format), as wordpiece_ref.py does.
bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

}  // namespace

// ---- construction -------------------------------------------------------------------------------------------

core::Result<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::create(
    std::vector<std::pair<std::string, std::int32_t>> vocab, std::vector<AddedToken> added,
    const WordPieceOptions& options, const Names& names) {
  using core::invalid_error;
  using core::range_error;
  std::unique_ptr<WordPieceTokenizer> tok(new WordPieceTokenizer());
  tok->options_ = options;
  tok->strip_ = options.strip_accents.value_or(options.lowercase);
  if (options.max_input_chars_per_word == 0) {
    return range_error(names.fn, names.arg, names.options + "max_input_chars_per_word must be at least 1");
  }
  // 1. Vocab: ids in range and distinct; a repeated token keeps its last id.
  tok->ids_.reserve(vocab.size() + added.size());
  for (auto& [token, id] : vocab) {
    if (id < 0) return id_range_error(names.fn, names.arg, names.vocab + "[" + core::quote(token, '\'') + "]", id);
    tok->ids_[token] = id;
    tok->by_id_.emplace_back(id, std::move(token));
  }
  std::stable_sort(tok->by_id_.begin(), tok->by_id_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < tok->by_id_.size(); ++i) {
    if (tok->by_id_[i].first == tok->by_id_[i - 1].first) {
      return invalid_error(names.fn, names.arg,
                           names.vocab + "[" + core::quote(tok->by_id_[i - 1].second, '\'') + "] and " + names.vocab +
                               "[" + core::quote(tok->by_id_[i].second, '\'') + "] have the same id " +
                               std::to_string(tok->by_id_[i].first));
    }
  }
  const auto unk = tok->ids_.find(options.unk_token);
  if (unk == tok->ids_.end()) {
    return invalid_error(names.fn, names.arg, names.options + "unk_token " + core::quote(options.unk_token, '\'') +
                                                  " is not in the " + names.vocab);
  }
  tok->unk_id_ = unk->second;

  // 2. Added tokens: the rules every vocabulary shares (added_tokens.h); contents the vocab lacks extend it, each
  // once (the vocab maps a content to one id).
  AddedTokenVocab rules;
  rules.id_of = [&tok](const std::string& content) {
    const auto it = tok->ids_.find(content);
    return it == tok->ids_.end() ? -1 : it->second;
  };
  rules.token_of = [&tok](std::int32_t id) -> std::optional<std::string> {
    const auto it = std::lower_bound(tok->by_id_.begin(), tok->by_id_.end(), id,
                                     [](const auto& e, std::int32_t v) { return e.first < v; });
    if (it == tok->by_id_.end() || it->first != id) return std::nullopt;
    return it->second;
  };
  rules.fn = names.fn;
  rules.arg = names.arg;
  rules.added = names.added;
  rules.vocab = names.vocab;
  auto new_entries = check_added_tokens(added, rules);
  if (!new_entries.ok()) return new_entries.status();
  std::vector<std::pair<std::int32_t, std::string>> extra;
  for (const std::size_t i : new_entries.value()) {
    const AddedToken& a = added[i];
    for (const auto& e : extra) {
      if (e.second == a.content) {
        return invalid_error(names.fn, names.arg, names.added + "[" + std::to_string(i) + "] repeats the content " +
                                                      core::quote(a.content, '\''));
      }
    }
    extra.emplace_back(a.id, a.content);
  }
  for (auto& e : extra) {
    tok->ids_[e.second] = e.first;
    tok->by_id_.insert(std::lower_bound(tok->by_id_.begin(), tok->by_id_.end(), e.first,
                                        [](const auto& x, std::int32_t v) { return x.first < v; }),
                       std::move(e));
  }
  // 3. Matchers: raw contents for non-normalized tokens, normalized contents for the others.
  tok->added_ = std::move(added);
  std::vector<std::u32string> raw(tok->added_.size()), norm(tok->added_.size());
  std::vector<NormChar> chars;
  for (std::size_t i = 0; i < tok->added_.size(); ++i) {
    const std::u32string cps = added_token_cps(tok->added_[i].content);
    if (!tok->added_[i].normalized) {
      raw[i] = cps;
      continue;
    }
    chars.clear();
    tok->normalize(cps, 0, &chars);
    for (const NormChar& c : chars) norm[i].push_back(c.cp);
  }
  tok->raw_matcher_ = AddedTokenMatcher(tok->added_, raw);
  tok->normalized_matcher_ = AddedTokenMatcher(tok->added_, norm);
  return tok;
}

core::Result<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::from_vocab_txt(std::string_view vocab_txt,
                                                                                     bool lowercase,
                                                                                     const Names& names) {
  std::vector<std::pair<std::string, std::int32_t>> vocab;
  std::size_t pos = 0;
  while (pos < vocab_txt.size()) {
    std::size_t nl = vocab_txt.find('\n', pos);
    if (nl == std::string_view::npos) nl = vocab_txt.size();
    std::string_view line = vocab_txt.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (vocab.size() == static_cast<std::size_t>(INT32_MAX)) {
      return core::range_error(names.fn, names.arg, names.vocab + " has more than 2147483647 lines");
    }
    if (!is_valid_utf8(line)) {
      return core::type_error(names.fn, names.arg, names.vocab + " line " + std::to_string(vocab.size() + 1) +
                                                       " is not valid UTF-8");
    }
    vocab.emplace_back(std::string(line), static_cast<std::int32_t>(vocab.size()));
    pos = nl + 1;
  }
  std::vector<AddedToken> added;
  for (const char* special : {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"}) {
    std::int32_t id = -1;
    for (const auto& [token, i] : vocab) {
      if (token == special) id = i;  // the last line wins, as the vocab lookup
    }
    if (id >= 0) added.push_back(AddedToken{special, id});
  }
  if (added.empty() || added[0].content != "[UNK]") {
    return core::invalid_error(names.fn, names.arg, names.vocab + " has no '[UNK]' line");
  }
  WordPieceOptions options;
  options.lowercase = lowercase;
  return create(std::move(vocab), std::move(added), options, names);
}

// ---- encode -------------------------------------------------------------------------------------------------

void WordPieceTokenizer::normalize(std::span<const char32_t> cps, std::size_t origin0, std::vector<NormChar>* out) const {
  const std::size_t begin = out->size();
  auto push = [&](char32_t cp, std::size_t origin) { out->push_back(NormChar{cp, static_cast<std::uint32_t>(origin)}); };
  // 1. clean text, 2. CJK spacing
  for (std::size_t i = 0; i < cps.size(); ++i) {
    char32_t cp = cps[i];
    const bool tab_nl_cr = cp == U'\t' || cp == U'\n' || cp == U'\r';
    if (options_.clean_text) {
      if (cp == 0 || cp == 0xFFFD || (!tab_nl_cr && is_other_category(cp))) continue;
      if (tab_nl_cr || is_space(cp)) cp = U' ';
    }
    if (options_.handle_chinese_chars && is_chinese_char(cp)) {
      push(U' ', origin0 + i);
      push(cp, origin0 + i);
      push(U' ', origin0 + i);
    } else {
      push(cp, origin0 + i);
    }
  }
  // 3. strip accents: decompose, reorder each run of non-starters by combining class (only non-Mn ones remain;
  // a stable sort commutes with dropping the Mn ones), drop Mn.
  if (strip_) {
    std::vector<NormChar> decomposed;
    std::vector<bool> barrier;  // barrier[k]: a dropped class-0 Mn precedes decomposed[k]
    bool pending = false;
    for (std::size_t k = begin; k < out->size(); ++k) {
      char32_t d[3];
      const std::size_t n = decompose_without_marks((*out)[k].cp, d);
      for (std::size_t j = 0; j < n; ++j) {
        if (d[j] == kReorderBarrier) {
          pending = true;
          continue;
        }
        decomposed.push_back(NormChar{d[j], (*out)[k].origin});
        barrier.push_back(pending);
        pending = false;
      }
    }
    for (std::size_t i = 0; i < decomposed.size();) {
      std::size_t j = i;
      while (j < decomposed.size() && combining_class_unless_mn(decomposed[j].cp) != 0 && (j == i || !barrier[j])) ++j;
      if (j - i > 1) {
        std::stable_sort(decomposed.begin() + static_cast<std::ptrdiff_t>(i), decomposed.begin() + static_cast<std::ptrdiff_t>(j),
                         [](const NormChar& a, const NormChar& b) {
                           return combining_class_unless_mn(a.cp) < combining_class_unless_mn(b.cp);
                         });
      }
      i = j > i ? j : i + 1;
    }
    out->resize(begin);
    out->insert(out->end(), decomposed.begin(), decomposed.end());
  }
  // 4. lowercase, per character
  if (options_.lowercase) {
    std::vector<NormChar> lowered;
    lowered.reserve(out->size() - begin);
    for (std::size_t k = begin; k < out->size(); ++k) {
      char32_t l[2];
      const std::size_t n = lowercase((*out)[k].cp, l);
      for (std::size_t j = 0; j < n; ++j) lowered.push_back(NormChar{l[j], (*out)[k].origin});
    }
    out->resize(begin);
    out->insert(out->end(), lowered.begin(), lowered.end());
  }
}

void WordPieceTokenizer::wordpiece(const std::vector<NormChar>& chars, std::size_t first, std::size_t last,
                                   const std::vector<std::int32_t>& utf16, Tokenization* out) const {
  auto span_of = [&](std::size_t a, std::size_t b) {
    std::int32_t lo = INT32_MAX, hi = 0;
    for (std::size_t k = a; k < b; ++k) {
      lo = std::min(lo, utf16[chars[k].origin]);
      hi = std::max(hi, utf16[chars[k].origin + 1]);
    }
    return std::pair<std::int32_t, std::int32_t>(lo, hi);
  };
  const std::size_t before = out->tokens.size();
  bool bad = last - first > options_.max_input_chars_per_word;
  // UTF-8 of the word and the byte offset of each of its code points, to try substrings without re-encoding.
  std::string word;
  std::vector<std::size_t> byte_at;
  if (!bad) {
    for (std::size_t k = first; k < last; ++k) {
      byte_at.push_back(word.size());
      append_utf8(word, chars[k].cp);
    }
    byte_at.push_back(word.size());
  }
  std::string candidate;
  for (std::size_t start = 0; !bad && start < last - first;) {
    std::size_t end = last - first;
    std::int32_t id = -1;
    for (; end > start; --end) {
      candidate.assign(start > 0 ? options_.continuing_subword_prefix : std::string());
      candidate.append(word, byte_at[start], byte_at[end] - byte_at[start]);
      const auto it = ids_.find(candidate);
      if (it != ids_.end()) {
        id = it->second;
        break;
      }
    }
    if (id < 0) {
      bad = true;
      break;
    }
    const auto [lo, hi] = span_of(first + start, first + end);
    out->tokens.push_back(candidate);
    out->ids.push_back(id);
    out->offsets.push_back(lo);
    out->offsets.push_back(hi);
    start = end;
  }
  if (bad) {
    out->tokens.resize(before);
    out->ids.resize(before);
    out->offsets.resize(2 * before);
    const auto [lo, hi] = span_of(first, last);
    out->tokens.push_back(options_.unk_token);
    out->ids.push_back(unk_id_);
    out->offsets.push_back(lo);
    out->offsets.push_back(hi);
  }
}

void WordPieceTokenizer::encode_words(const std::vector<NormChar>& chars, std::size_t first, std::size_t last,
                                      const std::vector<std::int32_t>& utf16, Tokenization* out) const {
  // BertPreTokenizer: split on whitespace (removed), then isolate each punctuation character.
  std::size_t word = first;
  for (std::size_t k = first; k < last; ++k) {
    const char32_t cp = chars[k].cp;
    const bool space = is_space(cp);
    if (space || is_bert_punctuation(cp)) {
      if (word < k) wordpiece(chars, word, k, utf16, out);
      if (!space) wordpiece(chars, k, k + 1, utf16, out);
      word = k + 1;
    }
  }
  if (word < last) wordpiece(chars, word, last, utf16, out);
}

core::Result<Tokenization> WordPieceTokenizer::encode(std::string_view utf8) const {
  auto decoded = decode_utf8(utf8, "encode", "text");
  if (!decoded.ok()) return decoded.status();
  const DecodedText& t = decoded.value();
  Tokenization out;
  auto emit_added = [&](std::size_t token, std::int32_t lo, std::int32_t hi) {
    out.tokens.push_back(added_[token].content);
    out.ids.push_back(added_[token].id);
    out.offsets.push_back(lo);
    out.offsets.push_back(hi);
  };
  std::vector<NormChar> chars;
  std::vector<char32_t> norm_cps;
  // A raw piece [a, b) of code points that holds no raw added token.
  auto encode_piece = [&](std::size_t a, std::size_t b) {
    chars.clear();
    normalize(std::span<const char32_t>(t.cps).subspan(a, b - a), a, &chars);
    std::size_t done = 0;
    if (!normalized_matcher_.empty()) {
      norm_cps.clear();
      for (const NormChar& c : chars) norm_cps.push_back(c.cp);
      for (const AddedTokenMatcher::Match& m : normalized_matcher_.find(norm_cps)) {
        encode_words(chars, done, m.first, t.utf16_offset, &out);
        std::int32_t lo = INT32_MAX, hi = 0;
        for (std::size_t k = m.first; k < m.last; ++k) {
          lo = std::min(lo, t.utf16_offset[chars[k].origin]);
          hi = std::max(hi, t.utf16_offset[chars[k].origin + 1]);
        }
        emit_added(m.token, lo, hi);
        done = m.last;
      }
    }
    encode_words(chars, done, chars.size(), t.utf16_offset, &out);
  };
  std::size_t done = 0;
  for (const AddedTokenMatcher::Match& m : raw_matcher_.find(t.cps)) {
    if (done < m.first) encode_piece(done, m.first);
    emit_added(m.token, t.utf16_offset[m.first], t.utf16_offset[m.last]);
    done = m.last;
  }
  if (done < t.cps.size()) encode_piece(done, t.cps.size());
  return out;
}

// ---- decode and lookups -------------------------------------------------------------------------------------

namespace {

void replace_all(std::string* s, std::string_view from, std::string_view to) {
  for (std::size_t pos = 0; (pos = s->find(from, pos)) != std::string::npos; pos += to.size()) {
    s->replace(pos, from.size(), to);
  }
}

// decoders/wordpiece.rs cleanup(), in its order.
void cleanup(std::string* s) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(s, from, to);
}

}  // namespace

core::Result<std::string> WordPieceTokenizer::decode(std::span<const std::int32_t> ids) const {
  std::string text, piece;
  const std::string& prefix = options_.continuing_subword_prefix;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto it = std::lower_bound(by_id_.begin(), by_id_.end(), ids[i],
                                     [](const auto& e, std::int32_t v) { return e.first < v; });
    if (it == by_id_.end() || it->first != ids[i]) return unknown_id_error(i, ids[i]);
    const std::string& token = it->second;
    if (i == 0) {
      piece = token;
    } else if (!prefix.empty() && token.compare(0, prefix.size(), prefix) == 0) {
      piece = token.substr(prefix.size());
    } else {
      piece = " " + token;
    }
    if (options_.cleanup) cleanup(&piece);
    text += piece;
  }
  return text;
}

std::string WordPieceTokenizer::token_text(std::int32_t id) const {
  const auto it = std::lower_bound(by_id_.begin(), by_id_.end(), id,
                                   [](const auto& e, std::int32_t v) { return e.first < v; });
  return it != by_id_.end() && it->first == id ? it->second : std::string();
}

std::int32_t WordPieceTokenizer::id_of(std::string_view token) const {
  const auto it = ids_.find(std::string(token));
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace attnscope::tokenizers
