// fuzz_tokenize.cpp: tokenizers::tokenize(text, kWord / kChar) on arbitrary bytes.
// Invariants: no crash/UB; ok exactly when the bytes are valid UTF-8 (independent decoder), otherwise a
// TypeError "tokenize: ..."; offsets [start, end) strictly inside the UTF-16 length, non-empty, increasing and
// non-overlapping; each token is exactly the text between its offsets; the uncovered gaps are White_Space only;
// word and char tokenizations cover the same UTF-16 units and word never has more tokens than char.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "tokenizers/word_char.h"

namespace {

using attnscope::tokenizers::Kind;

std::vector<bool> check_tokenization(std::string_view text, Kind kind) {
  const char* kname = kind == Kind::kWord ? "word" : "char";
  std::vector<char32_t> cps;
  std::vector<std::size_t> byte_of;
  const bool valid = fuzz::decode_utf8(text, &cps, &byte_of);
  auto r = attnscope::tokenizers::tokenize(text, kind);
  if (!valid) {
    fuzz::check_error(r.status(), "tokenize");
    FUZZ_CHECK(r.status().kind == attnscope::core::ErrorKind::kType, "invalid UTF-8 must be a TypeError");
    return {};
  }
  FUZZ_CHECK(r.ok(), "valid UTF-8 rejected (%s): %s", kname, r.status().message.c_str());
  const auto& t = r.value();
  FUZZ_CHECK(t.offsets.size() == 2 * t.tokens.size(), "%s: %zu offsets for %zu tokens", kname, t.offsets.size(),
             t.tokens.size());
  FUZZ_CHECK(t.ids.empty(), "%s: ids must be empty", kname);

  // UTF-16 unit -> code point index (u16_to_cp[u] for the first unit of each code point, -1 inside a pair).
  std::vector<long> unit_to_cp;
  for (std::size_t p = 0; p < cps.size(); ++p) {
    unit_to_cp.push_back(static_cast<long>(p));
    if (cps[p] > 0xFFFF) unit_to_cp.push_back(-1);
  }
  const auto len16 = static_cast<std::int64_t>(unit_to_cp.size());
  auto cp_at = [&](std::int64_t unit) -> std::size_t {
    if (unit == len16) return cps.size();
    FUZZ_CHECK(unit >= 0 && unit < len16 && unit_to_cp[static_cast<std::size_t>(unit)] >= 0,
               "%s: offset %lld splits a surrogate pair or is out of range", kname, static_cast<long long>(unit));
    return static_cast<std::size_t>(unit_to_cp[static_cast<std::size_t>(unit)]);
  };

  std::vector<bool> covered(static_cast<std::size_t>(len16), false);
  std::int64_t prev_end = 0;
  for (std::size_t i = 0; i < t.tokens.size(); ++i) {
    const std::int64_t s = t.offsets[2 * i], e = t.offsets[2 * i + 1];
    FUZZ_CHECK(0 <= s && s < e && e <= len16, "%s: token %zu offsets [%lld, %lld) outside [0, %lld]", kname, i,
               static_cast<long long>(s), static_cast<long long>(e), static_cast<long long>(len16));
    FUZZ_CHECK(s >= prev_end, "%s: token %zu starts at %lld before previous end %lld", kname, i,
               static_cast<long long>(s), static_cast<long long>(prev_end));
    const std::size_t b0 = byte_of[cp_at(s)], b1 = byte_of[cp_at(e)];
    FUZZ_CHECK(t.tokens[i] == text.substr(b0, b1 - b0), "%s: token %zu text differs from text[%zu, %zu)", kname, i,
               b0, b1);
    // Gap before this token: White_Space only.
    for (std::size_t p = cp_at(prev_end); p < cp_at(s); ++p)
      FUZZ_CHECK(fuzz::is_white_space(cps[p]), "%s: skipped U+%04X is not White_Space", kname,
                 static_cast<unsigned>(cps[p]));
    for (std::int64_t u = s; u < e; ++u) covered[static_cast<std::size_t>(u)] = true;
    prev_end = e;
  }
  for (std::size_t p = cp_at(prev_end); p < cps.size(); ++p)
    FUZZ_CHECK(fuzz::is_white_space(cps[p]), "%s: trailing skipped U+%04X is not White_Space", kname,
               static_cast<unsigned>(cps[p]));
  covered.push_back(false);  // marker so the caller can compare sizes
  covered.back() = t.tokens.size() > 0;
  return covered;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto word = check_tokenization(text, Kind::kWord);
  const auto chr = check_tokenization(text, Kind::kChar);
  if (!fuzz::valid_utf8(text)) return 0;
  FUZZ_CHECK(word == chr, "word and char tokenizations cover different UTF-16 units");
  auto w = attnscope::tokenizers::tokenize(text, Kind::kWord);
  auto c = attnscope::tokenizers::tokenize(text, Kind::kChar);
  FUZZ_CHECK(w.value().tokens.size() <= c.value().tokens.size(), "word has %zu tokens, char only %zu",
             w.value().tokens.size(), c.value().tokens.size());
  return 0;
}
