// fuzz_common.h: helpers shared by the libFuzzer harnesses (fuzz/fuzz_*.cpp). Harness code only: this is the
// one place in the project where a failed check traps (src/ never aborts on user input).
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

// A violated invariant: print what and where, then trap (libFuzzer saves the input as crash-<sha1>).
#define FUZZ_CHECK(cond, ...)                                                              \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "\nFUZZ_CHECK failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                   \
      std::fprintf(stderr, "\n");                                                          \
      __builtin_trap();                                                                    \
    }                                                                                      \
  } while (0)

namespace fuzz {

// An error Status must name the failing public function: kind set, function == fn, message "fn: ...".
inline void check_error(const attnscope::core::Status& s, const char* fn) {
  FUZZ_CHECK(!s.ok(), "expected an error from %s", fn);
  FUZZ_CHECK(s.kind != attnscope::core::ErrorKind::kOk, "error without kind from %s", fn);
  FUZZ_CHECK(s.function == fn, "error function '%s' != '%s' (%s)", s.function.c_str(), fn, s.message.c_str());
  const std::string prefix = std::string(fn) + ": ";
  FUZZ_CHECK(s.message.size() > prefix.size() && s.message.compare(0, prefix.size(), prefix) == 0,
             "error message does not start with '%s': '%s'", prefix.c_str(), s.message.c_str());
}

// Independent strict UTF-8 decoder (RFC 3629: no overlongs, surrogates or values above U+10FFFF).
// Returns false on ill-formed input; cps/byte_of receive code points and their byte offsets.
inline bool decode_utf8(std::string_view s, std::vector<char32_t>* cps = nullptr,
                        std::vector<std::size_t>* byte_of = nullptr) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    int len = 0;
    char32_t cp = 0, min = 0;
    if (b0 < 0x80) { len = 1; cp = b0; }
    else if ((b0 & 0xE0) == 0xC0) { len = 2; cp = b0 & 0x1F; min = 0x80; }
    else if ((b0 & 0xF0) == 0xE0) { len = 3; cp = b0 & 0x0F; min = 0x800; }
    else if ((b0 & 0xF8) == 0xF0) { len = 4; cp = b0 & 0x07; min = 0x10000; }
    else return false;
    if (i + static_cast<std::size_t>(len) > s.size()) return false;
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    if (cps) cps->push_back(cp);
    if (byte_of) byte_of->push_back(i);
    i += static_cast<std::size_t>(len);
  }
  if (byte_of) byte_of->push_back(s.size());
  return true;
}
inline bool valid_utf8(std::string_view s) { return decode_utf8(s); }

// A tokenizer's encode result r for text: an error naming "encode" when text is ill-formed UTF-8 (returns false),
// else ok with one token and two offsets per id (returns true).
template <class Result>
bool encoded_as_expected(const Result& r, std::string_view text) {
  if (!decode_utf8(text)) {
    check_error(r.status(), "encode");
    return false;
  }
  FUZZ_CHECK(r.ok(), "encode rejected valid UTF-8: %s", r.status().message.c_str());
  const std::size_t n = r.value().ids.size();
  FUZZ_CHECK(r.value().tokens.size() == n && r.value().offsets.size() == 2 * n, "encode: sizes disagree");
  return true;
}

// UTF-16 length of valid UTF-8 (a code point above U+FFFF counts 2).
inline std::int64_t utf16_length(std::string_view s) {
  std::vector<char32_t> cps;
  decode_utf8(s, &cps);
  std::int64_t n = 0;
  for (char32_t c : cps) n += c > 0xFFFF ? 2 : 1;
  return n;
}

// Unicode 14 White_Space.
inline bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// GPT-2 bytes_to_unicode(), written independently of src/tokenizers/bpe.cpp.
inline char32_t byte_to_unicode(std::uint8_t b) {
  auto printable = [](int x) { return (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255); };
  if (printable(b)) return b;
  char32_t n = 0;
  for (int x = 0; x < b; ++x)
    if (!printable(x)) ++n;
  return 0x100 + n;
}

inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) { out += static_cast<char>(cp); }
  else if (cp < 0x800) { out += static_cast<char>(0xC0 | (cp >> 6)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
  else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18)); out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)); out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Byte-level string of raw bytes ("Ġhello" for " hello").
inline std::string byte_level(std::string_view bytes) {
  std::string out;
  for (char c : bytes) append_utf8(out, byte_to_unicode(static_cast<std::uint8_t>(c)));
  return out;
}

