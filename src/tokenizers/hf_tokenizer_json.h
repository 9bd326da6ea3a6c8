// Reading Hugging Face's tokenizer.json: one SAX pass (the 50k-entry model.vocab and model.merges are streamed into
// flat vectors, the small rest becomes a JSON tree) and typed member access whose messages name the path
// ("fn: arg.model.vocab must be …"). Used by hf_tokenizer.cpp only. Layer: tokenizers (depends on core/ only).
// JSON_NOEXCEPTION as in json_reader.h: the SAX path never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "tokenizers/added_tokens.h"
#include "tokenizers/json_reader.h"

namespace attnscope::tokenizers::hf_json {

using json = nlohmann::json;

// One merge of model.merges: "a b" (pair == false, text in a) or ["a", "b"].
struct MergeItem {
  std::string a, b;
  bool pair = false;
};

struct ParsedFile {
  bool parsed = false;
  std::string reason;   // parse error: "<what> at byte N"
  json root;            // the document without model.vocab (when an object) and model.merges (when an array)
  bool vocab_seen = false, merges_seen = false;
  const char* repeated = nullptr;  // "vocab" / "merges" when model lists it twice
  std::vector<std::pair<std::string, std::int64_t>> vocab;  // document order
  std::string vocab_bad_key;
  const char* vocab_bad_type = "";
  bool vocab_too_large = false;
  std::vector<MergeItem> merges;
  std::size_t merge_bad = SIZE_MAX;  // first malformed merge and what it is
  std::string merge_bad_what;
};

// The document: `parsed` false with `reason` on a syntax error.
ParsedFile parse_file(std::string_view text);

// A JSON value's type as a message says it ("object", "number", …).
const char* type_name(json::value_t t);

// Typed member access with messages "fn: <arg>.<path> must be <what>, got <type>".
class Reader {
 public:
  Reader(const char* fn, const char* arg) : fn_(fn), arg_(arg) {}
  std::string at(const std::string& path) const { return std::string(arg_) + "." + path; }
  core::Status type(const std::string& path, const char* want, const json& v) const {
    return core::type_error(fn_, arg_, at(path) + " must be " + want + ", got " + type_name(v.type()));
  }
  core::Status invalid(const std::string& text) const { return core::invalid_error(fn_, arg_, text); }
  core::Status unsupported(const std::string& path, const std::string& value, const char* supported) const {
    return invalid(at(path) + " " + value + " is not supported" + (supported[0] ? std::string(" (") + supported + ")" : ""));
  }
  // obj[name] as a bool; missing or null -> fallback.
  core::Result<bool> boolean(const json& obj, const char* name, const std::string& path, bool fallback) const {
    const auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) return type(path, "a boolean", *it);
    return it->get<bool>();
  }
  core::Result<std::string> string(const json& obj, const char* name, const std::string& path,
                                   const std::string& fallback) const {
    const auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_string()) return type(path, "a string", *it);
    return it->get<std::string>();
  }
  const char* fn() const { return fn_; }
  const char* arg() const { return arg_; }

 private:
  const char* fn_;
  const char* arg_;
};

// A value quoted for a message: at most 60 bytes, controls as '?'.
std::string quote_value(const std::string& s);

// The "type" of an optional component object (normalizer, pre_tokenizer, decoder): "" for null or absent.
core::Result<std::string> component_type(const Reader& rd, const json& root, const char* name);

// added_tokens: each entry checked (id in [0, 2^31), non-empty content, boolean flags).
core::Result<std::vector<AddedToken>> read_added_tokens(const Reader& rd, const json& root);

// model.vocab checks shared by both model types: present as an object of integer ids.
core::Status check_vocab(const Reader& rd, const ParsedFile& f, const json& model);

}  // namespace attnscope::tokenizers::hf_json
