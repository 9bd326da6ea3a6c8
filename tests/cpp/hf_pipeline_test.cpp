// The tokenizer.json pipeline's own parts: NFC/NFKC (src/tokenizers/nfc.h) against Python's unicodedata for every
// code point (tests/fixtures/tokenizers/gen_nfc_cases.py), and the Split-regex scanners of
// src/tokenizers/split_regex.h on tricky inputs. Expected pieces are worked by hand
// from the patterns' Oniguruma semantics (leftmost alternative, greedy with backtracking, \s = White_Space), and
// the Llama 3 / Qwen ones are checked end to end against @huggingface/tokenizers in tests/js/tokenizers-modern.
#include <catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/nfc.h"

#include "tokenizers/split_regex.h"
#include "tokenizers/unicode.h"

using namespace attnscope::tokenizers;

namespace {

std::vector<std::string> pieces(SplitFn fn, const std::string& utf8) {
  auto d = decode_utf8(utf8, "t", "t");
  REQUIRE(d.ok());
  const auto& cps = d.value().cps;
  std::vector<std::string> out;
  std::size_t at = 0;
  for (auto [a, b] : fn(cps)) {
    CHECK(a == at);  // the known patterns cover every code point
    out.push_back(utf8.substr(static_cast<std::size_t>(d.value().byte_offset[a]),
                              static_cast<std::size_t>(d.value().byte_offset[b] - d.value().byte_offset[a])));
    at = b;
  }
  CHECK(at == cps.size());
  return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("split_llama3: contractions, letters, digit triples, punctuation") {
  CHECK(pieces(&split_llama3, "I'M 12345 naïve") == V{"I", "'M", " ", "123", "45", " naïve"});
  CHECK(pieces(&split_llama3, "they'RE here'll'd") == V{"they", "'RE", " here", "'ll", "'d"});
  CHECK(pieces(&split_llama3, "x'S") == V{"x", "'S"});
  CHECK(pieces(&split_llama3, "'x") == V{"'x"});  // no contraction: [^\r\n\p{L}\p{N}]?\p{L}+
  CHECK(pieces(&split_llama3, "1234567") == V{"123", "456", "7"});
  CHECK(pieces(&split_llama3, "a ...!!\n\nb") == V{"a", " ...!!\n\n", "b"});
  CHECK(pieces(&split_llama3, "$hello") == V{"$hello"});
  CHECK(pieces(&split_llama3, "") == V{});
}

TEST_CASE("split_llama3: whitespace runs, CR/LF and the \\s+(?!\\S) lookahead") {
  CHECK(pieces(&split_llama3, "a   b") == V{"a", "  ", " b"});
  CHECK(pieces(&split_llama3, "a  \n  b") == V{"a", "  \n", " ", " b"});
  CHECK(pieces(&split_llama3, "a \t") == V{"a", " \t"});       // run at the end: whole
  CHECK(pieces(&split_llama3, "\tb") == V{"\tb"});             // one non-CR/LF char before letters
  CHECK(pieces(&split_llama3, "\nb") == V{"\n", "b"});
  CHECK(pieces(&split_llama3, "a\r\n\r\nb") == V{"a", "\r\n\r\n", "b"});
  CHECK(pieces(&split_llama3, "a \u00A0b") == V{"a", " ", "\u00A0b"});  // NBSP is White_Space
  CHECK(pieces(&split_llama3, "a\u0085b") == V{"a", "\u0085b"});        // NEL is White_Space, not CR/LF
  CHECK(pieces(&split_llama3, "a \u200Bb") == V{"a", " \u200B", "b"});  // ZWSP is not White_Space (Cf)
}

TEST_CASE("split_llama3: marks, CJK, emoji") {
  CHECK(pieces(&split_llama3, "e\u0301t\u00E9") == V{"e", "\u0301t\u00E9"});
  CHECK(pieces(&split_llama3, "日本語のテキスト") == V{"日本語のテキスト"});
  CHECK(pieces(&split_llama3, "hi 👍🏽!") == V{"hi", " 👍🏽!"});
  CHECK(pieces(&split_llama3, "٣٤٥٦") == V{"٣٤٥", "٦"});  // Arabic-Indic digits are \p{N}
  CHECK(pieces(&split_llama3, "Ⅻx") == V{"Ⅻ", "x"});     // Roman numeral: Nl
}

TEST_CASE("split_qwen2: one digit per piece, otherwise Llama 3's rules") {
  CHECK(pieces(&split_qwen2, "I'M 12345 naïve") == V{"I", "'M", " ", "1", "2", "3", "4", "5", " naïve"});
  CHECK(pieces(&split_qwen2, "a  b") == V{"a", " ", " b"});
}

TEST_CASE("split_for_pattern: exact strings only") {
  CHECK(split_for_pattern(
            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)") ==
        &split_llama3);
  CHECK(split_for_pattern(
            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)") ==
        &split_qwen2);
  CHECK(split_for_pattern(R"(\p{N}{1,3})") == nullptr);
  CHECK(split_for_pattern("") == nullptr);
}

namespace {

std::u32string nfc(std::u32string s, bool compat, Alignment* from = nullptr) {
  Alignment a;
  for (std::uint32_t i = 0; i < s.size(); ++i) a.emplace_back(i, i + 1);
  normalize_nfc(s, a, compat);
  if (from != nullptr) *from = a;
  return s;
}

std::u32string u32(const nlohmann::json& cps) {
  std::u32string out;
  for (const auto& c : cps) out.push_back(c.get<char32_t>());
  return out;
}

std::u32string u32_of(const std::string& utf8) {
  auto d = decode_utf8(utf8, "t", "t");
  REQUIRE(d.ok());
  return std::u32string(d.value().cps.begin(), d.value().cps.end());
}

}  // namespace

TEST_CASE("normalize_nfc: every code point and the composition cases equal Python's unicodedata") {
  std::ifstream f(ATTNSCOPE_FIXTURES_DIR "/tokenizers/nfc_cases.json");
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const auto doc = nlohmann::json::parse(ss.str());
  std::vector<bool> listed(0x110000, false);
  std::size_t wrong = 0;
  for (const auto& row : doc["single"]) {
    const auto cp = row[0].get<char32_t>();
    listed[cp] = true;
    wrong += nfc(std::u32string(1, cp), false) != u32(row[1]);
    wrong += nfc(std::u32string(1, cp), true) != u32(row[2]);
  }
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (listed[cp] || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
    const std::u32string one(1, cp);
    wrong += nfc(one, false) != one;
    wrong += nfc(one, true) != one;
  }
  CHECK(wrong == 0);
  for (const auto& row : doc["strings"]) {
    INFO(row[0].get<std::string>());
    CHECK(nfc(u32_of(row[0].get<std::string>()), false) == u32_of(row[1].get<std::string>()));
    CHECK(nfc(u32_of(row[0].get<std::string>()), true) == u32_of(row[2].get<std::string>()));
  }
}

TEST_CASE("normalize_nfc: a composed character keeps the source range of its parts") {
  Alignment from;
  CHECK(nfc(U"xe\u0301y", false, &from) == U"x\u00E9y");
  REQUIRE(from.size() == 3);
  CHECK(from[0] == std::make_pair(0u, 1u));
  CHECK(from[1] == std::make_pair(1u, 3u));
  CHECK(from[2] == std::make_pair(3u, 4u));
  CHECK(nfc(U"\uFB01", true, &from) == U"fi");  // NFKC: both letters from the ligature
  CHECK(from == Alignment{{0u, 1u}, {0u, 1u}});
}

namespace {

// A tokenizer.json with a SentencePiece-style vocab: "▁", letters, "▁ab", <0x41> (byte fallback for 'A' only),
// <unk>; the members in `extra` replace the defaults.
std::string tiny_json(const std::string& extra) {
  return R"({"model":{"type":"BPE","vocab":{"<unk>":0,"<s>":1,"\u2581":2,"a":3,"b":4,"ab":5,"\u2581ab":6,"<0x41>":7},)"
         R"("merges":["a b","\u2581 ab"],"byte_fallback":true,"fuse_unk":true,"unk_token":"<unk>"},)"
         R"("added_tokens":[{"id":1,"content":"<s>","special":true,"normalized":false,"lstrip":false,"rstrip":false,"single_word":false}],)"
         R"("normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"\u2581"},{"type":"Replace","pattern":{"String":" "},"content":"\u2581"}]},)"
         R"("pre_tokenizer":null,)"
         R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]}}},)"
         R"("decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"\u2581"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]})" +
         extra + "}";
}

}  // namespace

