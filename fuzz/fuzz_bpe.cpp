// fuzz_bpe.cpp: tokenizers::BpeTokenizer.
// The first input byte picks a mode:
//   0 (byte % 4 == 0 or 1): encode the rest with a fixed tokenizer (GPT-2's encoder.json/vocab.bpe from
//      ATTNSCOPE_FUZZ_GPT2_DIR when readable, else a small vocab built here) and decode it back;
//   2: decode arbitrary ids read from the rest (int32 little-endian; small ones mostly valid);
//   3: create() from mutated text: the rest split at the first two 0x00 bytes into (extra vocab members,
//      merges, text). Odd second byte: the vocab is the raw first part; even: the harness wraps it as
//      {<256 byte tokens>, <part>} so merges get past the vocab checks. A created tokenizer then encodes text.
// Invariants: no crash/UB; encode ok exactly for valid UTF-8, errors "encode: ..."; ids known; offsets
// non-empty, inside the UTF-16 length, starting at 0, ending at the length, monotone and gap-free (adjacent
// tokens may share one character); decode(encode(s)) == s; a second encode (cache hit) gives the same ids;
// decode ok exactly when every id is in the vocabulary, output valid UTF-8, errors "decode: ...";
// create errors "createBpeTokenizer: ...".
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "tokenizers/bpe.h"

namespace {

using attnscope::tokenizers::BpeTokenizer;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const BpeTokenizer& fixed_tokenizer() {
  static const std::unique_ptr<BpeTokenizer> tok = [] {
    std::string vocab, merges;
#ifdef ATTNSCOPE_FUZZ_GPT2_DIR
    vocab = read_file(std::string(ATTNSCOPE_FUZZ_GPT2_DIR) + "/encoder.json");
    merges = read_file(std::string(ATTNSCOPE_FUZZ_GPT2_DIR) + "/vocab.bpe");
#endif
    if (vocab.empty() || merges.empty()) {
      auto small = fuzz::small_bpe();
      vocab = small.vocab;
      merges = small.merges;
    }
    auto r = BpeTokenizer::create(vocab, merges);
    FUZZ_CHECK(r.ok(), "fixed tokenizer: %s", r.status().message.c_str());
    std::fprintf(stderr, "fuzz_bpe: fixed tokenizer has %zu entries\n", r.value()->vocab_size());
    // Differential check of the byte table once.
    for (int b = 0; b < 256; ++b)
      FUZZ_CHECK(attnscope::tokenizers::gpt2_byte_to_unicode(static_cast<std::uint8_t>(b)) ==
                     fuzz::byte_to_unicode(static_cast<std::uint8_t>(b)),
                 "gpt2_byte_to_unicode(%d) differs from bytes_to_unicode()", b);
    return std::move(r).value();
  }();
  return *tok;
}

void check_encode(const BpeTokenizer& tok, std::string_view text) {
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
  FUZZ_CHECK((n == 0) == text.empty(), "encode: %zu tokens for %zu bytes", n, text.size());
  const std::int64_t len16 = fuzz::utf16_length(text);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string tt = tok.token_text(t.ids[i]);
    FUZZ_CHECK(!tt.empty(), "encode: ids[%zu] = %d is not in the vocabulary", i, t.ids[i]);
    FUZZ_CHECK(t.tokens[i] == tt || fuzz::valid_utf8(t.tokens[i]),
               "encode: tokens[%zu] is neither valid UTF-8 nor token_text", i);
    const std::int64_t s = t.offsets[2 * i], e = t.offsets[2 * i + 1];
    FUZZ_CHECK(0 <= s && s < e && e <= len16, "encode: token %zu offsets [%lld, %lld) outside [0, %lld]", i,
               static_cast<long long>(s), static_cast<long long>(e), static_cast<long long>(len16));
    if (i == 0) FUZZ_CHECK(s == 0, "encode: first token starts at %lld", static_cast<long long>(s));
    if (i + 1 == n) FUZZ_CHECK(e == len16, "encode: last token ends at %lld of %lld", static_cast<long long>(e),
                               static_cast<long long>(len16));
    if (i > 0) {
      const std::int64_t ps = t.offsets[2 * i - 2], pe = t.offsets[2 * i - 1];
      FUZZ_CHECK(s >= ps && e >= pe && s <= pe, "encode: token %zu [%lld, %lld) after [%lld, %lld)", i,
                 static_cast<long long>(s), static_cast<long long>(e), static_cast<long long>(ps),
                 static_cast<long long>(pe));
    }
  }
  auto d = tok.decode(t.ids);
  FUZZ_CHECK(d.ok(), "decode(encode(s)) failed: %s", d.status().message.c_str());
  FUZZ_CHECK(d.value() == text, "decode(encode(s)) != s (%zu vs %zu bytes)", d.value().size(), text.size());
  auto again = tok.encode(text);
  FUZZ_CHECK(again.ok() && again.value().ids == t.ids, "second encode (cached) gave different ids");
}

