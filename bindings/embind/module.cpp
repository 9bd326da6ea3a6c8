// EMSCRIPTEN_BINDINGS for attnscope: one thin function per API call, no math (STYLE 4.2).
// Layer: bindings (the only place Emscripten appears). Each function takes the argument object that
// bindings/js/index.js has already validated and normalised (typed arrays, integers, defaults), calls the
// core and returns either a result object of fresh typed arrays or an error descriptor (errors.h).
// Built three times: against attnscope_core (scalar), attnscope_core_simd (-msimd128) and
// attnscope_core_simd_mt (SIMD128 with -pthread, the threaded module).
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "attention/attention.h"
#include "core/parallel.h"
#include "convert.h"
#include "errors.h"
#include "mha_call.h"
#include "kernels/kernels.h"
#include "model/decoder_layer.h"
#include "model/encoder_layer.h"
#include "ops/layer_norm.h"
#include "ops/positional.h"
#include "ops/softmax.h"
#include "tokenizers/tokenizers.h"

namespace attnscope::bindings {
namespace {

using emscripten::val;

val positional_encoding(val a) {
  auto r = ops::positional_encoding(int_in(a["n"]), int_in(a["d"]), num_in(a["base"], 10000.0));
  if (!r.ok()) return error_out(r.status());
  return f32_out(r.value());
}

val softmax(val a) {
  const auto x = f32_in(a["x"]);
  auto r = ops::softmax(x, int_in(a["rows"]), int_in(a["cols"]));
  if (!r.ok()) return error_out(r.status());
  return f32_out(r.value());
}

val layer_norm(val a) {
  const auto x = f32_in(a["x"]), gamma = f32_in(a["gamma"]), beta = f32_in(a["beta"]);
  auto r = ops::layer_norm(x, int_in(a["n"]), int_in(a["d"]), gamma, beta, num_in(a["eps"], 1e-5));
  if (!r.ok()) return error_out(r.status());
  return f32_out(r.value());
}

val attention_out(const attention::AttentionOutput& o, const char* output_name) {
  val out = val::object();
  out.set("scores", f32_out(o.scores));
  out.set("weights", f32_out(o.weights));
  out.set(output_name, f32_out(o.output));
  return out;
}

val simple_self_attention(val a) {
  const auto x = f32_in(a["x"]);
  auto r = attention::simple_self_attention(x, int_in(a["n"]), int_in(a["d"]));
  if (!r.ok()) return error_out(r.status());
  return attention_out(r.value(), "context");
}

val scaled_dot_product_attention(val a) {
  const auto q = f32_in(a["q"]), k = f32_in(a["k"]), v = f32_in(a["v"]);
  const auto mask = u8_in(a["mask"]);
  attention::SdpaArgs s;
  s.q = q; s.k = k; s.v = v;
  s.nq = int_in(a["nq"]); s.nk = int_in(a["nk"]); s.dk = int_in(a["dk"]); s.dv = int_in(a["dv"]);
  s.mask = mask;
  s.causal = bool_in(a["causal"], false);
  if (given(a["scale"])) s.scale = a["scale"].as<double>();
  auto r = attention::scaled_dot_product_attention(s);
  if (!r.ok()) return error_out(r.status());
  return attention_out(r.value(), "output");
}

// Owns the host copies of one attention block's weights for the duration of a call.
struct MhaWeightsIn {
  F32In wq, wk, wv, wo, bq, bk, bv, bo;
  explicit MhaWeightsIn(const val& p)
      : wq(p["wq"]), wk(p["wk"]), wv(p["wv"]), wo(p["wo"]), bq(p["bq"]), bk(p["bk"]), bv(p["bv"]), bo(p["bo"]) {}
  attention::MhaWeights spans() const {
    using S = std::span<const float>;
    return {S(wq), S(wk), S(wv), S(wo), bq, bk, bv, bo};
  }
};

val multi_head_attention(val a) {
  const MhaWeightsIn w(a);
  attention::MhaArgs m;
  m.d_model = int_in(a["dModel"]);
  m.num_heads = int_in(a["numHeads"]);
  m.kdim = int_in(a["kdim"], m.d_model);
  m.vdim = int_in(a["vdim"], m.d_model);
  m.w = w.spans();
  return run_multi_head_attention(a, m);
}

val additive_attention(val a) {
  const auto queries = f32_in(a["queries"]), keys = f32_in(a["keys"]), values = f32_in(a["values"]);
  const auto wq = f32_in(a["wq"]), wk = f32_in(a["wk"]), wv = f32_in(a["wv"]);
  attention::AdditiveArgs s;
  s.queries = queries; s.keys = keys; s.values = values;
  s.nq = int_in(a["nq"]); s.nk = int_in(a["nk"]); s.dq = int_in(a["dq"]); s.dk = int_in(a["dk"]);
  s.dv = int_in(a["dv"]); s.hidden = int_in(a["hidden"]);
  s.wq = wq; s.wk = wk; s.wv = wv;
  if (given(a["validLen"])) s.valid_len = a["validLen"].as<int>();
  auto r = attention::additive_attention(s);
  if (!r.ok()) return error_out(r.status());
  return attention_out(r.value(), "output");
}

val kernel_regression(val a) {
  const auto xt = f32_in(a["xTrain"]), yt = f32_in(a["yTrain"]), xq = f32_in(a["xQuery"]);
  auto r = attention::kernel_regression(xt, yt, xq, num_in(a["w"], 1.0));
  if (!r.ok()) return error_out(r.status());
  val out = val::object();
  out.set("weights", f32_out(r.value().weights));
  out.set("yPred", f32_out(r.value().y_pred));
  return out;
}

model::Activation activation_in(const val& a) {
  return str_in(a["activation"], "relu") == "gelu" ? model::Activation::kGelu : model::Activation::kRelu;
}

// Host copies of a layer's feed-forward and norm parameters.
struct LayerParamsIn {
  std::vector<float> w1, b1, w2, b2, n1g, n1b, n2g, n2b, n3g, n3b;
  explicit LayerParamsIn(const val& p)
      : w1(f32_in(p["w1"])), b1(f32_in(p["b1"])), w2(f32_in(p["w2"])), b2(f32_in(p["b2"])),
        n1g(f32_in(p["norm1Gamma"])), n1b(f32_in(p["norm1Beta"])), n2g(f32_in(p["norm2Gamma"])),
        n2b(f32_in(p["norm2Beta"])), n3g(f32_in(p["norm3Gamma"])), n3b(f32_in(p["norm3Beta"])) {}
};

val transformer_encoder_layer(val a) {
  const auto x = f32_in(a["x"]);
  const auto mask = u8_in(a["mask"]);
  const val p = a["params"];
  const MhaWeightsIn attn(p);
  const LayerParamsIn lp(p);
  model::EncoderLayerArgs e;
  e.x = x; e.n = int_in(a["n"]); e.d_model = int_in(a["dModel"]); e.num_heads = int_in(a["numHeads"]);
  e.d_ff = int_in(a["dFF"]);
  e.attn = attn.spans();
  e.ff = {std::span<const float>(lp.w1), lp.b1, std::span<const float>(lp.w2), lp.b2, {}, {}};
  e.norm1 = {lp.n1g, lp.n1b};
  e.norm2 = {lp.n2g, lp.n2b};
  e.norm_first = bool_in(a["normFirst"], false);
  e.activation = activation_in(a);
  e.eps = num_in(a["eps"], 1e-5);
  e.mask = mask;
  e.causal = bool_in(a["causal"], false);
  auto r = model::encoder_layer(e);
  if (!r.ok()) return error_out(r.status());
  val out = val::object();
  out.set("output", f32_out(r.value().output));
  out.set("weights", f32_out(r.value().weights));
  return out;
}

val transformer_decoder_layer(val a) {
  const auto x = f32_in(a["x"]), memory = f32_in(a["memory"]);
  const auto memory_mask = u8_in(a["memoryMask"]);
  const val p = a["params"];
  const MhaWeightsIn self_w(p["self"]), cross_w(p["cross"]);
  const LayerParamsIn lp(p);
  model::DecoderLayerArgs d;
  d.x = x; d.memory = memory;
  d.n = int_in(a["n"]); d.m = int_in(a["m"]); d.d_model = int_in(a["dModel"]);
  d.num_heads = int_in(a["numHeads"]); d.d_ff = int_in(a["dFF"]);
  d.self_attn = self_w.spans();
  d.cross_attn = cross_w.spans();
  d.ff = {std::span<const float>(lp.w1), lp.b1, std::span<const float>(lp.w2), lp.b2, {}, {}};
  d.norm1 = {lp.n1g, lp.n1b};
  d.norm2 = {lp.n2g, lp.n2b};
  d.norm3 = {lp.n3g, lp.n3b};
  d.norm_first = bool_in(a["normFirst"], false);
  d.activation = activation_in(a);
  d.eps = num_in(a["eps"], 1e-5);
  d.causal = bool_in(a["causal"], true);
  d.memory_mask = memory_mask;
  auto r = model::decoder_layer(d);
  if (!r.ok()) return error_out(r.status());
  val out = val::object();
  out.set("output", f32_out(r.value().output));
  out.set("selfWeights", f32_out(r.value().self_weights));
  out.set("crossWeights", f32_out(r.value().cross_weights));
  return out;
}

// ---- tokenizers

val tokenization_out(const tokenizers::Tokenization& t) {
  val out = val::object();
  out.set("tokens", strings_out(t.tokens));
  out.set("offsets", i32_out(t.offsets));
  if (!t.ids.empty() || t.tokens.empty()) out.set("ids", i32_out(t.ids));
  return out;
}

val tokenize(std::string text, std::string kind) {
  auto r = tokenizers::tokenize(text, kind == "char" ? tokenizers::Kind::kChar : tokenizers::Kind::kWord);
  if (!r.ok()) return error_out(r.status());
  return tokenization_out(r.value());
}

// A BPE tokenizer handle: constructed empty, then load() returns null or an error descriptor, so a
// failed load never leaves a half-built object behind an Embind constructor.
class BpeHandle {
 public:
  val load(std::string vocab, std::string merges) {
    auto r = tokenizers::BpeTokenizer::create(vocab, merges);
    if (!r.ok()) return error_out(r.status());
    tok_ = std::move(r).value();
    return val::null();
  }
  val encode(std::string text) const {
    auto r = tok_->encode(text);
    if (!r.ok()) return error_out(r.status());
    return tokenization_out(r.value());
  }
  val decode(val ids) const {
    const auto v = i32_in(ids);
    auto r = tok_->decode(v);
    if (!r.ok()) return error_out(r.status());
    val out = val::object();
    out.set("text", val(r.value()));
    return out;
  }
  int vocab_size() const { return static_cast<int>(tok_->vocab_size()); }
  std::string token_text(int id) const { return tok_->token_text(id); }