inline std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') { out += '\\'; out += c; }
    else if (static_cast<unsigned char>(c) < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
    else out += c;
  }
  return out + "\"";
}

// The 256 single-byte tokens (ids 0..255) as JSON members, without braces.
inline std::string base_vocab_members() {
  std::string out;
  for (int b = 0; b < 256; ++b) {
    if (b) out += ",";
    out += json_quote(byte_level(std::string(1, static_cast<char>(b)))) + ":" + std::to_string(b);
  }
  return out;
}

// A small valid GPT-2-style tokenizer: the 256 byte tokens plus a few English merges.
struct SmallBpe {
  std::string vocab, merges;
};
inline SmallBpe small_bpe() {
  static const char* const kMerges[][2] = {
      {" ", "t"}, {" ", "a"}, {"h", "e"}, {"i", "n"}, {"r", "e"}, {"o", "n"}, {" t", "he"}, {"e", "r"},
      {" ", "s"}, {"a", "t"}, {" ", "w"}, {" ", "o"}, {"e", "n"}, {" ", "c"}, {"i", "t"}, {"i", "s"},
      {"a", "n"}, {"o", "r"}, {"e", "s"}, {" ", "b"}, {"e", "d"}, {" ", "f"}, {"in", "g"}, {" ", "p"},
      {"o", "u"}, {" a", "n"}, {"a", "r"}, {" ", "d"}, {" w", "or"}, {" wor", "l"}, {" worl", "d"},
      {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"\xC3", "\xA9"}, {"\xF0", "\x9F"}, {"\xF0\x9F", "\x98"}, {"1", "2"},
  };
  SmallBpe out;
  std::string members = base_vocab_members();
  std::string merges = "#version: 0.2\n";
  int next_id = 256;
  std::vector<std::string> seen;
  for (const auto& m : kMerges) {
    const std::string joined = std::string(m[0]) + m[1];
    bool dup = false;
    for (const auto& s : seen) dup = dup || s == joined;
    if (dup) continue;
    seen.push_back(joined);
    members += "," + json_quote(byte_level(joined)) + ":" + std::to_string(next_id++);
    merges += byte_level(m[0]) + " " + byte_level(m[1]) + "\n";
  }
  out.vocab = "{" + members + "}";
  out.merges = merges;
  return out;
}

// Floats for the numeric harnesses. Bounded: one byte -> a multiple of 1/32 in [-4, 4) or (rarely) a special
// value; raw: four bytes of IEEE bits. When the input runs out, a small LCG seeded from the input continues.
struct FloatSource {
  FuzzedDataProvider& fdp;
  bool raw = false;
  std::uint64_t lcg = 0x9E3779B97F4A7C15ull;
  bool any_special = false;  // a NaN or infinity was produced

  float next() {
    if (fdp.remaining_bytes() == 0) {
      lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<float>(static_cast<int>((lcg >> 33) % 257) - 128) / 32.0f;
    }
    if (raw) {
      const auto bits = fdp.ConsumeIntegral<std::uint32_t>();
      float f;
      std::memcpy(&f, &bits, 4);
      if (!std::isfinite(f)) any_special = true;
      return f;
    }
    const auto b = fdp.ConsumeIntegral<std::uint8_t>();
    switch (b) {
      case 0xFF: any_special = true; return NAN;
      case 0xFE: any_special = true; return INFINITY;
      case 0xFD: any_special = true; return -INFINITY;
      default: return static_cast<float>(static_cast<int>(b) - 128) / 32.0f;
    }
  }
  std::vector<float> vec(std::size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = next();
    return v;
  }
};

inline bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// Rows of w ([rows, cols]) are probability rows (entries in [0, 1], sum 1 within tol) or all exactly zero.
inline void check_prob_rows(const std::vector<float>& w, std::size_t rows, std::size_t cols, const char* what) {
  FUZZ_CHECK(w.size() == rows * cols, "%s: size %zu != %zu*%zu", what, w.size(), rows, cols);
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    bool all_zero = true;
    for (std::size_t c = 0; c < cols; ++c) {
      const float x = w[r * cols + c];
      FUZZ_CHECK(x >= 0.0f && x <= 1.0f, "%s[%zu][%zu] = %g outside [0, 1]", what, r, c, static_cast<double>(x));
      sum += x;
      all_zero = all_zero && x == 0.0f;
    }
    FUZZ_CHECK(all_zero || std::fabs(sum - 1.0) <= 1e-4 * static_cast<double>(cols),
               "%s row %zu sums to %.9g (neither 1 nor all zero)", what, r, sum);
  }
}

}  // namespace fuzz
