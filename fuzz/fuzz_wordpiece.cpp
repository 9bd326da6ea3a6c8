// fuzz_wordpiece.cpp: tokenizers::WordPieceTokenizer (BERT normalizer, pre-tokenizer, WordPiece, added tokens).
// Input: byte 0 picks the options (bit 0 lowercase, bits 1-2 strip_accents unset/false/true, bit 3 CJK spacing,
// bit 4 clean text, bit 5 decode cleanup, bit 6 max_input_chars_per_word 8 instead of 100); byte 1 % 4 picks the
// mode: 0-2 encode the rest as text; 3 decode ids read from the rest (int16 little-endian, a few out of range).
// The vocabulary (built here) has the BERT specials, ASCII letters and "##" letters, a few words, accented and
// CJK pieces; added tokens exercise lstrip/rstrip, single_word and normalized matching.
// Invariants: encode ok exactly for valid UTF-8 (else "encode: ..."); tokens/ids/offsets sizes agree; every id
// is known and token_text(id) == token; offsets 0 <= start < end <= UTF-16 length; no token holds whitespace
// unless it is an added token; unk appears only as "[UNK]"; encode is deterministic; decode(encode(s)) is ok and
// valid UTF-8; decode of arbitrary ids is ok exactly when all are known (else RangeError "decode: ...").
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "tokenizers/wordpiece.h"

namespace {

using attnscope::tokenizers::AddedToken;
using attnscope::tokenizers::WordPieceOptions;
using attnscope::tokenizers::WordPieceTokenizer;

std::vector<std::pair<std::string, std::int32_t>> make_vocab() {
  std::vector<std::string> tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "hello",
                                     "world", "cafe", "café", "Café", "##é", "中", "文", "##中", "ᄒ", "##ᅡ", "##ᆫ",
                                     "i̇", "##̇", "σ", "##ς", ".", ",", "!", "'", "##s", "##ing", "😀", "new"};
  for (char c = 'a'; c <= 'z'; ++c) {
    tokens.push_back(std::string(1, c));
    tokens.push_back("##" + std::string(1, c));
    tokens.push_back(std::string(1, static_cast<char>(c - 'a' + 'A')));
  }
  std::vector<std::pair<std::string, std::int32_t>> vocab;
  for (const auto& t : tokens) vocab.emplace_back(t, static_cast<std::int32_t>(vocab.size()));
  return vocab;
}

const WordPieceTokenizer& tokenizer_for(std::uint8_t flags) {
  static std::unique_ptr<WordPieceTokenizer> cache[128];
  auto& slot = cache[flags & 127];
  if (!slot) {
    WordPieceOptions o;
    o.lowercase = flags & 1;
    const int strip = (flags >> 1) & 3;
    if (strip == 1) o.strip_accents = false;
    if (strip >= 2) o.strip_accents = true;
    o.handle_chinese_chars = flags & 8;
    o.clean_text = flags & 16;
    o.cleanup = flags & 32;
    o.max_input_chars_per_word = (flags & 64) ? 8 : 100;
    const auto vocab = make_vocab();
    std::vector<AddedToken> added;
    for (const char* s : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
      for (const auto& [t, id] : vocab) {
        if (t == s) added.push_back(AddedToken{s, id});
      }
    }
    AddedToken strip_both{"<s>", 1000};
    strip_both.lstrip = strip_both.rstrip = true;
    AddedToken word{"Hi", 1001};
    word.single_word = true;
    AddedToken norm{"NEW", 1002};
    norm.normalized = true;
    norm.special = false;
    AddedToken cjk{"中文", 1003};
    cjk.normalized = true;
    added.insert(added.end(), {strip_both, word, norm, cjk});
    auto r = WordPieceTokenizer::create(vocab, added, o, {});
    FUZZ_CHECK(r.ok(), "fixed tokenizer: %s", r.status().message.c_str());
    slot = std::move(r).value();
  }
  return *slot;
}

void check_encode(const WordPieceTokenizer& tok, const std::string& text) {
  auto r = tok.encode(text);
  if (!fuzz::valid_utf8(text)) {
    fuzz::check_error(r.status(), "encode");
    return;
  }
  FUZZ_CHECK(r.ok(), "encode rejected valid UTF-8: %s", r.status().message.c_str());
  const auto& t = r.value();
  const std::size_t n = t.tokens.size();
  FUZZ_CHECK(t.ids.size() == n && t.offsets.size() == 2 * n, "encode: %zu tokens, %zu ids, %zu offsets", n,
             t.ids.size(), t.offsets.size());
  const std::int64_t len16 = fuzz::utf16_length(text);
  for (std::size_t i = 0; i < n; ++i) {
    FUZZ_CHECK(tok.token_text(t.ids[i]) == t.tokens[i], "encode: token %zu '%s' is not token_text(%d)", i,
               t.tokens[i].c_str(), t.ids[i]);
    FUZZ_CHECK(tok.id_of(t.tokens[i]) == t.ids[i], "encode: id_of(token %zu) != its id", i);
    const std::int64_t s = t.offsets[2 * i], e = t.offsets[2 * i + 1];
    FUZZ_CHECK(0 <= s && s < e && e <= len16, "encode: token %zu offsets [%lld, %lld) outside [0, %lld]", i,
               static_cast<long long>(s), static_cast<long long>(e), static_cast<long long>(len16));
    const bool added = t.ids[i] >= 1000 || t.ids[i] <= 4;
    if (!added) {
      std::vector<char32_t> cps;
      FUZZ_CHECK(fuzz::decode_utf8(t.tokens[i], &cps), "token %zu is not valid UTF-8", i);
      for (char32_t c : cps) FUZZ_CHECK(!fuzz::is_white_space(c), "token %zu '%s' holds whitespace", i, t.tokens[i].c_str());
    }
    if (t.ids[i] == 1) FUZZ_CHECK(t.tokens[i] == "[UNK]", "unk id with token '%s'", t.tokens[i].c_str());
  }
  auto again = tok.encode(text);
  FUZZ_CHECK(again.ok() && again.value().ids == t.ids && again.value().offsets == t.offsets,
             "second encode gave different tokens");
  auto d = tok.decode(t.ids);
  FUZZ_CHECK(d.ok(), "decode(encode(s)) failed: %s", d.status().message.c_str());
  FUZZ_CHECK(fuzz::valid_utf8(d.value()), "decode output is not valid UTF-8");
}

void check_decode(const WordPieceTokenizer& tok, FuzzedDataProvider& fdp) {
  std::vector<std::int32_t> ids;
  bool all_known = true;
  while (fdp.remaining_bytes() > 1 && ids.size() < 256) {
    const auto id = static_cast<std::int32_t>(fdp.ConsumeIntegral<std::int16_t>());
    all_known = all_known && !tok.token_text(id).empty();
    ids.push_back(id);
  }
  auto d = tok.decode(ids);
  if (!all_known) {
    fuzz::check_error(d.status(), "decode");
    FUZZ_CHECK(d.status().kind == attnscope::core::ErrorKind::kRange, "unknown id must be a RangeError");
    return;
  }
  FUZZ_CHECK(d.ok(), "decode of known ids failed: %s", d.status().message.c_str());
  FUZZ_CHECK(fuzz::valid_utf8(d.value()), "decode output is not valid UTF-8");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const WordPieceTokenizer& tok = tokenizer_for(data[0]);
  FuzzedDataProvider fdp(data + 2, size - 2);
  if (data[1] % 4 == 3) {
    check_decode(tok, fdp);
  } else {
    check_encode(tok, fdp.ConsumeRemainingBytesAsString());
  }
  return 0;
}
