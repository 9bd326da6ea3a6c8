// text_encoder.cpp: the model's tokenizers behind one interface (text_encoder.h). Layer: model.
#include "model/text_encoder.h"

#include <utility>

#include "tokenizers/bpe.h"
#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/unicode.h"

namespace attnscope::model {

std::int32_t RunVocab::id_of(const std::string& t) {
  auto it = ids.find(t);
  if (it != ids.end()) return it->second;
  const auto id = static_cast<std::int32_t>(tokens.size());
  ids.emplace(t, id);
  tokens.push_back(t);
  return id;
}

TextEncoder::TextEncoder() = default;
TextEncoder::TextEncoder(TextEncoder&&) noexcept = default;
TextEncoder& TextEncoder::operator=(TextEncoder&&) noexcept = default;
TextEncoder::~TextEncoder() = default;

TextEncoder TextEncoder::word_or_char(bool chars) {
  TextEncoder e;
  e.kind_ = chars ? Kind::kChar : Kind::kWord;
  return e;
}

core::Result<TextEncoder> TextEncoder::bpe(std::string_view vocab_json, std::string_view merges, const char* op) {
  auto r = tokenizers::BpeTokenizer::create(vocab_json, merges);
  if (!r.ok()) {
    // "createBpeTokenizer: merges line 12 ..." -> "<op>: tokenizer.merges line 12 ..."
    const core::Status& s = r.status();
    const std::string arg = s.argument == "vocab" || s.argument == "merges" ? "tokenizer." + s.argument : "tokenizer";
    return core::readdress(s, op, arg);
  }
  TextEncoder e;
  e.kind_ = Kind::kBpe;
  e.bpe_ = std::move(r).value();
  return e;
}

TextEncoder TextEncoder::checkpoint(std::shared_ptr<const tokenizers::HfTokenizer> t) {
  TextEncoder e;
  e.kind_ = Kind::kHf;
  const auto& s = t->special_ids();
  e.specials_.bos = s.bos, e.specials_.eos = s.eos, e.specials_.unk = s.unk, e.specials_.pad = s.pad;
  e.specials_.cls = s.cls, e.specials_.sep = s.sep, e.specials_.mask = s.mask;
  e.hf_ = std::move(t);
  return e;
}

core::Result<TextEncoder> TextEncoder::char_vocab(std::vector<std::string> vocab, const SpecialIds& specials,
                                                  const char* op) {
  TextEncoder e;
  e.kind_ = Kind::kCharVocab;
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    if (!e.lookup_.emplace(vocab[i], static_cast<std::int32_t>(i)).second) {
      return core::invalid_error(op, "tokenizer.vocab",
                                 "tokenizer.vocab[" + std::to_string(i) + "] (\"" + vocab[i] + "\") is listed twice");
    }
  }
  e.vocab_ = std::move(vocab);
  e.specials_ = specials;
  return e;
}

core::Result<tokenizers::Tokenization> TextEncoder::encode(std::string_view text, RunVocab& vocab, const char* op,
                                                           const char* what, bool post_process) const {
  tokenizers::Tokenization tk;
  switch (kind_) {
    case Kind::kBpe: {
      auto r = bpe_->encode(text);
      if (!r.ok()) return core::readdress(r.status(), op, what);
      return std::move(r).value();
    }
    case Kind::kHf: {
      // decoder checkpoints: ids as Tokenizer.from_file("tokenizer.json").encode(text).ids, special tokens added as
      // the file's post_processor says (API.md "Modern decoder checkpoints": Llama 3's BOS)
      // the post_process false side is an encoder-decoder's target: Marian's target.spm (encode_target)
      auto r = !post_process ? hf_->encode_target(text)
               : post_processor_ ? hf_->encode_with_post_processor(text) : hf_->encode(text);
      if (!r.ok()) return core::readdress(r.status(), op, what);
      tk = std::move(r).value();
      for (std::size_t i = 0; i < tk.ids.size(); ++i) tk.tokens[i] = hf_->token_text(tk.ids[i]);
      return tk;
    }
    case Kind::kCharVocab: {
      auto d = tokenizers::decode_utf8(text, op, what);
      if (!d.ok()) return d.status();
      const auto& t = d.value();
      for (std::size_t p = 0; p < t.cps.size(); ++p) {
        std::string ch(text.substr(static_cast<std::size_t>(t.byte_offset[p]),
                                   static_cast<std::size_t>(t.byte_offset[p + 1] - t.byte_offset[p])));
        auto it = lookup_.find(ch);
        tk.ids.push_back(it != lookup_.end() ? it->second : specials_.unk);
        tk.offsets.push_back(t.utf16_offset[p]);
        tk.offsets.push_back(t.utf16_offset[p + 1]);
        tk.tokens.push_back(std::move(ch));
      }
      return tk;
    }
    case Kind::kWord:
    case Kind::kChar: {
      auto r = tokenizers::tokenize(text, kind_ == Kind::kChar ? tokenizers::Kind::kChar : tokenizers::Kind::kWord);
      if (!r.ok()) return core::readdress(r.status(), op, what);
      tk = std::move(r).value();
      tk.ids.reserve(tk.tokens.size());
      for (const auto& tok : tk.tokens) tk.ids.push_back(vocab.id_of(tok));
      return tk;
    }
  }
  return tk;
}

std::int32_t TextEncoder::vocab_size(const RunVocab& vocab) const {
  switch (kind_) {
    case Kind::kBpe: return static_cast<std::int32_t>(bpe_->vocab_size());
    case Kind::kHf: return static_cast<std::int32_t>(hf_->vocab_size());
    case Kind::kCharVocab: return static_cast<std::int32_t>(vocab_.size());
    default: return static_cast<std::int32_t>(vocab.tokens.size());
  }
}

std::string TextEncoder::token_text(std::int32_t id, const RunVocab& vocab) const {
  switch (kind_) {
    case Kind::kBpe: return bpe_->token_text(id);
    case Kind::kHf: return hf_->token_text(id);
    case Kind::kCharVocab:
      return id >= 0 && static_cast<std::size_t>(id) < vocab_.size() ? vocab_[static_cast<std::size_t>(id)] : "";
    default:
      return id >= 0 && static_cast<std::size_t>(id) < vocab.tokens.size() ? vocab.tokens[static_cast<std::size_t>(id)]
                                                                           : "";
  }
}

std::int32_t TextEncoder::id_of(const std::string& token) const {
  if (kind_ == Kind::kHf) return hf_->id_of(token);
  if (kind_ == Kind::kCharVocab) {
    auto it = lookup_.find(token);
    return it == lookup_.end() ? -1 : it->second;
  }
  if (kind_ == Kind::kBpe) {
    const auto size = static_cast<std::int32_t>(bpe_->vocab_size());
    for (std::int32_t id = 0; id < size; ++id) {
      if (bpe_->token_text(id) == token) return id;
    }
  }
  return -1;
}

std::string TextEncoder::decode(const std::vector<std::int32_t>& ids) const {
  if (kind_ == Kind::kBpe || kind_ == Kind::kHf) {
    auto r = kind_ == Kind::kBpe ? bpe_->decode(ids) : hf_->decode(ids);
    return r.ok() ? r.value() : std::string();
  }
  std::string out;
  for (const std::int32_t id : ids) {
    if (id == specials_.bos || id == specials_.eos || id == specials_.pad || id < 0 ||
        static_cast<std::size_t>(id) >= vocab_.size()) {
      continue;
    }
    out += vocab_[static_cast<std::size_t>(id)];
  }
  return out;
}

}  // namespace attnscope::model
