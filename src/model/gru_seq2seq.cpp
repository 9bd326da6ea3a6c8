// gru_seq2seq.cpp: d2l's Seq2SeqEncoder + Seq2SeqAttentionDecoder forward (see gru_seq2seq.h).
// Layer: model. The attention step is attention::additive_attention; the recurrences are ops::Gru.
#include "model/gru_seq2seq.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "attention/additive.h"
#include "core/check.h"
#include "core/text.h"
#include "model/heads.h"
#include "ops/linear.h"
#include "ops/validate.h"

namespace attnscope::model {

namespace {

std::size_t sz(long long n) { return static_cast<std::size_t>(n); }

std::string gru_name(const char* side, int k, const char* what) {
  return std::string(side) + ".gru.l" + std::to_string(k) + "." + what;
}

// "fn: <arg> (<value>) must be an integer from 0 to <hi>[ (<what>)]"
core::Status id_range_error(const char* fn, const std::string& arg, long long value, long long hi,
                            const char* what = nullptr) {
  std::string text = arg + " (" + std::to_string(value) + ") must be an integer from 0 to " + std::to_string(hi);
  if (what != nullptr) text.append(" (").append(what).append(")");
  return core::range_error(fn, arg, text);
}

}  // namespace

std::vector<std::pair<std::string, std::vector<std::int64_t>>> GruSeq2Seq::parameter_shapes(const GruSeq2SeqConfig& c) {
  const std::int64_t v = c.vocab_size, e = c.embed_size, h = c.hidden_size, a = c.attention_hidden;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> s;
  auto gru = [&](const char* side, std::int64_t in0) {
    for (int k = 0; k < c.num_layers; ++k) {
      s.push_back({gru_name(side, k, "w_ih"), {k == 0 ? in0 : h, 3 * h}});
      s.push_back({gru_name(side, k, "w_hh"), {h, 3 * h}});
      s.push_back({gru_name(side, k, "b_ih"), {3 * h}});
      s.push_back({gru_name(side, k, "b_hh"), {3 * h}});
    }
  };
  s.push_back({"encoder.embedding.weight", {v, e}});
  gru("encoder", e);
  s.push_back({"decoder.embedding.weight", {v, e}});
  s.push_back({"decoder.attention.wq", {h, a}});
  s.push_back({"decoder.attention.wk", {h, a}});
  s.push_back({"decoder.attention.wv", {a}});
  gru("decoder", h + e);
  s.push_back({"decoder.dense.weight", {h, v}});
  s.push_back({"decoder.dense.bias", {v}});
  return s;
}

core::Result<std::unique_ptr<GruSeq2Seq>> GruSeq2Seq::create(const GruSeq2SeqConfig& config, Params params,
                                                             const char* fn) {
  // 1. config
  const std::pair<const char*, int> sizes[] = {{"vocabSize", config.vocab_size},
                                               {"embedSize", config.embed_size},
                                               {"hiddenSize", config.hidden_size},
                                               {"numLayers", config.num_layers},
                                               {"attentionHidden", config.attention_hidden}};
  for (const auto& [name, value] : sizes) {
    if (value <= 0) {
      return core::range_error(fn, "config", std::string("config: ") + name + " (" + std::to_string(value) +
                                                 ") must be a positive integer");
    }
  }
  // 2. every tensor of the table: present, right shape and value count, finite
  const auto table = parameter_shapes(config);
  for (const auto& [name, shape] : table) {
    const std::string where = "weights: tensor " + core::quote_name(name);
    const auto it = params.find(name);
    if (it == params.end()) {
      return core::invalid_error(fn, "weights", where + " is missing (expected shape " + core::shape_text(shape) + ")");
    }
    const Param& p = it->second;
    ATTN_TRY(core::check_shape(fn, "weights", where, p.shape, shape));
    std::size_t count = 1;
    for (const auto d : shape) count *= sz(d);
    if (p.data.size() != count) {
      return core::range_error(fn, "weights", where + " has " + std::to_string(p.data.size()) +
                                                  " values, its shape " + core::shape_text(shape) + " needs " +
                                                  std::to_string(count));
    }
    if (!ops::all_finite(p.data)) ATTN_TRY(core::check_finite(fn, "weights", std::span<const float>(p.data), where));
  }
  // 3. nothing else
  if (params.size() != table.size()) {
    for (const auto& entry : params) {
      const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one
      const bool known = std::any_of(table.begin(), table.end(), [&](const auto& e) { return e.first == name; });
      if (!known) {
        return core::invalid_error(fn, "weights",
                                   "weights: tensor " + core::quote_name(name) + " is not a parameter of this model");
      }
    }
  }

  std::unique_ptr<GruSeq2Seq> m(new GruSeq2Seq());
  m->cfg_ = config;
  m->params_ = std::move(params);
  auto make_gru = [&](const char* side, int in0) {
    ops::GruWeights w;
    w.input_size = in0, w.hidden = config.hidden_size;
    for (int k = 0; k < config.num_layers; ++k) {
      w.layers.push_back({m->param(gru_name(side, k, "w_ih")), m->param(gru_name(side, k, "w_hh")),
                          m->param(gru_name(side, k, "b_ih")), m->param(gru_name(side, k, "b_hh"))});
    }
    return ops::Gru::create(std::move(w), fn);
  };
  auto enc = make_gru("encoder", config.embed_size);
  if (!enc.ok()) return enc.status();
  auto dec = make_gru("decoder", config.hidden_size + config.embed_size);
  if (!dec.ok()) return dec.status();
  m->encoder_gru_ = std::move(enc).value();
  m->decoder_gru_ = std::move(dec).value();
  return m;
}

core::Status GruSeq2Seq::check_ids(const char* fn, const char* arg, std::span<const std::int32_t> ids) const {
  ATTN_TRY(core::check_not_empty(fn, arg, ids.size()));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= cfg_.vocab_size) {
      return id_range_error(fn, std::string(arg) + "[" + std::to_string(i) + "]", ids[i], cfg_.vocab_size - 1,
                            "vocabSize - 1");
    }
  }
  return core::Status::Ok();
}

