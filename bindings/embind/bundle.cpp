// EMSCRIPTEN_BINDINGS for JS `as.loadBundled(name)` (bindings/js/bundled.js), given the bytes of a bundled
// model's config.json and model.safetensors (src/model/bundle.h). Layer: bindings; no math.
//   loadBundledInto(modelHandle, configText, weights) -> null or an error descriptor: a transformer
//       ('encoder-decoder', 'decoder') handed to a ModelHandle (model_handle.h) made by "loadBundled".
//   GruHandle: load(configText, weights), run({ source, target? }, maxNewTokens), generate(input, maxNewTokens)
//       for 'gru-bahdanau'. Load errors name "loadBundled"; run/generate errors name "run"/"generate".
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <string>
#include <utility>

#include "convert.h"
#include "errors.h"
#include "model/bundle.h"
#include "model_handle.h"

namespace attnscope::bindings {
namespace {

using emscripten::val;
constexpr const char* kLoadBundled = "loadBundled";

val load_bundled_into(ModelHandle& handle, std::string config, val weights) {
  auto r = model::load_bundled_transformer(config, u8_in(weights), kLoadBundled);
  if (!r.ok()) return error_out(r.status());
  handle.adopt(std::move(r).value(), kLoadBundled);
  return val::null();
}

// A GRU run with every per-step tensor ([T = steps, S = source tokens, L = layers, H = hidden, V = vocabulary]).
val gru_run_out(const model::GruRun& r, const model::GruSeq2SeqConfig& c) {
  const model::GruSeq2SeqTrace& t = r.trace;
  val o = val::object();
  o.set("sourceTokens", strings_out(r.source_tokens));
  o.set("sourceIds", i32_out(r.source_ids));
  o.set("inputTokens", strings_out(r.input_tokens));
  o.set("inputIds", i32_out(t.inputs));
  o.set("tokens", strings_out(r.tokens));
  o.set("ids", i32_out(t.predictions));
  o.set("steps", val(t.steps));
  o.set("sourceLength", val(t.source_len));
  o.set("numLayers", val(c.num_layers));
  o.set("hiddenSize", val(c.hidden_size));
  o.set("vocabSize", val(c.vocab_size));
  o.set("weights", f32_out(t.weights));
  o.set("scores", f32_out(t.scores));
  o.set("contexts", f32_out(t.contexts));
  o.set("states", f32_out(t.states));
  o.set("outputs", f32_out(t.outputs));
  o.set("logits", f32_out(t.logits));
  o.set("encoderOutputs", f32_out(t.encoder_outputs));
  o.set("encoderStates", f32_out(t.encoder_states));
  o.set("encoderFinal", f32_out(t.encoder_final));
  return o;
}

class GruHandle {
 public:
  val load(std::string config, val weights) {
    auto r = model::BundledGru::load(config, u8_in(weights), kLoadBundled);
    if (!r.ok()) return error_out(r.status());
    model_ = std::move(r).value();
    return val::null();
  }

  val config() const {
    const model::GruSeq2SeqConfig& c = model_->model().config();
    val o = val::object();
    o.set("architecture", val("gru-bahdanau"));
    o.set("vocabSize", val(c.vocab_size));
    o.set("embedSize", val(c.embed_size));
    o.set("numHiddens", val(c.hidden_size));
    o.set("numLayers", val(c.num_layers));
    o.set("attentionHidden", val(c.attention_hidden));
    return o;
  }

  // input: { source } (greedy decoding, every step traced) or { source, target } (teacher forcing).
  val run(val input, int max_new_tokens) const {
    if (given(input["target"])) {
      auto r = model_->run(input["source"].as<std::string>(), input["target"].as<std::string>());
      return r.ok() ? gru_run_out(r.value(), model_->model().config()) : error_out(r.status());
    }
    model::Generation g;
    auto r = model_->generate(input["source"].as<std::string>(), max_new_tokens, &g, model::kOpRun);
    if (!r.ok()) return error_out(r.status());
    return gru_run_out(r.value(), model_->model().config());
  }

  val generate(std::string input, int max_new_tokens) const {
    model::Generation g;
    auto r = model_->generate(input, max_new_tokens, &g);
    if (!r.ok()) return error_out(r.status());
    val o = val::object();
    o.set("text", val(g.text));
    o.set("ids", i32_out(g.ids));
    o.set("tokens", strings_out(g.tokens));
    o.set("stoppedAtEnd", val(g.stopped_at_end));
    // the alignment of every step that ran ([steps, sourceLength]; the step predicting the end token included)
    o.set("sourceTokens", strings_out(r.value().source_tokens));
    o.set("steps", val(r.value().trace.steps));
    o.set("sourceLength", val(r.value().trace.source_len));
    o.set("alignment", f32_out(r.value().trace.weights));
    return o;
  }

 private:
  std::unique_ptr<model::BundledGru> model_;
};

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_bundle) {
  using attnscope::bindings::GruHandle;
  emscripten::function("loadBundledInto", &attnscope::bindings::load_bundled_into);
  emscripten::class_<GruHandle>("GruHandle")
      .constructor<>()
      .function("load", &GruHandle::load)
      .function("config", &GruHandle::config)
      .function("run", &GruHandle::run)
      .function("generate", &GruHandle::generate);
}
