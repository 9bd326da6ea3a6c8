// tokenizer.json pipelines (hf_pipeline.h): one reader per component, and the run of each, following Hugging Face
// tokenizers' src/ (normalizers/{prepend,replace,unicode}.rs, pre_tokenizers/{metaspace,split,byte_level}.rs,
// models/bpe/{model,word}.rs, processors/template.rs, decoders/{byte_fallback,fuse,strip}.rs).
// Layer: tokenizers (depends on core/ and io/'s JSON readers).
#include "tokenizers/hf_pipeline.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <limits>
#include <queue>
#include <tuple>

#include "core/check.h"
#include "tokenizers/bpe.h"
#include "tokenizers/nfc.h"
#include "tokenizers/precompiled_charsmap.h"
#include "tokenizers/sentencepiece.h"
#include "tokenizers/split_regex.h"
#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
// Named (not anonymous): HfPipeline::Impl holds these types.
namespace pipeline {

using hf_json::quote_value;
using hf_json::Reader;
using json = nlohmann::json;
using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

std::u32string to_cps(std::string_view s) { return added_token_cps(s); }
std::string to_utf8(std::u32string_view cps) {
  std::string out;
  for (char32_t c : cps) append_utf8(out, c);
  return out;
}

// Text being normalized / pre-tokenized: code points, each with the original code point range it came from.
struct Piece {
  std::u32string cps;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> from;
  bool at_start = false;  // begins at the original text's first code point (Metaspace prepend_scheme "first")
  Piece sub(std::size_t a, std::size_t b) const {
    Piece p;
    p.cps = cps.substr(a, b - a);
    p.from.assign(from.begin() + static_cast<std::ptrdiff_t>(a), from.begin() + static_cast<std::ptrdiff_t>(b));
    p.at_start = at_start && a == 0;
    return p;
  }
};

// ---- normalizers ----------------------------------------------------------------------------------------------

struct Normalizer {
  enum class Type { kPrepend, kReplace, kLowercase, kNfc, kNfkc, kSequence, kPrecompiled, kStrip } type;
  std::u32string a, b;  // Prepend: a; Replace: pattern a -> content b
  bool space_runs = false;  // Replace: the Regex " {2,}" (SpmConverter's) instead of a String
  bool left = false, right = false;  // Strip
  std::shared_ptr<const PrecompiledCharsmap> charsmap;  // Precompiled
  std::vector<Normalizer> children;
};

// normalizers/precompiled.rs: each extended grapheme cluster shorter than 6 bytes that a rule matches (the first,
// shortest rule at its start, spm_precompiled's transform) is replaced whole; otherwise each character a rule
// matches is replaced. The new characters keep the range of what they replace.
void precompiled(const PrecompiledCharsmap& map, Piece& p) {
  Piece out;
  out.at_start = p.at_start;
  auto put = [&](std::string_view rep, std::pair<std::uint32_t, std::uint32_t> span) {
    for (char32_t c : to_cps(rep)) {
      out.cps.push_back(c);
      out.from.push_back(span);
    }
  };
  const std::vector<std::size_t> cuts = grapheme_boundaries(p.cps);
  for (std::size_t g = 0; g + 1 < cuts.size(); ++g) {
    const std::size_t a = cuts[g], b = cuts[g + 1];
    const std::string cluster = to_utf8(std::u32string_view(p.cps).substr(a, b - a));
    std::string_view rep;
    if (cluster.size() < 6 && map.first_prefix(cluster, &rep)) {
      put(rep, {p.from[a].first, p.from[b - 1].second});
      continue;
    }
    for (std::size_t i = a; i < b; ++i) {
      std::string ch;
      append_utf8(ch, p.cps[i]);
      if (map.first_prefix(ch, &rep)) {
        put(rep, p.from[i]);
      } else {
        out.cps.push_back(p.cps[i]);
        out.from.push_back(p.from[i]);
      }
    }
  }
  p = std::move(out);
}

// Regex " {2,}" -> content (SpmConverter's Replace): each run of two or more spaces.
void replace_space_runs(Piece& p, const std::u32string& with) {
  Piece out;
  out.at_start = p.at_start;
  for (std::size_t i = 0; i < p.cps.size();) {
    std::size_t j = i;
    while (j < p.cps.size() && p.cps[j] == U' ') ++j;
    if (j - i >= 2) {
      for (char32_t c : with) {
        out.cps.push_back(c);
        out.from.emplace_back(p.from[i].first, p.from[j - 1].second);
      }
      i = j;
    } else {
      out.cps.push_back(p.cps[i]);
      out.from.push_back(p.from[i]);
      ++i;
    }
  }
  p = std::move(out);
}

void replace_all(Piece& p, const std::u32string& pat, const std::u32string& with) {
  if (pat.empty() || p.cps.find(pat) == std::u32string::npos) return;
  Piece out;
  out.at_start = p.at_start;
  for (std::size_t i = 0; i < p.cps.size();) {
    if (p.cps.compare(i, pat.size(), pat) == 0) {
      const auto span = std::make_pair(p.from[i].first, p.from[i + pat.size() - 1].second);
      for (char32_t c : with) {
        out.cps.push_back(c);
        out.from.push_back(span);
      }
      i += pat.size();
    } else {
      out.cps.push_back(p.cps[i]);
      out.from.push_back(p.from[i]);
      ++i;
    }
  }
  p = std::move(out);
}

void normalize(const Normalizer& n, Piece& p) {
  switch (n.type) {
    case Normalizer::Type::kPrepend:  // prepend.rs: only a non-empty string
      if (!p.cps.empty()) {
        p.cps.insert(0, n.a);
        p.from.insert(p.from.begin(), n.a.size(), p.from[0]);
      }
      break;
    case Normalizer::Type::kReplace:
      if (n.space_runs) replace_space_runs(p, n.b);
      else replace_all(p, n.a, n.b);
      break;
    case Normalizer::Type::kPrecompiled: precompiled(*n.charsmap, p); break;
    case Normalizer::Type::kStrip: {  // strip.rs: char::is_whitespace at either end
      std::size_t a = 0, b = p.cps.size();
      while (n.left && a < b && is_space(p.cps[a])) ++a;
      while (n.right && b > a && is_space(p.cps[b - 1])) --b;
      if (a > 0 || b < p.cps.size()) p = p.sub(a, b);
      break;
    }
    case Normalizer::Type::kLowercase: {
      Piece out;
      out.at_start = p.at_start;
      for (std::size_t i = 0; i < p.cps.size(); ++i) {
        char32_t low[2];
        const std::size_t k = lowercase(p.cps[i], low);
        for (std::size_t j = 0; j < k; ++j) {
          out.cps.push_back(low[j]);
          out.from.push_back(p.from[i]);
        }
      }
      p = std::move(out);
      break;
    }
    case Normalizer::Type::kNfc:
    case Normalizer::Type::kNfkc: normalize_nfc(p.cps, p.from, n.type == Normalizer::Type::kNfkc); break;
    case Normalizer::Type::kSequence:
      for (const Normalizer& c : n.children) normalize(c, p);
      break;
  }
}

// A {"String": s} pattern (Replace, Split); a Regex one is named as unsupported.
core::Result<std::u32string> string_pattern(const Reader& rd, const json& obj, const std::string& path) {
  const auto it = obj.find("pattern");
  if (it == obj.end() || !it->is_object()) return rd.type(path + ".pattern", "an object {\"String\": ...}",
                                                          it == obj.end() ? json() : *it);
  const auto s = it->find("String");
  if (s != it->end() && s->is_string()) return to_cps(s->get<std::string>());
  const auto r = it->find("Regex");
  if (r != it->end() && r->is_string()) {
    return rd.unsupported(path + ".pattern", "Regex " + quote_value(r->get<std::string>()), "String patterns only");
  }
  return rd.type(path + ".pattern", "{\"String\": ...} or {\"Regex\": ...}", *it);
}

core::Result<std::string> type_of(const Reader& rd, const json& obj, const std::string& path) {
  if (!obj.is_object()) return rd.type(path, "an object", obj);
  return rd.string(obj, "type", path + ".type", std::nullopt);
}

// obj[member] as a list of components, each read by read(rd, item, "<path>.<member>[i]") (the Sequence types).
template <class T, class ReadFn>
core::Status read_list(const Reader& rd, const json& obj, const std::string& path, const char* member, ReadFn read,
                       std::vector<T>& out) {
  const auto list = obj.find(member);
  if (list == obj.end() || !list->is_array()) {
    return rd.type(path + "." + member, "an array", list == obj.end() ? json() : *list);
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto c = read(rd, (*list)[i], path + "." + member + "[" + std::to_string(i) + "]");
    if (!c.ok()) return c.status();
    out.push_back(std::move(c).value());
  }
  return core::Status::Ok();
}

core::Result<Normalizer> read_normalizer(const Reader& rd, const json& obj, const std::string& path) {
  auto type = type_of(rd, obj, path);
  if (!type.ok()) return type.status();
  const std::string& t = type.value();
  Normalizer n{};
  if (t == "Prepend") {
    auto s = rd.string(obj, "prepend", path + ".prepend", std::nullopt);
    if (!s.ok()) return s.status();
    n.type = Normalizer::Type::kPrepend;
    n.a = to_cps(s.value());
  } else if (t == "Replace") {
    const auto pat_it = obj.find("pattern");
    const bool space_runs = pat_it != obj.end() && pat_it->is_object() && pat_it->contains("Regex") &&
                            (*pat_it)["Regex"].is_string() && (*pat_it)["Regex"].get<std::string>() == " {2,}";
    if (!space_runs) {
      auto pat = string_pattern(rd, obj, path);
      if (!pat.ok()) return pat.status();
      n.a = pat.value();
    }
    auto content = rd.string(obj, "content", path + ".content", std::nullopt);
    if (!content.ok()) return content.status();
    n.type = Normalizer::Type::kReplace;
    n.space_runs = space_runs;
    n.b = to_cps(content.value());
  } else if (t == "Precompiled") {
    auto b64 = rd.string(obj, "precompiled_charsmap", path + ".precompiled_charsmap", std::nullopt);
    if (!b64.ok()) return b64.status();
    const std::string where = rd.at(path + ".precompiled_charsmap");
    auto map = PrecompiledCharsmap::from_base64(b64.value(), rd.fn(), rd.arg(), where);
    if (!map.ok()) return map.status();
    n.type = Normalizer::Type::kPrecompiled;
    n.charsmap = std::make_shared<const PrecompiledCharsmap>(std::move(map).value());
  } else if (t == "Strip") {
    n.type = Normalizer::Type::kStrip;
    auto left = rd.boolean(obj, "strip_left", path + ".strip_left", false);
    if (!left.ok()) return left.status();
    auto right = rd.boolean(obj, "strip_right", path + ".strip_right", false);
    if (!right.ok()) return right.status();
    n.left = left.value();
    n.right = right.value();
  } else if (t == "Lowercase") {
    n.type = Normalizer::Type::kLowercase;
  } else if (t == "NFC") {
    n.type = Normalizer::Type::kNfc;
  } else if (t == "NFKC") {
    n.type = Normalizer::Type::kNfkc;
  } else if (t == "Sequence") {
    n.type = Normalizer::Type::kSequence;
    ATTN_TRY(read_list<Normalizer>(rd, obj, path, "normalizers", &read_normalizer, n.children));
  } else {
    return rd.unsupported(path + ".type", quote_value(t), "Prepend, Replace, Lowercase, NFC, NFKC, Precompiled, Strip, Sequence");
  }
  return n;
}

// ---- pre-tokenizers -------------------------------------------------------------------------------------------

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext };

