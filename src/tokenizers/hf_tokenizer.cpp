// Hugging Face tokenizer.json → HfTokenizer (the file is read by hf_tokenizer_json.h), the vocab-file factories,
// and added-token splitting for BPE.
// Layer: tokenizers (depends on core/ only). JSON_NOEXCEPTION as in json_reader.h: the SAX path never throws.
#include "tokenizers/hf_tokenizer.h"

#include <algorithm>
#include <climits>

#include "tokenizers/hf_tokenizer_json.h"
#include "tokenizers/json_reader.h"
#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
namespace {

using json = nlohmann::json;
using namespace hf_json;

// GPT-2's byte-level form of raw text (each byte as its stand-in code point): how the BPE vocab spells it.
std::string byte_level(std::string_view raw) {
  std::string out;
  for (char c : raw) append_utf8(out, gpt2_byte_to_unicode(static_cast<std::uint8_t>(c)));
  return out;
}

std::vector<std::u32string> contents_as_cps(const std::vector<AddedToken>& added) {
  std::vector<std::u32string> out;
  for (const AddedToken& a : added) out.push_back(added_token_cps(a.content));
  return out;
}

}  // namespace

// ---- factories ----------------------------------------------------------------------------------------------

core::Result<std::unique_ptr<HfTokenizer>> HfTokenizer::from_json(std::string_view tokenizer_json, const char* fn,
                                                                  const char* arg) {
  const Reader rd(fn, arg);
  ParsedFile f = parse_file(tokenizer_json);
  if (!f.parsed) return rd.invalid(std::string(arg) + " is not valid JSON (" + f.reason + ")");
  if (!f.root.is_object()) {
    return core::type_error(fn, arg, std::string(arg) + " must be a JSON object (tokenizer.json), got " +
                                         type_name(f.root.type()));
  }
  const auto model_it = f.root.find("model");
  if (model_it == f.root.end()) return rd.invalid(rd.at("model") + " is missing");
  if (!model_it->is_object()) return rd.type("model", "an object", *model_it);
  const json& model = *model_it;
  if (f.repeated != nullptr) return rd.invalid(rd.at("model.") + f.repeated + " appears more than once");
  const auto type_it = model.find("type");
  if (type_it == model.end() || !type_it->is_string()) {
    return rd.type("model.type", "a string", type_it == model.end() ? json() : *type_it);
  }
  const std::string type = type_it->get<std::string>();
  if (type != "BPE" && type != "WordPiece") {
    return rd.unsupported("model.type", quote_value(type), "BPE, WordPiece");
  }
  auto added = read_added_tokens(rd, f.root);
  if (!added.ok()) return added.status();
  auto normalizer = component_type(rd, f.root, "normalizer");
  if (!normalizer.ok()) return normalizer.status();
  auto pre = component_type(rd, f.root, "pre_tokenizer");
  if (!pre.ok()) return pre.status();
  auto decoder = component_type(rd, f.root, "decoder");
  if (!decoder.ok()) return decoder.status();
  core::Status vs = check_vocab(rd, f, model);
  if (!vs.ok()) return vs;
  std::unique_ptr<HfTokenizer> tok(new HfTokenizer());

  if (type == "WordPiece") {
    tok->kind_ = Kind::kWordPiece;
    if (f.merges_seen) return rd.invalid(rd.at("model.merges") + " is not used by a WordPiece model");
    if (!normalizer.value().empty() && normalizer.value() != "BertNormalizer") {
      return rd.unsupported("normalizer.type", quote_value(normalizer.value()), "BertNormalizer or null");
    }
    if (pre.value() != "BertPreTokenizer") {
      return rd.unsupported("pre_tokenizer", pre.value().empty() ? "null" : "type " + quote_value(pre.value()),
                            "BertPreTokenizer");
    }
    if (!decoder.value().empty() && decoder.value() != "WordPiece") {
      return rd.unsupported("decoder.type", quote_value(decoder.value()), "WordPiece or null");
    }
    WordPieceOptions o;
    if (normalizer.value().empty()) {
      o.clean_text = o.handle_chinese_chars = o.lowercase = false;
      o.strip_accents = false;
    } else {
      const json& n = f.root["normalizer"];
      for (auto [name, value] : {std::pair<const char*, bool*>{"clean_text", &o.clean_text},
                                 {"handle_chinese_chars", &o.handle_chinese_chars}, {"lowercase", &o.lowercase}}) {
        auto v = rd.boolean(n, name, std::string("normalizer.") + name, true);
        if (!v.ok()) return v.status();
        *value = v.value();
      }
      const auto strip = n.find("strip_accents");
      if (strip != n.end() && !strip->is_null()) {
        if (!strip->is_boolean()) return rd.type("normalizer.strip_accents", "a boolean or null", *strip);
        o.strip_accents = strip->get<bool>();
      }
    }
    auto unk = rd.string(model, "unk_token", "model.unk_token", "[UNK]");
    if (!unk.ok()) return unk.status();
    o.unk_token = unk.value();
    auto prefix = rd.string(model, "continuing_subword_prefix", "model.continuing_subword_prefix", "##");
    if (!prefix.ok()) return prefix.status();
    o.continuing_subword_prefix = prefix.value();
    const auto max_chars = model.find("max_input_chars_per_word");
    if (max_chars != model.end() && !max_chars->is_null()) {
      if (!max_chars->is_number_integer()) return rd.type("model.max_input_chars_per_word", "an integer", *max_chars);
      if (max_chars->is_number_unsigned() ? max_chars->get<std::uint64_t>() == 0 : max_chars->get<std::int64_t>() < 1) {
        return core::range_error(fn, arg, rd.at("model.max_input_chars_per_word") + " (" + max_chars->dump() +
                                              ") must be at least 1");
      }
      o.max_input_chars_per_word = static_cast<std::size_t>(std::min<std::uint64_t>(max_chars->get<std::uint64_t>(), SIZE_MAX));
    }
    if (decoder.value() == "WordPiece") {
      auto cleanup = rd.boolean(f.root["decoder"], "cleanup", "decoder.cleanup", true);
      if (!cleanup.ok()) return cleanup.status();
      o.cleanup = cleanup.value();
    }
    std::vector<std::pair<std::string, std::int32_t>> vocab;
    vocab.reserve(f.vocab.size());
    std::vector<std::string> seen;
    for (auto& [token, id] : f.vocab) {
      if (id < 0 || id > INT32_MAX) {
        return core::range_error(fn, arg, rd.at("model.vocab") + "[" + quote_value(token) + "] (" +
                                              std::to_string(id) + ") must be an id in [0, 2147483647]");
      }
      vocab.emplace_back(std::move(token), static_cast<std::int32_t>(id));
    }
    {  // a JSON object lists each token once
      std::vector<const std::string*> sorted;
      for (const auto& e : vocab) sorted.push_back(&e.first);
      std::sort(sorted.begin(), sorted.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
      for (std::size_t i = 1; i < sorted.size(); ++i) {
        if (*sorted[i] == *sorted[i - 1]) {
          return rd.invalid(rd.at("model.vocab") + " lists the token " + quote_value(*sorted[i]) + " twice");
        }
      }
    }
    WordPieceTokenizer::Names names;
    names.fn = fn;
    names.arg = arg;
    names.vocab = rd.at("model.vocab");
    names.added = rd.at("added_tokens");
    names.options = rd.at("model.");
    auto wp = WordPieceTokenizer::create(std::move(vocab), std::move(added).value(), o, names);
    if (!wp.ok()) return wp.status();
    tok->wordpiece_ = std::move(wp).value();
    tok->find_special_ids();
    return tok;
  }

  // BPE: GPT-2's byte-level model and nothing else.
  tok->kind_ = Kind::kBpe;
  if (!normalizer.value().empty()) return rd.unsupported("normalizer.type", quote_value(normalizer.value()), "null for BPE");
  if (pre.value() != "ByteLevel") {
    return rd.unsupported("pre_tokenizer", pre.value().empty() ? "null" : "type " + quote_value(pre.value()),
                          "ByteLevel");
  }
  const json& pt = f.root["pre_tokenizer"];
  auto prefix_space = rd.boolean(pt, "add_prefix_space", "pre_tokenizer.add_prefix_space", false);
  if (!prefix_space.ok()) return prefix_space.status();
  if (prefix_space.value()) return rd.unsupported("pre_tokenizer.add_prefix_space", "true", "false");
  auto use_regex = rd.boolean(pt, "use_regex", "pre_tokenizer.use_regex", true);
  if (!use_regex.ok()) return use_regex.status();
  if (!use_regex.value()) return rd.unsupported("pre_tokenizer.use_regex", "false", "true");
  if (!decoder.value().empty() && decoder.value() != "ByteLevel") {
    return rd.unsupported("decoder.type", quote_value(decoder.value()), "ByteLevel or null");
  }
  for (const char* name : {"dropout", "continuing_subword_prefix", "end_of_word_suffix"}) {
    const auto it = model.find(name);
    if (it != model.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty())) {
      return rd.unsupported(std::string("model.") + name, it->dump(), "null");
    }
  }
  for (const char* name : {"byte_fallback", "ignore_merges"}) {
    auto v = rd.boolean(model, name, std::string("model.") + name, false);
    if (!v.ok()) return v.status();
    if (v.value()) return rd.unsupported(std::string("model.") + name, "true", "false");
  }
  if (!f.merges_seen) {
    const auto it = model.find("merges");
    if (it == model.end()) return rd.invalid(rd.at("model.merges") + " is missing");
    return rd.type("model.merges", "an array of merges", *it);
  }
  const std::string merges_at = rd.at("model.merges");
  auto merge_name = [&merges_at](std::size_t i) { return merges_at + "[" + std::to_string(i) + "]"; };
  if (f.merge_bad != SIZE_MAX) {
    return core::type_error(fn, arg, merge_name(f.merge_bad) + " " + f.merge_bad_what);
  }
  std::vector<std::pair<std::string_view, std::string_view>> merges;
  merges.reserve(f.merges.size());
  for (std::size_t i = 0; i < f.merges.size(); ++i) {
    const MergeItem& m = f.merges[i];
    if (m.pair) {
      if (m.a.empty() || m.b.empty() || m.a.find(' ') != std::string::npos || m.b.find(' ') != std::string::npos) {
        return rd.invalid(merge_name(i) + " must be two non-empty tokens without spaces");
      }
      merges.emplace_back(m.a, m.b);
      continue;
    }
    const std::size_t sp = m.a.find(' ');
    if (sp == std::string::npos || sp == 0 || sp + 1 == m.a.size() || m.a.find(' ', sp + 1) != std::string::npos) {
      return rd.invalid(merge_name(i) + " must be two tokens separated by a space, got " + quote_value(m.a));
    }
    merges.emplace_back(std::string_view(m.a).substr(0, sp), std::string_view(m.a).substr(sp + 1));
  }
  BpeTokenizer::Names names;
  names.fn = fn;
  names.vocab_arg = names.merges_arg = arg;
  names.vocab = rd.at("model.vocab");
  names.merge = merge_name;
  names.merge_ref = merge_name;
  auto bpe = BpeTokenizer::create(f.vocab, merges, names);
  if (!bpe.ok()) return bpe.status();
  tok->bpe_ = std::move(bpe).value();

  // Added tokens: a content the vocab spells (byte-level) must have the vocab's id; other ids must be free.
  tok->added_ = std::move(added).value();
  for (std::size_t i = 0; i < tok->added_.size(); ++i) {
    const AddedToken& a = tok->added_[i];
    const std::string path = rd.at("added_tokens[" + std::to_string(i) + "]");
    const std::int32_t vocab_id = tok->bpe_->id_of(byte_level(a.content));
    if (vocab_id >= 0 && vocab_id != a.id) {
      return rd.invalid(path + " (" + quote_value(a.content) + ") has id " + std::to_string(a.id) +
                        " but the vocab gives it " + std::to_string(vocab_id));
    }
    if (vocab_id < 0 && !tok->bpe_->token_text(a.id).empty()) {
      return rd.invalid(path + " (" + quote_value(a.content) + ") has id " + std::to_string(a.id) +
                        ", which the vocab gives to " + quote_value(tok->bpe_->token_text(a.id)));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (tok->added_[j].id == a.id) {
        return rd.invalid(path + " (" + quote_value(a.content) + ") has the id " + std::to_string(a.id) + " of " +
                          rd.at("added_tokens[" + std::to_string(j) + "]"));
      }
    }
  }
  tok->matcher_ = AddedTokenMatcher(tok->added_, contents_as_cps(tok->added_));
  tok->find_special_ids();
  return tok;
}

