// Internal: reads a JSON object of {string: integer} (GPT-2's encoder.json) with nlohmann/json's SAX interface,
// without building a DOM (a 50k-entry std::map of json values cost most of the load time in wasm). Never throws:
// parse errors come back with their byte offset, mistyped values with the key and JSON type.
// Layer: tokenizers (depends on core/ and io/'s JSON readers). JSON_NOEXCEPTION: the wasm core has no exception
// catching (TOOLCHAIN.md 11, STYLE 4.5); the SAX path never reaches a JSON_THROW.
#pragma once

#ifndef JSON_NOEXCEPTION
#define JSON_NOEXCEPTION
#endif
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/json_reader.h"

namespace attnscope::tokenizers::detail {

using io::detail::json_error_text;

struct FlatIntObject {
  std::vector<std::pair<std::string, std::int64_t>> entries;  // document order
  bool parsed = false;         // false: not JSON; reason holds "<what> at byte N" (N 0-based)
  std::string reason;
  const char* top_type = "";   // JSON type of the top-level value ("object", "array", ...)
  std::string bad_key;         // first key whose value is not an integer ...
  const char* bad_type = "";   // ... and that value's JSON type ("string", "number", "object", ...)
  bool integer_too_large = false;  // bad_key's value is an integer beyond int64
};

class FlatIntObjectReader {
 public:
  explicit FlatIntObjectReader(FlatIntObject* out) : out_(out) {}

  bool null() { return scalar("null"); }
  bool boolean(bool /*v*/) { return scalar("boolean"); }
  bool number_integer(std::int64_t v) { return integer(v); }
  bool number_unsigned(std::uint64_t v) {
    if (v > static_cast<std::uint64_t>(INT64_MAX)) {
      if (depth_ == 1 && out_->bad_key.empty()) out_->integer_too_large = true;
      return scalar("number");
    }
    return integer(static_cast<std::int64_t>(v));
  }
  bool number_float(double /*v*/, const std::string& /*text*/) { return scalar("number"); }
  bool string(std::string& /*v*/) { return scalar("string"); }
  bool binary(nlohmann::json::binary_t& /*v*/) { return scalar("binary"); }
  bool start_object(std::size_t /*n*/) { return open("object"); }
  bool end_object() { --depth_; return true; }
  bool start_array(std::size_t /*n*/) { return open("array"); }
  bool end_array() { --depth_; return true; }
  bool key(std::string& k) {
    if (depth_ == 1) key_.swap(k);
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const Exception& ex) {
    out_->reason = json_error_text(position, ex.what());
    return false;
  }

 private:
  bool scalar(const char* type) {
    if (depth_ == 0) out_->top_type = type;
    else if (depth_ == 1) mistyped(type);
    return true;
  }
  bool integer(std::int64_t v) {
    if (depth_ == 0) out_->top_type = "number";
    else if (depth_ == 1) out_->entries.emplace_back(std::move(key_), v);
    return true;
  }
  bool open(const char* type) {
    if (depth_ == 0) out_->top_type = type;
    else if (depth_ == 1) mistyped(type);
    ++depth_;
    return true;
  }
  void mistyped(const char* type) {
    if (out_->bad_key.empty() && out_->bad_type[0] == '\0') {
      out_->bad_key = key_;
      out_->bad_type = type;
    }
  }

  FlatIntObject* out_;
  int depth_ = 0;
  std::string key_;
};

// Parses text as a JSON value, collecting the members of a top-level object whose values are integers.
inline FlatIntObject read_flat_int_object(std::string_view text) {
  FlatIntObject out;
  FlatIntObjectReader reader(&out);
  out.parsed = nlohmann::json::sax_parse(text.begin(), text.end(), &reader) && out.reason.empty();
  return out;
}

}  // namespace attnscope::tokenizers::detail