struct PreTokenizer {
  enum class Type { kSplitString, kSplitRegex, kMetaspace, kByteLevel, kDigits, kWhitespaceSplit, kSequence } type;
  std::u32string pattern;        // Split String
  SplitFn regex = nullptr;       // Split Regex
  Behavior behavior = Behavior::kIsolated;
  char32_t replacement = U'\u2581';
  enum class Prepend { kAlways, kFirst, kNever } prepend = Prepend::kAlways;
  bool split = true;             // Metaspace
  bool gpt2_regex = false;       // ByteLevel use_regex
  bool prefix_space = false;     // ByteLevel add_prefix_space
  bool individual_digits = false;  // Digits
  std::vector<PreTokenizer> children;
};

// The pieces of p around the matches, combined as `b` says (split.rs / SplitDelimiterBehavior).
void split_by(const Piece& p, const Ranges& matches, Behavior b, std::vector<Piece>& out) {
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, bool>> parts;  // range, is a match
  std::size_t at = 0;
  for (const auto& m : matches) {
    if (m.first > at) parts.push_back({{at, m.first}, false});
    if (m.second > m.first) parts.push_back({m, true});
    at = m.second;
  }
  if (at < p.cps.size()) parts.push_back({{at, p.cps.size()}, false});
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto [r, is_match] = parts[i];
    switch (b) {
      case Behavior::kRemoved:
        if (!is_match) ranges.push_back(r);
        break;
      case Behavior::kIsolated: ranges.push_back(r); break;
      case Behavior::kMergedWithPrevious:
        if (is_match && !ranges.empty() && !parts[i - 1].second) ranges.back().second = r.second;
        else ranges.push_back(r);
        break;
      case Behavior::kMergedWithNext:
        if (!is_match && i > 0 && parts[i - 1].second) ranges.back().second = r.second;
        else ranges.push_back(r);
        break;
    }
  }
  for (const auto& r : ranges) out.push_back(p.sub(r.first, r.second));
}

