// core::Status -> the error descriptor returned to bindings/js/errors.js (STYLE 4.5: "C reports, JS throws").
// Layer: bindings. Every binding returns either a result object or { error: { kind, message, fn, arg } };
// errors.js is the single place that turns the descriptor into a TypeError / RangeError / Error.
#pragma once

#include <emscripten/val.h>

#include "core/status.h"

namespace attnscope::bindings {

inline emscripten::val error_out(const core::Status& s) {
  using emscripten::val;
  const char* kind = s.kind == core::ErrorKind::kType ? "TypeError"
                     : s.kind == core::ErrorKind::kRange ? "RangeError"
                                                         : "Error";
  val e = val::object();
  e.set("kind", val(kind));
  e.set("message", val(s.message));
  e.set("fn", val(s.function));
  e.set("arg", val(s.argument));
  val out = val::object();
  out.set("error", e);
  return out;
}

}  // namespace attnscope::bindings