 private:
  std::unique_ptr<tokenizers::BpeTokenizer> tok_;
};

// ---- module facts

std::string version() { return ATTNSCOPE_VERSION; }
std::string isa() { return kernels::active_kernels().isa; }
// Threads the core's loops may use (core/parallel.h); the threaded module starts its workers here, from
// the Web Workers the glue pre-loaded (loader.js sizes that pool). 1 in the single-threaded modules.
int set_threads(int n) { return core::set_thread_count(n); }

#if defined(__EMSCRIPTEN_PTHREADS__)
// Runs in a pool thread's own worker: compiles the relaxed-SIMD kernel module from its bytes (in the shared
// heap), instantiates it on the shared memory and puts its export at `index` of this thread's table, which must
// be the next free slot (the main thread's table grew to the same length). 1 when done, 0 otherwise (then this
// thread keeps the built-in kernel).
EM_JS(int, install_kernel_in_this_thread, (const unsigned char* bytes, int size, int index), {
  try {
    var mod = new WebAssembly.Module(HEAPU8.slice(bytes, bytes + size));
    var fn = new WebAssembly.Instance(mod, {env : {memory : wasmMemory}}).exports['f32_gemm_ukernel_4x8__wasmrelaxedsimd'];
    if (typeof fn !== 'function' || wasmTable.length !== index) return 0;
    wasmTable.grow(1);
    wasmTable.set(index, fn);
    return 1;
  } catch (e) {
    return 0;
  }
});

std::string g_kernel_module;  // the kernel module's bytes, for the pool threads to install
int g_kernel_index = 0;

void install_kernel_on_worker() {
  const bool ok = g_kernel_index != 0 &&
                  install_kernel_in_this_thread(reinterpret_cast<const unsigned char*>(g_kernel_module.data()),
                                                static_cast<int>(g_kernel_module.size()), g_kernel_index) == 1;
  kernels::set_gemm_ukernel_4x8(
      ok ? reinterpret_cast<kernels::GemmUkernel4x8Fn>(static_cast<std::uintptr_t>(g_kernel_index)) : nullptr);
}
#endif

// Installs the GEMM micro-kernel at table index `index` (the relaxed-SIMD leaf module's export, put in this
// module's table by bindings/js/loader.js; 0 restores the built-in one). True when it is in use. In the threaded
// module every pool thread has a table of its own: each puts the kernel at the same index from
// `kernel_module` (the leaf module's bytes) before its next piece of work (core::set_worker_init).
bool set_gemm_micro_kernel(std::uintptr_t index, std::string kernel_module) {
#if defined(__EMSCRIPTEN_PTHREADS__)
  g_kernel_module = std::move(kernel_module);
  g_kernel_index = static_cast<int>(index);
  core::set_worker_init(&install_kernel_on_worker);
#else
  (void)kernel_module;
#endif
  // A function pointer in wasm32 is its index in the table (0 is the null entry).
  return kernels::set_gemm_ukernel_4x8(reinterpret_cast<kernels::GemmUkernel4x8Fn>(index));
}

// Heap facts for leak tests: total wasm memory and bytes currently allocated by malloc.
val memory_stats() {
  val out = val::object();
  out.set("heapSize", val(static_cast<double>(emscripten_get_heap_size())));
  // mallinfo counts in int: above 2 GiB it reads negative, so as unsigned (wasm32: at most 4 GiB)
  out.set("allocated", val(static_cast<double>(static_cast<std::uint32_t>(mallinfo().uordblks))));
  return out;
}

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope) {
  using namespace attnscope::bindings;
  namespace em = emscripten;
  em::function("version", &version);
  em::function("isa", &isa);
  em::function("setThreads", &set_threads);
  em::function("setGemmMicroKernel", &set_gemm_micro_kernel);
  em::function("memoryStats", &memory_stats);
  em::function("positionalEncoding", &positional_encoding);
  em::function("softmax", &softmax);
  em::function("layerNorm", &layer_norm);
  em::function("simpleSelfAttention", &simple_self_attention);
  em::function("scaledDotProductAttention", &scaled_dot_product_attention);
  em::function("multiHeadAttention", &multi_head_attention);
  em::function("additiveAttention", &additive_attention);
  em::function("kernelRegression", &kernel_regression);
  em::function("transformerEncoderLayer", &transformer_encoder_layer);
  em::function("transformerDecoderLayer", &transformer_decoder_layer);
  em::function("tokenize", &tokenize);
  em::class_<BpeHandle>("BpeHandle")
      .constructor<>()
      .function("load", &BpeHandle::load)
      .function("encode", &BpeHandle::encode)
      .function("decode", &BpeHandle::decode)
      .function("vocabSize", &BpeHandle::vocab_size)
      .function("tokenText", &BpeHandle::token_text);
}