void pre_tokenize(const PreTokenizer& t, std::vector<Piece>& pieces) {
  if (t.type == PreTokenizer::Type::kSequence) {
    for (const PreTokenizer& c : t.children) pre_tokenize(c, pieces);
    return;
  }
  if (t.type == PreTokenizer::Type::kByteLevel && t.prefix_space) {  // byte_level.rs: each split not starting with ' '
    for (Piece& p : pieces) {
      if (!p.cps.empty() && p.cps[0] != U' ') {
        p.cps.insert(p.cps.begin(), U' ');
        p.from.insert(p.from.begin(), p.from[0]);
      }
    }
  }
  if (t.type == PreTokenizer::Type::kByteLevel && !t.gpt2_regex) return;  // bytes are mapped at the model
  std::vector<Piece> out;
  for (Piece& p : pieces) {
    Ranges m;
    Behavior b = t.behavior;
    switch (t.type) {
      case PreTokenizer::Type::kSplitString:
        if (!t.pattern.empty()) {
          for (std::size_t at = p.cps.find(t.pattern); at != std::u32string::npos;
               at = p.cps.find(t.pattern, at + t.pattern.size())) {
            m.emplace_back(at, at + t.pattern.size());
          }
        }
        break;
      case PreTokenizer::Type::kSplitRegex: m = t.regex(p.cps); break;
      case PreTokenizer::Type::kDigits:  // digits.rs: char::is_numeric (General_Category N*)
        for (std::size_t i = 0; i < p.cps.size();) {
          if (category_of(p.cps[i]) != Category::kNumber) {
            ++i;
            continue;
          }
          std::size_t j = i + 1;
          while (!t.individual_digits && j < p.cps.size() && category_of(p.cps[j]) == Category::kNumber) ++j;
          m.emplace_back(i, j);
          i = j;
        }
        b = Behavior::kIsolated;  // Contiguous for runs = one match per run here
        break;
      case PreTokenizer::Type::kWhitespaceSplit:  // whitespace.rs: split on char::is_whitespace, Removed
        for (std::size_t i = 0; i < p.cps.size(); ++i) {
          if (is_space(p.cps[i])) m.emplace_back(i, i + 1);
        }
        b = Behavior::kRemoved;
        break;
      case PreTokenizer::Type::kByteLevel:
        m = gpt2_pretokenize(p.cps);
        b = Behavior::kIsolated;
        break;
      case PreTokenizer::Type::kMetaspace: {  // metaspace.rs
        replace_all(p, U" ", std::u32string(1, t.replacement));
        const bool prepend = t.prepend == PreTokenizer::Prepend::kAlways ||
                             (t.prepend == PreTokenizer::Prepend::kFirst && p.at_start);
        if (prepend && !p.cps.empty() && p.cps[0] != t.replacement) {
          p.cps.insert(p.cps.begin(), t.replacement);
          p.from.insert(p.from.begin(), p.from[0]);
        }
        if (!t.split) {
          out.push_back(std::move(p));
          continue;
        }
        for (std::size_t i = 0; i < p.cps.size(); ++i) {
          if (p.cps[i] == t.replacement) m.emplace_back(i, i + 1);
        }
        b = Behavior::kMergedWithNext;
        break;
      }
      case PreTokenizer::Type::kSequence: break;
    }
    split_by(p, m, b, out);
  }
  pieces = std::move(out);
}

core::Result<PreTokenizer> read_pre_tokenizer(const Reader& rd, const json& obj, const std::string& path) {
  auto type = type_of(rd, obj, path);
  if (!type.ok()) return type.status();
  const std::string& t = type.value();
  PreTokenizer p{};
  if (t == "Split") {
    const auto pat = obj.find("pattern");
    const auto re = pat != obj.end() && pat->is_object() ? pat->find("Regex") : obj.end();
    if (pat != obj.end() && pat->is_object() && re != pat->end() && re->is_string()) {
      const std::string text = re->get<std::string>();
      p.regex = split_for_pattern(text);
      if (p.regex == nullptr) {
        return rd.unsupported(path + ".pattern", "Regex " + quote_value(text),
                              "the Llama 3, Qwen2 and GPT-2 patterns, matched exactly");
      }
      p.type = PreTokenizer::Type::kSplitRegex;
    } else {
      auto s = string_pattern(rd, obj, path);
      if (!s.ok()) return s.status();
      p.type = PreTokenizer::Type::kSplitString;
      p.pattern = s.value();
    }
    auto behavior = rd.string(obj, "behavior", path + ".behavior", std::nullopt);
    if (!behavior.ok()) return behavior.status();
    const std::string& bh = behavior.value();
    if (bh == "Removed") p.behavior = Behavior::kRemoved;
    else if (bh == "Isolated") p.behavior = Behavior::kIsolated;
    else if (bh == "MergedWithPrevious") p.behavior = Behavior::kMergedWithPrevious;
    else if (bh == "MergedWithNext") p.behavior = Behavior::kMergedWithNext;
    else return rd.unsupported(path + ".behavior", quote_value(bh), "Removed, Isolated, MergedWithPrevious, MergedWithNext");
    auto invert = rd.boolean(obj, "invert", path + ".invert", false);
    if (!invert.ok()) return invert.status();
    if (invert.value()) return rd.unsupported(path + ".invert", "true", "false");
  } else if (t == "Metaspace") {
    p.type = PreTokenizer::Type::kMetaspace;
    auto rep = rd.string(obj, "replacement", path + ".replacement", std::string("\u2581"));
    if (!rep.ok()) return rep.status();
    const std::u32string r = to_cps(rep.value());
    if (r.size() != 1) return rd.invalid(rd.at(path + ".replacement") + " must be one character");
    p.replacement = r[0];
    std::string scheme = "always";
    if (obj.contains("prepend_scheme")) {
      auto s = rd.string(obj, "prepend_scheme", path + ".prepend_scheme", std::string("always"));
      if (!s.ok()) return s.status();
      scheme = s.value();
    } else {  // older files: add_prefix_space
      auto a = rd.boolean(obj, "add_prefix_space", path + ".add_prefix_space", true);
      if (!a.ok()) return a.status();
      scheme = a.value() ? "always" : "never";
    }
    if (scheme == "always") p.prepend = PreTokenizer::Prepend::kAlways;
    else if (scheme == "first") p.prepend = PreTokenizer::Prepend::kFirst;
    else if (scheme == "never") p.prepend = PreTokenizer::Prepend::kNever;
    else return rd.unsupported(path + ".prepend_scheme", quote_value(scheme), "always, first, never");
    auto split = rd.boolean(obj, "split", path + ".split", true);
    if (!split.ok()) return split.status();
    p.split = split.value();
  } else if (t == "ByteLevel") {
    p.type = PreTokenizer::Type::kByteLevel;
    auto prefix = rd.boolean(obj, "add_prefix_space", path + ".add_prefix_space", true);
    if (!prefix.ok()) return prefix.status();
    p.prefix_space = prefix.value();
    auto re = rd.boolean(obj, "use_regex", path + ".use_regex", true);
    if (!re.ok()) return re.status();
    p.gpt2_regex = re.value();
  } else if (t == "Digits") {
    p.type = PreTokenizer::Type::kDigits;
    auto ind = rd.boolean(obj, "individual_digits", path + ".individual_digits", false);
    if (!ind.ok()) return ind.status();
    p.individual_digits = ind.value();
  } else if (t == "WhitespaceSplit") {
    p.type = PreTokenizer::Type::kWhitespaceSplit;
  } else if (t == "Sequence") {
    p.type = PreTokenizer::Type::kSequence;
    ATTN_TRY(read_list<PreTokenizer>(rd, obj, path, "pretokenizers", &read_pre_tokenizer, p.children));
  } else {
    return rd.unsupported(path + ".type", quote_value(t), "Split, Metaspace, ByteLevel, Digits, WhitespaceSplit, Sequence");
  }
  return p;
}

bool uses_byte_level(const PreTokenizer& p) {
  if (p.type == PreTokenizer::Type::kByteLevel) return true;
  for (const PreTokenizer& c : p.children) {
    if (uses_byte_level(c)) return true;
  }
  return false;
}

