// SentencePiece reader tests: ids and decoded text of six small models (Unigram and BPE; nmt_nfkc, identity and a
// custom rule TSV; with and without byte_fallback; user-defined and control pieces) against Debian's
// python3-sentencepiece 0.1.97 on >= 500 strings each (tests/fixtures/sentencepiece/generate.py writes the models and
// the expected values), and the errors of truncated and malformed model files.
#include <catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "support/fixtures.h"
#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/sentencepiece.h"

namespace {

using attnscope::tokenizers::SentencePiece;
using attnscope::test::read_bytes;
using attnscope::test::read_json;

const std::string kDir = std::string(ATTNSCOPE_FIXTURES_DIR) + "/sentencepiece/";

std::unique_ptr<SentencePiece> load(const std::string& name) {
  const std::vector<std::uint8_t> bytes = read_bytes(kDir + name + ".model");
  auto sp = SentencePiece::load(bytes, "test", "sentencepiece");
  INFO(sp.status().message);
  REQUIRE(sp.ok());
  return std::move(sp).value();
}

}  // namespace

TEST_CASE("sentencepiece: ids and decode agree with python3-sentencepiece 0.1.97", "[sentencepiece]") {
  for (const char* name : {"unigram_nfkc", "bpe_nfkc", "unigram_identity", "bpe_identity", "unigram_custom_bytes",
                           "bpe_identity_bytes"}) {
    const auto sp = load(name);
    const auto doc = read_json(kDir + name + ".json");
    const auto& strings = doc["strings"];
    REQUIRE(strings.size() >= 500);
    std::size_t agree_ids = 0, agree_text = 0;
    for (std::size_t i = 0; i < strings.size(); ++i) {
      const std::string s = strings[i].get<std::string>();
      const std::vector<std::int32_t> want = doc["ids"][i].get<std::vector<std::int32_t>>();
      auto got = sp->encode(s);
      REQUIRE(got.ok());
      if (got.value().ids == want) {
        ++agree_ids;
      } else {
        UNSCOPED_INFO(name << " string " << i << " " << nlohmann::json(s).dump() << " want " << nlohmann::json(want).dump()
                           << " got " << nlohmann::json(got.value().ids).dump());
      }
      REQUIRE(got.value().tokens.size() == got.value().ids.size());
      REQUIRE(got.value().offsets.size() == 2 * got.value().ids.size());
      auto text = sp->decode(want);
      REQUIRE(text.ok());
      if (text.value() == doc["decoded"][i].get<std::string>()) ++agree_text;
    }
    INFO(name << ": ids agree on " << agree_ids << " / " << strings.size() << ", decode on " << agree_text);
    CHECK(agree_ids == strings.size());
    CHECK(agree_text == strings.size());
  }
}

namespace {

using attnscope::tokenizers::HfTokenizer;

void check_expected(const HfTokenizer& tok, const nlohmann::json& doc, const char* what) {
  const auto& strings = doc["strings"];
  std::size_t agree_ids = 0, agree_text = 0;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    const std::string s = strings[i].get<std::string>();
    const std::vector<std::int32_t> want = doc["ids"][i].get<std::vector<std::int32_t>>();
    auto got = tok.encode_with_post_processor(s);
    REQUIRE(got.ok());
    if (got.value().ids == want) {
      ++agree_ids;
    } else {
      UNSCOPED_INFO(what << " string " << i << " " << nlohmann::json(s).dump() << " want " << nlohmann::json(want).dump()
                         << " got " << nlohmann::json(got.value().ids).dump());
    }
    auto text = tok.decode(want);
    REQUIRE(text.ok());
    if (text.value() == doc["decoded"][i].get<std::string>()) {
      ++agree_text;
    } else {
      UNSCOPED_INFO(what << " decode " << i << " want " << doc["decoded"][i].dump() << " got "
                         << nlohmann::json(text.value()).dump());
    }
  }
  INFO(what << ": ids agree on " << agree_ids << " / " << strings.size() << ", decode on " << agree_text);
  CHECK(agree_ids == strings.size());
  CHECK(agree_text == strings.size());
}

}  // namespace

TEST_CASE("sentencepiece: T5Tokenizer and MarianTokenizer ids (transformers' rules over python3-sentencepiece)",
          "[sentencepiece]") {
  const std::vector<std::uint8_t> unigram = read_bytes(kDir + "unigram_nfkc.model");
  const std::vector<std::uint8_t> bpe = read_bytes(kDir + "bpe_nfkc.model");
  SECTION("T5: spiece.model, </s> appended, <extra_id_n> whole") {
    auto t5 = HfTokenizer::from_sentencepiece(unigram, "loadPretrained", "tokenizer.sentencepiece");
    INFO(t5.status().message);
    REQUIRE(t5.ok());
    CHECK(t5.value()->vocab_size() == 800 + 100);
    CHECK(t5.value()->id_of("<extra_id_0>") == 899);
    CHECK(t5.value()->special_ids().eos == 2);
    check_expected(*t5.value(), read_json(kDir + "t5_expected.json"), "t5");
  }
  SECTION("Marian: source.spm / target.spm + vocab.json; a piece vocab.json lacks is <unk>") {
    const std::string vocab = attnscope::test::read_text(kDir + "marian_vocab.json");
    auto m = HfTokenizer::from_marian(unigram, bpe, vocab, "loadPretrained", "tokenizer");
    INFO(m.status().message);
    REQUIRE(m.ok());
    const auto doc = read_json(kDir + "marian_expected.json");
    for (const auto& piece : doc["left_out"]) CHECK(m.value()->id_of(piece.get<std::string>()) == -1);
    check_expected(*m.value(), doc, "marian");
    // "▁you" is left out of vocab.json: the source model still produces it, and it becomes <unk> (id 1)
    auto r = m.value()->encode("you");
    REQUIRE(r.ok());
    CHECK(r.value().tokens == std::vector<std::string>{"\xE2\x96\x81you"});
    CHECK(r.value().ids == std::vector<std::int32_t>{1});
  }
}

