// Embind face of src/model/inside.h: mean ablation values (headMeans), activation patching and ablation sweeps as
// a session whose sites JS runs in chunks (progress, cancellation), and direct logit attribution. Layer:
// bindings; no math. bindings/js/inside.js has checked the JS types; the core names its operations as the JS calls
// ("patch", "ablationSweep", "headMeans", "logitAttribution").
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "convert.h"
#include "errors.h"
#include "model/inside.h"
#include "model_handle.h"

namespace attnscope::bindings {
namespace {

using emscripten::val;

// A token: a number is an id, a string a token text.
model::TokenChoice token_in(const val& v) {
  model::TokenChoice c;
  if (v.isNumber()) {
    c.id = v.as<int>();
  } else {
    c.text = v.as<std::string>();
  }
  return c;
}

// args.metric: 'loss' | 'logit' | 'logitDiff'; args.tokens: [a] or [a, b]
model::Metric metric_in(const val& args) {
  model::Metric m;
  const std::string kind = str_in(args["metric"], "loss");
  m.kind = kind == "logitDiff" ? model::Metric::Kind::kLogitDiff
           : kind == "logit"   ? model::Metric::Kind::kLogit
                               : model::Metric::Kind::kLoss;
  const val tokens = args["tokens"];
  if (given(tokens)) {
    const int count = tokens["length"].as<int>();
    if (count > 0) m.a = token_in(tokens[0]);
    if (count > 1) m.b = token_in(tokens[1]);
  }
  return m;
}

}  // namespace

class InsideHandle {
 public:
  // args: { kind: 'patch', clean, corrupted, residual } or { kind: 'ablate', text, means? }, plus metric/tokens.
  val start(const ModelHandle& model, val args) {
    const model::Metric metric = metric_in(args);
    auto r = args["kind"].as<std::string>() == "patch"
                 ? model::Inside::patching(model.model(), args["clean"].as<std::string>(),
                                           args["corrupted"].as<std::string>(), metric, bool_in(args["residual"], false))
                 : model::Inside::ablation(model.model(), args["text"].as<std::string>(), metric, f32_in(args["means"]));
    if (!r.ok()) return error_out(r.status());
    inside_ = std::move(r).value();
    return val::null();
  }
  val info() const {
    val o = val::object();
    o.set("rows", inside_->rows());
    o.set("cols", inside_->cols());
    o.set("base", inside_->base());
    o.set("clean", inside_->clean());
    val ids = val::array();
    ids.set(0, inside_->id_a());
    ids.set(1, inside_->id_b());
    o.set("ids", ids);
    o.set("tokens", strings_out(inside_->side().tokens));
    return o;
  }
  val run(int begin, int end) const {
    auto r = inside_->run(begin, end);
    if (!r.ok()) return error_out(r.status());
    return f32_out(r.value());
  }

 private:
  std::unique_ptr<model::Inside> inside_;
};

namespace {

val head_means(const ModelHandle& model, val texts) {
  std::vector<std::string> t;
  const int count = texts["length"].as<int>();
  for (int i = 0; i < count; ++i) t.push_back(texts[i].as<std::string>());
  auto r = model::Inside::head_means(model.model(), t);
  if (!r.ok()) return error_out(r.status());
  const model::HeadMeans& m = r.value();
  val o = val::object();
  o.set("numLayers", m.layers);
  o.set("numHeads", m.heads);
  o.set("headDim", m.head_dim);
  o.set("positions", m.positions);
  o.set("means", f32_out(m.values));
  return o;
}

val logit_attribution(const ModelHandle& model, std::string text, val token) {
  auto r = model::Inside::attribution(model.model(), text, token_in(token));
  if (!r.ok()) return error_out(r.status());
  const model::Attribution& a = r.value();
  val o = val::object();
  o.set("numLayers", a.layers);
  o.set("numHeads", a.heads);
  o.set("values", f32_out(a.values));
  o.set("id", a.id);
  o.set("logit", a.logit);
  o.set("scale", a.scale);
  return o;
}

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_inside) {
  using attnscope::bindings::InsideHandle;
  emscripten::class_<InsideHandle>("InsideHandle")
      .constructor<>()
      .function("start", &InsideHandle::start)
      .function("info", &InsideHandle::info)
      .function("run", &InsideHandle::run);
  emscripten::function("headMeans", &attnscope::bindings::head_means);
  emscripten::function("logitAttribution", &attnscope::bindings::logit_attribution);
}