// ---- decoders -------------------------------------------------------------------------------------------------

struct Decoder {
  enum class Type { kReplace, kByteFallback, kFuse, kStrip, kMetaspace, kByteLevel, kSequence } type;
  std::string a, b;          // Replace pattern -> content; Strip content
  std::size_t start = 0, stop = 0;
  char32_t replacement = U'\u2581';
  bool prepend = true;       // Metaspace: prepend_scheme != never
  std::vector<Decoder> children;
};

std::string replace_str(std::string s, const std::string& pat, const std::string& with) {
  if (pat.empty()) return s;
  std::string out;
  std::size_t at = 0;
  for (std::size_t hit = s.find(pat); hit != std::string::npos; hit = s.find(pat, at)) {
    out.append(s, at, hit - at);
    out += with;
    at = hit + pat.size();
  }
  out.append(s, at);
  return out;
}

// "<0x4A>" -> 0x4A, -1 if the token is not a byte token.
int byte_token(const std::string& t) {
  if (t.size() != 6 || t[0] != '<' || t[1] != '0' || t[2] != 'x' || t[5] != '>') return -1;
  unsigned v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = t[i];
    v = v * 16 + static_cast<unsigned>(c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99);
  }
  return v < 256 ? static_cast<int>(v) : -1;
}

std::uint8_t byte_of_level_char(char32_t c, bool* ok) {
  static const std::vector<int> table = [] {
    std::vector<int> t(0x200, -1);
    for (int b = 0; b < 256; ++b) t[gpt2_byte_to_unicode(static_cast<std::uint8_t>(b))] = b;
    return t;
  }();
  *ok = c < table.size() && table[c] >= 0;
  return *ok ? static_cast<std::uint8_t>(table[c]) : 0;
}

void decode_chain(const Decoder& d, std::vector<std::string>& toks) {
  switch (d.type) {
    case Decoder::Type::kReplace:
      for (std::string& t : toks) t = replace_str(t, d.a, d.b);
      break;
    case Decoder::Type::kByteFallback: {  // byte_fallback.rs: a byte run that is not UTF-8 -> one U+FFFD per byte
      std::vector<std::string> out;
      std::string bytes;
      std::size_t count = 0;
      auto flush = [&] {
        if (count == 0) return;
        if (is_valid_utf8(bytes)) out.push_back(bytes);
        else for (std::size_t i = 0; i < count; ++i) out.push_back("\xEF\xBF\xBD");
        bytes.clear();
        count = 0;
      };
      for (std::string& t : toks) {
        const int b = byte_token(t);
        if (b >= 0) {
          bytes.push_back(static_cast<char>(b));
          ++count;
        } else {
          flush();
          out.push_back(std::move(t));
        }
      }
      flush();
      toks = std::move(out);
      break;
    }
    case Decoder::Type::kFuse: {
      std::string all;
      for (const std::string& t : toks) all += t;
      toks.assign(1, all);
      break;
    }
    case Decoder::Type::kStrip:  // strip.rs: up to `start` leading and `stop` trailing chars equal to content
      for (std::string& t : toks) {
        for (std::size_t i = 0; i < d.start && t.compare(0, d.a.size(), d.a) == 0 && !d.a.empty(); ++i) t.erase(0, d.a.size());
        for (std::size_t i = 0; i < d.stop && t.size() >= d.a.size() && !d.a.empty() &&
                                t.compare(t.size() - d.a.size(), d.a.size(), d.a) == 0; ++i) {
          t.erase(t.size() - d.a.size());
        }
      }
      break;
    case Decoder::Type::kMetaspace: {  // metaspace.rs decode_chain
      std::string rep;
      append_utf8(rep, d.replacement);
      for (std::size_t i = 0; i < toks.size(); ++i) {
        std::string t = replace_str(toks[i], rep, " ");
        if (i == 0 && d.prepend && !t.empty() && t[0] == ' ') t.erase(0, 1);
        toks[i] = std::move(t);
      }
      break;
    }
    case Decoder::Type::kByteLevel: {  // byte_level.rs: a token with a non-byte char gives its own bytes
      std::string bytes;
      for (const std::string& t : toks) {
        std::string mine;
        bool all = true;
        for (char32_t c : to_cps(t)) {
          bool ok = false;
          const std::uint8_t b = byte_of_level_char(c, &ok);
          if (!ok) {
            all = false;
            break;
          }
          mine.push_back(static_cast<char>(b));
        }
        bytes += all ? mine : t;
      }
      toks.assign(1, replace_invalid_utf8(bytes));
      break;
    }
    case Decoder::Type::kSequence:
      for (const Decoder& c : d.children) decode_chain(c, toks);
      break;
  }
}

core::Result<Decoder> read_decoder(const Reader& rd, const json& obj, const std::string& path) {
  auto type = type_of(rd, obj, path);
  if (!type.ok()) return type.status();
  const std::string& t = type.value();
  Decoder d{};
  if (t == "Replace") {
    auto pat = string_pattern(rd, obj, path);
    if (!pat.ok()) return pat.status();
    auto content = rd.string(obj, "content", path + ".content", std::nullopt);
    if (!content.ok()) return content.status();
    d.type = Decoder::Type::kReplace;
    d.a = to_utf8(pat.value());
    d.b = content.value();
  } else if (t == "ByteFallback") {
    d.type = Decoder::Type::kByteFallback;
  } else if (t == "Fuse") {
    d.type = Decoder::Type::kFuse;
  } else if (t == "Strip") {
    d.type = Decoder::Type::kStrip;
    auto content = rd.string(obj, "content", path + ".content", std::nullopt);
    if (!content.ok()) return content.status();
    d.a = content.value();
    auto start = rd.integer(obj, "start", path + ".start", 0, Reader::kNoLimit, 0);
    if (!start.ok()) return start.status();
    auto stop = rd.integer(obj, "stop", path + ".stop", 0, Reader::kNoLimit, 0);
    if (!stop.ok()) return stop.status();
    d.start = static_cast<std::size_t>(start.value());
    d.stop = static_cast<std::size_t>(stop.value());
  } else if (t == "Metaspace") {
    d.type = Decoder::Type::kMetaspace;
    auto rep = rd.string(obj, "replacement", path + ".replacement", std::string("\u2581"));
    if (!rep.ok()) return rep.status();
    const std::u32string r = to_cps(rep.value());
    if (r.size() != 1) return rd.invalid(rd.at(path + ".replacement") + " must be one character");
    d.replacement = r[0];
    if (obj.contains("prepend_scheme")) {
      auto s = rd.string(obj, "prepend_scheme", path + ".prepend_scheme", std::string("always"));
      if (!s.ok()) return s.status();
      d.prepend = s.value() != "never";
    } else {
      auto a = rd.boolean(obj, "add_prefix_space", path + ".add_prefix_space", true);
      if (!a.ok()) return a.status();
      d.prepend = a.value();
    }
  } else if (t == "ByteLevel") {
    d.type = Decoder::Type::kByteLevel;
  } else if (t == "Sequence") {
    d.type = Decoder::Type::kSequence;
    ATTN_TRY(read_list<Decoder>(rd, obj, path, "decoders", &read_decoder, d.children));
  } else {
    return rd.unsupported(path + ".type", quote_value(t), "Replace, ByteFallback, Fuse, Strip, Metaspace, ByteLevel, Sequence");
  }
  return d;
}