core::Result<std::unique_ptr<HfTokenizer>> HfTokenizer::from_bpe_files(std::string_view vocab_json,
                                                                       std::string_view merges, const char* fn,
                                                                       const char* arg) {
  auto bpe = BpeTokenizer::create(vocab_json, merges);
  if (!bpe.ok()) {
    // "createBpeTokenizer: merges line 12 ..." -> "<fn>: <arg>.merges line 12 ..."
    const core::Status& s = bpe.status();
    return core::make_error(s.kind, fn, arg, std::string(arg) + "." + s.detail());
  }
  std::unique_ptr<HfTokenizer> tok(new HfTokenizer());
  tok->kind_ = Kind::kBpe;
  tok->bpe_ = std::move(bpe).value();
  const std::int32_t eot = tok->bpe_->id_of("<|endoftext|>");
  if (eot >= 0) tok->added_.push_back(AddedToken{"<|endoftext|>", eot});
  tok->matcher_ = AddedTokenMatcher(tok->added_, contents_as_cps(tok->added_));
  tok->find_special_ids();
  return tok;
}

core::Result<std::unique_ptr<HfTokenizer>> HfTokenizer::from_vocab_txt(std::string_view vocab_txt, bool lowercase,
                                                                       const char* fn, const char* arg) {
  WordPieceTokenizer::Names names;
  names.fn = fn;
  names.arg = arg;
  names.vocab = std::string(arg) + ".vocab";
  auto wp = WordPieceTokenizer::from_vocab_txt(vocab_txt, lowercase, names);
  if (!wp.ok()) return wp.status();
  std::unique_ptr<HfTokenizer> tok(new HfTokenizer());
  tok->kind_ = Kind::kWordPiece;
  tok->wordpiece_ = std::move(wp).value();
  tok->find_special_ids();
  return tok;
}

