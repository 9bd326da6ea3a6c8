// Internal: non-throwing JSON parsing that reports the failing byte offset, on top of nlohmann/json's SAX DOM
// builder, also reporting a repeated top-level key (safetensors names must be unique); and how every JSON reader
// words a parse error (json_error_text, also used by the tokenizers' DOM-free readers). Layer: io (depends on core/
// only).
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

// A SAX parse error as messages quote it: "<reason> at byte N". what is "[json.exception.parse_error.101] parse
// error at line 1, column 5: <reason>"; keep <reason>, minus any "; last read: '...'" echo of the input (it may hold
// invalid UTF-8). position counts the bytes read, the offending one included: report its 0-based offset.
inline std::string json_error_reason(const std::string& what) {
  const std::size_t colon = what.find(": ");
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  const std::size_t echo = reason.find("; last read:");
  if (echo != std::string::npos) reason.erase(echo);
  return reason;
}
inline std::size_t json_error_byte(std::size_t position) { return position > 0 ? position - 1 : 0; }
inline std::string json_error_text(std::size_t position, const std::string& what) {
  return json_error_reason(what) + " at byte " + std::to_string(json_error_byte(position));
}

// Builds the DOM like json::parse, but records the parse error's byte offset and reason instead of throwing.
class JsonReader : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
  explicit JsonReader(nlohmann::json& result) : Base(result, /*allow_exceptions=*/false) {}

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const Exception& ex) {
    error_byte = json_error_byte(position);
    reason = json_error_reason(ex.what());
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
