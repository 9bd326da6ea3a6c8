// fuzz_sentencepiece.cpp: the SentencePiece model reader and encoder (tokenizers::SentencePiece, and HfTokenizer's
// T5 wrapper over it). Byte 0 % 3 picks how the rest becomes a model:
//  0: the rest is a .model / .spm file, encoded texts fixed;
//  1: the rest split at its first 0x00 into a .model file and a text to encode;
//  2: a ModelProto written here from the rest (pieces split at 0x01, each piece's first byte its type and score,
//     model type, byte_fallback and normalizer flags from byte 1, a precompiled charsmap from byte 2's choice: none,
//     the bytes after a 0x02 separator, or a built-in one) and the text after a 0x00.
// Invariants: no crash/UB/leak; a load error names "loadTokenizer" and starts "loadTokenizer: tokenizer.
// sentencepiece"; a loaded model encodes every valid UTF-8 text (and rejects the others naming "encode") with ids
// in [0, size), as many tokens as ids, offsets inside the text; decode of its ids succeeds with valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/sentencepiece.h"

namespace {

using attnscope::tokenizers::HfTokenizer;
using attnscope::tokenizers::SentencePiece;

void varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void field_bytes(std::string& out, int number, const std::string& bytes) {
  varint(out, static_cast<std::uint64_t>(number) << 3 | 2);
  varint(out, bytes.size());
  out += bytes;
}
void field_varint(std::string& out, int number, std::uint64_t v) {
  varint(out, static_cast<std::uint64_t>(number) << 3);
  varint(out, v);
}
void field_float(std::string& out, int number, float f) {
  varint(out, static_cast<std::uint64_t>(number) << 3 | 5);
  char b[4];
  std::memcpy(b, &f, 4);
  out.append(b, 4);
}

// A one-rule charsmap written by hand ("A" -> "a"): a Darts double array (darts.h unit layout) whose root has
// offset 1, so the child for byte c sits at 1 ^ c; the leaf's value unit holds offset 0 into the strings "a\0fi\0".
std::string builtin_charsmap() {
  std::vector<std::uint32_t> units(512, 0);
  auto set = [&](std::size_t pos, std::uint32_t label, std::uint32_t offset, bool leaf) {
    units[pos] = label | (offset << 10) | (leaf ? 1u << 8 : 0u);
  };
  set(0, 0, 1, false);
  // "A" (0x41): node 1 ^ 0x41 = 0x40, leaf, its value unit at 0x40 ^ offset 0x100 = 0x140
  set(0x40, 0x41, 0x100, true);
  units[0x140] = 0;  // value: offset 0 in the strings ("a")
  std::string blob;
  const std::uint32_t size = static_cast<std::uint32_t>(units.size() * 4);
  blob.append(reinterpret_cast<const char*>(&size), 4);
  blob.append(reinterpret_cast<const char*>(units.data()), units.size() * 4);
  blob.append("a\0fi\0", 5);
  return blob;
}

std::string structured_model(const std::string& spec) {
  const std::uint8_t flags = spec.empty() ? 0 : static_cast<std::uint8_t>(spec[0]);
  const std::uint8_t map_choice = spec.size() < 2 ? 0 : static_cast<std::uint8_t>(spec[1]) % 3;
  std::string body = spec.size() > 2 ? spec.substr(2) : std::string();
  std::string charsmap;
  if (const std::size_t sep = body.find('\x02'); sep != std::string::npos) {
    if (map_choice == 1) charsmap = body.substr(sep + 1);
    body.resize(sep);
  }
  if (map_choice == 2) charsmap = builtin_charsmap();
  std::string proto;
  auto piece = [&](const std::string& text, int type, float score) {
    std::string p;
    field_bytes(p, 1, text);
    field_float(p, 2, score);
    field_varint(p, 3, static_cast<std::uint64_t>(type));
    field_bytes(proto, 1, p);
  };
  piece("<unk>", 2, 0);
  piece("<s>", 3, 0);
  piece("</s>", 3, 0);
  const bool bytes = (flags & 4) != 0;
  if (bytes) {
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      piece(name, 6, 0);
    }
  }
  std::size_t at = 0;
  while (at < body.size()) {
    std::size_t end = body.find('\x01', at);
    if (end == std::string::npos) end = body.size();
    if (end - at >= 2) {
      const auto head = static_cast<std::uint8_t>(body[at]);
      const int type = head % 7 == 0 ? 1 : head % 7 == 2 || head % 7 == 3 || head % 7 == 6 ? 1 : head % 7;
      piece(body.substr(at + 1, end - at - 1), type, -static_cast<float>(head) / 8.0f);
    }
    at = end + 1;
  }
  std::string trainer;
  field_varint(trainer, 3, (flags & 1) ? 2 : 1);
  field_varint(trainer, 35, bytes ? 1 : 0);
  field_varint(trainer, 24, (flags & 64) ? 1 : 0);
  field_bytes(proto, 2, trainer);
  std::string norm;
  field_bytes(norm, 1, "fuzz");
  if (!charsmap.empty()) field_bytes(norm, 2, charsmap);
  field_varint(norm, 3, (flags & 8) ? 0 : 1);
  field_varint(norm, 4, (flags & 16) ? 0 : 1);
  field_varint(norm, 5, (flags & 32) ? 0 : 1);
  field_bytes(proto, 3, norm);
  return proto;
}