void HfTokenizer::find_special_ids() {
  special_ = SpecialIds{};
  if (kind_ == Kind::kWordPiece) {
    special_.cls = id_of("[CLS]");
    special_.sep = id_of("[SEP]");
    special_.mask = id_of("[MASK]");
    special_.pad = id_of("[PAD]");
    special_.unk = wordpiece_->unk_id();
  } else {
    special_.bos = special_.eos = id_of("<|endoftext|>");
  }
}

// ---- encode / decode / lookups ------------------------------------------------------------------------------

core::Result<Tokenization> HfTokenizer::encode(std::string_view utf8) const {
  if (kind_ == Kind::kWordPiece) return wordpiece_->encode(utf8);
  if (matcher_.empty()) return bpe_->encode(utf8);
  auto decoded = decode_utf8(utf8, "encode", "text");
  if (!decoded.ok()) return decoded.status();
  const DecodedText& t = decoded.value();
  Tokenization out;
  // BPE-encodes code points [a, b) on their own, as Hugging Face does with the text between added tokens.
  auto encode_piece = [&](std::size_t a, std::size_t b) -> core::Status {
    const auto byte_a = static_cast<std::size_t>(t.byte_offset[a]);
    auto r = bpe_->encode(utf8.substr(byte_a, static_cast<std::size_t>(t.byte_offset[b]) - byte_a));
    if (!r.ok()) return r.status();
    Tokenization& p = r.value();
    for (std::int32_t& o : p.offsets) o += t.utf16_offset[a];
    out.tokens.insert(out.tokens.end(), std::make_move_iterator(p.tokens.begin()), std::make_move_iterator(p.tokens.end()));
    out.ids.insert(out.ids.end(), p.ids.begin(), p.ids.end());
    out.offsets.insert(out.offsets.end(), p.offsets.begin(), p.offsets.end());
    return core::Status::Ok();
  };
  std::size_t done = 0;
  for (const AddedTokenMatcher::Match& m : matcher_.find(t.cps)) {
    if (done < m.first) {
      core::Status s = encode_piece(done, m.first);
      if (!s.ok()) return s;
    }
    out.tokens.push_back(added_[m.token].content);
    out.ids.push_back(added_[m.token].id);
    out.offsets.push_back(t.utf16_offset[m.first]);
    out.offsets.push_back(t.utf16_offset[m.last]);
    done = m.last;
  }
  if (done < t.cps.size()) {
    core::Status s = encode_piece(done, t.cps.size());
    if (!s.ok()) return s;
  }
  return out;
}

