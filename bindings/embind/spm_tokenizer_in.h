// The SentencePiece forms of a tokenizer argument, for as.loadTokenizer and loadPretrained: { sentencepiece }
// (T5's spiece.model bytes) or { source, target, vocab } (Marian's source.spm / target.spm bytes and vocab.json
// text), as bindings/js/tokenizer.js's sentencePieceArg passes them. Layer: bindings; no logic.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convert.h"
#include "tokenizers/hf_tokenizer.h"

namespace attnscope::bindings {

// nullopt when `tokenizer` is neither form. Messages say "<fn>: <arg>.sentencepiece ..." / "<arg>.source ...".
inline std::optional<core::Result<std::unique_ptr<tokenizers::HfTokenizer>>> spm_tokenizer_in(
    const emscripten::val& tokenizer, const char* fn, const std::string& arg) {
  if (given(tokenizer["sentencepiece"])) {
    const std::vector<std::uint8_t> model = u8_in(tokenizer["sentencepiece"]);
    const std::string a = arg + ".sentencepiece";
    return tokenizers::HfTokenizer::from_sentencepiece(model, fn, a.c_str());
  }
  if (given(tokenizer["source"])) {
    const std::vector<std::uint8_t> source = u8_in(tokenizer["source"]);
    const std::vector<std::uint8_t> target = u8_in(tokenizer["target"]);
    return tokenizers::HfTokenizer::from_marian(source, target, tokenizer["vocab"].as<std::string>(), fn, arg.c_str());
  }
  return std::nullopt;
}

}  // namespace attnscope::bindings