void check_encode(const SentencePiece& sp, const std::string& text) {
  auto r = sp.encode(text);
  if (!fuzz::encoded_as_expected(r, text)) return;
  const auto& t = r.value();
  const std::size_t n = t.ids.size();
  const std::int64_t len16 = fuzz::utf16_length(text);
  for (std::size_t i = 0; i < n; ++i) {
    FUZZ_CHECK(t.ids[i] >= 0 && static_cast<std::size_t>(t.ids[i]) < sp.size(), "id %d outside [0, %zu)", t.ids[i], sp.size());
    FUZZ_CHECK(!t.tokens[i].empty(), "empty token");
    const std::int64_t s = t.offsets[2 * i], e = t.offsets[2 * i + 1];
    FUZZ_CHECK(0 <= s && s <= e && e <= len16, "offsets [%lld, %lld) outside [0, %lld]", static_cast<long long>(s),
               static_cast<long long>(e), static_cast<long long>(len16));
  }
  auto d = sp.decode(t.ids);
  FUZZ_CHECK(d.ok(), "decode of its own ids failed: %s", d.status().message.c_str());
  FUZZ_CHECK(fuzz::valid_utf8(d.value()), "decode gave invalid UTF-8");
  (void)sp.normalize(text);
}

void run(const std::string& model, const std::vector<std::string>& texts) {
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(model.data()), model.size());
  auto sp = SentencePiece::load(bytes, "loadTokenizer", "tokenizer.sentencepiece");
  if (!sp.ok()) {
    fuzz::check_error(sp.status(), "loadTokenizer");
    FUZZ_CHECK(sp.status().message.rfind("loadTokenizer: tokenizer.sentencepiece", 0) == 0, "message: %s",
               sp.status().message.c_str());
    return;
  }
  for (const std::string& t : texts) check_encode(*sp.value(), t);
  auto t5 = HfTokenizer::from_sentencepiece(bytes, "loadTokenizer", "tokenizer.sentencepiece");
  FUZZ_CHECK(t5.ok(), "the T5 wrapper refused a model SentencePiece loads: %s", t5.status().message.c_str());
  for (const std::string& t : texts) {
    auto r = t5.value()->encode_with_post_processor(t);
    if (!fuzz::valid_utf8(t)) continue;
    FUZZ_CHECK(r.ok(), "T5 encode failed: %s", r.status().message.c_str());
    for (std::int32_t id : r.value().ids) FUZZ_CHECK(!t5.value()->token_text(id).empty(), "T5 id %d unknown", id);
    FUZZ_CHECK(t5.value()->decode(r.value().ids).ok(), "T5 decode failed");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<std::string> fixed = {"", " Hello  world\t", "ＡＢＣ ﬁ 123 中文 😀", "<s> </s> <unk> ▁▁", "\xC3\x28"};
  switch (data[0] % 3) {
    case 0: run(rest, fixed); break;
    case 1: {
      const std::size_t sep = rest.find('\0');
      run(rest.substr(0, sep), {sep == std::string::npos ? std::string() : rest.substr(sep + 1)});
      break;
    }
    default: {
      const std::size_t sep = rest.find('\0');
      const std::string text = sep == std::string::npos ? std::string("a b  c") : rest.substr(sep + 1);
      run(structured_model(rest.substr(0, sep)), {text, fixed[1], fixed[2]});
      break;
    }
  }
  return 0;
}