core::Result<std::string> HfTokenizer::decode(std::span<const std::int32_t> ids) const {
  if (kind_ == Kind::kWordPiece) return wordpiece_->decode(ids);
  // Runs of vocab ids decode as bytes; an added token outside the vocab gives its content.
  std::string text;
  std::vector<std::int32_t> run;
  for (std::size_t i = 0; i <= ids.size(); ++i) {
    const AddedToken* extra = nullptr;
    if (i < ids.size() && bpe_->token_text(ids[i]).empty()) {
      for (const AddedToken& a : added_) {
        if (a.id == ids[i]) extra = &a;
      }
      if (extra == nullptr) {
        return core::range_error("decode", "ids", "ids[" + std::to_string(i) + "] (" + std::to_string(ids[i]) +
                                                      ") is not in the vocabulary");
      }
    }
    if (i < ids.size() && extra == nullptr) {
      run.push_back(ids[i]);
      continue;
    }
    if (!run.empty()) {
      auto r = bpe_->decode(run);
      if (!r.ok()) return r.status();
      text += r.value();
      run.clear();
    }
    if (extra != nullptr) text += extra->content;
  }
  return text;
}

std::string HfTokenizer::token_text(std::int32_t id) const {
  if (kind_ == Kind::kWordPiece) return wordpiece_->token_text(id);
  std::string text = bpe_->token_text(id);
  if (text.empty()) {
    for (const AddedToken& a : added_) {
      if (a.id == id) return a.content;
    }
  }
  return text;
}

std::int32_t HfTokenizer::id_of(std::string_view token) const {
  if (kind_ == Kind::kWordPiece) return wordpiece_->id_of(token);
  const std::int32_t id = bpe_->id_of(token);
  if (id >= 0) return id;
  for (const AddedToken& a : added_) {
    if (a.content == token) return a.id;
  }
  return -1;
}

std::size_t HfTokenizer::vocab_size() const {
  if (kind_ == Kind::kWordPiece) return wordpiece_->vocab_size();
  std::size_t n = bpe_->vocab_size();
  for (const AddedToken& a : added_) n += bpe_->token_text(a.id).empty() ? 1 : 0;
  return n;
}

}  // namespace attnscope::tokenizers