core::Result<GruSeq2SeqTrace> GruSeq2Seq::encode(std::span<const std::int32_t> source, int source_valid_len,
                                                 const char* fn) const {
  ATTN_TRY(check_ids(fn, "source", source));
  const int s = static_cast<int>(source.size()), e = cfg_.embed_size;
  if (source_valid_len < -1 || source_valid_len > s) {
    return id_range_error(fn, "sourceValidLen", source_valid_len, s, "source length");
  }
  // embedding rows [S, E] -> encoder GRU -> outputs [S, H], states [S, L, H], final [L, H]
  const std::span<const float> table = param("encoder.embedding.weight");
  std::vector<float> x(sz(s) * sz(e));
  for (int i = 0; i < s; ++i) {
    std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(sz(source[sz(i)]) * sz(e)), e,
                x.begin() + static_cast<std::ptrdiff_t>(sz(i) * sz(e)));
  }
  auto enc = encoder_gru_.run(x, s, {}, /*keep_states=*/true);
  if (!enc.ok()) return enc.status();
  GruSeq2SeqTrace tr;
  tr.source_len = s;
  tr.encoder_outputs = std::move(enc.value().outputs);
  tr.encoder_states = std::move(enc.value().states);
  tr.encoder_final = std::move(enc.value().final_state);
  return tr;
}

