// Embind function of the RoPE panel (issue 28): ropeExplain. Layer: bindings; no math. bindings/js/rope.js has
// checked the argument object's JS types; src/attention/rope_explain.h checks every value and computes.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "attention/rope_explain.h"
#include "convert.h"
#include "errors.h"

namespace attnscope::bindings {
namespace {

val f64_out(const std::vector<double>& x) {
  return val::global("Float64Array").new_(emscripten::typed_memory_view(x.size(), x.data()));
}

val rope_explain(val a) {
  const F32In q(a["q"]), k(a["k"]);
  attention::RopeExplainArgs r;
  r.head_dim = int_in(a["headDim"]);
  r.partial_rotary_factor = num_in(a["partialRotaryFactor"], 1.0);
  r.spec.theta = num_in(a["theta"], 10000.0);
  r.spec.max_positions = int_in(a["maxPositions"], 0);
  const val s = a["scaling"];
  if (given(s)) {
    auto st = attention::parse_rope_type(str_in(s["type"], "default"), r.spec.type);
    if (!st.ok()) return error_out(st);
    r.spec.factor = num_in(s["factor"], 1.0);
    r.spec.low_freq_factor = num_in(s["lowFreqFactor"], 1.0);
    r.spec.high_freq_factor = num_in(s["highFreqFactor"], 4.0);
    r.spec.original_max_positions = int_in(s["originalMaxPositions"], 0);
    r.spec.attention_factor = num_in(s["attentionFactor"], 0.0);
    r.spec.beta_fast = num_in(s["betaFast"], 32.0);
    r.spec.beta_slow = num_in(s["betaSlow"], 1.0);
  }
  r.q = q;
  r.k = k;
  r.m = int_in(a["m"]);
  r.n = int_in(a["n"]);
  r.from = int_in(a["from"]);
  r.to = int_in(a["to"]);
  auto out = attention::rope_explain(r);
  if (!out.ok()) return error_out(out.status());
  const attention::RopeExplain& e = out.value();
  val o = val::object();
  o.set("rotaryDim", e.rotary_dim);
  o.set("invFreq", f64_out(e.inv_freq));
  o.set("attentionScaling", e.attention_scaling);
  o.set("qRotated", f32_out(e.q_rotated));
  o.set("kRotated", f32_out(e.k_rotated));
  o.set("angleQ", f64_out(e.angle_q));
  o.set("angleK", f64_out(e.angle_k));
  o.set("score", e.score);
  o.set("from", r.from);
  o.set("to", r.to);
  o.set("curve", f64_out(e.curve));
  return o;
}

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_rope_explain) { emscripten::function("ropeExplain", &attnscope::bindings::rope_explain); }
