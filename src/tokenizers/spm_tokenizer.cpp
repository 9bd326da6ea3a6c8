// SpmTokenizer (spm_tokenizer.h): T5Tokenizer and MarianTokenizer of transformers (tokenization_t5.py,
// tokenization_marian.py and PreTrainedTokenizer.tokenize's split on special tokens) over SentencePiece.
// Layer: tokenizers (depends on core/ and io/'s JSON readers).
#include "tokenizers/spm_tokenizer.h"

#include <algorithm>
#include <climits>

#include "core/check.h"
#include "core/text.h"
#include "tokenizers/json_reader.h"
#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
namespace spm_tok {  // named: the unity build joins this file with others

// tokenization_marian.py language_code_re = re.compile(">>.+<<"): the match starting at p ('.' is not '\n', '+'
// greedy: the last "<<" of the line with at least one character after ">>"), npos when none starts there.
std::size_t language_code_end(std::string_view s, std::size_t p) {
  if (s.compare(p, 2, ">>") != 0) return std::string_view::npos;
  std::size_t line_end = s.find('\n', p);
  if (line_end == std::string_view::npos) line_end = s.size();
  if (line_end < p + 5) return std::string_view::npos;
  const std::size_t q = s.substr(0, line_end).rfind("<<");
  if (q == std::string_view::npos || q < p + 3) return std::string_view::npos;
  return q + 2;
}

}  // namespace spm_tok

void SpmTokenizer::set_specials(std::vector<AddedToken> specials) {
  specials_ = std::move(specials);
  std::vector<std::u32string> patterns;
  for (const AddedToken& a : specials_) patterns.push_back(added_token_cps(a.content));
  matcher_ = AddedTokenMatcher(specials_, patterns);
}

core::Result<std::unique_ptr<SpmTokenizer>> SpmTokenizer::t5(std::span<const std::uint8_t> model, const char* fn,
                                                             const char* arg) {
  auto sp = SentencePiece::load(model, fn, arg);
  if (!sp.ok()) return sp.status();
  std::unique_ptr<SpmTokenizer> t(new SpmTokenizer());
  t->source_ = std::move(sp).value();
  const SentencePiece& s = *t->source_;
  std::vector<AddedToken> specials;
  for (const char* name : {"</s>", "<unk>", "<pad>"}) {  // T5Tokenizer's eos, unk and pad tokens
    const std::int32_t id = s.find(name);
    if (id >= 0) specials.push_back(AddedToken{name, id});
  }
  if (s.find("<extra_id_0>") < 0) {  // T5Tokenizer(extra_ids=100): <extra_id_n> is len(sp_model) + 99 - n
    for (int n = 0; n < 100; ++n) {
      AddedToken a{"<extra_id_" + std::to_string(n) + ">", static_cast<std::int32_t>(s.size()) + 99 - n};
      a.lstrip = a.rstrip = true;
      specials.push_back(std::move(a));
    }
  }
  t->eos_ = s.find("</s>") >= 0 ? s.find("</s>") : s.eos_id();
  t->unk_ = s.unk_id();
  t->pad_ = s.find("<pad>") >= 0 ? s.find("<pad>") : s.pad_id();
  t->bos_ = s.bos_id();
  t->set_specials(std::move(specials));
  return t;
}

