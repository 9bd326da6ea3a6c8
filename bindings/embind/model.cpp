// EMSCRIPTEN_BINDINGS for the model pipeline (JS `createModel(config)` / `model.run(text)`); no math here.
// Layer: bindings. bindings/js/model.js validates and normalises the config (every default applied) and
// calls ModelHandle.load(config) -> null or an error descriptor (as BpeHandle), then run(input, trace) ->
// the result object (docs/model.md "Result") or an error descriptor. Results are fresh JS-owned typed arrays.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <memory>
#include <string>

#include "convert.h"
#include "errors.h"
#include "model/transformer.h"

namespace attnscope::bindings {
namespace {

using emscripten::val;
using model::Architecture;
using model::TraceLevel;

void set_if(val& o, const char* name, const std::vector<float>& x) {
  if (!x.empty()) o.set(name, f32_out(x));
}

val attention_out(const model::AttentionTrace& a) {
  val o = val::object();
  set_if(o, "q", a.q);
  set_if(o, "k", a.k);
  set_if(o, "v", a.v);
  set_if(o, "scores", a.scores);
  set_if(o, "weights", a.weights);
  set_if(o, "concat", a.concat);
  set_if(o, "output", a.output);
  if (a.scale != 0.0) o.set("scale", val(a.scale));
  return o;
}

const char* kind_name(model::LayerKind k) {
  switch (k) {
    case model::LayerKind::kDecoder: return "decoder";
    case model::LayerKind::kSimple: return "simple";
    case model::LayerKind::kEncoder: break;
  }
  return "encoder";
}

val side_out(val o, const model::SideTrace& s) {
  o.set("tokens", strings_out(s.tokens));
  o.set("ids", i32_out(s.ids));
  o.set("offsets", i32_out(s.offsets));
  o.set("n", val(s.n));
  o.set("nReal", val(s.n_real));
  o.set("embeddings", f32_out(s.embeddings));
  o.set("positional", f32_out(s.positional));
  o.set("input", f32_out(s.input));
  val layers = val::array();
  for (std::size_t i = 0; i < s.layers.size(); ++i) {
    const auto& L = s.layers[i];
    val l = val::object();
    l.set("kind", val(kind_name(L.kind)));
    set_if(l, "input", L.input);
    l.set("attention", attention_out(L.attention));
    if (L.has_cross) l.set("cross", attention_out(L.cross));
    set_if(l, "residual1", L.residual1);
    set_if(l, "norm1", L.norm1);
    set_if(l, "residual2", L.residual2);
    set_if(l, "norm2", L.norm2);
    set_if(l, "residual3", L.residual3);
    set_if(l, "norm3", L.norm3);
    set_if(l, "ffHidden", L.ff_hidden);
    set_if(l, "ffOutput", L.ff_output);
    l.set("output", f32_out(L.output));
    layers.set(i, l);
  }
  o.set("layers", layers);
  o.set("output", f32_out(s.output));
  return o;
}

val trace_out(const model::RunTrace& r) {
  val o = val::object();
  o.set("dModel", val(r.d_model));
  o.set("numHeads", val(r.num_heads));
  o.set("headDim", val(r.head_dim));
  o.set("dFF", val(r.d_ff));
  side_out(o, r.main);
  val next = val::object();
  next.set("tokens", strings_out(r.next.tokens));
  next.set("ids", i32_out(r.next.ids));
  next.set("probs", f32_out(r.next.probs));
  o.set("next", next);
  if (r.has_source) o.set("source", side_out(val::object(), r.source));
  return o;
}

// A model handle: constructed empty, then load() returns null or an error descriptor.
class ModelHandle {
 public:
  val load(val c) {
    model::ModelConfig cfg;
    const std::string arch = str_in(c["architecture"], "encoder");
    cfg.architecture = arch == "decoder"           ? Architecture::kDecoder
                       : arch == "encoder-decoder" ? Architecture::kEncoderDecoder
                                                   : Architecture::kEncoder;
    const std::string tok = str_in(c["tokenizer"], "word");
    cfg.tokenizer = tok == "char" ? model::TokenizerKind::kChar
                    : tok == "bpe" ? model::TokenizerKind::kBpe
                                   : model::TokenizerKind::kWord;
    cfg.bpe_vocab = str_in(c["bpeVocab"]);
    cfg.bpe_merges = str_in(c["bpeMerges"]);
    cfg.d_model = int_in(c["dModel"], 16);
    cfg.num_heads = int_in(c["numHeads"], 2);
    cfg.num_layers = int_in(c["numLayers"], 2);
    cfg.num_decoder_layers = int_in(c["numDecoderLayers"], 0);
    cfg.d_ff = int_in(c["dFF"], 0);
    cfg.norm_first = bool_in(c["normFirst"], false);
    cfg.activation = str_in(c["activation"], "relu") == "gelu" ? model::Activation::kGelu : model::Activation::kRelu;
    cfg.eps = num_in(c["eps"], 1e-5);
    const std::string pos = str_in(c["positional"], "sinusoidal");
    cfg.positional = pos == "learned" ? model::PositionalKind::kLearned
                     : pos == "none"  ? model::PositionalKind::kNone
                                      : model::PositionalKind::kSinusoidal;
    cfg.positional_base = num_in(c["positionalBase"], 10000.0);
    cfg.max_positions = int_in(c["maxPositions"], 512);
    cfg.attention = str_in(c["attention"], "learned") == "simple" ? model::FirstAttention::kSimple
                                                                  : model::FirstAttention::kLearned;
    cfg.seed = static_cast<std::uint64_t>(num_in(c["seed"], 42.0));
    if (given(c["embeddingTokens"])) {
      const val tokens = c["embeddingTokens"];
      const std::vector<float> values = f32_in(c["embeddingValues"]);
      const int count = tokens["length"].as<int>();
      const std::size_t per = count > 0 ? values.size() / static_cast<std::size_t>(count) : 0;
      for (int i = 0; i < count; ++i) {
        const auto* row = values.data() + static_cast<std::size_t>(i) * per;
        cfg.embeddings.emplace_back(tokens[i].as<std::string>(), std::vector<float>(row, row + per));
      }
    }
    cfg.weights = u8_in(c["weights"]);
    cfg.top_k = int_in(c["topK"], 5);
    cfg.max_tokens = int_in(c["maxTokens"], 1024);
    auto r = model::Transformer::create(std::move(cfg));
    if (!r.ok()) return error_out(r.status());
    model_ = std::move(r).value();
    return val::null();
  }

