// Internal: non-throwing JSON parsing that reports the failing byte offset, on top of nlohmann/json's SAX DOM
// builder, also reporting a repeated top-level key (safetensors names must be unique). Layer: io (depends on core/
// only; src/tokenizers/json_reader.h is the tokenizers' own DOM-free reader, as the layers may not share code).
// JSON_NOEXCEPTION: the wasm core is built with -fno-exceptions (TOOLCHAIN.md 11, STYLE 4.5); nothing here may
// reach a JSON_THROW, so callers must check a value's type before every get<>().
#pragma once

#ifndef JSON_NOEXCEPTION
#define JSON_NOEXCEPTION
#endif
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <set>

namespace attnscope::io::detail {

// Builds the DOM like json::parse, but records the parse error's byte offset and reason instead of throwing.
class JsonReader : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
  explicit JsonReader(nlohmann::json& result) : Base(result, /*allow_exceptions=*/false) {}

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const Exception& ex) {
    // position counts the bytes read, the offending one included: report its 0-based offset.
    error_byte = position > 0 ? position - 1 : 0;
    // ex.what() is "[json.exception.parse_error.101] parse error at line 1, column 5: <reason>"; keep <reason>,
    // minus any "; last read: '...'" echo of the input (it may hold invalid UTF-8).
    const std::string what = ex.what();
    const std::size_t colon = what.find(": ");
    reason = colon == std::string::npos ? what : what.substr(colon + 2);
    const std::size_t echo = reason.find("; last read:");
    if (echo != std::string::npos) reason.erase(echo);
    return false;
  }

  // Keys of the top-level object are also recorded, so a repeated one (which the DOM would silently collapse)
  // can be reported.
  bool start_object(std::size_t len) {
    ++depth_;
    return Base::start_object(len);
  }
  bool end_object() {
    --depth_;
    return Base::end_object();
  }
  bool key(std::string& k) {
    if (depth_ == 1 && !top_keys_.insert(k).second && duplicate_key.empty()) duplicate_key = k;
    return Base::key(k);
  }

  std::size_t error_byte = 0;
  std::string reason;
  std::string duplicate_key;  // first repeated key of the top-level object, if any

 private:
  int depth_ = 0;
  std::set<std::string> top_keys_;
};

// Parses text into *out; on failure returns false and fills *reason ("<reason> at byte N", N 0-based).
// *duplicate_key receives the first repeated top-level key ("" if none).
inline bool parse_json(std::string_view text, nlohmann::json* out, std::string* reason, std::string* duplicate_key) {
  JsonReader reader(*out);
  const bool ok = nlohmann::json::sax_parse(text.begin(), text.end(), &reader);
  *duplicate_key = reader.duplicate_key;
  if (ok && reader.reason.empty()) return true;
  if (reader.reason.empty()) reader.reason = "parse stopped";
  *reason = reader.reason + " at byte " + std::to_string(reader.error_byte);
  *out = nlohmann::json();
  return false;
}

}  // namespace attnscope::io::detail