core::Result<std::unique_ptr<SpmTokenizer>> SpmTokenizer::marian(std::span<const std::uint8_t> source,
                                                                 std::span<const std::uint8_t> target,
                                                                 std::string_view vocab_json, const char* fn,
                                                                 const char* arg) {
  const std::string a(arg);
  auto src = SentencePiece::load(source, fn, (a + ".source").c_str());
  if (!src.ok()) return src.status();
  auto tgt = SentencePiece::load(target, fn, (a + ".target").c_str());
  if (!tgt.ok()) return tgt.status();
  std::unique_ptr<SpmTokenizer> t(new SpmTokenizer());
  t->marian_ = true;
  t->source_ = std::move(src).value();
  t->target_ = std::move(tgt).value();
  const std::string va = a + ".vocab";
  const detail::FlatIntObject vocab = detail::read_flat_int_object(vocab_json);
  if (!vocab.parsed) return core::invalid_error(fn, va, va + " is not valid JSON (" + vocab.reason + ")");
  if (std::string_view(vocab.top_type) != "object") {
    return core::type_error(fn, va, va + " must be a JSON object mapping each piece to its id (vocab.json), got " +
                                        vocab.top_type);
  }
  if (vocab.bad_type[0] != '\0') {
    const std::string where = va + "[" + core::quote(vocab.bad_key) + "]";
    if (vocab.integer_too_large) return core::range_error(fn, va, where + " must be an id in [0, 2147483647]");
    return core::type_error(fn, va, where + " must be an integer id, got " + vocab.bad_type);
  }
  std::int64_t max_id = -1;
  for (const auto& [piece, id] : vocab.entries) {
    if (id < 0 || id > INT32_MAX) return id_range_error(fn, va, va + "[" + core::quote(piece) + "]", id);
    max_id = std::max(max_id, id);
  }
  if (max_id >= static_cast<std::int64_t>(vocab.entries.size()) * 2 + 1024) {
    return core::invalid_error(fn, va, va + " ids must be dense (the largest is " + std::to_string(max_id) + ")");
  }
  t->by_id_.assign(static_cast<std::size_t>(max_id + 1), std::string());
  for (const auto& [piece, id] : vocab.entries) {
    t->vocab_[piece] = static_cast<std::int32_t>(id);  // a repeated key: the last wins, as json.load
  }
  for (const auto& [piece, id] : t->vocab_) t->by_id_[static_cast<std::size_t>(id)] = piece;
  auto need = [&](const char* name, std::int32_t* out) -> core::Status {
    const auto it = t->vocab_.find(name);
    if (it == t->vocab_.end()) return core::invalid_error(fn, va, va + " has no '" + name + "' (MarianTokenizer needs it)");
    *out = it->second;
    return core::Status::Ok();
  };
  ATTN_TRY(need("<unk>", &t->unk_));
  ATTN_TRY(need("</s>", &t->eos_));
  if (const auto it = t->vocab_.find("<pad>"); it != t->vocab_.end()) t->pad_ = it->second;
  std::vector<AddedToken> specials{AddedToken{"</s>", t->eos_}, AddedToken{"<unk>", t->unk_}};
  if (t->pad_ >= 0) specials.push_back(AddedToken{"<pad>", t->pad_});
  t->set_specials(std::move(specials));
  return t;
}

core::Status SpmTokenizer::encode_part(std::string_view utf8, std::int32_t utf16_base, const SentencePiece& sp,
                                       Tokenization& out) const {
  if (!marian_) {
    auto r = sp.encode(utf8);
    if (!r.ok()) return r.status();
    for (std::int32_t& o : r.value().offsets) o += utf16_base;
    out.ids.insert(out.ids.end(), r.value().ids.begin(), r.value().ids.end());
    out.tokens.insert(out.tokens.end(), r.value().tokens.begin(), r.value().tokens.end());
    out.offsets.insert(out.offsets.end(), r.value().offsets.begin(), r.value().offsets.end());
    return core::Status::Ok();
  }
  // MarianTokenizer.remove_language_code: the code at the start is a token; every code is removed from the text
  auto decoded = decode_utf8(utf8, "encode", "text");
  if (!decoded.ok()) return decoded.status();
  const DecodedText& d = decoded.value();
  const std::vector<std::int32_t> u16_of_byte = utf16_of_bytes(d, utf8.size());
  std::string kept;
  std::vector<std::int32_t> kept_u16;  // UTF-16 offset in utf8 of each UTF-16 unit of kept, and of its end
  for (std::size_t p = 0; p < utf8.size();) {
    const std::size_t end = spm_tok::language_code_end(utf8, p);
    if (end != std::string_view::npos) {
      if (p == 0) {
        const std::string code(utf8.substr(0, end));
        const auto it = vocab_.find(code);
        out.ids.push_back(it == vocab_.end() ? unk_ : it->second);
        out.tokens.push_back(code);
        out.offsets.push_back(utf16_base);
        out.offsets.push_back(utf16_base + u16_of_byte[end]);
      }
      p = end;
      continue;
    }
    // keep one character
    std::size_t len = 1;
    while (p + len < utf8.size() && (static_cast<unsigned char>(utf8[p + len]) & 0xC0) == 0x80) ++len;
    kept.append(utf8.substr(p, len));
    const std::int32_t units = u16_of_byte[p + len] - u16_of_byte[p];
    for (std::int32_t k = 0; k < units; ++k) kept_u16.push_back(u16_of_byte[p] + k);
    p += len;
  }
  kept_u16.push_back(u16_of_byte[utf8.size()]);
  auto r = sp.encode(kept);  // MarianTokenizer._tokenize: self.current_spm.encode(text, out_type=str)
  if (!r.ok()) return r.status();
  for (std::size_t i = 0; i < r.value().ids.size(); ++i) {
    const std::string& piece = r.value().tokens[i];
    const auto it = vocab_.find(piece);
    out.ids.push_back(it == vocab_.end() ? unk_ : it->second);
    out.tokens.push_back(piece);
    const auto a = static_cast<std::size_t>(r.value().offsets[2 * i]);
    const auto b = static_cast<std::size_t>(r.value().offsets[2 * i + 1]);
    out.offsets.push_back(utf16_base + kept_u16[std::min(a, kept_u16.size() - 1)]);
    out.offsets.push_back(utf16_base + (b >= kept_u16.size() - 1 ? kept_u16.back() : kept_u16[b]));
  }
  return core::Status::Ok();
}

