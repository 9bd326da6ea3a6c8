// fuzz_tokenizer_check.h: the invariants every created Hugging Face tokenizer must keep, shared by
// fuzz_tokenizer_json.cpp and fuzz_tokenizer_modern.cpp: it encodes exactly the valid UTF-8 texts, with every id
// known, id_of(token_text(id)) == id, offsets inside the text, decode ok and valid UTF-8 for its own ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "tokenizers/hf_tokenizer.h"

namespace fuzz {

using attnscope::tokenizers::HfTokenizer;

// roundtrip: a BPE tokenizer's decode(encode(s)) must give s back (not with normalizers that change the text).
inline void check_tokenizer(const HfTokenizer& tok, const std::string& text, bool roundtrip) {
  auto r = tok.encode(text);
  if (!fuzz::valid_utf8(text)) {
    fuzz::check_error(r.status(), "encode");
    return;
  }
  FUZZ_CHECK(r.ok(), "encode rejected valid UTF-8: %s", r.status().message.c_str());
  const auto& t = r.value();
  const std::size_t n = t.ids.size();
  FUZZ_CHECK(t.tokens.size() == n && t.offsets.size() == 2 * n, "encode: sizes disagree");
  const std::int64_t len16 = fuzz::utf16_length(text);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string tt = tok.token_text(t.ids[i]);
    FUZZ_CHECK(!tt.empty(), "encode: id %d unknown", t.ids[i]);
    FUZZ_CHECK(tok.id_of(tt) == t.ids[i], "id_of(token_text(%d)) = %d", t.ids[i], tok.id_of(tt));
    FUZZ_CHECK(static_cast<std::size_t>(t.ids[i]) < tok.vocab_size() + 1000000u, "absurd id");
    const std::int64_t s = t.offsets[2 * i], e = t.offsets[2 * i + 1];
    FUZZ_CHECK(0 <= s && s < e && e <= len16, "token %zu offsets [%lld, %lld) outside [0, %lld]", i,
               static_cast<long long>(s), static_cast<long long>(e), static_cast<long long>(len16));
  }
  auto d = tok.decode(t.ids);
  FUZZ_CHECK(d.ok(), "decode(encode(s)) failed: %s", d.status().message.c_str());
  FUZZ_CHECK(fuzz::valid_utf8(d.value()), "decode output is not valid UTF-8");
  if (roundtrip && tok.kind() == HfTokenizer::Kind::kBpe) FUZZ_CHECK(d.value() == text, "BPE decode(encode(s)) != s");
}

// Both tokenizer.json harnesses' input: byte 0 picks the mode, byte 1 holds flags, then a part and, after the
// first 0x00, the text to encode (`fallback` when there is no 0x00). Call with size >= 2.
struct PartAndText {
  std::string part, text;
};
inline PartAndText part_and_text(const std::uint8_t* data, std::size_t size, const char* fallback) {
  const std::string rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const std::size_t z = rest.find('\0');
  return {rest.substr(0, z), z == std::string::npos ? std::string(fallback) : rest.substr(z + 1)};
}

// from_json's result: true when it made a tokenizer; a refusal must name loadPretrained and its tokenizer argument.
template <class Result>
bool tokenizer_made(const Result& r) {
  if (r.ok()) return true;
  check_error(r.status(), "loadPretrained");
  FUZZ_CHECK(r.status().message.rfind("loadPretrained: tokenizer", 0) == 0, "message '%s'", r.status().message.c_str());
  FUZZ_CHECK(r.status().argument == "tokenizer", "argument '%s'", r.status().argument.c_str());
  return false;
}

}  // namespace fuzz
