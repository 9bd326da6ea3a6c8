// Reading Hugging Face's tokenizer.json: one SAX pass (the 50k-entry model.vocab and model.merges are streamed into
// flat vectors, the small rest becomes a JSON tree); typed members are read by io::JsonFields, whose messages name
// the path ("fn: arg.model.vocab must be …"). Used by hf_tokenizer.cpp only. Layer: tokenizers (depends on core/
// and io/'s JSON readers).
// JSON_NOEXCEPTION as in json_reader.h: the SAX path never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/text.h"
#include "io/json_fields.h"
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

// Typed member access with messages "fn: <arg>.<path> must be <what>, got <type>" (io/json_fields.h).
using Reader = io::JsonFields;
inline Reader reader_for(const char* fn, const char* arg) { return Reader(fn, arg, std::string(arg) + "."); }

// A tokenizer.json value quoted for a message: core::quote with single quotes, cut at 60 code points.
inline std::string quote_value(std::string_view s) { return core::quote(s, '\'', 60); }

// The "type" of an optional component object (normalizer, pre_tokenizer, decoder): "" for null or absent.
core::Result<std::string> component_type(const Reader& rd, const json& root, const char* name);

// added_tokens: each entry checked (id in [0, 2^31), non-empty content, boolean flags).
core::Result<std::vector<AddedToken>> read_added_tokens(const Reader& rd, const json& root);

// model.vocab checks shared by both model types: present as an object of integer ids.
core::Status check_vocab(const Reader& rd, const ParsedFile& f, const json& model);

}  // namespace attnscope::tokenizers::hf_json