  // input: { text } or { source, target }; trace: 'full' | 'weights' | 'none'; pad_to: 0 = no padding.
  val run(val input, std::string trace, int pad_to) const {
    const TraceLevel level = trace == "none" ? TraceLevel::kNone
                             : trace == "weights" ? TraceLevel::kWeights
                                                  : TraceLevel::kFull;
    auto r = given(input["text"])
                 ? model_->run(input["text"].as<std::string>(), level, pad_to)
                 : model_->run(input["source"].as<std::string>(), input["target"].as<std::string>(), level, pad_to);
    if (!r.ok()) return error_out(r.status());
    return trace_out(r.value());
  }

  // Names and shapes of every parameter (the safetensors table for this config).
  val parameters() const {
    val out = val::array();
    int i = 0;
    for (const auto& [name, shape] : model_->parameter_shapes()) {
      val e = val::object();
      e.set("name", val(name));
      val s = val::array();
      for (std::size_t k = 0; k < shape.size(); ++k) s.set(k, val(shape[k]));
      e.set("shape", s);
      out.set(i++, e);
    }
    return out;
  }

 private:
  std::unique_ptr<model::Transformer> model_;
};

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_model) {
  using attnscope::bindings::ModelHandle;
  emscripten::class_<ModelHandle>("ModelHandle")
      .constructor<>()
      .function("load", &ModelHandle::load)
      .function("run", &ModelHandle::run)
      .function("parameters", &ModelHandle::parameters);
}