// ---- post-processor: the single-sequence template as a list of items ----------------------------------------

struct TemplateItem {
  bool sequence = false;                 // $A
  std::vector<std::int32_t> ids;         // a special token's ids
  std::vector<std::string> tokens;
};

core::Status read_post_processor(const Reader& rd, const json& obj, const std::string& path,
                                 std::vector<TemplateItem>& out, bool* has_template) {
  auto type = type_of(rd, obj, path);
  if (!type.ok()) return type.status();
  const std::string& t = type.value();
  if (t == "ByteLevel") return core::Status::Ok();  // offsets only
  if (t == "Sequence") {
    const auto list = obj.find("processors");
    if (list == obj.end() || !list->is_array()) {
      return rd.type(path + ".processors", "an array", list == obj.end() ? json() : *list);
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      ATTN_TRY(read_post_processor(rd, (*list)[i], path + ".processors[" + std::to_string(i) + "]", out, has_template));
    }
    return core::Status::Ok();
  }
  if (t == "RobertaProcessing" || t == "BertProcessing") {
    // BART's / RoBERTa's (and BERT's) fixed template: cls $A sep, each a [token, id] pair (offsets aside, what
    // tokenizers' RobertaProcessing / BertProcessing add to a single sequence)
    if (*has_template) return rd.unsupported(path, "a second template", "one");
    *has_template = true;
    TemplateItem cls, seq, sep;
    seq.sequence = true;
    for (const auto& [name, item] : {std::pair<const char*, TemplateItem*>{"cls", &cls}, {"sep", &sep}}) {
      const auto it = obj.find(name);
      if (it == obj.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_string() ||
          !(*it)[1].is_number_integer() || (*it)[1].get<long long>() < 0 || (*it)[1].get<long long>() > INT32_MAX) {
        return rd.type(path + "." + name, "a [token, id] pair", it == obj.end() ? json() : *it);
      }
      item->tokens.push_back((*it)[0].get<std::string>());
      item->ids.push_back(static_cast<std::int32_t>((*it)[1].get<long long>()));
    }
    out.push_back(std::move(cls));
    out.push_back(std::move(seq));
    out.push_back(std::move(sep));
    return core::Status::Ok();
  }
  if (t != "TemplateProcessing") {
    return rd.unsupported(path + ".type", quote_value(t),
                          "TemplateProcessing, RobertaProcessing, BertProcessing, ByteLevel, Sequence or null");
  }
  if (*has_template) return rd.unsupported(path, "a second TemplateProcessing", "one");
  *has_template = true;
  const auto single = obj.find("single");
  if (single == obj.end() || !single->is_array()) {
    return rd.type(path + ".single", "an array", single == obj.end() ? json() : *single);
  }
  const auto specials = obj.find("special_tokens");
  for (std::size_t i = 0; i < single->size(); ++i) {
    const json& item = (*single)[i];
    const std::string ip = path + ".single[" + std::to_string(i) + "]";
    if (!item.is_object()) return rd.type(ip, "an object", item);
    TemplateItem ti;
    if (const auto seq = item.find("Sequence"); seq != item.end()) {
      auto id = rd.string(*seq, "id", ip + ".Sequence.id", std::nullopt);
      if (!id.ok()) return id.status();
      if (id.value() != "A") return rd.unsupported(ip + ".Sequence.id", quote_value(id.value()), "A");
      ti.sequence = true;
    } else if (const auto sp = item.find("SpecialToken"); sp != item.end()) {
      auto id = rd.string(*sp, "id", ip + ".SpecialToken.id", std::nullopt);
      if (!id.ok()) return id.status();
      const json* entry = nullptr;
      if (specials != obj.end() && specials->is_object()) {
        const auto e = specials->find(id.value());
        if (e != specials->end()) entry = &*e;
      }
      if (entry == nullptr || !entry->is_object()) {
        return rd.invalid(rd.at(ip + ".SpecialToken.id") + " " + quote_value(id.value()) + " is not in " +
                          rd.at(path + ".special_tokens"));
      }
      const std::string ep = path + ".special_tokens[" + quote_value(id.value()) + "]";
      const auto ids = entry->find("ids");
      const auto toks = entry->find("tokens");
      if (ids == entry->end() || !ids->is_array()) return rd.type(ep + ".ids", "an array", ids == entry->end() ? json() : *ids);
      if (toks == entry->end() || !toks->is_array() || toks->size() != ids->size()) {
        return rd.type(ep + ".tokens", "an array as long as ids", toks == entry->end() ? json() : *toks);
      }
      for (std::size_t k = 0; k < ids->size(); ++k) {
        const json& v = (*ids)[k];
        if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > INT32_MAX) {
          return rd.type(ep + ".ids[" + std::to_string(k) + "]", "an id", v);
        }
        if (!(*toks)[k].is_string()) return rd.type(ep + ".tokens[" + std::to_string(k) + "]", "a string", (*toks)[k]);
        ti.ids.push_back(static_cast<std::int32_t>(v.get<long long>()));
        ti.tokens.push_back((*toks)[k].get<std::string>());
      }
    } else {
      return rd.invalid(rd.at(ip) + " must be {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
    out.push_back(std::move(ti));
  }
  return core::Status::Ok();
}

}  // namespace pipeline

using namespace pipeline;  // NOLINT: the component types of this file

// ---- the BPE model --------------------------------------------------------------------------------------------

struct HfPipeline::Impl {
  std::unordered_map<std::string, std::int32_t> vocab;
  std::vector<std::string> by_id;  // "" for ids the vocab lacks
  struct MergeInfo {
    std::int32_t rank, merged;
  };
  std::unordered_map<std::uint64_t, MergeInfo> merges;
  bool byte_level = false, byte_fallback = false, fuse_unk = false, ignore_merges = false;
  std::int32_t unk = -1;
  std::int32_t byte_ids[256];
  bool has_normalizer = false, has_pre = false, has_decoder = false;
  Normalizer normalizer{};
  PreTokenizer pre{};
  Decoder decoder{};
  std::vector<TemplateItem> tmpl;
  std::vector<AddedToken> added;
  std::unordered_map<std::int32_t, std::size_t> added_by_id;
  std::unordered_map<std::string, std::size_t> added_by_content;
  AddedTokenMatcher matcher;
  // A piece (model alphabet) -> its symbols (id, first char, end char). Not reentrant (wasm runs one thread).
  struct Sym {
    std::int32_t id;
    std::uint32_t a, b;
  };
  mutable std::unordered_map<std::string, std::vector<Sym>> cache;