void check_decode(const BpeTokenizer& tok, FuzzedDataProvider& fdp) {
  std::vector<std::int32_t> ids;
  bool all_known = true;
  while (fdp.remaining_bytes() > 0 && ids.size() < 256) {
    const auto sel = fdp.ConsumeIntegral<std::uint8_t>();
    std::int32_t id = sel < 224 ? static_cast<std::int32_t>(fdp.ConsumeIntegral<std::uint16_t>() %
                                                            (tok.vocab_size() + 8))
                                : fdp.ConsumeIntegral<std::int32_t>();
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
  // Raw bytes of the ids vs the decoded text: the same when the bytes are valid UTF-8.
  std::string bytes;
  for (auto id : ids) {
    std::vector<char32_t> cps;
    fuzz::decode_utf8(tok.token_text(id), &cps);
    for (char32_t c : cps) {
      int b = -1;
      for (int x = 0; x < 256 && b < 0; ++x)
        if (fuzz::byte_to_unicode(static_cast<std::uint8_t>(x)) == c) b = x;
      FUZZ_CHECK(b >= 0, "token_text(%d) has a non byte-level character U+%04X", id, static_cast<unsigned>(c));
      bytes += static_cast<char>(b);
    }
  }
  if (fuzz::valid_utf8(bytes)) FUZZ_CHECK(d.value() == bytes, "decode of valid UTF-8 bytes changed them");
}

void check_create(FuzzedDataProvider& fdp) {
  const bool raw_vocab = fdp.ConsumeIntegral<std::uint8_t>() & 1;
  const std::string rest = fdp.ConsumeRemainingBytesAsString();
  const std::size_t z1 = rest.find('\0');
  const std::string part1 = rest.substr(0, z1);
  std::string merges, text;
  if (z1 != std::string::npos) {
    const std::size_t z2 = rest.find('\0', z1 + 1);
    merges = rest.substr(z1 + 1, z2 == std::string::npos ? std::string::npos : z2 - z1 - 1);
    if (z2 != std::string::npos) text = rest.substr(z2 + 1);
  }
  const std::string vocab = raw_vocab ? part1
                                      : "{" + fuzz::base_vocab_members() + (part1.empty() ? "" : ",") + part1 + "}";
  auto r = BpeTokenizer::create(vocab, merges);
  if (!r.ok()) {
    fuzz::check_error(r.status(), "createBpeTokenizer");
    return;
  }
  const auto& tok = *r.value();
  FUZZ_CHECK(tok.vocab_size() >= 256, "created tokenizer with %zu entries", tok.vocab_size());
  check_encode(tok, text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  FuzzedDataProvider fdp(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
    case 1: {
      const std::string text = fdp.ConsumeRemainingBytesAsString();
      check_encode(fixed_tokenizer(), text);
      break;
    }
    case 2: check_decode(fixed_tokenizer(), fdp); break;
    default: check_create(fdp); break;
  }
  return 0;
}
