// A "prepared" multi-head attention: the weights are copied into the wasm heap once and kept there, so a
// forward() call moves only the inputs (as onnxruntime-web holds weights as initializers). No math
// (STYLE 4.2): forward() calls attention::multi_head_attention with spans into the owned copies.
// Layer: bindings. Pattern of BpeHandle (module.cpp): constructed empty, then load() returns null or an
// error descriptor, so a failed load never leaves a half-built object behind an Embind constructor.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <vector>

#include "attention/multi_head.h"
#include "convert.h"
#include "errors.h"
#include "mha_call.h"

namespace attnscope::bindings {
namespace {

using emscripten::val;

class MhaHandle {
 public:
  // a: { dModel, numHeads, kdim, vdim, wq, wk, wv, wo, bq?, bk?, bv?, bo? } as validated by index.js.
  // Checks everything multiHeadAttention checks about these arguments (incl. finiteness), once.
  val load(val a) {
    const char* fn = "createMultiHeadAttention";
    const int d_model = int_in(a["dModel"]);
    const int num_heads = int_in(a["numHeads"]);
    const int kdim = int_in(a["kdim"], d_model);
    const int vdim = int_in(a["vdim"], d_model);
    std::vector<float> wq = f32_in(a["wq"]), wk = f32_in(a["wk"]), wv = f32_in(a["wv"]), wo = f32_in(a["wo"]);
    std::vector<float> bq = f32_in(a["bq"]), bk = f32_in(a["bk"]), bv = f32_in(a["bv"]), bo = f32_in(a["bo"]);
    const core::Status s = attention::detail::check_mha_config(fn, d_model, num_heads, kdim, vdim,
                                                               attention::MhaWeights{wq, wk, wv, wo, bq, bk, bv, bo});
    if (!s.ok()) return error_out(s);
    d_model_ = d_model; num_heads_ = num_heads; kdim_ = kdim; vdim_ = vdim;
    wq_ = std::move(wq); wk_ = std::move(wk); wv_ = std::move(wv); wo_ = std::move(wo);
    bq_ = std::move(bq); bk_ = std::move(bk); bv_ = std::move(bv); bo_ = std::move(bo);
    return val::null();
  }

  // a: { query, key?, value?, nq, nk?, mask?, causal?, needWeights? } as validated by index.js.
  val forward(val a) const {
    attention::MhaArgs m;
    m.d_model = d_model_;
    m.num_heads = num_heads_;
    m.kdim = kdim_;
    m.vdim = vdim_;
    m.w = attention::MhaWeights{wq_, wk_, wv_, wo_, bq_, bk_, bv_, bo_};
    m.fn = "forward";
    m.weights_checked = true;  // load() checked them once (detail::check_mha_config)
    return run_multi_head_attention(a, m);
  }

 private:
  int d_model_ = 0, num_heads_ = 0, kdim_ = 0, vdim_ = 0;
  std::vector<float> wq_, wk_, wv_, wo_, bq_, bk_, bv_, bo_;
};

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_mha) {
  using attnscope::bindings::MhaHandle;
  emscripten::class_<MhaHandle>("MhaHandle")
      .constructor<>()
      .function("load", &MhaHandle::load)
      .function("forward", &MhaHandle::forward);
}