TEST_CASE("HfPipeline: Prepend/Replace, merges, byte fallback, fused unk, template, decoder (worked by hand)") {
  auto t = HfTokenizer::from_json(tiny_json(""), "loadTokenizer", "tokenizerJson");
  REQUIRE(t.ok());
  const HfTokenizer& tok = *t.value();
  // "ab Aéé": ▁ab | ▁ | A -> <0x41> | é é -> no byte tokens -> one fused <unk>
  auto r = tok.encode_with_post_processor("ab Aéé");
  REQUIRE(r.ok());
  CHECK(r.value().ids == std::vector<std::int32_t>{1, 6, 2, 7, 0});
  CHECK(r.value().tokens == std::vector<std::string>{"<s>", "\u2581ab", "\u2581", "<0x41>", "<unk>"});
  CHECK(r.value().offsets == std::vector<std::int32_t>{0, 0, 0, 2, 2, 3, 3, 4, 4, 6});
  auto plain = tok.encode("ab");
  REQUIRE(plain.ok());
  CHECK(plain.value().ids == std::vector<std::int32_t>{6});
  // an added token splits the text; each side gets its own ▁ (Prepend on each non-empty segment)
  auto split = tok.encode("ab<s>ab");
  REQUIRE(split.ok());
  CHECK(split.value().ids == std::vector<std::int32_t>{6, 1, 6});
  auto d = tok.decode(std::vector<std::int32_t>{1, 6, 2, 7});
  REQUIRE(d.ok());
  CHECK(d.value() == "<s> ab A");  // Strip removes one leading space of the fused text only
  CHECK(tok.special_ids().bos == 1);
  CHECK(tok.vocab_size() == 8);
}

