// EMSCRIPTEN_BINDINGS for JS `as.loadTokenizer(tokenizerJson)` (bindings/js/tokenizer.js): a Hugging Face
// tokenizer.json on its own, or SentencePiece model files (T5's, Marian's) (tokenizers::HfTokenizer). Layer: bindings; no logic beyond choosing encode() or
// encode_with_post_processor(). Pattern of BpeHandle (module.cpp): constructed empty, load() returns null or an
// error descriptor naming "loadTokenizer".
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <string>
#include <utility>

#include "convert.h"
#include "errors.h"
#include "spm_tokenizer_in.h"
#include "tokenizers/hf_tokenizer.h"

namespace attnscope::bindings {
namespace {

using emscripten::val;

class HfTokenizerHandle {
 public:
  val load(std::string json) {
    auto r = tokenizers::HfTokenizer::from_json(json, "loadTokenizer", "tokenizerJson");
    if (!r.ok()) return error_out(r.status());
    tok_ = std::move(r).value();
    return val::null();
  }
  // { sentencepiece } or { source, target, vocab } (spm_tokenizer_in.h)
  val load_sentencepiece(val files) {
    auto r = spm_tokenizer_in(files, "loadTokenizer", "tokenizer");
    if (!r) return error_out(core::type_error("loadTokenizer", "tokenizer", "tokenizer has no SentencePiece file"));
    if (!r->ok()) return error_out(r->status());
    tok_ = std::move(*r).value();
    return val::null();
  }
  val encode(std::string text, bool add_special_tokens) const {
    auto r = add_special_tokens ? tok_->encode_with_post_processor(text) : tok_->encode(text);
    if (!r.ok()) return error_out(r.status());
    val out = val::object();
    out.set("ids", i32_out(r.value().ids));
    out.set("tokens", strings_out(r.value().tokens));
    out.set("offsets", i32_out(r.value().offsets));
    return out;
  }
  val decode(val ids) const {
    auto r = tok_->decode(i32_in(ids));
    if (!r.ok()) return error_out(r.status());
    val out = val::object();
    out.set("text", val(r.value()));
    return out;
  }
  int vocab_size() const { return static_cast<int>(tok_->vocab_size()); }

 private:
  std::unique_ptr<tokenizers::HfTokenizer> tok_;
};

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_tokenizer) {
  using attnscope::bindings::HfTokenizerHandle;
  emscripten::class_<HfTokenizerHandle>("HfTokenizerHandle")
      .constructor<>()
      .function("load", &HfTokenizerHandle::load)
      .function("loadSentencePiece", &HfTokenizerHandle::load_sentencepiece)
      .function("encode", &HfTokenizerHandle::encode)
      .function("decode", &HfTokenizerHandle::decode)
      .function("vocabSize", &HfTokenizerHandle::vocab_size);
}
