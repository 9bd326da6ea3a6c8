// Hugging Face tokenizer.json → HfTokenizer (the file is read by hf_tokenizer_json.h), the vocab-file factories,
// and added-token splitting for BPE.
// Layer: tokenizers (depends on core/ only). JSON_NOEXCEPTION as in json_reader.h: the SAX path never throws.
#include "tokenizers/hf_tokenizer.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>

#include "core/check.h"
#include "tokenizers/hf_tokenizer_json.h"
#include "tokenizers/json_reader.h"
#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {
namespace {

using hf_json::MergeItem;
using hf_json::ParsedFile;
using hf_json::Reader;
using hf_json::quote_value;
using json = nlohmann::json;

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

// What tokenizer.json says before its model type decides the rest: the model object, the added tokens and the
// types of the optional components ("" for null or absent).
struct TokenizerJson {
  ParsedFile file;
  std::string type;  // model.type: "BPE" or "WordPiece"
  std::vector<AddedToken> added;
  std::string normalizer, pre_tokenizer, decoder;
  const json& model() const { return *file.root.find("model"); }  // read_common checked it is an object
};

core::Result<TokenizerJson> read_common(const Reader& rd, std::string_view text) {
  TokenizerJson t;
  t.file = hf_json::parse_file(text);
  ParsedFile& f = t.file;
  if (!f.parsed) return rd.invalid(std::string(rd.arg()) + " is not valid JSON (" + f.reason + ")");
  if (!f.root.is_object()) {
    return core::type_error(rd.fn(), rd.arg(), std::string(rd.arg()) + " must be a JSON object (tokenizer.json), got " +
                                                   io::json_type_name(f.root.type()));
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
  t.type = type_it->get<std::string>();
  if (t.type != "BPE" && t.type != "WordPiece" && t.type != "Unigram") {
    return rd.unsupported("model.type", quote_value(t.type), "BPE, WordPiece, Unigram");
  }
  auto added = hf_json::read_added_tokens(rd, f.root);
  if (!added.ok()) return added.status();
  t.added = std::move(added).value();
  for (auto [name, out] : {std::pair<const char*, std::string*>{"normalizer", &t.normalizer},
                           {"pre_tokenizer", &t.pre_tokenizer}, {"decoder", &t.decoder}}) {
    auto component = hf_json::component_type(rd, f.root, name);
    if (!component.ok()) return component.status();
    *out = std::move(component).value();
  }
  if (t.type != "Unigram") ATTN_TRY(hf_json::check_vocab(rd, f, model));  // Unigram's is a [token, score] array
  return core::Result<TokenizerJson>(std::move(t));  // moved: the vocab and merges are large
}

// pre_tokenizer must be `want`: "tokenizer.pre_tokenizer type 'Whitespace' is not supported (BertPreTokenizer)".
core::Status expect_pre_tokenizer(const Reader& rd, const TokenizerJson& t, const char* want) {
  if (t.pre_tokenizer == want) return core::Status::Ok();
  return rd.unsupported("pre_tokenizer", t.pre_tokenizer.empty() ? "null" : "type " + quote_value(t.pre_tokenizer),
                        want);
}

// ---- WordPiece: BertNormalizer (or none), BertPreTokenizer, WordPiece decoder (or none) ----------------------

core::Result<WordPieceOptions> wordpiece_options(const Reader& rd, const TokenizerJson& t) {
  const json& root = t.file.root;
  const json& model = t.model();
  if (!t.normalizer.empty() && t.normalizer != "BertNormalizer") {
    return rd.unsupported("normalizer.type", quote_value(t.normalizer), "BertNormalizer or null");
  }
  ATTN_TRY(expect_pre_tokenizer(rd, t, "BertPreTokenizer"));
  if (!t.decoder.empty() && t.decoder != "WordPiece") {
    return rd.unsupported("decoder.type", quote_value(t.decoder), "WordPiece or null");
  }
  WordPieceOptions o;
  if (t.normalizer.empty()) {
    o.clean_text = o.handle_chinese_chars = o.lowercase = false;
    o.strip_accents = false;
  } else {
    const json& n = root["normalizer"];
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
      return core::range_error(rd.fn(), rd.arg(), rd.at("model.max_input_chars_per_word") + " (" + max_chars->dump() +
                                                      ") must be at least 1");
    }
    o.max_input_chars_per_word =
        static_cast<std::size_t>(std::min<std::uint64_t>(max_chars->get<std::uint64_t>(), SIZE_MAX));
  }
  if (t.decoder == "WordPiece") {
    auto cleanup = rd.boolean(root["decoder"], "cleanup", "decoder.cleanup", true);
    if (!cleanup.ok()) return cleanup.status();
    o.cleanup = cleanup.value();
  }
  return o;
}

core::Result<std::unique_ptr<WordPieceTokenizer>> read_wordpiece_model(const Reader& rd, TokenizerJson& t) {
  ParsedFile& f = t.file;
  if (f.merges_seen) return rd.invalid(rd.at("model.merges") + " is not used by a WordPiece model");
  auto options = wordpiece_options(rd, t);
  if (!options.ok()) return options.status();
  std::vector<std::pair<std::string, std::int32_t>> vocab;
  vocab.reserve(f.vocab.size());
  for (auto& [token, id] : f.vocab) {
    if (id < 0 || id > INT32_MAX) {
      return id_range_error(rd.fn(), rd.arg(), rd.at("model.vocab") + "[" + quote_value(token) + "]", id);
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
  names.fn = rd.fn();
  names.arg = rd.arg();
  names.vocab = rd.at("model.vocab");
  names.added = rd.at("added_tokens");
  names.options = rd.at("model.");
  return WordPieceTokenizer::create(std::move(vocab), std::move(t.added), options.value(), names);
}

// ---- BPE: GPT-2's byte-level model and nothing else ----------------------------------------------------------

core::Status check_bpe_options(const Reader& rd, const TokenizerJson& t) {
  const json& model = t.model();
  if (!t.normalizer.empty()) return rd.unsupported("normalizer.type", quote_value(t.normalizer), "null for BPE");
  ATTN_TRY(expect_pre_tokenizer(rd, t, "ByteLevel"));
  const json& pt = t.file.root["pre_tokenizer"];
  auto prefix_space = rd.boolean(pt, "add_prefix_space", "pre_tokenizer.add_prefix_space", false);
  if (!prefix_space.ok()) return prefix_space.status();
  if (prefix_space.value()) return rd.unsupported("pre_tokenizer.add_prefix_space", "true", "false");
  auto use_regex = rd.boolean(pt, "use_regex", "pre_tokenizer.use_regex", true);
  if (!use_regex.ok()) return use_regex.status();
  if (!use_regex.value()) return rd.unsupported("pre_tokenizer.use_regex", "false", "true");
  if (!t.decoder.empty() && t.decoder != "ByteLevel") {
    return rd.unsupported("decoder.type", quote_value(t.decoder), "ByteLevel or null");
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
  return core::Status::Ok();
}

// model.merges as (left, right) views into the parsed file: "a b" strings or ["a", "b"] pairs.
core::Result<std::vector<std::pair<std::string_view, std::string_view>>> bpe_merges(
    const Reader& rd, const TokenizerJson& t, const std::function<std::string(std::size_t)>& merge_name) {
  const ParsedFile& f = t.file;
  if (!f.merges_seen) {
    const auto it = t.model().find("merges");
    if (it == t.model().end()) return rd.invalid(rd.at("model.merges") + " is missing");
    return rd.type("model.merges", "an array of merges", *it);
  }
  if (f.merge_bad != SIZE_MAX) {
    return core::type_error(rd.fn(), rd.arg(), merge_name(f.merge_bad) + " " + f.merge_bad_what);
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
    std::string_view left, right;
    if (!split_merge(m.a, &left, &right)) {
      return rd.invalid(merge_name(i) + " must be two tokens separated by a space, got " + quote_value(m.a));
    }
    merges.emplace_back(left, right);
  }
  return merges;
}

core::Result<std::unique_ptr<BpeTokenizer>> read_bpe_model(const Reader& rd, const TokenizerJson& t) {
  ATTN_TRY(check_bpe_options(rd, t));
  const std::string merges_at = rd.at("model.merges");
  auto merge_name = [&merges_at](std::size_t i) { return merges_at + "[" + std::to_string(i) + "]"; };
  auto merges = bpe_merges(rd, t, merge_name);
  if (!merges.ok()) return merges.status();
  BpeTokenizer::Names names;
  names.fn = rd.fn();
  names.vocab_arg = names.merges_arg = rd.arg();
  names.vocab = rd.at("model.vocab");
  names.merge = merge_name;
  names.merge_ref = merge_name;
  auto bpe = BpeTokenizer::create(t.file.vocab, merges.value(), names);
  if (!bpe.ok()) return bpe.status();
  // Added tokens: a content the vocab spells (byte-level) must have the vocab's id; other ids must be free.
  const BpeTokenizer& vocab = *bpe.value();
  AddedTokenVocab rules;
  rules.id_of = [&vocab](const std::string& content) { return vocab.id_of(byte_level(content)); };
  rules.token_of = [&vocab](std::int32_t id) -> std::optional<std::string> {
    std::string token = vocab.token_text(id);  // BPE tokens are never empty
    if (token.empty()) return std::nullopt;
    return token;
  };
  rules.fn = rd.fn();
  rules.arg = rd.arg();
  rules.added = rd.at("added_tokens");
  rules.vocab = "vocab";
  auto checked = check_added_tokens(t.added, rules);
  if (!checked.ok()) return checked.status();
  return bpe;
}

// GPT-2's tokenizer.json layout, read by read_bpe_model (its messages unchanged); anything else goes to HfPipeline.
bool gpt2_layout(const TokenizerJson& t) {
  if (!t.normalizer.empty() || t.pre_tokenizer != "ByteLevel") return false;
  const json& pt = t.file.root["pre_tokenizer"];
  const auto re = pt.find("use_regex");
  if (re != pt.end() && re->is_boolean() && !re->get<bool>()) return false;
  const auto prefix = pt.find("add_prefix_space");
  if (prefix != pt.end() && prefix->is_boolean() && prefix->get<bool>()) return false;
  for (const char* name : {"byte_fallback", "ignore_merges"}) {
    const auto it = t.model().find(name);
    if (it != t.model().end() && it->is_boolean() && it->get<bool>()) return false;
  }
  // a post-processor that adds tokens (TemplateProcessing's BOS) needs the pipeline; GPT-2's ByteLevel one adds none
  const auto post = t.file.root.find("post_processor");
  if (post != t.file.root.end() && !post->is_null()) {
    const auto type = post->find("type");
    if (type == post->end() || !type->is_string() || type->get<std::string>() != "ByteLevel") return false;
  }
  return true;
}

}  // namespace

// ---- factories ----------------------------------------------------------------------------------------------

core::Result<std::unique_ptr<HfTokenizer>> HfTokenizer::from_json(std::string_view tokenizer_json, const char* fn,
                                                                  const char* arg) {
  const Reader rd = hf_json::reader_for(fn, arg);
  auto read = read_common(rd, tokenizer_json);
  if (!read.ok()) return read.status();
  TokenizerJson& t = read.value();
  std::unique_ptr<HfTokenizer> tok(new HfTokenizer());
  if (t.type == "WordPiece") {
    auto wp = read_wordpiece_model(rd, t);
    if (!wp.ok()) return wp.status();
    tok->kind_ = Kind::kWordPiece;
    tok->wordpiece_ = std::move(wp).value();
  } else if (t.type == "Unigram" || !gpt2_layout(t)) {
    auto p = HfPipeline::create(rd, t.file, std::move(t.added));
    if (!p.ok()) return p.status();
    tok->kind_ = Kind::kBpe;
    tok->pipeline_ = std::move(p).value();
  } else {
    auto bpe = read_bpe_model(rd, t);
    if (!bpe.ok()) return bpe.status();
    tok->kind_ = Kind::kBpe;
    tok->bpe_ = std::move(bpe).value();
    tok->added_ = std::move(t.added);
    tok->matcher_ = AddedTokenMatcher(tok->added_, contents_as_cps(tok->added_));
  }
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

core::Result<std::unique_ptr<HfTokenizer>> HfTokenizer::from_sentencepiece(std::span<const std::uint8_t> model,
                                                                           const char* fn, const char* arg) {
  return from_spm(SpmTokenizer::t5(model, fn, arg));
}

core::Result<std::unique_ptr<HfTokenizer>> HfTokenizer::from_marian(std::span<const std::uint8_t> source,
                                                                    std::span<const std::uint8_t> target,
                                                                    std::string_view vocab_json, const char* fn,
                                                                    const char* arg) {
  return from_spm(SpmTokenizer::marian(source, target, vocab_json, fn, arg));
}

core::Result<std::unique_ptr<HfTokenizer>> HfTokenizer::from_spm(core::Result<std::unique_ptr<SpmTokenizer>> t) {
  if (!t.ok()) return t.status();
  std::unique_ptr<HfTokenizer> tok(new HfTokenizer());
  tok->kind_ = Kind::kSentencePiece;
  tok->spm_ = std::move(t).value();
  tok->find_special_ids();
  return tok;
}

void HfTokenizer::find_special_ids() {
  special_ = SpecialIds{};
  if (spm_) {
    special_.bos = spm_->bos_id();
    special_.eos = spm_->eos_id();
    special_.pad = spm_->pad_id();
    special_.unk = spm_->unk_id();
    return;
  }
  if (kind_ == Kind::kWordPiece) {
    special_.cls = id_of("[CLS]");
    special_.sep = id_of("[SEP]");
    special_.mask = id_of("[MASK]");
    special_.pad = id_of("[PAD]");
    special_.unk = wordpiece_->unk_id();
  } else if (pipeline_) {
    special_.bos = pipeline_->bos_id();
  } else {
    special_.bos = special_.eos = id_of("<|endoftext|>");
  }
}

// ---- encode / decode / lookups ------------------------------------------------------------------------------

core::Result<Tokenization> HfTokenizer::encode_with_post_processor(std::string_view utf8) const {
  if (pipeline_) return pipeline_->encode(utf8, true);
  if (spm_) return spm_->encode(utf8, true);
  return encode(utf8);
}

core::Result<Tokenization> HfTokenizer::encode_target(std::string_view utf8) const {
  if (spm_) return spm_->encode(utf8, false, true);
  return encode(utf8);
}

core::Result<Tokenization> HfTokenizer::encode(std::string_view utf8) const {
  if (kind_ == Kind::kWordPiece) return wordpiece_->encode(utf8);
  if (pipeline_) return pipeline_->encode(utf8, false);
  if (spm_) return spm_->encode(utf8, false);
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
  if (pipeline_) return pipeline_->decode(ids);
  if (spm_) return spm_->decode(ids);
  // Runs of vocab ids decode as bytes; an added token outside the vocab gives its content.
  std::string text;
  std::vector<std::int32_t> run;
  for (std::size_t i = 0; i <= ids.size(); ++i) {
    const AddedToken* extra = nullptr;
    if (i < ids.size() && bpe_->token_text(ids[i]).empty()) {
      for (const AddedToken& a : added_) {
        if (a.id == ids[i]) extra = &a;
      }
      if (extra == nullptr) return unknown_id_error(i, ids[i]);
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
  if (pipeline_) return pipeline_->token_text(id);
  if (spm_) return spm_->token_text(id);
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
  if (pipeline_) return pipeline_->id_of(token);
  if (spm_) return spm_->id_of(token);
  const std::int32_t id = bpe_->id_of(token);
  if (id >= 0) return id;
  for (const AddedToken& a : added_) {
    if (a.content == token) return a.id;
  }
  return -1;
}

std::size_t HfTokenizer::vocab_size() const {
  if (kind_ == Kind::kWordPiece) return wordpiece_->vocab_size();
  if (pipeline_) return pipeline_->vocab_size();
  if (spm_) return spm_->vocab_size();
  std::size_t n = bpe_->vocab_size();
  for (const AddedToken& a : added_) n += bpe_->token_text(a.id).empty() ? 1 : 0;
  return n;
}

}  // namespace attnscope::tokenizers