  static std::uint64_t key(std::int32_t l, std::int32_t r) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(l)) << 32) | static_cast<std::uint32_t>(r);
  }
  std::int32_t find(const std::string& s) const {
    const auto it = vocab.find(s);
    return it == vocab.end() ? -1 : it->second;
  }

  // models/bpe/model.rs merge_word + word.rs merge_all: chars (each a UTF-8 string) to symbols.
  std::vector<Sym> bpe(const std::vector<std::string>& chars, const std::string& whole) const {
    if (ignore_merges) {
      if (const std::int32_t id = find(whole); id >= 0) return {Sym{id, 0, static_cast<std::uint32_t>(chars.size())}};
    }
    std::vector<Sym> syms;
    bool last_unk = false;
    for (std::uint32_t k = 0; k < chars.size(); ++k) {
      const std::int32_t id = find(chars[k]);
      if (id >= 0) {
        syms.push_back(Sym{id, k, k + 1});
        last_unk = false;
        continue;
      }
      if (byte_fallback) {
        bool all = true;
        for (unsigned char c : chars[k]) all = all && byte_ids[c] >= 0;
        if (all) {
          for (unsigned char c : chars[k]) syms.push_back(Sym{byte_ids[c], k, k + 1});
          last_unk = false;
          continue;
        }
      }
      if (unk >= 0) {
        if (fuse_unk && last_unk) syms.back().b = k + 1;
        else syms.push_back(Sym{unk, k, k + 1});
        last_unk = true;
      }
    }
    // priority queue of (rank, position) merges; stale entries are skipped as word.rs does
    const std::size_t n = syms.size();
    std::vector<std::int64_t> prev(n), next(n);
    std::vector<bool> alive(n, true);
    for (std::size_t i = 0; i < n; ++i) {
      prev[i] = static_cast<std::int64_t>(i) - 1;
      next[i] = i + 1 < n ? static_cast<std::int64_t>(i + 1) : -1;
    }
    struct Q {
      std::int32_t rank;
      std::size_t pos;
      std::int32_t merged;
      bool operator>(const Q& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<Q, std::vector<Q>, std::greater<Q>> q;
    auto push = [&](std::size_t i) {
      if (next[i] < 0) return;
      const auto it = merges.find(key(syms[i].id, syms[static_cast<std::size_t>(next[i])].id));
      if (it != merges.end()) q.push(Q{it->second.rank, i, it->second.merged});
    };
    for (std::size_t i = 0; i + 1 < n; ++i) push(i);
    while (!q.empty()) {
      const Q top = q.top();
      q.pop();
      if (!alive[top.pos] || next[top.pos] < 0) continue;
      const auto r = static_cast<std::size_t>(next[top.pos]);
      const auto it = merges.find(key(syms[top.pos].id, syms[r].id));
      if (it == merges.end() || it->second.merged != top.merged) continue;
      syms[top.pos].id = top.merged;
      syms[top.pos].b = syms[r].b;
      alive[r] = false;
      next[top.pos] = next[r];
      if (next[r] >= 0) prev[static_cast<std::size_t>(next[r])] = static_cast<std::int64_t>(top.pos);
      if (prev[top.pos] >= 0) push(static_cast<std::size_t>(prev[top.pos]));
      push(top.pos);
    }
    std::vector<Sym> out;
    for (std::size_t i = 0; i < n; ++i) {
      if (alive[i]) out.push_back(syms[i]);
    }
    return out;
  }

  // Unigram (models/unigram/model.rs): scores per id, the trie of every vocab string, min_score over all of them.
  bool unigram = false;
  std::vector<double> scores;
  double min_score = 0;
  PieceTrie trie;

  // model.rs encode_optimized (f64 scores, unknown characters min_score - 10, runs of unk fused) then tokenize
  // (a string not in the vocab: its <0xNN> bytes with byte_fallback when all exist, else unk_id). Appends
  // (id, token, [byte a, byte b)) of s.
  core::Status unigram_tokens(const std::string& s, std::vector<std::tuple<std::int32_t, std::string, std::size_t, std::size_t>>& out) const {
    struct Best {
      std::int32_t id = 0;
      double score = 0;
      std::int64_t starts_at = -1;
    };
    const std::size_t size = s.size();
    std::vector<Best> best(size + 1);
    const double unk_score = min_score - 10.0;
    for (std::size_t starts_at = 0; starts_at < size;) {
      const double till_here = best[starts_at].score;
      bool has_single = false;
      const std::size_t mblen = std::min(utf8_lead_length(s[starts_at]), size - starts_at);
      std::uint32_t node = 0;
      for (std::size_t key_pos = starts_at; key_pos < size;) {
        if (!trie.step(node, s[key_pos])) break;
        ++key_pos;
        const std::int32_t id = trie.value[node];
        if (id < 0) continue;
        Best& target = best[key_pos];
        const double candidate = scores[static_cast<std::size_t>(id)] + till_here;
        if (target.starts_at < 0 || candidate > target.score) target = Best{id, candidate, static_cast<std::int64_t>(starts_at)};
        if (!has_single && key_pos - starts_at == mblen) has_single = true;
      }
      if (!has_single) {
        if (unk < 0) return core::invalid_error("encode", "text", "encode: text has a character the Unigram vocab lacks and model.unk_id is null");
        Best& target = best[starts_at + mblen];
        const double candidate = unk_score + till_here;
        if (target.starts_at < 0 || candidate > target.score) target = Best{unk, candidate, static_cast<std::int64_t>(starts_at)};
      }
      starts_at += mblen;
    }
    std::vector<std::pair<std::size_t, std::size_t>> spans;  // backwards, unk runs fused
    bool prev_unk = false;
    for (std::size_t ends_at = size; ends_at > 0;) {
      const Best& n = best[ends_at];
      const auto a = static_cast<std::size_t>(n.starts_at);
      const bool is_unk = n.id == unk;
      if (is_unk && prev_unk) spans.back().first = a;
      else spans.emplace_back(a, ends_at);
      prev_unk = is_unk;
      ends_at = a;
    }
    for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
      std::string tok = s.substr(it->first, it->second - it->first);
      const std::int32_t id = find(tok);
      if (id >= 0) {
        out.emplace_back(id, std::move(tok), it->first, it->second);
        continue;
      }
      bool all = byte_fallback;
      for (unsigned char c : tok) all = all && byte_ids[c] >= 0;
      if (all) {
        for (unsigned char c : tok) out.emplace_back(byte_ids[c], by_id[static_cast<std::size_t>(byte_ids[c])], it->first, it->second);
        continue;
      }
      out.emplace_back(unk, std::move(tok), it->first, it->second);
    }
    return core::Status::Ok();
  }

  std::string token_of(std::int32_t id) const {
    if (const auto a = added_by_id.find(id); a != added_by_id.end()) return added[a->second].content;
    if (id >= 0 && static_cast<std::size_t>(id) < by_id.size()) return by_id[static_cast<std::size_t>(id)];
    return {};
  }

  // One piece through the model, appended to out with UTF-16 offsets from the original text.
  core::Status model(const Piece& p, const DecodedText& text, Tokenization& out) const {
    if (unigram) {
      std::string s;
      std::vector<std::uint32_t> cp_of_byte;
      for (std::uint32_t i = 0; i < p.cps.size(); ++i) {
        const std::size_t before = s.size();
        append_utf8(s, p.cps[i]);
        cp_of_byte.insert(cp_of_byte.end(), s.size() - before, i);
      }
      if (s.empty()) return core::Status::Ok();
      std::vector<std::tuple<std::int32_t, std::string, std::size_t, std::size_t>> toks;
      ATTN_TRY(unigram_tokens(s, toks));
      for (auto& [id, tok, a, b] : toks) {
        out.ids.push_back(id);
        out.tokens.push_back(std::move(tok));
        out.offsets.push_back(text.utf16_offset[p.from[cp_of_byte[a]].first]);
        out.offsets.push_back(text.utf16_offset[p.from[cp_of_byte[b - 1]].second]);
      }
      return core::Status::Ok();
    }
    std::vector<std::string> chars;
    std::vector<std::uint32_t> src;  // chars[k] comes from p.cps[src[k]]
    std::string whole;
    for (std::uint32_t i = 0; i < p.cps.size(); ++i) {
      if (byte_level) {
        std::string raw;
        append_utf8(raw, p.cps[i]);
        for (unsigned char c : raw) {
          std::string ch;
          append_utf8(ch, gpt2_byte_to_unicode(c));
          whole += ch;
          chars.push_back(std::move(ch));
          src.push_back(i);
        }
      } else {
        std::string ch;
        append_utf8(ch, p.cps[i]);
        whole += ch;
        chars.push_back(std::move(ch));
        src.push_back(i);
      }
    }
    if (chars.empty()) return core::Status::Ok();
    auto it = cache.find(whole);
    if (it == cache.end()) {
      if (cache.size() > 50000) cache.clear();
      it = cache.emplace(whole, bpe(chars, whole)).first;
    }
    for (const Sym& s : it->second) {
      out.ids.push_back(s.id);
      out.tokens.push_back(by_id[static_cast<std::size_t>(s.id)]);
      const std::uint32_t a = p.from[src[s.a]].first, b = p.from[src[s.b - 1]].second;
      out.offsets.push_back(text.utf16_offset[a]);
      out.offsets.push_back(text.utf16_offset[b]);
    }
    return core::Status::Ok();
  }
};