TEST_CASE("sentencepiece: bad files give errors naming the argument and never crash", "[sentencepiece]") {
  const std::vector<std::uint8_t> good = read_bytes(kDir + "unigram_identity.model");
  auto message = [](std::span<const std::uint8_t> bytes) {
    auto r = HfTokenizer::from_sentencepiece(bytes, "loadPretrained", "tokenizer.sentencepiece");
    return r.ok() ? std::string() : r.status().message;
  };
  SECTION("truncated inside a field") {
    const std::vector<std::uint8_t> half(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
    const std::string m = message(half);
    INFO(m);
    CHECK(m.rfind("loadPretrained: tokenizer.sentencepiece is truncated or malformed in ", 0) == 0);
    CHECK(m.find("pieces[") != std::string::npos);
  }
  SECTION("every prefix: an error or a model, never a crash") {
    std::size_t errors = 0;
    for (std::size_t n = 0; n < good.size(); n += 7) {
      const std::vector<std::uint8_t> prefix(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
      auto r = HfTokenizer::from_sentencepiece(prefix, "loadPretrained", "tokenizer.sentencepiece");
      if (!r.ok()) {
        ++errors;
        CHECK(r.status().message.find("tokenizer.sentencepiece") != std::string::npos);
      } else {
        CHECK(r.value()->encode("hello world 123").ok());
      }
    }
    CHECK(errors > 0);
  }
  SECTION("garbage and empty bytes") {
    const std::string text = "this is not a model file at all";
    const std::vector<std::uint8_t> garbage(text.begin(), text.end());
    const std::string m = message(garbage);
    INFO(m);
    CHECK(m.rfind("loadPretrained: tokenizer.sentencepiece ", 0) == 0);
    CHECK(message({}) == "loadPretrained: tokenizer.sentencepiece is empty (a SentencePiece model file was expected)");
  }
  SECTION("Marian: vocab.json without <unk>, not JSON, a target that is not a model") {
    const std::vector<std::uint8_t> bpe = read_bytes(kDir + "bpe_identity.model");
    auto no_unk = HfTokenizer::from_marian(good, bpe, R"({"</s>": 0, "a": 1})", "loadPretrained", "tokenizer");
    REQUIRE(!no_unk.ok());
    CHECK(no_unk.status().message == "loadPretrained: tokenizer.vocab has no '<unk>' (MarianTokenizer needs it)");
    auto bad_json = HfTokenizer::from_marian(good, bpe, "{", "loadPretrained", "tokenizer");
    REQUIRE(!bad_json.ok());
    CHECK(bad_json.status().message.rfind("loadPretrained: tokenizer.vocab is not valid JSON (", 0) == 0);
    const std::vector<std::uint8_t> cut(bpe.begin(), bpe.begin() + 100);
    auto bad_target = HfTokenizer::from_marian(good, cut, R"({"</s>": 0, "<unk>": 1})", "loadPretrained", "tokenizer");
    REQUIRE(!bad_target.ok());
    CHECK(bad_target.status().message.rfind("loadPretrained: tokenizer.target is truncated", 0) == 0);
  }
  SECTION("a WORD model is refused naming trainer_spec.model_type") {
    // ModelProto { pieces { piece: "<unk>" type: UNKNOWN } trainer_spec { model_type: WORD } }
    const std::vector<std::uint8_t> word = {0x0A, 0x09, 0x0A, 0x05, '<', 'u', 'n', 'k', '>', 0x18, 0x02,
                                            0x12, 0x02, 0x18, 0x03};
    CHECK(message(word) == "loadPretrained: tokenizer.sentencepiece.trainer_spec.model_type 3 (WORD) is not supported "
                           "(UNIGRAM, BPE)");
  }
}

TEST_CASE("tokenizer.json Unigram (T5's layout: Precompiled, WhitespaceSplit + Metaspace) against sentencepiece",
          "[sentencepiece]") {
  // The generator wrote t5_unigram_tokenizer.json from unigram_nfkc.model as transformers' T5Converter does; on text
  // without its added tokens the tokenizers pipeline gives SentencePiece's ids followed by "</s>".
  const std::string text = attnscope::test::read_text(kDir + "t5_unigram_tokenizer.json");
  auto tok = HfTokenizer::from_json(text, "loadTokenizer", "tokenizerJson");
  INFO(tok.status().message);
  REQUIRE(tok.ok());
  const auto doc = read_json(kDir + "unigram_nfkc.json");
  std::size_t agree = 0, n = 0;
  for (std::size_t i = 0; i < doc["strings"].size(); ++i) {
    const std::string s = doc["strings"][i].get<std::string>();
    if (s.find("<unk>") != std::string::npos || s.find("<s>") != std::string::npos || s.find("</s>") != std::string::npos) continue;
    std::vector<std::int32_t> want = doc["ids"][i].get<std::vector<std::int32_t>>();
    want.push_back(2);
    auto got = tok.value()->encode_with_post_processor(s);
    REQUIRE(got.ok());
    ++n;
    if (got.value().ids == want) {
      ++agree;
    } else {
      UNSCOPED_INFO(i << " " << nlohmann::json(s).dump() << " want " << nlohmann::json(want).dump() << " got "
                      << nlohmann::json(got.value().ids).dump());
    }
  }
  INFO("tokenizer.json Unigram vs sentencepiece: " << agree << " / " << n);
  CHECK(agree == n);
}
