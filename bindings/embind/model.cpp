// EMSCRIPTEN_BINDINGS for the model layer (JS createModel / loadPretrained / loadBundled, model.run,
// model.generate); no math and no defaults here. Layer: bindings. bindings/js/model.js checks JS types and
// unknown keys and passes only what the caller gave; every range check, enum spelling and default is the C++
// core's (src/model/model_config.h). The core reports errors for its operations ("create", "run",
// "generate"); model_error() names them as the JS call the user made, once, here.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "convert.h"
#include "errors.h"
#include "layout.h"
#include "memory_reserve.h"
#include "model_handle.h"

namespace attnscope::bindings {
namespace {

using emscripten::val;

void set_if(val& o, const char* name, const std::vector<float>& x) {
  if (!x.empty()) o.set(name, f32_out(x));
}

val attention_out(const model::AttentionTrace& a) {
  val o = val::object();
  set_if(o, "q", a.q);
  set_if(o, "k", a.k);
  set_if(o, "v", a.v);
  set_if(o, "dots", a.dots);
  set_if(o, "scores", a.scores);
  set_if(o, "rowMax", a.row_max);
  set_if(o, "rowSum", a.row_sum);
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
  static const char* const kResidual[] = {"residual1", "residual2", "residual3"};
  static const char* const kNorm[] = {"norm1", "norm2", "norm3"};
  static const char* const kMean[] = {"norm1Mean", "norm2Mean", "norm3Mean"};
  static const char* const kVar[] = {"norm1Var", "norm2Var", "norm3Var"};
  for (std::size_t i = 0; i < s.layers.size(); ++i) {
    const auto& L = s.layers[i];
    val l = val::object();
    l.set("kind", val(kind_name(L.kind)));
    l.set("full", val(L.full));
    set_if(l, "input", L.input);
    l.set("attention", attention_out(L.attention));
    if (L.has_cross) l.set("cross", attention_out(L.cross));
    for (int k = 0; k < 3; ++k) {
      set_if(l, kResidual[k], L.residual[k]);
      set_if(l, kNorm[k], L.norm[k]);
      set_if(l, kMean[k], L.norm_mean[k]);
      set_if(l, kVar[k], L.norm_var[k]);
    }
    set_if(l, "ffHidden", L.ff_hidden);
    set_if(l, "ffOutput", L.ff_output);
    set_if(l, "output", L.output);  // absent when not kept (run option layerOutputs)
    if (L.has_summary) {  // run option summaries: per head, and top-k keys per row [H, nReal, k]
      const auto& S = L.summary;
      val sum = val::object();
      sum.set("entropy", f32_out(S.entropy));
      sum.set("distance", f32_out(S.distance));
      sum.set("sink", f32_out(S.sink));
      sum.set("topK", val(S.top_k));
      sum.set("topIds", i32_out(S.top_ids));
      sum.set("topWeights", f32_out(S.top_weights));
      val att = l["attention"];
      att.set("summary", sum);
    }
    if (!L.lens_ids.empty()) {  // run option lens: { ids, probs } [n, k]
      val lens = val::object();
      lens.set("ids", i32_out(L.lens_ids));
      lens.set("probs", f32_out(L.lens_probs));
      lens.set("k", val(L.lens_k));
      lens.set("tokens", strings_out(L.lens_tokens));
      l.set("lens", lens);
    }
    layers.set(i, l);
  }
  o.set("layers", layers);
  o.set("output", f32_out(s.output));
  set_if(o, "lastLayerOutput", s.last_layer_output);
  return o;
}

val top_out(const model::TopK& t) {
  val o = val::object();
  o.set("tokens", strings_out(t.tokens));
  o.set("ids", i32_out(t.ids));
  o.set("probs", f32_out(t.probs));
  return o;
}

val trace_out(const model::RunTrace& r, bool log_probs, bool heads_list) {
  val o = val::object();
  o.set("dModel", val(r.d_model));
  o.set("numHeads", val(r.num_heads));
  o.set("headDim", val(r.head_dim));
  o.set("dFF", val(r.d_ff));
  side_out(o, r.main);
  o.set("next", top_out(r.next));
  if (!r.masks.empty()) {
    val masks = val::array();
    for (std::size_t i = 0; i < r.masks.size(); ++i) {
      val m = top_out(r.masks[i].top);
      m.set("position", val(r.masks[i].position));
      masks.set(i, m);
    }
    o.set("masks", masks);
  }
  if (log_probs) o.set("logProbs", f32_out(r.log_probs));  // only when asked for (a one-token text: empty)
  if (r.has_source) o.set("source", side_out(val::object(), r.source));
  if (heads_list) {  // run option heads: the listed maps, in the order asked
    val heads = val::array();
    for (std::size_t i = 0; i < r.heads.size(); ++i) {
      val h = val::object();
      h.set("layer", val(r.heads[i].layer));
      h.set("head", val(r.heads[i].head));
      h.set("weights", f32_out(r.heads[i].weights));
      heads.set(i, h);
    }
    o.set("heads", heads);
  }
  if (r.positional_rows > 0) {
    o.set("positionalTable", f32_out(r.positional_table));
    o.set("positionalRows", val(r.positional_rows));
  }
  return o;
}

}  // namespace

// A model handle: constructed empty, then load() returns null or an error descriptor. `creator` is the JS
// function that made the model (createModel, loadPretrained, loadBundled): create errors carry its name.
ModelHandle::ModelHandle() = default;

val ModelHandle::error(const core::Status& s) const {
  const std::string op = s.function;
  const std::string js = op == model::kOpCreate ? creator_ : op;  // "run" and "generate" are the JS names too
  return error_out(core::make_error(s.kind, js, s.argument, s.detail()));
}

val ModelHandle::load(val c) {
  creator_ = "createModel";
  model::ModelConfig cfg;
  // enums: spelled by the JS API, parsed (and rejected) by the core
  val failed = val::null();
  auto parse = [&](const char* key, auto parser, auto& field) -> bool {
    if (!given(c[key])) return true;
    auto r = parser(c[key].as<std::string>(), model::kOpCreate, key);
    if (!r.ok()) {
      failed = error(r.status());
      return false;
    }
    field = r.value();
    return true;
  };
  if (!parse("architecture", model::parse_architecture, cfg.architecture) ||
      !parse("tokenizer", model::parse_tokenizer_kind, cfg.tokenizer) ||
      !parse("activation", model::parse_activation, cfg.activation) ||
      !parse("positional", model::parse_positional, cfg.positional) ||
      !parse("attention", model::parse_first_attention, cfg.attention)) {
    return failed;
  }
  cfg.bpe_vocab = str_in(c["bpeVocab"]);
  cfg.bpe_merges = str_in(c["bpeMerges"]);
  cfg.d_model = int_in(c["dModel"], cfg.d_model);
  cfg.num_heads = int_in(c["numHeads"], cfg.num_heads);
  cfg.num_layers = int_in(c["numLayers"], cfg.num_layers);
  if (given(c["numDecoderLayers"])) cfg.num_decoder_layers = c["numDecoderLayers"].as<int>();
  if (given(c["dFF"])) cfg.d_ff = c["dFF"].as<int>();
  cfg.norm_first = bool_in(c["normFirst"], cfg.norm_first);
  cfg.eps = num_in(c["eps"], cfg.eps);
  cfg.positional_base = num_in(c["positionalBase"], cfg.positional_base);
  cfg.max_positions = int_in(c["maxPositions"], cfg.max_positions);
  cfg.seed = static_cast<std::uint64_t>(num_in(c["seed"], static_cast<double>(cfg.seed)));
  if (given(c["embeddingTokens"])) {
    const val tokens = c["embeddingTokens"];
    const val rows = c["embeddingRows"];
    const int count = tokens["length"].as<int>();
    for (int i = 0; i < count; ++i) cfg.embeddings.emplace_back(tokens[i].as<std::string>(), f32_in(rows[i]));
  }
  cfg.weights = u8_in(c["weights"]);
  cfg.top_k = int_in(c["topK"], cfg.top_k);
  cfg.max_tokens = int_in(c["maxTokens"], cfg.max_tokens);
  auto r = model::Transformer::create(std::move(cfg));
  if (!r.ok()) return error(r.status());
  model_ = std::move(r).value();
  return val::null();
}

void ModelHandle::adopt(std::unique_ptr<model::Transformer> m, std::string creator) {
  model_ = std::move(m);
  creator_ = std::move(creator);
}

// The model's config with every default applied (JS model.config).
val ModelHandle::config() const {
  const model::ModelDescription& m = model_->description();
  val o = val::object();
  o.set("architecture", val(m.architecture));
  o.set("dModel", val(m.d_model));
  o.set("numHeads", val(m.num_heads));
  o.set("dFF", val(m.d_ff));
  o.set("topK", val(model_->options().top_k));
  o.set("maxTokens", val(model_->options().max_tokens));
  const model::ModelConfig* created = model_->config();
  if (created == nullptr) {  // a checkpoint or a bundled model: what its description says
    o.set("numLayers", val(static_cast<int>(m.main.blocks.size())));
    o.set("positional", val(model::name_of(m.embedding.positional)));
    o.set("maxPositions", val(m.embedding.max_positions));
    if (!m.main.blocks.empty()) {
      o.set("normFirst", val(m.main.blocks[0].norm_first));
      o.set("activation", val(model::name_of(m.main.blocks[0].activation)));
      o.set("eps", val(m.main.blocks[0].eps));
    }
    if (m.has_source) {
      o.set("numDecoderLayers", val(static_cast<int>(m.main.blocks.size())));
      o.set("numLayers", val(static_cast<int>(m.source.blocks.size())));
    }
    // an encoder-decoder checkpoint (loadPretrained t5, bart, marian, ...): its decoder start token
    if (model_->options().decoder_start >= 0) o.set("decoderStartTokenId", val(model_->options().decoder_start));
    set_layout(o, m);
    return o;
  }
  const model::ModelConfig& c = *created;  // createModel: its config with every default applied
  o.set("tokenizer", val(model::name_of(c.tokenizer)));
  o.set("numLayers", val(c.num_layers));
  o.set("numDecoderLayers", val(c.num_decoder_layers.value_or(c.num_layers)));
  o.set("normFirst", val(c.norm_first));
  o.set("activation", val(model::name_of(c.activation)));
  o.set("eps", val(c.eps));
  o.set("positional", val(model::name_of(c.positional)));
  o.set("positionalBase", val(c.positional_base));
  o.set("maxPositions", val(c.max_positions));
  o.set("attention", val(model::name_of(c.attention)));
  o.set("seed", val(static_cast<double>(c.seed)));
  return o;
}

// input: { text } or { source, target }; options: { trace, full, fullSource, positionalTable, padTo,
// padMultiple, topK, logProbs, ablate (Int32Array of layer, head pairs), lens, heads ('all' | 'none' | 'list'),
// headList (Int32Array of layer, head pairs), summaries (top-k per row, a number), layerOutputs } as checked by model.js (JS
// types only).
val ModelHandle::run(val input, val options) const {
  model::RunOptions o;
  if (given(options["trace"])) {
    auto level = model::parse_trace_level(options["trace"].as<std::string>(), model::kOpRun, "trace");
    if (!level.ok()) return error(level.status());
    o.level = level.value();
  }
  o.full_layers = i32_in(options["full"]);
  o.full_source_layers = i32_in(options["fullSource"]);
  o.positional_rows = int_in(options["positionalTable"], 0);
  o.pad_to = int_in(options["padTo"], 0);
  o.pad_multiple = int_in(options["padMultiple"], 0);
  if (given(options["topK"])) o.top_k = options["topK"].as<int>();
  o.log_probs = given(options["logProbs"]) && options["logProbs"].as<bool>();
  const std::vector<std::int32_t> ablate = i32_in(options["ablate"]);
  for (std::size_t i = 0; i + 1 < ablate.size(); i += 2) o.ablate.emplace_back(ablate[i], ablate[i + 1]);
  if (given(options["ablateMeans"])) {  // ablate[i].mean (Float32Array or null each)
    const val means = options["ablateMeans"];
    for (std::size_t i = 0; i < o.ablate.size(); ++i) o.ablate_values.push_back(f32_in(means[i]));
  }
  if (given(options["lens"])) o.lens = options["lens"].as<int>();
  // heads: 'all' | 'none' | 'list' with headList (Int32Array of layer, head pairs); without trace, 'none' and
  // 'list' run at trace 'none' (the only level they allow)
  if (given(options["heads"])) {
    const std::string mode = options["heads"].as<std::string>();
    if (mode != "all") {
      o.heads_mode = mode == "none" ? model::RunOptions::Heads::kNone : model::RunOptions::Heads::kList;
      if (!given(options["trace"])) o.level = model::TraceLevel::kNone;
      const std::vector<std::int32_t> heads = i32_in(options["headList"]);
      for (std::size_t i = 0; i + 1 < heads.size(); i += 2) o.heads.emplace_back(heads[i], heads[i + 1]);
    }
  }
  if (given(options["layerOutputs"])) o.layer_outputs = options["layerOutputs"].as<bool>();
  if (given(options["summaries"])) {
    o.summaries = true;
    o.summary_top_k = int_in(options["summaries"], o.summary_top_k);
  }
  // the text's UTF-8 bytes, at most one token each (+ specials: run_bytes' margin); its JS length × 3 counted a
  // 2,048-byte ASCII text as 6,144 tokens, and a 1B-shaped model's run at 2,048 tokens as out of memory
  const bool one_text = given(input["text"]);
  const std::string text = one_text ? input["text"].as<std::string>() : std::string();
  const double text_bytes = one_text ? static_cast<double>(text.size())
                                     : (input["source"]["length"].as<double>() + (given(input["target"]) ? input["target"]["length"].as<double>() : 0.0)) * 3.0;
  const double need = run_bytes(*model_, text_bytes, o);
  if (!reserve_heap(need)) return error(out_of_memory(model::kOpRun, "text", "this run", need));
  auto r = one_text                    ? model_->run(text, o)
           : given(input["targetIds"]) ? model_->run_ids(input["source"].as<std::string>(), i32_in(input["targetIds"]), o)
                                       : model_->run(input["source"].as<std::string>(), input["target"].as<std::string>(), o);
  if (!r.ok()) return error(r.status());
  return trace_out(r.value(), o.log_probs, o.heads_mode == model::RunOptions::Heads::kList);
}

val ModelHandle::generate(std::string input, int max_new_tokens, int num_beams) const {
  const double need = generate_bytes(*model_, static_cast<double>(input.size()), max_new_tokens) * std::max(num_beams, 1);
  if (!reserve_heap(need)) return error(out_of_memory(model::kOpGenerate, "input", "generating", need));
  auto r = model_->generate(input, max_new_tokens, num_beams);
  if (!r.ok()) return error(r.status());
  const model::Generation& g = r.value();
  val o = val::object();
  o.set("text", val(g.text));
  o.set("ids", i32_out(g.ids));
  o.set("tokens", strings_out(g.tokens));
  o.set("stoppedAtEnd", val(g.stopped_at_end));
  if (num_beams > 1) o.set("score", val(g.score));
  return o;
}

// Names and shapes of every parameter (the safetensors table for this model).
val ModelHandle::parameters() const {
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

}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_model) {
  using attnscope::bindings::ModelHandle;
  emscripten::class_<ModelHandle>("ModelHandle")
      .constructor<>()
      .function("load", &ModelHandle::load)
      .function("config", &ModelHandle::config)
      .function("run", &ModelHandle::run)
      .function("generate", &ModelHandle::generate)
      .function("parameters", &ModelHandle::parameters);
}
