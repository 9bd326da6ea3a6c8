// safetensors tests: a hand-built file (F32, F16 with subnormals/inf/NaN, BF16, a scalar, an empty tensor),
// write -> parse round trips, and one test per malformed-file rule asserting the exact message; and the message
// style of the JSON member reader. Layer: tests; uses only src/io/safetensors.h and src/io/json_fields.h. Byte values
// below are worked out by hand from IEEE 754.
#include <catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "io/json_fields.h"
#include "io/safetensors.h"

namespace {

using attnscope::io::NamedTensor;
using attnscope::io::parse_safetensors;
using attnscope::io::write_safetensors;
using Bytes = std::vector<std::uint8_t>;

// 8-byte little-endian length, the header text, then the data bytes.
Bytes make_file(const std::string& header, const Bytes& data, std::uint64_t length_override = UINT64_MAX) {
  const std::uint64_t n = length_override == UINT64_MAX ? header.size() : length_override;
  Bytes out;
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<std::uint8_t>(n >> (8 * k)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string error_of(const Bytes& file) {
  auto r = parse_safetensors(file, "createModel");
  return r.ok() ? std::string("(no error)") : r.status().message;
}

// A header with one F32 tensor "a" of `shape` and `offsets` (JSON fragments), over `data_bytes` zero bytes.
std::string one(const std::string& shape, const std::string& offsets) {
  return "{\"a\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}}";
}

}  // namespace

TEST_CASE("parse_safetensors: hand-built file with F32, F16, BF16, scalar and empty tensors", "[io][safetensors]") {
  const std::string header =
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"h\":{\"dtype\":\"F16\",\"shape\":[3,3],\"data_offsets\":[8,26]},"
      "\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[26,32]},"
      "\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[32,36]},"
      "\"z\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[36,36]}}  ";
  const Bytes data = {
      // F32 1.5 = 0x3FC00000, -0.25 = 0xBE800000 (little-endian)
      0x00, 0x00, 0xC0, 0x3F, 0x00, 0x00, 0x80, 0xBE,
      // F16: 1.0 = 0x3C00, -2.0 = 0xC000, max 65504 = 0x7BFF, smallest subnormal 2^-24 = 0x0001,
      // largest subnormal 1023 * 2^-24 = 0x03FF, +inf = 0x7C00, -inf = 0xFC00, -0.0 = 0x8000, NaN = 0x7E00
      0x00, 0x3C, 0x00, 0xC0, 0xFF, 0x7B, 0x01, 0x00, 0xFF, 0x03, 0x00, 0x7C, 0x00, 0xFC, 0x00, 0x80, 0x00, 0x7E,
      // BF16 (top half of an f32): 1.0 = 0x3F80, -3.140625 = 0xC049, +inf = 0x7F80
      0x80, 0x3F, 0x49, 0xC0, 0x80, 0x7F,
      // F32 scalar 7.0 = 0x40E00000
      0x00, 0x00, 0xE0, 0x40};
  auto r = parse_safetensors(make_file(header, data), "createModel");
  REQUIRE(r.status().message == "");
  const std::vector<NamedTensor>& t = r.value();
  REQUIRE(t.size() == 5);  // in data order, __metadata__ excluded
  CHECK(t[0].name == "w");
  CHECK(t[0].dtype == "F32");
  CHECK(t[0].shape == std::vector<std::int64_t>{2});
  CHECK(t[0].data == std::vector<float>{1.5f, -0.25f});

  CHECK(t[1].name == "h");
  CHECK(t[1].dtype == "F16");
  CHECK(t[1].shape == std::vector<std::int64_t>{3, 3});
  REQUIRE(t[1].data.size() == 9);
  CHECK(t[1].data[0] == 1.0f);
  CHECK(t[1].data[1] == -2.0f);
  CHECK(t[1].data[2] == 65504.0f);
  CHECK(t[1].data[3] == 5.9604644775390625e-08f);  // 2^-24
  CHECK(t[1].data[4] == 6.0975551605224609375e-05f);  // 1023 * 2^-24
  CHECK(t[1].data[5] == std::numeric_limits<float>::infinity());
  CHECK(t[1].data[6] == -std::numeric_limits<float>::infinity());
  CHECK(t[1].data[7] == 0.0f);
  CHECK(std::signbit(t[1].data[7]));
  CHECK(std::isnan(t[1].data[8]));

  CHECK(t[2].name == "b");
  CHECK(t[2].dtype == "BF16");
  CHECK(t[2].data == std::vector<float>{1.0f, -3.140625f, std::numeric_limits<float>::infinity()});

  CHECK(t[3].name == "s");
  CHECK(t[3].shape.empty());
  CHECK(t[3].data == std::vector<float>{7.0f});

  CHECK(t[4].name == "z");
  CHECK(t[4].shape == std::vector<std::int64_t>{0, 3});
  CHECK(t[4].data.empty());
}

TEST_CASE("write_safetensors: exact bytes of a one-tensor file", "[io][safetensors]") {
  // Header {"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}} is 54 bytes, padded with 2 spaces to 56 = 0x38.
  const Bytes out = write_safetensors({NamedTensor{"x", "F32", {1}, {1.0f}}});
  const std::string header = "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}  ";
  // 1.0f = 0x3F800000, little-endian.
  const std::string all = std::string("\x38\0\0\0\0\0\0\0", 8) + header + std::string("\0\0\x80\x3F", 4);
  CHECK(out == Bytes(all.begin(), all.end()));
}

TEST_CASE("write_safetensors: round trip through parse_safetensors", "[io][safetensors]") {
  const std::vector<NamedTensor> in = {
      {"layers.0.wq", "F32", {2, 3}, {1.0f, -2.5f, 3.25f, 0.0f, -0.0f, 1e-30f}},
      {"name with \"quotes\" and \\ and \xc3\xa9", "F32", {4}, {std::numeric_limits<float>::infinity(), 1e30f, -7.0f, 0.1f}},
      {"empty", "F32", {0}, {}},
      {"scalar", "F32", {}, {42.0f}},
  };
  const Bytes file = write_safetensors(in);
  const std::uint64_t header_len = file[0] | static_cast<std::uint64_t>(file[1]) << 8;
  CHECK(header_len % 8 == 0);
  auto r = parse_safetensors(file, "createModel");
  REQUIRE(r.status().message == "");
  REQUIRE(r.value().size() == in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {  // written in order, so data order is input order
    CHECK(r.value()[i].name == in[i].name);
    CHECK(r.value()[i].dtype == "F32");
    CHECK(r.value()[i].shape == in[i].shape);
    // Bit-exact (memcmp also tells -0.0 from 0.0); an empty tensor's data() may be null, so skip it.
    CHECK((in[i].data.empty() ||
           std::memcmp(r.value()[i].data.data(), in[i].data.data(), 4 * in[i].data.size()) == 0));
  }
  CHECK(parse_safetensors(write_safetensors({}), "createModel").value().empty());  // "{}" padded: no tensors
}

// ---- one test per format rule, fn name "createModel"

TEST_CASE("parse_safetensors: buffer shorter than 8 bytes", "[io][safetensors]") {
  CHECK(error_of(Bytes{1, 2, 3, 4, 5}) ==
        "createModel: safetensors buffer (5 bytes) is shorter than the 8-byte header length");
  CHECK(error_of(Bytes{}) == "createModel: safetensors buffer (0 bytes) is shorter than the 8-byte header length");
}

TEST_CASE("parse_safetensors: header length beyond the buffer", "[io][safetensors]") {
  CHECK(error_of(make_file("{}", {}, 100)) ==
        "createModel: safetensors header length (100) exceeds the 2 bytes after the 8-byte prefix");
  CHECK(error_of(make_file("{}", {}, 0x8000000000000000ull)) ==
        "createModel: safetensors header length (9223372036854775808) exceeds the 2 bytes after the 8-byte prefix");
}

TEST_CASE("parse_safetensors: header not JSON", "[io][safetensors]") {
  CHECK(error_of(make_file("{\"a\":", {})) ==
        "createModel: safetensors header is not valid JSON (syntax error while parsing value - unexpected end of "
        "input; expected '[', '{', or a literal at byte 5)");
  CHECK(error_of(make_file("", {})) ==
        "createModel: safetensors header is not valid JSON (syntax error while parsing value - unexpected end of "
        "input; expected '[', '{', or a literal at byte 0)");
}

TEST_CASE("parse_safetensors: header not an object", "[io][safetensors]") {
  CHECK(error_of(make_file("[1,2]", {})) == "createModel: safetensors header must be a JSON object, got array");
}

TEST_CASE("parse_safetensors: duplicate tensor names", "[io][safetensors]") {
  const std::string t = "{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
  CHECK(error_of(make_file("{\"a\":" + t + ",\"a\":" + t + "}", Bytes(4))) ==
        "createModel: safetensors header names \"a\" more than once");
}

TEST_CASE("parse_safetensors: tensor entry not an object, fields missing or mistyped", "[io][safetensors]") {
  CHECK(error_of(make_file("{\"a\":3}", {})) == "createModel: safetensors tensor \"a\" must be an object, got number");
  CHECK(error_of(make_file("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", Bytes(4))) ==
        "createModel: safetensors tensor \"a\" is missing \"dtype\"");
  CHECK(error_of(make_file("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", Bytes(4))) ==
        "createModel: safetensors tensor \"a\" is missing \"shape\"");
  CHECK(error_of(make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", Bytes(4))) ==
        "createModel: safetensors tensor \"a\" is missing \"data_offsets\"");
  CHECK(error_of(make_file("{\"a\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", Bytes(4))) ==
        "createModel: safetensors tensor \"a\" dtype must be a string, got number");
  CHECK(error_of(make_file(one("[2,-1]", "[0,4]"), Bytes(4))) ==
        "createModel: safetensors tensor \"a\" shape must be an array of non-negative integers, got [2,-1]");
  CHECK(error_of(make_file(one("[1.5]", "[0,4]"), Bytes(4))) ==
        "createModel: safetensors tensor \"a\" shape must be an array of non-negative integers, got [1.5]");
  CHECK(error_of(make_file(one("\"2\"", "[0,4]"), Bytes(4))) ==
        "createModel: safetensors tensor \"a\" shape must be an array of non-negative integers, got \"2\"");
  CHECK(error_of(make_file(one("[1]", "[0]"), Bytes(4))) ==
        "createModel: safetensors tensor \"a\" data_offsets must be an array of two non-negative integers, got [0]");
  CHECK(error_of(make_file(one("[1]", "[0,\"4\"]"), Bytes(4))) ==
        "createModel: safetensors tensor \"a\" data_offsets must be an array of two non-negative integers, got "
        "[0,\"4\"]");
  CHECK(error_of(make_file(one("[1]", "[-4,0]"), Bytes(4))) ==
        "createModel: safetensors tensor \"a\" data_offsets must be an array of two non-negative integers, got "
        "[-4,0]");
}

TEST_CASE("parse_safetensors: unsupported dtype", "[io][safetensors]") {
  CHECK(error_of(make_file("{\"a\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", Bytes(8))) ==
        "createModel: safetensors tensor \"a\" has unsupported dtype \"I64\" (supported: F32, F16, BF16)");
}

TEST_CASE("parse_safetensors: shape and byte size mismatch", "[io][safetensors]") {
  CHECK(error_of(make_file(one("[3]", "[0,8]"), Bytes(8))) ==
        "createModel: safetensors tensor \"a\" shape [3] needs 12 bytes (3 x F32) but data_offsets [0, 8] hold 8");
  CHECK(error_of(make_file(one("[4611686018427387904,4611686018427387904]", "[0,8]"), Bytes(8))) ==
        "createModel: safetensors tensor \"a\" shape [4611686018427387904,4611686018427387904] needs more bytes than "
        "fit in 64 bits but data_offsets [0, 8] hold 8");
}

TEST_CASE("parse_safetensors: offsets out of range or reversed", "[io][safetensors]") {
  CHECK(error_of(make_file(one("[25]", "[0,100]"), Bytes(8))) ==
        "createModel: safetensors tensor \"a\" data_offsets [0, 100] exceed the data section (8 bytes)");
  CHECK(error_of(make_file(one("[1]", "[8,4]"), Bytes(8))) ==
        "createModel: safetensors tensor \"a\" data_offsets [8, 4] are reversed (begin > end)");
}

TEST_CASE("parse_safetensors: overlapping tensors", "[io][safetensors]") {
  const std::string header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                             "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
  CHECK(error_of(make_file(header, Bytes(12))) ==
        "createModel: safetensors tensors \"a\" [0, 8] and \"b\" [4, 12] overlap");
}

TEST_CASE("parse_safetensors: tensors not covering the data section contiguously", "[io][safetensors]") {
  const std::string gap = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                          "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}";
  CHECK(error_of(make_file(gap, Bytes(12))) ==
        "createModel: safetensors data bytes [4, 8) belong to no tensor (tensors must cover the data section "
        "contiguously)");
  CHECK(error_of(make_file(one("[1]", "[4,8]"), Bytes(8))) ==
        "createModel: safetensors data bytes [0, 4) belong to no tensor (tensors must cover the data section "
        "contiguously)");
  CHECK(error_of(make_file(one("[1]", "[0,4]"), Bytes(8))) ==
        "createModel: safetensors data bytes [4, 8) belong to no tensor (tensors must cover the data section "
        "contiguously)");
}

TEST_CASE("parse_safetensors: __metadata__ must map strings to strings", "[io][safetensors]") {
  CHECK(error_of(make_file("{\"__metadata__\":[1]}", {})) ==
        "createModel: safetensors __metadata__ must be an object, got array");
  CHECK(error_of(make_file("{\"__metadata__\":{\"k\":1}}", {})) ==
        "createModel: safetensors __metadata__[\"k\"] must be a string, got number");
}

TEST_CASE("parse_safetensors: the fn argument names the caller; parsing works after errors", "[io][safetensors]") {
  auto r = parse_safetensors(Bytes{1}, "loadWeights");
  CHECK(r.status().message == "loadWeights: safetensors buffer (1 bytes) is shorter than the 8-byte header length");
  CHECK(r.status().argument == "safetensors");
  auto ok = parse_safetensors(write_safetensors({NamedTensor{"x", "F32", {1}, {2.0f}}}), "loadWeights");
  REQUIRE(ok.ok());
  CHECK(ok.value()[0].data == std::vector<float>{2.0f});
}

// io::JsonFields is the one reader of typed JSON members: config.json, tokenizer.json and a bundle's config.json.
TEST_CASE("JsonFields: one message style for wrong types, ranges, missing and unsupported members", "[io][json]") {
  using attnscope::io::JsonFields;
  const auto j = nlohmann::json::parse(R"({"n": 0, "big": 70000, "s": 3, "t": "3", "b": "yes", "e": -1, "x": null, "ok": 7})");
  const JsonFields f("loadPretrained", "config", "config.");
  CHECK(f.integer(j, "t", "t", 1, 10, {}).status().message ==
        "loadPretrained: config.t must be an integer, got string");
  CHECK(f.integer(j, "n", "n", 1, 10, {}).status().message == "loadPretrained: config.n (0) must be from 1 to 10");
  CHECK(f.integer(j, "big", "big", 1, 10, {}).status().kind == attnscope::core::ErrorKind::kRange);
  CHECK(f.integer(j, "missing", "missing", 1, 10, {}).status().message == "loadPretrained: config.missing is required");
  CHECK(f.integer(j, "x", "x", 1, 10, 4).value() == 4);  // null takes the fallback
  CHECK(f.integer(j, "ok", "ok", 1, 10, {}).value() == 7);
  CHECK(f.boolean(j, "b", "b", false).status().message == "loadPretrained: config.b must be a boolean, got string");
  CHECK(f.boolean(j, "b", "b", false).status().kind == attnscope::core::ErrorKind::kType);
  CHECK(f.string(j, "s", "s", std::string()).status().message ==
        "loadPretrained: config.s must be a string, got number");
  CHECK(f.number(j, "e", "e", true, 1.0).status().message == "loadPretrained: config.e (-1) must be a positive number");
  CHECK(f.unsupported("act", "'swish'", "gelu").message ==
        "loadPretrained: config.act 'swish' is not supported (gelu)");
  const JsonFields bundle("loadBundled", "config", "config: ");
  CHECK(bundle.integer(j, "n", "n", 1, JsonFields::kNoLimit, {}).status().message ==
        "loadBundled: config: n (0) must be a positive integer");
}
