// The per-call half of a multiHeadAttention binding, shared by the stateless call (module.cpp) and the
// prepared module's forward() (mha_handle.cpp). Layer: bindings: converts and forwards, no math.
#pragma once

#include <emscripten/val.h>

#include <span>

#include "attention/multi_head.h"
#include "convert.h"
#include "errors.h"

namespace attnscope::bindings {

// Reads query, key (= query), value (= key), nq, nk (= nq), mask, causal and needWeights from the
// validated argument object `a`, runs the core with the dims and weights the caller put in `m`, and
// returns { output, weights? } or an error descriptor. A defaulted key/value is the same span as the
// query (one copy; the core then scans it once).
inline emscripten::val run_multi_head_attention(const emscripten::val& a, attention::MhaArgs m) {
  using emscripten::val;
  const F32In query(a["query"]), key_in(a["key"]), value_in(a["value"]);
  using Span = std::span<const float>;
  const Span key = given(a["key"]) ? Span(key_in) : Span(query);
  const Span value = given(a["value"]) ? Span(value_in) : key;
  const auto mask = u8_in(a["mask"]);
  m.query = query;
  m.key = key;
  m.value = value;
  m.nq = int_in(a["nq"]);
  m.nk = int_in(a["nk"], m.nq);
  m.mask = mask;
  m.causal = bool_in(a["causal"], false);
  m.need_weights = bool_in(a["needWeights"], true);
  auto r = attention::multi_head_attention(m);
  if (!r.ok()) return error_out(r.status());
  val out = val::object();
  out.set("output", f32_out(r.value().output));
  if (m.need_weights) out.set("weights", f32_out(r.value().weights));
  return out;
}

}  // namespace attnscope::bindings
