// fixtures.h: loads the PyTorch fixtures of tests/fixtures (format: tests/fixtures/README.md).
// Layer: tests/support; Catch2 + nlohmann/json only, independent of src/. The manifest's format and
// version are checked first (llm.c's magic + version); on mismatch the test fails with a HINT
// saying how to regenerate.
#pragma once

#include <catch.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace attnscope::test {

using json = nlohmann::json;

inline constexpr const char* kFixtureFormat = "attnscope-fixture";
inline constexpr int kFixtureVersion = 1;
inline constexpr const char* kFixtureHint =
    "HINT: regenerate the fixtures with `/usr/bin/python3 tests/fixtures/generate.py` (needs python3-torch)";

inline std::string fixtures_dir() { return ATTNSCOPE_FIXTURES_DIR; }

// A file's whole contents (checkpoint fixtures: config.json, tokenizer.json, model.safetensors).
inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  INFO(path);
  REQUIRE(f.good());
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
inline std::vector<std::uint8_t> read_bytes(const std::string& path) {
  const std::string s = read_text(path);
  return std::vector<std::uint8_t>(s.begin(), s.end());
}

inline json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) FAIL("cannot open " << path << "\n" << kFixtureHint);
  json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) FAIL("malformed JSON in " << path << "\n" << kFixtureHint);
  return doc;
}

inline void check_header(const json& doc, const std::string& what) {
  if (doc.value("format", std::string()) != kFixtureFormat || doc.value("version", -1) != kFixtureVersion) {
    FAIL(what << ": expected format \"" << kFixtureFormat << "\" version " << kFixtureVersion << ", found \""
              << doc.value("format", std::string("?")) << "\" version " << doc.value("version", -1) << "\n"
              << kFixtureHint);
  }
}

// The manifest, checked once per process.
inline const json& manifest() {
  static const json doc = [] {
    json d = read_json(fixtures_dir() + "/manifest.json");
    check_header(d, "manifest.json");
    return d;
  }();
  return doc;
}

// The case names listed in the manifest for a JS function, e.g. "multiHeadAttention".
inline std::vector<std::string> fixture_cases(const std::string& function) {
  std::vector<std::string> names;
  for (const json& c : manifest().at("cases")) {
    if (c.at("function") == function) names.push_back(c.at("case").get<std::string>());
  }
  return names;
}

struct Fixture {
  std::string name;  // "<function>__<case>"
  json doc;
  const json& args() const { return doc.at("args"); }
  const json& expected() const { return doc.at("expected"); }
  double atol() const { return doc.at("atol").get<double>(); }
  double rtol() const { return doc.at("rtol").get<double>(); }
};

inline Fixture load_fixture(const std::string& function, const std::string& case_name) {
  Fixture f;
  f.name = function + "__" + case_name;
  f.doc = read_json(fixtures_dir() + "/" + f.name + ".json");
  check_header(f.doc, f.name);
  REQUIRE(f.doc.at("function") == function);
  return f;
}

// A number, or the strings "-Infinity" / "Infinity" (JSON has no infinities).
inline double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    FAIL("unexpected string in a fixture array: " << s);
  }
  return v.get<double>();
}
inline std::vector<float> floats(const json& a) {
  std::vector<float> out;
  out.reserve(a.size());
  for (const json& v : a) out.push_back(static_cast<float>(number(v)));
  return out;
}
inline std::vector<double> doubles(const json& a) {
  std::vector<double> out;
  out.reserve(a.size());
  for (const json& v : a) out.push_back(number(v));
  return out;
}
inline std::vector<std::uint8_t> mask_bytes(const json& a) {
  std::vector<std::uint8_t> out;
  out.reserve(a.size());
  for (const json& v : a) out.push_back(static_cast<std::uint8_t>(v.get<int>()));
  return out;
}

// Owns the float arrays of an args object (nested "params", "params.self" flattened with dots) so
// tests can hand out spans; a missing array gives an empty span ("not given").
class ArgArrays {
 public:
  explicit ArgArrays(const json& args) { collect(args, ""); }
  std::span<const float> f(const std::string& name) const {
    auto it = floats_.find(name);
    return it == floats_.end() ? std::span<const float>() : std::span<const float>(it->second);
  }
  std::span<const std::uint8_t> mask(const std::string& name) const {
    auto it = masks_.find(name);
    return it == masks_.end() ? std::span<const std::uint8_t>() : std::span<const std::uint8_t>(it->second);
  }

 private:
  void collect(const json& obj, const std::string& prefix) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const std::string key = prefix + it.key();
      if (it->is_object()) {
        collect(*it, key + ".");
      } else if (it->is_array()) {
        if (it.key() == "mask" || it.key() == "memoryMask") {
          masks_[key] = mask_bytes(*it);
        } else {
          floats_[key] = floats(*it);
        }
      }
    }
  }
  std::map<std::string, std::vector<float>> floats_;
  std::map<std::string, std::vector<std::uint8_t>> masks_;
};

}  // namespace attnscope::test