core::Status GruSeq2Seq::decode_step(GruSeq2SeqTrace& tr, std::vector<float>& state, std::int32_t y, int valid,
                                     const char* fn) const {
  const int h = cfg_.hidden_size, e = cfg_.embed_size, v = cfg_.vocab_size, l = cfg_.num_layers;
  // 1. attention: query = the top layer's state before this step; keys = values = enc_outputs
  attention::AdditiveArgs a;
  a.queries = std::span<const float>(state).subspan(sz(l - 1) * sz(h), sz(h));
  a.keys = a.values = tr.encoder_outputs;
  a.nq = 1, a.nk = tr.source_len, a.dq = a.dk = a.dv = h, a.hidden = cfg_.attention_hidden;
  a.wq = param("decoder.attention.wq"), a.wk = param("decoder.attention.wk"), a.wv = param("decoder.attention.wv");
  if (valid >= 0) a.valid_len = valid;  // -1: every source position
  auto att = attention::additive_attention(a);
  if (!att.ok()) {  // only float32 overflow can fail here: re-address it to the caller's function
    core::Status st = att.status();
    st.message = std::string(fn) + st.message.substr(st.function.size());
    st.function = fn;
    return st;
  }
  // 2. x = concat(context, embedding(y)) [H + E]
  std::vector<float> x(sz(h) + sz(e));
  std::copy(att.value().output.begin(), att.value().output.end(), x.begin());
  const std::span<const float> emb = param("decoder.embedding.weight").subspan(sz(y) * sz(e), sz(e));
  std::copy(emb.begin(), emb.end(), x.begin() + h);
  // 3. one step of every decoder layer; output o_t = the new top-layer state
  ATTN_TRY(decoder_gru_.step(x, state));
  const std::span<const float> o = std::span<const float>(state).subspan(sz(l - 1) * sz(h), sz(h));
  // 4. logits = o_t · dense.weight + dense.bias [V]
  const std::vector<float> logits = ops::linear(o, 1, h, param("decoder.dense.weight"), v, param("decoder.dense.bias"));
  ATTN_TRY(ops::check_result(fn, "logits", logits));

  tr.inputs.push_back(y);
  tr.scores.insert(tr.scores.end(), att.value().scores.begin(), att.value().scores.end());
  tr.weights.insert(tr.weights.end(), att.value().weights.begin(), att.value().weights.end());
  tr.contexts.insert(tr.contexts.end(), att.value().output.begin(), att.value().output.end());
  tr.states.insert(tr.states.end(), state.begin(), state.end());
  tr.outputs.insert(tr.outputs.end(), o.begin(), o.end());
  tr.logits.insert(tr.logits.end(), logits.begin(), logits.end());
  tr.predictions.push_back(argmax(logits));
  ++tr.steps;
  return core::Status::Ok();
}

core::Result<GruSeq2SeqTrace> GruSeq2Seq::run(std::span<const std::int32_t> source,
                                              std::span<const std::int32_t> target_input, int source_valid_len,
                                              const char* fn) const {
  ATTN_TRY(check_ids(fn, "source", source));
  ATTN_TRY(check_ids(fn, "target", target_input));
  auto enc = encode(source, source_valid_len, fn);
  if (!enc.ok()) return enc.status();
  GruSeq2SeqTrace& tr = enc.value();
  std::vector<float> state = tr.encoder_final;
  for (const std::int32_t y : target_input) ATTN_TRY(decode_step(tr, state, y, source_valid_len, fn));
  return std::move(tr);
}

core::Result<GruSeq2SeqGeneration> GruSeq2Seq::generate(std::span<const std::int32_t> source, std::int32_t bos,
                                                        std::int32_t eos, int max_new_tokens, int source_valid_len,
                                                        const char* fn) const {
  const long long last = cfg_.vocab_size - 1;
  if (bos < 0 || bos > last) return id_range_error(fn, "bos", bos, last, "vocabSize - 1");
  if (eos < 0 || eos > last) return id_range_error(fn, "eos", eos, last, "vocabSize - 1");
  if (max_new_tokens < 0 || max_new_tokens > kMaxNewTokens) {
    return id_range_error(fn, "maxNewTokens", max_new_tokens, kMaxNewTokens);
  }
  auto enc = encode(source, source_valid_len, fn);
  if (!enc.ok()) return enc.status();
  GruSeq2SeqGeneration g;
  g.trace = std::move(enc.value());
  std::vector<float> state = g.trace.encoder_final;
  std::int32_t y = bos;
  for (int t = 0; t < max_new_tokens; ++t) {
    ATTN_TRY(decode_step(g.trace, state, y, source_valid_len, fn));
    y = g.trace.predictions.back();
    if (y == eos) {
      g.ended_with_eos = true;
      break;
    }
    g.ids.push_back(y);
  }
  return g;
}

}  // namespace attnscope::model