HfPipeline::~HfPipeline() = default;

core::Result<std::unique_ptr<HfPipeline>> HfPipeline::create(const Reader& rd, const hf_json::ParsedFile& f,
                                                             std::vector<AddedToken> added) {
  std::unique_ptr<HfPipeline> out(new HfPipeline());
  out->impl_ = std::make_unique<Impl>();
  Impl& m = *out->impl_;
  const json& model = *f.root.find("model");
  if (model.contains("type") && model["type"] == "Unigram") {
    ATTN_TRY(read_unigram(rd, model, m));
  } else {
    ATTN_TRY(read_bpe(rd, f, model, m));
  }
  return finish(rd, f, std::move(added), std::move(out));
}

core::Status HfPipeline::read_unigram(const Reader& rd, const json& model, Impl& m) {
  // models/unigram/serialization.rs: vocab [[token, score], ...], unk_id (null or an index), byte_fallback
  m.unigram = true;
  const auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_array()) {
    return rd.type("model.vocab", "an array of [token, score] pairs", vocab == model.end() ? json() : *vocab);
  }
  if (vocab->empty()) return rd.invalid(rd.at("model.vocab") + " is empty");
  m.min_score = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < vocab->size(); ++i) {
    const json& e = (*vocab)[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number()) {
      return rd.type("model.vocab[" + std::to_string(i) + "]", "a [token, score] pair", e);
    }
    const std::string token = e[0].get<std::string>();
    const auto id = static_cast<std::int32_t>(i);
    m.vocab[token] = id;  // a repeated token: the last id (AHashMap insert)
    m.by_id.push_back(token);
    m.scores.push_back(e[1].get<double>());
    m.min_score = std::min(m.min_score, m.scores.back());
    m.trie.insert(token, id);
  }
  const auto unk = model.find("unk_id");
  if (unk != model.end() && !unk->is_null()) {
    if (!unk->is_number_integer() || unk->get<std::int64_t>() < 0 ||
        unk->get<std::int64_t>() >= static_cast<std::int64_t>(vocab->size())) {
      return rd.type("model.unk_id", "null or an index into model.vocab", *unk);
    }
    m.unk = static_cast<std::int32_t>(unk->get<std::int64_t>());
  }
  auto bf = rd.boolean(model, "byte_fallback", "model.byte_fallback", false);
  if (!bf.ok()) return bf.status();
  m.byte_fallback = bf.value();
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    m.byte_ids[b] = m.find(name);
  }
  return core::Status::Ok();
}

core::Status HfPipeline::read_bpe(const Reader& rd, const hf_json::ParsedFile& f, const json& model, Impl& m) {
  // model options (models/bpe/serialization.rs)
  for (const char* name : {"dropout", "continuing_subword_prefix", "end_of_word_suffix"}) {
    const auto it = model.find(name);
    if (it != model.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty())) {
      return rd.unsupported(std::string("model.") + name, it->dump(), "null");
    }
  }
  for (auto [name, value] : {std::pair<const char*, bool*>{"byte_fallback", &m.byte_fallback},
                             {"fuse_unk", &m.fuse_unk}, {"ignore_merges", &m.ignore_merges}}) {
    auto v = rd.boolean(model, name, std::string("model.") + name, false);
    if (!v.ok()) return v.status();
    *value = v.value();
  }
  // vocab
  std::int64_t max_id = -1;
  for (const auto& [token, id] : f.vocab) {
    if (id < 0 || id > INT32_MAX) {
      return id_range_error(rd.fn(), rd.arg(), rd.at("model.vocab") + "[" + quote_value(token) + "]", id);
    }
    max_id = std::max(max_id, id);
  }
  if (max_id >= static_cast<std::int64_t>(f.vocab.size()) * 2 + 1024) {
    return rd.invalid(rd.at("model.vocab") + " ids must be dense (the largest is " + std::to_string(max_id) + ")");
  }
  m.by_id.assign(static_cast<std::size_t>(max_id + 1), std::string());
  m.vocab.reserve(f.vocab.size() * 2);
  for (const auto& [token, id] : f.vocab) {
    if (token.empty()) return rd.invalid(rd.at("model.vocab") + " has an empty token");
    if (!m.vocab.emplace(token, static_cast<std::int32_t>(id)).second) {
      return rd.invalid(rd.at("model.vocab") + " lists the token " + quote_value(token) + " twice");
    }
    std::string& slot = m.by_id[static_cast<std::size_t>(id)];
    if (!slot.empty()) {
      return rd.invalid(rd.at("model.vocab") + " gives the id " + std::to_string(id) + " to " + quote_value(slot) +
                        " and " + quote_value(token));
    }
    slot = token;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    m.byte_ids[b] = m.find(name);
  }
  if (const auto u = model.find("unk_token"); u != model.end() && !u->is_null()) {
    if (!u->is_string()) return rd.type("model.unk_token", "a string or null", *u);
    m.unk = m.find(u->get<std::string>());
    if (m.unk < 0) return rd.invalid(rd.at("model.unk_token") + " " + quote_value(u->get<std::string>()) + " is not in the vocab");
  }
  // merges
  if (!f.merges_seen) return rd.invalid(rd.at("model.merges") + " is missing or not an array");
  const std::string merges_at = rd.at("model.merges");
  if (f.merge_bad != SIZE_MAX) {
    return core::type_error(rd.fn(), rd.arg(), merges_at + "[" + std::to_string(f.merge_bad) + "] " + f.merge_bad_what);
  }
  m.merges.reserve(f.merges.size() * 2);
  for (std::size_t i = 0; i < f.merges.size(); ++i) {
    const hf_json::MergeItem& it = f.merges[i];
    std::string_view a = it.a, b = it.b;
    const std::string where = merges_at + "[" + std::to_string(i) + "]";
    if (!it.pair && !split_merge(it.a, &a, &b)) {
      return rd.invalid(where + " must be two tokens separated by a space, got " + quote_value(it.a));
    }
    const std::int32_t l = m.find(std::string(a)), r = m.find(std::string(b));
    const std::int32_t merged = m.find(std::string(a) + std::string(b));
    if (l < 0 || r < 0 || merged < 0) {
      return rd.invalid(where + ": token " + quote_value(l < 0 ? std::string(a) : r < 0 ? std::string(b)
                                                                                     : std::string(a) + std::string(b)) +
                        " is not in the vocab");
    }
    m.merges.emplace(Impl::key(l, r), Impl::MergeInfo{static_cast<std::int32_t>(i), merged});  // first rank wins
  }
  return core::Status::Ok();
}

