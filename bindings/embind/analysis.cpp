// Embind functions of the "looking inside" analyses (issue 27): headScores, repeatedTokens, attentionFlow, qkMap.
// Layer: bindings; no math. bindings/js/analysis.js has validated the argument object and concatenated per-layer
// arrays into one Float32Array with its numLayers.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <vector>

#include "attention/analysis.h"
#include "convert.h"
#include "errors.h"

namespace attnscope::bindings {
namespace {

val head_scores(val a) {
  const F32In w(a["weights"]);
  const std::vector<std::int32_t> ids = i32_in(a["ids"]);
  attention::HeadScoresArgs h;
  h.weights = w;
  h.num_layers = int_in(a["numLayers"], 1);
  h.num_heads = int_in(a["numHeads"]);
  h.n = int_in(a["n"]);
  h.ids = ids;
  h.has_period = given(a["period"]);
  h.period = int_in(a["period"]);
  auto r = attention::head_scores(h);
  if (!r.ok()) return error_out(r.status());
  const attention::HeadScores& s = r.value();
  val out = val::object();
  out.set("numLayers", h.num_layers);
  out.set("numHeads", h.num_heads);
  out.set("previousToken", f32_out(s.previous_token));
  out.set("sinkShare", f32_out(s.sink_share));
  if (!ids.empty()) out.set("duplicateToken", f32_out(s.duplicate_token));
  if (h.has_period) out.set("induction", f32_out(s.induction));
  return out;
}

val repeated_tokens(val a) {
  // an explicit negative bos is an error (the core reads -1 as "no bos", which only an absent bos means)
  if (given(a["bos"]) && a["bos"].as<double>() < 0) {
    return error_out(core::range_error("repeatedTokens", "bos",
                                       "bos (" + std::to_string(static_cast<long long>(a["bos"].as<double>())) +
                                           ") must be a token id (0 or more), or absent for no begin token"));
  }
  auto r = attention::repeated_tokens(int_in(a["vocabSize"]), int_in(a["length"]),
                                      static_cast<long long>(num_in(a["seed"], 0.0)),
                                      given(a["bos"]) ? static_cast<long long>(a["bos"].as<double>()) : -1);
  if (!r.ok()) return error_out(r.status());
  val out = val::object();
  out.set("ids", i32_out(r.value()));
  out.set("period", int_in(a["length"]));
  return out;
}

val attention_flow(val a) {
  const F32In layers(a["layers"]);
  attention::FlowArgs f;
  f.layers = layers;
  f.num_layers = int_in(a["numLayers"]);
  f.num_heads = int_in(a["numHeads"]);
  f.n = int_in(a["n"]);
  f.has_output = given(a["output"]);
  f.output = int_in(a["output"], -1);
  auto r = attention::attention_flow(f);
  if (!r.ok()) return error_out(r.status());
  val out = val::object();
  out.set("flow", f32_out(r.value()));
  return out;
}

val qk_map(val a) {
  const F32In q(a["q"]), k(a["k"]);
  attention::QkMapArgs m;
  m.q = q;
  m.k = k;
  m.nq = int_in(a["nq"]);
  m.nk = int_in(a["nk"]);
  m.d = int_in(a["d"]);
  m.normalize = bool_in(a["normalize"], true);
  auto r = attention::qk_map(m);
  if (!r.ok()) return error_out(r.status());
  val out = val::object();
  out.set("queries", f32_out(r.value().queries));
  out.set("keys", f32_out(r.value().keys));
  out.set("explainedVariance", f32_out(r.value().explained_variance));
  out.set("components", f32_out(r.value().components));
  return out;
}

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_analysis) {
  using namespace attnscope::bindings;
  emscripten::function("headScores", &head_scores);
  emscripten::function("repeatedTokens", &repeated_tokens);
  emscripten::function("attentionFlow", &attention_flow);
  emscripten::function("qkMap", &qk_map);
}