core::Result<Tokenization> SpmTokenizer::encode(std::string_view utf8, bool with_specials, bool target) const {
  // MarianTokenizer._switch_to_target_mode: current_spm = spm_target; current_encoder stays the shared vocab.json
  const SentencePiece& sp = target && target_ ? *target_ : *source_;
  auto decoded = decode_utf8(utf8, "encode", "text");
  if (!decoded.ok()) return decoded.status();
  const DecodedText& text = decoded.value();
  Tokenization out;
  auto part = [&](std::size_t a, std::size_t b) -> core::Status {  // code points [a, b)
    const auto ba = static_cast<std::size_t>(text.byte_offset[a]), bb = static_cast<std::size_t>(text.byte_offset[b]);
    return encode_part(utf8.substr(ba, bb - ba), text.utf16_offset[a], sp, out);
  };
  std::size_t done = 0;
  for (const AddedTokenMatcher::Match& m : matcher_.find(text.cps)) {
    if (done < m.first) ATTN_TRY(part(done, m.first));
    out.ids.push_back(specials_[m.token].id);
    out.tokens.push_back(specials_[m.token].content);
    out.offsets.push_back(text.utf16_offset[m.first]);
    out.offsets.push_back(text.utf16_offset[m.last]);
    done = m.last;
  }
  if (done < text.cps.size()) ATTN_TRY(part(done, text.cps.size()));
  // T5Tokenizer._add_eos_if_not_present; MarianTokenizer.build_inputs_with_special_tokens always appends
  if (with_specials && eos_ >= 0 && (marian_ || out.ids.empty() || out.ids.back() != eos_)) {
    out.ids.push_back(eos_);
    out.tokens.push_back(token_text(eos_));
    out.offsets.push_back(0);
    out.offsets.push_back(0);
  }
  return out;
}

core::Result<std::string> SpmTokenizer::decode(std::span<const std::int32_t> ids) const {
  // decode(ids, skip_special_tokens=True): the special ids dropped, the rest SentencePiece's Decode (T5: the model;
  // Marian: the target model over vocab.json's strings, then U+2581 -> ' '), trimmed as both tokenizers'
  // convert_tokens_to_string do (str.strip()).
  const SentencePiece& sp = marian_ ? *target_ : *source_;
  std::vector<std::string> pieces;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string t = token_text(ids[i]);
    if (t.empty()) return unknown_id_error(i, ids[i]);
    if (std::any_of(specials_.begin(), specials_.end(), [&](const AddedToken& a) { return a.id == ids[i]; })) continue;
    pieces.push_back(t);
  }
  std::string out = sp.decode_pieces(pieces);
  if (marian_) out = replace_text(out, "\xE2\x96\x81", " ");
  auto dd = decode_utf8(out, "decode", "text");
  if (!dd.ok()) return out;
  const DecodedText& d = dd.value();
  std::size_t a = 0, b = d.cps.size();
  while (a < b && is_space(d.cps[a])) ++a;
  while (b > a && is_space(d.cps[b - 1])) --b;
  return out.substr(static_cast<std::size_t>(d.byte_offset[a]), static_cast<std::size_t>(d.byte_offset[b] - d.byte_offset[a]));
}

std::string SpmTokenizer::token_text(std::int32_t id) const {
  if (marian_) return id >= 0 && static_cast<std::size_t>(id) < by_id_.size() ? by_id_[static_cast<std::size_t>(id)] : std::string();
  if (id >= 0 && static_cast<std::size_t>(id) < source_->size()) return source_->id_to_piece(id);
  for (const AddedToken& a : specials_) {
    if (a.id == id) return a.content;
  }
  return {};
}

std::int32_t SpmTokenizer::id_of(std::string_view token) const {
  if (marian_) {
    const auto it = vocab_.find(std::string(token));
    return it == vocab_.end() ? -1 : it->second;
  }
  for (const AddedToken& a : specials_) {
    if (a.content == token) return a.id;
  }
  return source_->find(token);
}

std::size_t SpmTokenizer::vocab_size() const {
  if (marian_) return vocab_.size();
  std::size_t n = source_->size();
  for (const AddedToken& a : specials_) n += static_cast<std::size_t>(a.id) >= source_->size() ? 1 : 0;
  return n;
}

}  // namespace attnscope::tokenizers