core::Result<std::unique_ptr<HfPipeline>> HfPipeline::finish(const Reader& rd, const hf_json::ParsedFile& f,
                                                             std::vector<AddedToken> added,
                                                             std::unique_ptr<HfPipeline> out) {
  Impl& m = *out->impl_;
  const json& root = f.root;
  // components
  if (const auto n = root.find("normalizer"); n != root.end() && !n->is_null()) {
    auto r = read_normalizer(rd, *n, "normalizer");
    if (!r.ok()) return r.status();
    m.normalizer = std::move(r).value();
    m.has_normalizer = true;
  }
  if (const auto p = root.find("pre_tokenizer"); p != root.end() && !p->is_null()) {
    auto r = read_pre_tokenizer(rd, *p, "pre_tokenizer");
    if (!r.ok()) return r.status();
    m.pre = std::move(r).value();
    m.has_pre = true;
    m.byte_level = uses_byte_level(m.pre);
  }
  if (const auto d = root.find("decoder"); d != root.end() && !d->is_null()) {
    auto r = read_decoder(rd, *d, "decoder");
    if (!r.ok()) return r.status();
    m.decoder = std::move(r).value();
    m.has_decoder = true;
  }
  if (const auto p = root.find("post_processor"); p != root.end() && !p->is_null()) {
    bool has_template = false;
    ATTN_TRY(read_post_processor(rd, *p, "post_processor", m.tmpl, &has_template));
  }
  for (const TemplateItem& t : m.tmpl) {
    if (t.sequence) break;
    if (!t.ids.empty()) {
      out->bos_ = t.ids[0];
      break;
    }
  }
  // added tokens (added_vocabulary.rs): matched in the raw text
  AddedTokenVocab rules;
  const Impl* mp = &m;
  rules.id_of = [mp](const std::string& content) { return mp->find(content); };
  rules.token_of = [mp](std::int32_t id) -> std::optional<std::string> {
    if (id < 0 || static_cast<std::size_t>(id) >= mp->by_id.size() || mp->by_id[static_cast<std::size_t>(id)].empty()) {
      return std::nullopt;
    }
    return mp->by_id[static_cast<std::size_t>(id)];
  };
  rules.fn = rd.fn();
  rules.arg = rd.arg();
  rules.added = rd.at("added_tokens");
  auto checked = check_added_tokens(added, rules);
  if (!checked.ok()) return checked.status();
  for (std::size_t i = 0; i < added.size(); ++i) {
    if (added[i].normalized && m.has_normalizer) {
      return rd.unsupported("added_tokens[" + std::to_string(i) + "].normalized", "true",
                            "false when the file has a normalizer");
    }
  }
  std::vector<std::u32string> patterns;
  for (std::size_t i = 0; i < added.size(); ++i) {
    patterns.push_back(to_cps(added[i].content));
    m.added_by_id.emplace(added[i].id, i);
    m.added_by_content.emplace(added[i].content, i);
  }
  m.matcher = AddedTokenMatcher(added, patterns);
  m.added = std::move(added);
  return out;
}

core::Result<Tokenization> HfPipeline::encode(std::string_view utf8, bool with_specials) const {
  const Impl& m = *impl_;
  auto decoded = decode_utf8(utf8, "encode", "text");
  if (!decoded.ok()) return decoded.status();
  const DecodedText& text = decoded.value();
  Tokenization seq;
  auto run = [&](std::size_t a, std::size_t b) -> core::Status {
    Piece p;
    p.cps.assign(text.cps.begin() + static_cast<std::ptrdiff_t>(a), text.cps.begin() + static_cast<std::ptrdiff_t>(b));
    for (std::size_t i = a; i < b; ++i) p.from.emplace_back(i, i + 1);
    p.at_start = a == 0;
    if (m.has_normalizer) normalize(m.normalizer, p);
    std::vector<Piece> pieces;
    pieces.push_back(std::move(p));
    if (m.has_pre) pre_tokenize(m.pre, pieces);
    for (const Piece& q : pieces) {
      core::Status st = m.model(q, text, seq);
      if (!st.ok()) return st;
    }
    return core::Status::Ok();
  };
  std::size_t done = 0;
  for (const AddedTokenMatcher::Match& hit : m.matcher.find(text.cps)) {
    if (done < hit.first) ATTN_TRY(run(done, hit.first));
    seq.ids.push_back(m.added[hit.token].id);
    seq.tokens.push_back(m.added[hit.token].content);
    seq.offsets.push_back(text.utf16_offset[hit.first]);
    seq.offsets.push_back(text.utf16_offset[hit.last]);
    done = hit.last;
  }
  if (done < text.cps.size()) ATTN_TRY(run(done, text.cps.size()));
  if (!with_specials || m.tmpl.empty()) return seq;
  Tokenization out;
  for (const TemplateItem& t : m.tmpl) {
    if (t.sequence) {
      out.ids.insert(out.ids.end(), seq.ids.begin(), seq.ids.end());
      out.tokens.insert(out.tokens.end(), seq.tokens.begin(), seq.tokens.end());
      out.offsets.insert(out.offsets.end(), seq.offsets.begin(), seq.offsets.end());
      continue;
    }
    for (std::size_t k = 0; k < t.ids.size(); ++k) {
      out.ids.push_back(t.ids[k]);
      out.tokens.push_back(t.tokens[k]);
      out.offsets.push_back(0);
      out.offsets.push_back(0);
    }
  }
  return out;
}

core::Result<std::string> HfPipeline::decode(std::span<const std::int32_t> ids) const {
  const Impl& m = *impl_;
  std::vector<std::string> toks;
  toks.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::string t = m.token_of(ids[i]);
    if (t.empty()) return unknown_id_error(i, ids[i]);
    toks.push_back(std::move(t));
  }
  if (m.has_decoder) decode_chain(m.decoder, toks);
  std::string out;
  for (const std::string& t : toks) out += t;
  return out;
}

std::string HfPipeline::token_text(std::int32_t id) const { return impl_->token_of(id); }

std::int32_t HfPipeline::id_of(std::string_view token) const {
  const std::string t(token);
  if (const auto a = impl_->added_by_content.find(t); a != impl_->added_by_content.end()) {
    return impl_->added[a->second].id;
  }
  return impl_->find(t);
}

std::size_t HfPipeline::vocab_size() const {
  std::size_t n = impl_->vocab.size();
  for (const AddedToken& a : impl_->added) {
    if (impl_->find(a.content) < 0) ++n;
  }
  return n;
}

}  // namespace attnscope::tokenizers
