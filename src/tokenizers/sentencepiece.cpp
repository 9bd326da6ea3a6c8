// SentencePiece (sentencepiece.h), following sentencepiece 0.1.97's src/: model_interface.cc (InitializePieces,
// PieceToId), normalizer.cc (Normalize, NormalizePrefix, PrefixMatcher), unigram_model.cc (EncodeOptimized),
// bpe_model.cc (SampleEncode), sentencepiece_processor.cc (PopulateSentencePieceText, Decode). The arithmetic of
// the Viterbi is kept in the reference's types (float scores, a double candidate for pieces, float for <unk>) so
// that ties resolve the same way. Layer: tokenizers.
#include "tokenizers/sentencepiece.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <functional>
#include <queue>
#include <set>

#include "core/text.h"
#include "tokenizers/added_tokens.h"
#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
namespace spm_impl {  // named: the unity build joins this file with others

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // U+2581
constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";
constexpr float kUnkPenalty = 10.0f;

std::size_t one_char_len(char c) { return utf8_lead_length(c); }

// util.cc DecodeUTF8 / IsValidDecodeUTF8 of the first character of s: false for a malformed one (length 1).
bool valid_char(std::string_view s, std::size_t* len) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  *len = 1;
  if (b0 < 0x80) return true;
  auto trail = [&](std::size_t i) { return (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80; };
  auto ok = [](char32_t cp) { return cp < 0xD800 || (cp > 0xDFFF && cp <= 0x10FFFF); };
  if (s.size() >= 2 && (b0 & 0xE0) == 0xC0) {
    const char32_t cp = ((b0 & 0x1F) << 6) | (s[1] & 0x3F);
    if (trail(1) && cp >= 0x80 && ok(cp)) return *len = 2, true;
  } else if (s.size() >= 3 && (b0 & 0xF0) == 0xE0) {
    const char32_t cp = ((b0 & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    if (trail(1) && trail(2) && cp >= 0x800 && ok(cp)) return *len = 3, true;
  } else if (s.size() >= 4 && (b0 & 0xF8) == 0xF0) {
    const char32_t cp = ((b0 & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F);
    if (trail(1) && trail(2) && trail(3) && cp >= 0x10000 && ok(cp)) return *len = 4, true;
  }
  return false;
}

// model_interface.cc PieceToByte: "<0x4A>" -> 0x4A, else -1.
int piece_to_byte(std::string_view p) {
  if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = p[static_cast<std::size_t>(i)];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

std::string byte_piece(unsigned char b) {
  char name[8];
  std::snprintf(name, sizeof name, "<0x%02X>", b);
  return name;
}

}  // namespace spm_impl

using spm_impl::kReplacementChar;
using spm_impl::kSpaceSymbol;
using spm_impl::kUnkPenalty;
using spm_impl::one_char_len;
using spm_impl::valid_char;
using spm_impl::piece_to_byte;
using spm_impl::byte_piece;

void PieceTrie::insert(std::string_view key, std::int32_t id) {
  std::uint32_t node = 0;
  for (char c : key) {
    const std::uint64_t k = (static_cast<std::uint64_t>(node) << 8) | static_cast<std::uint8_t>(c);
    auto it = next.find(k);
    if (it == next.end()) {
      it = next.emplace(k, static_cast<std::uint32_t>(value.size())).first;
      value.push_back(-1);
    }
    node = it->second;
  }
  value[node] = id;
}

std::vector<std::int32_t> utf16_of_bytes(const DecodedText& text, std::size_t nbytes) {
  std::vector<std::int32_t> out(nbytes + 1, 0);
  for (std::size_t c = 0; c < text.cps.size(); ++c) {
    for (auto b = static_cast<std::size_t>(text.byte_offset[c]); b < static_cast<std::size_t>(text.byte_offset[c + 1]); ++b) {
      out[b] = text.utf16_offset[c];
    }
  }
  out[nbytes] = text.utf16_offset[text.cps.size()];
  return out;
}

std::string replace_text(std::string_view s, std::string_view pat, std::string_view with) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t hit = s.find(pat); hit != std::string_view::npos; hit = s.find(pat, at)) {
    out.append(s.substr(at, hit - at));
    out.append(with);
    at = hit + pat.size();
  }
  out.append(s.substr(at));
  return out;
}

SentencePiece::~SentencePiece() = default;

core::Result<std::unique_ptr<SentencePiece>> SentencePiece::load(std::span<const std::uint8_t> bytes, const char* fn,
                                                                 const char* arg) {
  auto parsed = parse_sentencepiece_model(bytes, fn, arg);
  if (!parsed.ok()) return parsed.status();
  std::unique_ptr<SentencePiece> sp(new SentencePiece());
  sp->proto_ = std::move(parsed).value();
  const SpmModelProto& m = sp->proto_;
  const std::string a(arg);
  if (m.model_type != SpmModelProto::kUnigram && m.model_type != SpmModelProto::kBpe) {
    const char* names[] = {"?", "UNIGRAM", "BPE", "WORD", "CHAR"};
    const std::string name = m.model_type >= 1 && m.model_type <= 4 ? std::string(" (") + names[m.model_type] + ")" : "";
    return core::invalid_error(fn, arg, a + ".trainer_spec.model_type " + std::to_string(m.model_type) + name +
                                            " is not supported (UNIGRAM, BPE)");
  }
  // model_interface.cc InitializePieces
  std::fill(std::begin(sp->byte_ids_), std::end(sp->byte_ids_), -1);
  std::set<std::size_t> lengths;
  for (std::size_t i = 0; i < m.pieces.size(); ++i) {
    const SpmModelProto::Piece& p = m.pieces[i];
    const auto id = static_cast<std::int32_t>(i);
    const bool normal = p.type == SpmModelProto::kNormal || p.type == SpmModelProto::kUserDefined ||
                        p.type == SpmModelProto::kUnused;
    if (!is_valid_utf8(p.piece)) {
      return core::invalid_error(fn, arg, a + ".pieces[" + std::to_string(i) + "] is not valid UTF-8");
    }
    const std::string where = a + ".pieces[" + std::to_string(i) + "] " + core::quote(p.piece, '\'');
    if (!(normal ? sp->pieces_ : sp->reserved_).emplace(p.piece, id).second) {
      return core::invalid_error(fn, arg, where + " is already defined");
    }
    if (p.type == SpmModelProto::kUserDefined) {
      sp->user_defined_.emplace(p.piece, id);
      lengths.insert(p.piece.size());
    }
    if (p.type == SpmModelProto::kUnknown) {
      if (sp->unk_id_ >= 0) return core::invalid_error(fn, arg, where + ": <unk> is already defined");
      sp->unk_id_ = id;
    }
    if (p.type == SpmModelProto::kByte) {
      if (!m.byte_fallback) return core::invalid_error(fn, arg, where + " is a byte piece although byte_fallback is false");
      const int b = piece_to_byte(p.piece);
      if (b < 0) return core::invalid_error(fn, arg, where + " is not a valid byte piece (<0x00>..<0xFF>)");
      sp->byte_ids_[b] = id;
    }
  }
  if (!is_valid_utf8(m.unk_surface)) {
    return core::invalid_error(fn, arg, a + ".trainer_spec.unk_surface is not valid UTF-8");
  }
  if (sp->unk_id_ < 0) return core::invalid_error(fn, arg, a + " has no unknown piece (<unk>, type UNKNOWN)");
  if (m.byte_fallback && std::find(std::begin(sp->byte_ids_), std::end(sp->byte_ids_), -1) != std::end(sp->byte_ids_)) {
    return core::invalid_error(fn, arg, a + " has byte_fallback but not the 256 byte pieces <0x00>..<0xFF>");
  }
  sp->user_lengths_.assign(lengths.rbegin(), lengths.rend());
  auto map = PrecompiledCharsmap::create(m.normalizer.precompiled_charsmap, fn, arg,
                                         a + ".normalizer_spec.precompiled_charsmap");
  if (!map.ok()) return map.status();
  sp->charsmap_ = std::move(map).value();
  auto demap = PrecompiledCharsmap::create(m.denormalizer.precompiled_charsmap, fn, arg,
                                           a + ".denormalizer_spec.precompiled_charsmap");
  if (!demap.ok()) return demap.status();
  sp->decharsmap_ = std::move(demap).value();
  if (m.model_type == SpmModelProto::kUnigram) {
    // unigram_model.cc Model::Model: scores of the NORMAL pieces; the trie holds pieces_
    sp->min_score_ = FLT_MAX;
    sp->max_score_ = FLT_MIN;
    for (const SpmModelProto::Piece& p : m.pieces) {
      if (p.type != SpmModelProto::kNormal) continue;
      sp->min_score_ = std::min(sp->min_score_, p.score);
      sp->max_score_ = std::max(sp->max_score_, p.score);
    }
    if (sp->pieces_.empty()) return core::invalid_error(fn, arg, a + " has no normal or user-defined pieces");
    sp->trie_ = std::make_unique<PieceTrie>();
    for (const auto& [piece, id] : sp->pieces_) sp->trie_->insert(piece, id);
  }
  return sp;
}

const std::string& SentencePiece::id_to_piece(std::int32_t id) const {
  static const std::string empty;
  return valid(id) ? proto_.pieces[static_cast<std::size_t>(id)].piece : empty;
}

std::int32_t SentencePiece::find(std::string_view piece) const {
  const std::string p(piece);
  if (const auto it = reserved_.find(p); it != reserved_.end()) return it->second;
  if (const auto it = pieces_.find(p); it != pieces_.end()) return it->second;
  return -1;
}

std::int32_t SentencePiece::piece_to_id(std::string_view piece) const {
  const std::int32_t id = find(piece);
  return id >= 0 ? id : unk_id_;
}

std::size_t SentencePiece::prefix_match(std::string_view s, bool* found) const {
  for (std::size_t n : user_lengths_) {
    if (n <= s.size() && user_defined_.count(std::string(s.substr(0, n))) != 0) {
      *found = true;
      return n;
    }
  }
  *found = false;
  return std::min(s.size(), one_char_len(s[0]));
}

void SentencePiece::normalize_with(const SpmNormalizerSpec& spec, const PrecompiledCharsmap& map, bool user_defined,
                                   std::string_view input, std::string& out,
                                   std::vector<std::size_t>& norm_to_orig) const {
  out.clear();
  norm_to_orig.clear();
  if (input.empty()) return;
  // Normalizer::NormalizePrefix: (replacement, bytes consumed)
  auto prefix = [&](std::string_view in) -> std::pair<std::string_view, std::size_t> {
    if (user_defined && !user_lengths_.empty()) {
      bool found = false;
      const std::size_t n = prefix_match(in, &found);
      if (found) return {in.substr(0, n), n};
    }
    std::string_view rep;
    if (const std::size_t n = map.longest_prefix(in, &rep); n > 0) return {rep, n};
    std::size_t n = 0;
    if (!valid_char(in, &n)) return {kReplacementChar, 1};
    return {in.substr(0, n), n};
  };
  const bool suffix = proto_.treat_whitespace_as_suffix;
  std::size_t consumed = 0;
  if (spec.remove_extra_whitespaces) {
    while (!input.empty()) {
      const auto p = prefix(input);
      if (p.first != " ") break;
      input.remove_prefix(p.second);
      consumed += p.second;
    }
  }
  if (input.empty()) return;
  auto add_ws = [&] {
    if (spec.escape_whitespaces) {
      out.append(kSpaceSymbol);
      norm_to_orig.insert(norm_to_orig.end(), kSpaceSymbol.size(), consumed);
    } else {
      out.push_back(' ');
      norm_to_orig.push_back(consumed);
    }
  };
  if (!suffix && spec.add_dummy_prefix) add_ws();
  bool is_prev_space = spec.remove_extra_whitespaces;
  while (!input.empty()) {
    const auto p = prefix(input);
    std::string_view sp = p.first;
    while (is_prev_space && !sp.empty() && sp[0] == ' ') sp.remove_prefix(1);
    if (!sp.empty()) {
      for (char c : sp) {
        if (spec.escape_whitespaces && c == ' ') {
          out.append(kSpaceSymbol);
          norm_to_orig.insert(norm_to_orig.end(), kSpaceSymbol.size(), consumed);
        } else {
          out.push_back(c);
          norm_to_orig.push_back(consumed);
        }
      }
      is_prev_space = sp.back() == ' ';
    }
    consumed += p.second;
    input.remove_prefix(p.second);
    if (!spec.remove_extra_whitespaces) is_prev_space = false;
  }
  if (spec.remove_extra_whitespaces) {
    const std::string_view space = spec.escape_whitespaces ? kSpaceSymbol : std::string_view(" ");
    while (out.size() >= space.size() && std::string_view(out).substr(out.size() - space.size()) == space) {
      const std::size_t length = out.size() - space.size();
      consumed = norm_to_orig[length];
      out.resize(length);
      norm_to_orig.resize(length);
    }
  }
  if (suffix && spec.add_dummy_prefix) add_ws();
  norm_to_orig.push_back(consumed);
}

std::string SentencePiece::normalize(std::string_view utf8) const {
  std::string out;
  std::vector<std::size_t> n2o;
  normalize_with(proto_.normalizer, charsmap_, true, utf8, out, n2o);
  return out;
}

SentencePiece::Encoded SentencePiece::encode_unigram(std::string_view normalized) const {
  struct BestPathNode {
    std::int32_t id = -1;
    float best_path_score = 0;
    std::int64_t starts_at = -1;
  };
  const std::size_t size = normalized.size();
  if (size == 0) return {};
  const float unk_score = min_score_ - kUnkPenalty;
  std::vector<BestPathNode> best(size + 1);
  std::size_t starts_at = 0;
  while (starts_at < size) {
    const float till_here = best[starts_at].best_path_score;
    bool has_single_node = false;
    const std::size_t mblen = std::min(one_char_len(normalized[starts_at]), size - starts_at);
    std::uint32_t node = 0;
    for (std::size_t key_pos = starts_at; key_pos < size;) {
      if (!trie_->step(node, normalized[key_pos])) break;
      ++key_pos;
      const std::int32_t id = trie_->value[node];
      if (id < 0) continue;
      const int type = proto_.pieces[static_cast<std::size_t>(id)].type;
      if (type == SpmModelProto::kUnused) continue;
      BestPathNode& target = best[key_pos];
      const std::size_t length = key_pos - starts_at;
      const double score = type == SpmModelProto::kUserDefined
                               ? static_cast<double>(static_cast<float>(length) * max_score_) - 0.1
                               : static_cast<double>(proto_.pieces[static_cast<std::size_t>(id)].score);
      const double candidate = score + static_cast<double>(till_here);
      if (target.starts_at == -1 || candidate > static_cast<double>(target.best_path_score)) {
        target.best_path_score = static_cast<float>(candidate);
        target.starts_at = static_cast<std::int64_t>(starts_at);
        target.id = id;
      }
      if (!has_single_node && length == mblen) has_single_node = true;
    }
    if (!has_single_node) {
      BestPathNode& target = best[starts_at + mblen];
      const float candidate = unk_score + till_here;
      if (target.starts_at == -1 || candidate > target.best_path_score) {
        target.best_path_score = candidate;
        target.starts_at = static_cast<std::int64_t>(starts_at);
        target.id = unk_id_;
      }
    }
    starts_at += mblen;
  }
  Encoded out;
  std::size_t ends_at = size;
  while (ends_at > 0) {
    const BestPathNode& n = best[ends_at];
    const auto s = static_cast<std::size_t>(n.starts_at);
    out.emplace_back(normalized.substr(s, ends_at - s), n.id);
    ends_at = s;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

SentencePiece::Encoded SentencePiece::encode_bpe(std::string_view normalized) const {
  struct Symbol {
    std::int64_t prev, next;
    bool freeze;
    std::string_view piece;
  };
  struct Pair {
    std::int64_t left, right;
    float score;
    std::size_t size;
  };
  struct Less {  // bpe_model.cc SymbolPairComparator
    bool operator()(const Pair& a, const Pair& b) const {
      return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
  };
  std::priority_queue<Pair, std::vector<Pair>, Less> agenda;
  std::vector<Symbol> symbols;
  std::unordered_map<std::string_view, std::pair<std::string_view, std::string_view>> rev_merge;
  auto maybe_add = [&](std::int64_t left, std::int64_t right) {
    if (left == -1 || right == -1) return;
    const Symbol& l = symbols[static_cast<std::size_t>(left)];
    const Symbol& r = symbols[static_cast<std::size_t>(right)];
    if (l.freeze || r.freeze) return;
    const std::string_view piece(l.piece.data(), l.piece.size() + r.piece.size());
    const auto it = pieces_.find(std::string(piece));
    if (it == pieces_.end()) return;
    const SpmModelProto::Piece& p = proto_.pieces[static_cast<std::size_t>(it->second)];
    agenda.push(Pair{left, right, p.score, piece.size()});
    if (p.type == SpmModelProto::kUnused) rev_merge[piece] = {l.piece, r.piece};
  };
  std::string_view rest = normalized;
  std::int64_t index = 0;
  while (!rest.empty()) {
    Symbol s;
    const std::size_t n = prefix_match(rest, &s.freeze);
    s.piece = rest.substr(0, n);
    s.prev = index == 0 ? -1 : index - 1;
    rest.remove_prefix(n);
    s.next = rest.empty() ? -1 : index + 1;
    ++index;
    symbols.push_back(s);
  }
  if (symbols.empty()) return {};
  for (std::size_t i = 1; i < symbols.size(); ++i) maybe_add(static_cast<std::int64_t>(i - 1), static_cast<std::int64_t>(i));
  while (!agenda.empty()) {
    const Pair top = agenda.top();
    agenda.pop();
    Symbol& l = symbols[static_cast<std::size_t>(top.left)];
    Symbol& r = symbols[static_cast<std::size_t>(top.right)];
    if (l.piece.empty() || r.piece.empty() || l.piece.size() + r.piece.size() != top.size) continue;
    l.piece = std::string_view(l.piece.data(), l.piece.size() + r.piece.size());
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<std::size_t>(r.next)].prev = top.left;
    r.piece = std::string_view();
    maybe_add(l.prev, top.left);
    maybe_add(top.left, l.next);
  }
  Encoded out;
  std::function<void(std::string_view)> resegment = [&](std::string_view w) {
    const std::int32_t id = piece_to_id(w);
    if (type_of(id) != SpmModelProto::kUnused) {
      out.emplace_back(w, id);
      return;
    }
    const auto p = rev_merge.find(w);
    if (p == rev_merge.end()) {
      out.emplace_back(w, id);
      return;
    }
    resegment(p->second.first);
    resegment(p->second.second);
  };
  for (std::int64_t i = 0; i != -1; i = symbols[static_cast<std::size_t>(i)].next) {
    resegment(symbols[static_cast<std::size_t>(i)].piece);
  }
  return out;
}

core::Result<Tokenization> SentencePiece::encode(std::string_view utf8) const {
  auto decoded = decode_utf8(utf8, "encode", "text");
  if (!decoded.ok()) return decoded.status();
  const DecodedText& text = decoded.value();
  const std::vector<std::int32_t> utf16 = utf16_of_bytes(text, utf8.size());
  std::string normalized;
  std::vector<std::size_t> n2o;
  normalize_with(proto_.normalizer, charsmap_, true, utf8, normalized, n2o);
  const Encoded result = proto_.model_type == SpmModelProto::kBpe ? encode_bpe(normalized) : encode_unigram(normalized);
  // sentencepiece_processor.cc PopulateSentencePieceText
  Tokenization out;
  auto push = [&](std::int32_t id, std::string piece, std::size_t a, std::size_t b) {
    out.ids.push_back(id);
    out.tokens.push_back(std::move(piece));
    out.offsets.push_back(utf16[std::min(a, utf8.size())]);
    out.offsets.push_back(utf16[std::min(b, utf8.size())]);
  };
  std::size_t consumed = 0;
  bool prev_unk = false;
  for (const auto& [w, id] : result) {
    const bool unk = is_unknown(id);
    if (is_control(id)) {  // begin == end; nothing consumed
      push(id, std::string(w), n2o[consumed], n2o[consumed]);
      prev_unk = unk;
      continue;
    }
    const std::size_t a = n2o[consumed], b = n2o[std::min(consumed + w.size(), n2o.size() - 1)];
    if (unk && proto_.byte_fallback) {
      for (std::size_t i = 0; i < w.size(); ++i) {
        const auto byte = static_cast<unsigned char>(w[i]);
        push(byte_ids_[byte], byte_piece(byte), a, i + 1 == w.size() ? b : a);
      }
    } else if (prev_unk && unk) {
      out.tokens.back() += std::string(w);
      out.offsets.back() = utf16[std::min(b, utf8.size())];
    } else {
      push(id, std::string(w), a, b);
    }
    consumed += w.size();
    prev_unk = unk;
  }
  return out;
}

std::string SentencePiece::decode_pieces(std::span<const std::string> pieces) const {
  const SpmNormalizerSpec& ns = proto_.normalizer;
  std::string text;
  std::string bytes;  // pending byte pieces
  auto flush = [&] {
    std::size_t off = 0;
    while (off < bytes.size()) {
      std::size_t n = 0;
      if (!valid_char(std::string_view(bytes).substr(off), &n)) {
        text.append(kReplacementChar);
        off += 1;
      } else {
        text.append(bytes, off, n);
        off += n;
      }
    }
    bytes.clear();
  };
  bool is_bos_ws = true, bos_ws_seen = false;
  for (const std::string& piece : pieces) {
    const std::int32_t id = piece_to_id(piece);
    if (is_byte(id)) {
      bytes.push_back(static_cast<char>(piece_to_byte(piece)));
      continue;
    }
    flush();
    if (bos_ws_seen || !text.empty()) is_bos_ws = false;
    if (is_control(id)) {
      bos_ws_seen = false;
      continue;
    }
    if (is_unknown(id)) {
      text += id_to_piece(id) == piece ? proto_.unk_surface : piece;
      bos_ws_seen = false;
      continue;
    }
    std::string_view p = piece;
    bool has_bos_ws = false;
    if (is_bos_ws && (ns.add_dummy_prefix || ns.remove_extra_whitespaces)) {
      if (p.substr(0, kSpaceSymbol.size()) == kSpaceSymbol) {
        p.remove_prefix(kSpaceSymbol.size());
        has_bos_ws = true;
      }
      if (ns.remove_extra_whitespaces) has_bos_ws = false;
    }
    text += replace_text(p, kSpaceSymbol, " ");
    bos_ws_seen = has_bos_ws;
  }
  flush();
  if (!decharsmap_.empty()) {  // the processor builds a denormalizer only for a non-empty charsmap
    std::string out;
    std::vector<std::size_t> n2o;
    normalize_with(proto_.denormalizer, decharsmap_, false, text, out, n2o);
    return replace_invalid_utf8(out);  // the rules' strings come from the file
  }
  return text;
}

core::Result<std::string> SentencePiece::decode(std::span<const std::int32_t> ids) const {
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!valid(ids[i])) return unknown_id_error(i, ids[i]);
    pieces.push_back(id_to_piece(ids[i]));
  }
  return decode_pieces(pieces);
}

}  // namespace attnscope::tokenizers
