// Attention-file reader tests (src/io/attention_file.h): hand-built files (F32, F16, BF16, [1,heads,n,n], cross-
// attention, head counts differing between layers) read whole and head by head, and one test per bad-file rule
// asserting the message names the tensor or field. Byte values are worked out by hand from IEEE 754:
// 0.5 = F32 0x3F000000 = F16 0x3800 = BF16 0x3F00; 0.25 = 0x3E800000 / 0x3400 / 0x3E80; 1.0 = F16 0x3C00.
#include <catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "io/attention_file.h"

namespace {

using attnscope::io::read_attention_file;
using Bytes = std::vector<std::uint8_t>;

struct Tensor {
  std::string name, dtype, shape;  // shape as JSON, e.g. "[2,3,3]"
  std::vector<float> values;       // stored as dtype (F16/BF16 only for values exactly representable)
};

void put_value(Bytes* out, const std::string& dtype, float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if (dtype == "F32") {
    for (int k = 0; k < 4; ++k) out->push_back(static_cast<std::uint8_t>(bits >> (8 * k)));
    return;
  }
  std::uint16_t h;
  if (dtype == "BF16") {
    h = static_cast<std::uint16_t>(bits >> 16);  // the test values are exact in BF16
  } else if (std::isnan(v)) {
    h = 0x7E00;
  } else if (std::isinf(v)) {
    h = v > 0 ? 0x7C00 : 0xFC00;
  } else if (v == 0.0f) {
    h = 0;
  } else {  // normal F16 values exactly representable: rebias 127 -> 15, keep 10 mantissa bits
    const std::uint32_t sign = (bits >> 16) & 0x8000u;
    const std::uint32_t exponent = ((bits >> 23) & 0xFFu) - 112u;
    h = static_cast<std::uint16_t>(sign | exponent << 10 | ((bits >> 13) & 0x3FFu));
  }
  out->push_back(static_cast<std::uint8_t>(h));
  out->push_back(static_cast<std::uint8_t>(h >> 8));
}

// A safetensors file: tensors back to back in the given order, `metadata` a JSON object text (or "" for none).
Bytes make_file(const std::vector<Tensor>& tensors, const std::string& metadata, std::uint64_t length_override = 0) {
  std::string header = "{";
  if (!metadata.empty()) header += "\"__metadata__\":" + metadata;
  Bytes data;
  for (const Tensor& t : tensors) {
    const std::size_t begin = data.size();
    for (float v : t.values) put_value(&data, t.dtype, v);
    if (header.size() > 1) header += ",";
    header += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":" + t.shape + ",\"data_offsets\":[" +
              std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
  }
  header += "}";
  const std::uint64_t n = length_override ? length_override : header.size();
  Bytes out;
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<std::uint8_t>(n >> (8 * k)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

const std::string kTokens2 = R"({"tokens":"[\"a\",\"b\"]"})";

// [heads,2,2] of valid rows: head h is [[1,0],[0.5,0.5]] scaled to sum 1 (h = 0) or [[0.25,0.75]...] patterns.
Tensor self2(const std::string& name, const std::string& dtype, int heads, bool batched = false) {
  Tensor t{name, dtype, batched ? "[1," + std::to_string(heads) + ",2,2]" : "[" + std::to_string(heads) + ",2,2]", {}};
  for (int h = 0; h < heads; ++h) {
    const std::vector<float> head = h % 2 == 0 ? std::vector<float>{1.0f, 0.0f, 0.5f, 0.5f}
                                               : std::vector<float>{0.25f, 0.75f, 0.5f, 0.25f};
    t.values.insert(t.values.end(), head.begin(), head.end());
  }
  return t;
}

std::string error_of(const Bytes& file) {
  auto r = read_attention_file(file, "readAttentionFile");
  return r.ok() ? std::string("(no error)") : r.status().message;
}

}  // namespace

TEST_CASE("attention file: F32 layers with different head counts, [1,heads,n,n], cross-attention", "[attention_file]") {
  Tensor cross{"cross_attentions.1", "F32", "[1,1,2,3]", {0.5f, 0.25f, 0.25f, 0.0f, 1.0f, 0.0f}};
  const Bytes file = make_file({self2("attentions.0", "F32", 2), self2("attentions.1", "F32", 1, true), cross},
                               R"({"tokens":"[\"a\",\"b\"]","source_tokens":"[\"x\",\"y\",\"z\"]","model":"toy"})");
  auto r = read_attention_file(file, "readAttentionFile");
  REQUIRE(r.ok());
  const auto& f = r.value();
  CHECK(f.index.tokens == std::vector<std::string>{"a", "b"});
  CHECK(f.index.source_tokens == std::vector<std::string>{"x", "y", "z"});
  REQUIRE(f.index.model.has_value());
  CHECK(*f.index.model == "toy");
  REQUIRE(f.index.layers.size() == 2);
  CHECK(f.index.layers[0].self.heads == 2);
  CHECK(f.index.layers[1].self.heads == 1);
  CHECK(f.index.max_heads() == 2);
  CHECK_FALSE(f.index.layers[0].cross.has_value());
  REQUIRE(f.index.layers[1].cross.has_value());
  CHECK(f.self[0] == std::vector<float>{1, 0, 0.5f, 0.5f, 0.25f, 0.75f, 0.5f, 0.25f});
  CHECK(f.self[1] == std::vector<float>{1, 0, 0.5f, 0.5f});
  CHECK(f.cross[0].empty());
  CHECK(f.cross[1] == std::vector<float>{0.5f, 0.25f, 0.25f, 0.0f, 1.0f, 0.0f});
}

TEST_CASE("attention file: F16 and BF16 widen exactly", "[attention_file]") {
  for (const char* dtype : {"F16", "BF16"}) {
    const Bytes file = make_file({self2("attentions.0", dtype, 2)}, kTokens2);
    auto r = read_attention_file(file, "readAttentionFile");
    REQUIRE(r.ok());
    CHECK(r.value().self[0] == std::vector<float>{1, 0, 0.5f, 0.5f, 0.25f, 0.75f, 0.5f, 0.25f});
    CHECK_FALSE(r.value().index.model.has_value());
  }
}

TEST_CASE("attention file: lazy reading, the header alone then one head's bytes", "[attention_file]") {
  const Bytes file = make_file({self2("attentions.0", "F32", 2), self2("attentions.1", "BF16", 2)}, kTokens2);
  // only the header is handed over: the index says where each head is
  const std::span<const std::uint8_t> all(file);
  auto len = attnscope::io::attention_file_header_length(all.first(8), file.size(), "f");
  REQUIRE(len.ok());
  auto index = attnscope::io::parse_attention_file_header(all.first(8 + len.value()), file.size(), "f");
  REQUIRE(index.ok());
  const auto& t = index.value().layers[1].self;
  const auto range = attnscope::io::head_range(t, 1);
  CHECK(range.length == 8);  // 2 x 2 BF16
  CHECK(range.offset == 8 + len.value() + 32 + 8);
  auto w = attnscope::io::read_head(t, 1, all.subspan(range.offset, range.length), "f");
  REQUIRE(w.ok());
  CHECK(w.value() == std::vector<float>{0.25f, 0.75f, 0.5f, 0.25f});
  // too few bytes for a head: a truncated read
  auto short_read = attnscope::io::read_head(t, 1, all.subspan(range.offset, 6), "f");
  REQUIRE_FALSE(short_read.ok());
  CHECK(short_read.status().message ==
        "f: attention file tensor \"attentions.1\" head 1 needs 8 bytes, got 6 (the file is truncated)");
  auto bad_head = attnscope::io::read_head(t, 2, {}, "f");
  REQUIRE_FALSE(bad_head.ok());
  CHECK(bad_head.status().message == "f: head (2) must be from 0 to 1 (\"attentions.1\")");
}

TEST_CASE("attention file: malformed and truncated files", "[attention_file]") {
  Bytes junk = {3, 0, 0, 0, 0, 0, 0, 0, '{', 'x', '}'};
  CHECK(error_of(junk).find("readAttentionFile: safetensors header is not valid JSON") == 0);
  CHECK(error_of(Bytes{1, 2, 3}) ==
        "readAttentionFile: safetensors buffer (3 bytes) is shorter than the 8-byte header length");
  Bytes file = make_file({self2("attentions.0", "F32", 2)}, kTokens2);
  file.resize(file.size() - 4);  // the last weight cut short
  CHECK(error_of(file) == "readAttentionFile: safetensors tensor \"attentions.0\" data_offsets [0, 32] exceed the "
                          "data section (28 bytes)");
  Bytes cut = make_file({self2("attentions.0", "F32", 2)}, kTokens2);
  cut.resize(20);  // inside the header
  CHECK(error_of(cut).find("header length (") != std::string::npos);
}

TEST_CASE("attention file: an absurd header length is refused before anything is read", "[attention_file]") {
  const std::uint64_t ten_gb = 10'000'000'000ULL;
  Bytes prefix;
  for (int k = 0; k < 8; ++k) prefix.push_back(static_cast<std::uint8_t>(ten_gb >> (8 * k)));
  // a 12 GB file whose first 8 bytes claim a 10 GB header: refused from the 8 bytes alone
  auto r = attnscope::io::parse_attention_file_header(prefix, 12'000'000'000ULL, "readAttentionFile");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message == "readAttentionFile: attention file header length (10000000000 bytes) exceeds the "
                              "100000000-byte limit (not an attention file, or corrupt)");
  CHECK(error_of(prefix) == r.status().message);
}

TEST_CASE("attention file: shapes must agree with the token count", "[attention_file]") {
  CHECK(error_of(make_file({self2("attentions.0", "F32", 2)}, R"({"tokens":"[\"a\",\"b\",\"c\"]"})")) ==
        "readAttentionFile: attention file tensor \"attentions.0\" shape [2,2,2] disagrees with the token count: "
        "expected [heads,3,3] or [1,heads,3,3] (3 tokens, 3 keys)");
  Tensor flat{"attentions.0", "F32", "[4]", {0.25f, 0.25f, 0.25f, 0.25f}};
  CHECK(error_of(make_file({flat}, kTokens2)) ==
        "readAttentionFile: attention file tensor \"attentions.0\" shape [4] must be [heads,2,2] or [1,heads,2,2] "
        "(2 tokens, 2 keys)");
  Tensor batch2{"attentions.0", "F32", "[2,1,2,2]", self2("x", "F32", 2).values};
  CHECK(error_of(make_file({batch2}, kTokens2)).find("shape [2,1,2,2] must be") != std::string::npos);
  Tensor cross{"cross_attentions.0", "F32", "[1,2,2]", {0.5f, 0.5f, 1, 0}};
  CHECK(error_of(make_file({self2("attentions.0", "F32", 1), cross},
                           R"({"tokens":"[\"a\",\"b\"]","source_tokens":"[\"x\",\"y\",\"z\"]"})")) ==
        "readAttentionFile: attention file tensor \"cross_attentions.0\" shape [1,2,2] disagrees with the token "
        "count: expected [heads,2,3] or [1,heads,2,3] (2 tokens, 3 source tokens)");
  Tensor i32{"attentions.0", "I32", "[1,2,2]", {}};
  i32.values = {0, 0, 0, 0};
  i32.dtype = "F32";
  Bytes b = make_file({i32}, kTokens2);
  const std::string text(b.begin(), b.end());
  const auto at = text.find("\"F32\"");
  std::memcpy(b.data() + at + 1, "I32", 3);
  CHECK(error_of(b) ==
        "readAttentionFile: attention file tensor \"attentions.0\" has dtype \"I32\" (supported: F32, F16, BF16)");
}

TEST_CASE("attention file: token metadata", "[attention_file]") {
  const Tensor t = self2("attentions.0", "F32", 1);
  CHECK(error_of(make_file({t}, "")) ==
        "readAttentionFile: attention file __metadata__.tokens is required (a JSON array of the n query tokens)");
  CHECK(error_of(make_file({t}, R"({"model":"m"})")) ==
        "readAttentionFile: attention file __metadata__.tokens is required (a JSON array of the n query tokens)");
  CHECK(error_of(make_file({t}, R"({"tokens":"a b"})")).find("__metadata__.tokens is not valid JSON (") !=
        std::string::npos);
  CHECK(error_of(make_file({t}, R"({"tokens":"{}"})")) ==
        "readAttentionFile: attention file __metadata__.tokens must be a JSON array of strings, got object");
  CHECK(error_of(make_file({t}, R"({"tokens":"[\"a\",2]"})")) ==
        "readAttentionFile: attention file __metadata__.tokens[1] must be a string, got number");
  CHECK(error_of(make_file({t}, R"({"tokens":2})")) ==
        "readAttentionFile: safetensors __metadata__[\"tokens\"] must be a string, got number");
  Tensor cross{"cross_attentions.0", "F32", "[1,2,2]", {0.5f, 0.5f, 1, 0}};
  CHECK(error_of(make_file({t, cross}, kTokens2)) ==
        "readAttentionFile: attention file __metadata__.source_tokens is required with cross_attentions (a JSON "
        "array of the m source tokens)");
}

TEST_CASE("attention file: tensor names and layer numbering", "[attention_file]") {
  CHECK(error_of(make_file({self2("attentions.0", "F32", 1), self2("attn.1", "F32", 1)}, kTokens2)) ==
        "readAttentionFile: attention file tensor \"attn.1\" is not attentions.<i> or cross_attentions.<i> (i = 0, "
        "1, ... without leading zeros)");
  CHECK(error_of(make_file({self2("attentions.01", "F32", 1)}, kTokens2)).find("tensor \"attentions.01\" is not") !=
        std::string::npos);
  CHECK(error_of(make_file({self2("attentions.0", "F32", 1), self2("attentions.2", "F32", 1)}, kTokens2)) ==
        "readAttentionFile: attention file has attentions.2 but no attentions.1 (layers are numbered 0 to L-1)");
  CHECK(error_of(make_file({}, kTokens2)) ==
        "readAttentionFile: attention file holds no attentions.<i> tensor (attentions.0 is required)");
  Tensor cross{"cross_attentions.1", "F32", "[1,2,2]", {0.5f, 0.5f, 1, 0}};
  CHECK(error_of(make_file({self2("attentions.0", "F32", 1), cross},
                           R"({"tokens":"[\"a\",\"b\"]","source_tokens":"[\"x\",\"y\"]"})")) ==
        "readAttentionFile: attention file tensor \"cross_attentions.1\" has no attentions.1 (the file has 1 layers)");
}

TEST_CASE("attention file: weights must be probability rows", "[attention_file]") {
  auto with = [](const std::string& dtype, std::vector<float> values) {
    return error_of(make_file({self2("attentions.0", "F32", 1), Tensor{"attentions.1", dtype, "[1,2,2]", values}},
                              kTokens2));
  };
  CHECK(with("F32", {1, 0, -0.25f, 0.5f}) ==
        "readAttentionFile: attention file tensor \"attentions.1\" head 0 [row 1, column 0] is -0.25: attention "
        "weights must be finite and >= 0");
  CHECK(with("F32", {1, 0, std::numeric_limits<float>::quiet_NaN(), 0}).find("[row 1, column 0] is nan") !=
        std::string::npos);
  CHECK(with("F16", {std::numeric_limits<float>::infinity(), 0, 0, 0})
            .find("tensor \"attentions.1\" head 0 [row 0, column 0] is inf") != std::string::npos);
  // F32: 1 + 1e-3 allowed, 1.00390625 (0.5 + 0.50390625, exact in F32) not
  CHECK(with("F32", {0.5f, 0.5009765625f, 0, 0}) == "(no error)");
  CHECK(with("F32", {0.5f, 0.50390625f, 0.5f, 0.5f}) ==
        "readAttentionFile: attention file tensor \"attentions.1\" head 0 row 0 sums to 1.003906, more than 1 + 1e-3 "
        "allowed for F32: not a probability row");
  // F16 / BF16: 1 + 1e-2; 1.0078125 passes, 1.015625 does not
  CHECK(with("BF16", {0.5f, 0.5078125f, 0, 0}) == "(no error)");
  CHECK(with("F16", {0.5f, 0.5078125f, 0, 0}) == "(no error)");
  CHECK(with("BF16", {0.5f, 0.515625f, 0, 0}) ==
        "readAttentionFile: attention file tensor \"attentions.1\" head 0 row 0 sums to 1.015625, more than 1 + 1e-2 "
        "allowed for BF16: not a probability row");
  // a row summing to less than 1 (a masked or padded query) is a probability row as far as the file can tell
  CHECK(with("F32", {0, 0, 0.25f, 0}) == "(no error)");
}