TEST_CASE("HfPipeline: unsupported components are errors naming the member") {
  auto msg = [](const std::string& extra) {
    auto t = HfTokenizer::from_json(tiny_json(extra), "loadTokenizer", "tokenizerJson");
    return t.ok() ? std::string("ok") : t.status().message;
  };
  CHECK(msg(R"(,"normalizer":{"type":"NFD"})") ==
        "loadTokenizer: tokenizerJson.normalizer.type 'NFD' is not supported (Prepend, Replace, Lowercase, NFC, NFKC, "
        "Precompiled, Strip, Sequence)");
  CHECK(msg(R"(,"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\d+"},"behavior":"Isolated","invert":false}]})") ==
        "loadTokenizer: tokenizerJson.pre_tokenizer.pretokenizers[0].pattern Regex '\\\\d+' is not supported (the Llama 3, "
        "Qwen2 and GPT-2 patterns, matched exactly)");
  CHECK(msg(R"(,"post_processor":{"type":"BertProcessing"})") ==
        "loadTokenizer: tokenizerJson.post_processor.cls must be a [token, id] pair, got null");
  CHECK(msg(R"(,"post_processor":{"type":"Unknown"})") ==
        "loadTokenizer: tokenizerJson.post_processor.type 'Unknown' is not supported (TemplateProcessing, "
        "RobertaProcessing, BertProcessing, ByteLevel, Sequence or null)");
  CHECK(msg(R"(,"decoder":{"type":"Sequence","decoders":[{"type":"WordPiece"}]})") ==
        "loadTokenizer: tokenizerJson.decoder.decoders[0].type 'WordPiece' is not supported (Replace, ByteFallback, Fuse, "
        "Strip, Metaspace, ByteLevel, Sequence)");
}
