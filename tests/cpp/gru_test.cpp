// gru_test.cpp: ops::Gru against torch.nn.GRU fixtures and a hand-worked step, and model::GruSeq2Seq (d2l's
// Bahdanau GRU encoder-decoder) against the d2l modules run in PyTorch: teacher-forced traces, greedy decoding,
// and the error messages for bad weights and ids. Fixtures: tests/fixtures/gru/ (generate.py there).
#include <catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/gru_seq2seq.h"
#include "ops/gru.h"
#include "support/compare.h"
#include "support/fixtures.h"
#include "support/random.h"

namespace {

namespace fx = attnscope::test;
namespace ops = attnscope::ops;
using attnscope::model::GruSeq2Seq;
using attnscope::model::GruSeq2SeqConfig;
using attnscope::model::GruSeq2SeqTrace;
using attnscope::test::check_close;
using attnscope::test::random_vec;
using fx::json;

constexpr double kAtol = 1e-5;
constexpr double kRtol = 1e-4;

// The cases of tests/fixtures/gru/manifest.json for one kind ("gru" or "seq2seq"), loaded and header-checked.
std::vector<fx::Fixture> gru_fixtures(const std::string& kind) {
  const std::string dir = fx::fixtures_dir() + "/gru/";
  const json manifest = fx::read_json(dir + "manifest.json");
  fx::check_header(manifest, "gru/manifest.json");
  std::vector<fx::Fixture> out;
  for (const json& c : manifest.at("cases")) {
    if (c.at("function") != kind) continue;
    fx::Fixture f;
    f.name = "gru/" + c.at("file").get<std::string>();
    f.doc = fx::read_json(dir + c.at("file").get<std::string>());
    fx::check_header(f.doc, f.name);
    REQUIRE(f.doc.at("function") == kind);
    out.push_back(std::move(f));
  }
  return out;
}

// GruWeights viewing the fixture's "weights" object (l{k}.w_ih ...), which `arrays` owns.
ops::GruWeights gru_weights(const fx::Fixture& f, const fx::ArgArrays& arrays) {
  const json& a = f.args();
  ops::GruWeights w;
  w.input_size = a.at("inputSize"), w.hidden = a.at("hidden");
  for (int k = 0; k < a.at("numLayers").get<int>(); ++k) {
    const std::string p = "weights.l" + std::to_string(k) + ".";
    w.layers.push_back({arrays.f(p + "w_ih"), arrays.f(p + "w_hh"), arrays.f(p + "b_ih"), arrays.f(p + "b_hh")});
  }
  return w;
}

std::vector<std::int32_t> ids(const json& a) { return a.get<std::vector<std::int32_t>>(); }

GruSeq2SeqConfig seq2seq_config(const json& c) {
  GruSeq2SeqConfig cfg;
  cfg.vocab_size = c.at("vocabSize"), cfg.embed_size = c.at("embedSize"), cfg.hidden_size = c.at("hiddenSize");
  cfg.num_layers = c.at("numLayers"), cfg.attention_hidden = c.at("attentionHidden");
  return cfg;
}

GruSeq2Seq::Params seq2seq_params(const json& weights) {
  GruSeq2Seq::Params p;
  for (auto it = weights.begin(); it != weights.end(); ++it) {
    p[it.key()] = {it->at("shape").get<std::vector<std::int64_t>>(), fx::floats(it->at("data"))};
  }
  return p;
}

int source_valid_len(const json& args) { return args.value("sourceValidLen", -1); }

// Every per-step trace of `got` against an expected object with d2l's names.
void check_decoder_trace(const GruSeq2SeqTrace& got, const json& want, const std::string& what) {
  CHECK(got.inputs == ids(want.at("inputs")));
  CHECK(got.predictions == ids(want.at("predictions")));
  check_close(got.scores, fx::doubles(want.at("scores")), kAtol, kRtol, what + " scores");
  check_close(got.weights, fx::doubles(want.at("weights")), kAtol, kRtol, what + " weights");
  check_close(got.contexts, fx::doubles(want.at("contexts")), kAtol, kRtol, what + " contexts");
  check_close(got.states, fx::doubles(want.at("states")), kAtol, kRtol, what + " states");
  check_close(got.outputs, fx::doubles(want.at("outputs")), kAtol, kRtol, what + " outputs");
  check_close(got.logits, fx::doubles(want.at("logits")), kAtol, kRtol, what + " logits");
}

// A seq2seq model with seeded weights (the table of parameter_shapes), for the error tests.
GruSeq2Seq::Params seeded_params(const GruSeq2SeqConfig& cfg) {
  GruSeq2Seq::Params p;
  std::uint64_t seed = 700;
  for (const auto& [name, shape] : GruSeq2Seq::parameter_shapes(cfg)) {
    std::size_t n = 1;
    for (const auto d : shape) n *= static_cast<std::size_t>(d);
    p[name] = {shape, random_vec(n, seed++, 0.4f)};
  }
  return p;
}

}  // namespace

// ---------------------------------------------------------------- ops::Gru

// One unit, input 1, every weight 0 except W_in = 1 and W_hn = 2; x = 1, h = 0.5:
//   r = σ(0) = 0.5, z = σ(0) = 0.5
//   b_hn = 0: n = tanh(1 + 0.5 · (2 · 0.5 + 0))  = tanh(1.5) = 0.905148254; h' = 0.5 n + 0.5 · 0.5 = 0.702574127
//   b_hn = 1: n = tanh(1 + 0.5 · (2 · 0.5 + 1))  = tanh(2)   = 0.964027580; h' = 0.732013790
// The second line tells PyTorch's gate (r multiplies h W_hn + b_hn) from Cho et al.'s (r ⊙ h before W_hn, which
// gives tanh(1 + 2 · 0.25 + 1) = tanh(2.5) and h' = 0.743080).
TEST_CASE("gru: hand-worked one-unit step (torch's reset gate applies to h W_hn + b_hn)", "[ops][gru]") {
  const std::vector<float> w_ih{0, 0, 1}, w_hh{0, 0, 2}, b_ih{0, 0, 0};
  for (const auto& [b_hn, want] : {std::pair{0.0f, 0.702574127}, std::pair{1.0f, 0.732013790}}) {
    const std::vector<float> b_hh{0, 0, b_hn};
    const ops::GruWeights w{1, 1, {{w_ih, w_hh, b_ih, b_hh}}};
    std::vector<float> state{0.5f};
    REQUIRE(ops::gru_step(std::vector<float>{1.0f}, w, state).ok());
    CHECK(state[0] == Approx(want).margin(1e-6));
    const std::vector<float> h0{0.5f};
    auto r = ops::gru(std::vector<float>{1.0f}, 1, w, h0);
    REQUIRE(r.ok());
    CHECK(r.value().outputs[0] == Approx(want).margin(1e-6));
    CHECK(r.value().final_state[0] == Approx(want).margin(1e-6));
  }
}

TEST_CASE("gru: torch.nn.GRU fixtures (outputs, final state, every layer's states)", "[ops][gru][fixtures]") {
  const auto fixtures = gru_fixtures("gru");
  REQUIRE(fixtures.size() == 5);
  for (const fx::Fixture& f : fixtures) {
    const fx::ArgArrays arrays(f.args());
    const ops::GruWeights w = gru_weights(f, arrays);
    auto g = ops::Gru::create(w);
    REQUIRE(g.ok());
    auto r = g.value().run(arrays.f("x"), f.args().at("steps"), arrays.f("h0"), /*keep_states=*/true);
    REQUIRE(r.ok());
    check_close(r.value().outputs, fx::doubles(f.expected().at("outputs")), f.atol(), f.rtol(), f.name + " outputs");
    check_close(r.value().final_state, fx::doubles(f.expected().at("finalState")), f.atol(), f.rtol(),
                f.name + " finalState");
    check_close(r.value().states, fx::doubles(f.expected().at("states")), f.atol(), f.rtol(), f.name + " states");
    // without keep_states: the same outputs, no per-step states
    auto lean = g.value().run(arrays.f("x"), f.args().at("steps"), arrays.f("h0"));
    REQUIRE(lean.ok());
    CHECK(lean.value().outputs == r.value().outputs);
    CHECK(lean.value().states.empty());
  }
}

TEST_CASE("gru: step() over the sequence equals run()", "[ops][gru][fixtures]") {
  for (const fx::Fixture& f : gru_fixtures("gru")) {
    const fx::ArgArrays arrays(f.args());
    auto g = ops::Gru::create(gru_weights(f, arrays));
    REQUIRE(g.ok());
    const int steps = f.args().at("steps"), in = g.value().input_size();
    const std::size_t lh = static_cast<std::size_t>(g.value().num_layers() * g.value().hidden());
    auto seq = g.value().run(arrays.f("x"), steps, arrays.f("h0"), true);
    REQUIRE(seq.ok());
    std::vector<float> state(lh, 0.0f), states;
    if (!arrays.f("h0").empty()) state.assign(arrays.f("h0").begin(), arrays.f("h0").end());
    for (int t = 0; t < steps; ++t) {
      REQUIRE(g.value().step(arrays.f("x").subspan(static_cast<std::size_t>(t * in), static_cast<std::size_t>(in)),
                             state).ok());
      states.insert(states.end(), state.begin(), state.end());
    }
    check_close(states, seq.value().states, 1e-6, 1e-6, f.name + " step vs run");
    check_close(states, fx::doubles(f.expected().at("states")), f.atol(), f.rtol(), f.name + " step vs torch");
  }
}

TEST_CASE("gru: bad arguments give errors naming the argument", "[ops][gru][errors]") {
  const int in = 4, h = 6;
  const auto w_ih0 = random_vec(in * 3 * h, 1), w_ih1 = random_vec(h * 3 * h, 2), w_hh = random_vec(h * 3 * h, 3);
  const auto b = random_vec(3 * h, 4);
  ops::GruWeights w{in, h, {{w_ih0, w_hh, b, b}, {w_ih1, w_hh, b, b}}};
  const auto x = random_vec(5 * in, 5);
  REQUIRE(ops::gru(x, 5, w).ok());

  auto message = [](const attnscope::core::Status& s) { return s.message; };
  ops::GruWeights bad = w;
  bad.layers[1].w_ih = w_ih0;  // layer 1 reads H = 6 features, not inputSize = 4
  CHECK(message(ops::gru(x, 5, bad).status()) == "gru: l1.w_ih must have length 108 (hidden*3hidden = 6*18), got 72");
  CHECK(ops::Gru::create(bad, "loadBundled").status().message.rfind("loadBundled: l1.w_ih ", 0) == 0);
  bad = w, bad.layers[0].b_hh = {};
  CHECK(message(ops::gru(x, 5, bad).status()) == "gru: l0.b_hh is required");
  std::vector<float> nan_b = b;
  nan_b[2] = std::numeric_limits<float>::quiet_NaN();
  bad = w, bad.layers[0].b_hh = nan_b;
  CHECK(message(ops::gru(x, 5, bad).status()) == "gru: l0.b_hh[2] (NaN) must be finite");
  bad = w, bad.hidden = 0;
  CHECK(message(ops::gru(x, 5, bad).status()) == "gru: hidden (0) must be a positive integer");
  bad = w, bad.layers.clear();
  CHECK(message(ops::gru(x, 5, bad).status()) == "gru: numLayers (0) must be a positive integer");

  CHECK(message(ops::gru(x, 0, w).status()) == "gru: steps (0) must be a positive integer");
  CHECK(message(ops::gru(std::span<const float>(x).first(19), 5, w).status()) ==
        "gru: x must have length 20 (steps*inputSize = 5*4), got 19");
  const auto h0 = random_vec(h, 6);
  CHECK(message(ops::gru(x, 5, w, h0).status()) == "gru: h0 must have length 12 (numLayers*hidden = 2*6), got 6");
  std::vector<float> state(2 * h, 0.0f);
  CHECK(message(ops::gru_step(std::span<const float>(x).first(3), w, state)) ==
        "gru: x must have length 4 (inputSize = 4), got 3");
  std::vector<float> short_state(h, 0.0f);
  CHECK(message(ops::gru_step(std::span<const float>(x).first(4), w, short_state)) ==
        "gru: state must have length 12 (numLayers*hidden = 2*6), got 6");
  state[7] = std::numeric_limits<float>::infinity();
  CHECK(message(ops::gru_step(std::span<const float>(x).first(4), w, state)) == "gru: state[7] (Infinity) must be finite");
  // still correct afterwards: step == first step of run
  std::fill(state.begin(), state.end(), 0.0f);
  REQUIRE(ops::gru_step(std::span<const float>(x).first(4), w, state).ok());
  auto r = ops::gru(std::span<const float>(x).first(4), 1, w);
  REQUIRE(r.ok());
  check_close(state, r.value().final_state, 1e-6, 1e-6, "after errors");
}

// ---------------------------------------------------------------- model::GruSeq2Seq

TEST_CASE("GruSeq2Seq: d2l Bahdanau encoder-decoder fixtures, teacher forcing", "[model][gru_seq2seq][fixtures]") {
  const auto fixtures = gru_fixtures("seq2seq");
  REQUIRE(fixtures.size() == 2);
  for (const fx::Fixture& f : fixtures) {
    const json& a = f.args();
    auto m = GruSeq2Seq::create(seq2seq_config(a.at("config")), seq2seq_params(a.at("weights")), "loadBundled");
    REQUIRE(m.ok());
    const auto source = ids(a.at("source")), target = ids(a.at("target"));
    auto r = m.value()->run(source, target, source_valid_len(a));
    REQUIRE(r.ok());
    const GruSeq2SeqTrace& tr = r.value();
    CHECK(tr.source_len == static_cast<int>(source.size()));
    CHECK(tr.steps == static_cast<int>(target.size()));
    const json& e = f.expected();
    check_close(tr.encoder_outputs, fx::doubles(e.at("encoderOutputs")), f.atol(), f.rtol(), f.name + " encoderOutputs");
    check_close(tr.encoder_states, fx::doubles(e.at("encoderStates")), f.atol(), f.rtol(), f.name + " encoderStates");
    check_close(tr.encoder_final, fx::doubles(e.at("encoderFinal")), f.atol(), f.rtol(), f.name + " encoderFinal");
    check_decoder_trace(tr, e, f.name);
  }
}

TEST_CASE("GruSeq2Seq: greedy decoding matches d2l's predict loop (eos stop and max tokens)",
          "[model][gru_seq2seq][fixtures]") {
  for (const fx::Fixture& f : gru_fixtures("seq2seq")) {
    const json& a = f.args();
    auto m = GruSeq2Seq::create(seq2seq_config(a.at("config")), seq2seq_params(a.at("weights")), "loadBundled");
    REQUIRE(m.ok());
    const auto source = ids(a.at("source"));
    for (const char* run : {"eos", "max"}) {
      const json& want = f.expected().at("generate").at(run);
      auto g = m.value()->generate(source, a.at("bos"), want.at("eos"), a.at("maxNewTokens"), source_valid_len(a));
      REQUIRE(g.ok());
      CHECK(g.value().ids == ids(want.at("ids")));
      CHECK(g.value().ended_with_eos == want.at("endedWithEos").get<bool>());
      check_decoder_trace(g.value().trace, want, f.name + " generate " + run);
      // Teacher forcing on bos + the generated ids reruns the same steps: identical numbers.
      auto forced = m.value()->run(source, g.value().trace.inputs, source_valid_len(a));
      REQUIRE(forced.ok());
      CHECK(forced.value().logits == g.value().trace.logits);
      CHECK(forced.value().weights == g.value().trace.weights);
    }
    auto none = m.value()->generate(source, a.at("bos"), 0, 0, source_valid_len(a));
    REQUIRE(none.ok());
    CHECK(none.value().ids.empty());
    CHECK(none.value().trace.steps == 0);
    CHECK(none.value().trace.encoder_outputs.size() == source.size() * a.at("config").at("hiddenSize").get<std::size_t>());
  }
}

TEST_CASE("GruSeq2Seq: bad weights give errors naming the tensor", "[model][gru_seq2seq][errors]") {
  const GruSeq2SeqConfig cfg{11, 4, 8, 2, 5};
  REQUIRE(GruSeq2Seq::create(cfg, seeded_params(cfg), "loadBundled").ok());
  auto error = [&](GruSeq2Seq::Params p) { return GruSeq2Seq::create(cfg, std::move(p), "loadBundled").status(); };

  GruSeq2Seq::Params p = seeded_params(cfg);
  p.erase("decoder.dense.bias");
  auto s = error(p);
  CHECK(s.message == "loadBundled: weights: tensor \"decoder.dense.bias\" is missing (expected shape [11])");
  CHECK(s.argument == "weights");
  CHECK(s.function == "loadBundled");

  p = seeded_params(cfg);
  p["decoder.gru.l0.w_ih"] = {{8, 24}, random_vec(8 * 24, 1)};  // layer 0 reads context + embedding: 8 + 4
  CHECK(error(p).message == "loadBundled: weights: tensor \"decoder.gru.l0.w_ih\" has shape [8,24], expected [12,24]");
  CHECK(error(p).kind == attnscope::core::ErrorKind::kRange);

  p = seeded_params(cfg);
  p["decoder.dense.bias"].data.pop_back();
  CHECK(error(p).message == "loadBundled: weights: tensor \"decoder.dense.bias\" has 10 values, its shape [11] needs 11");

  p = seeded_params(cfg);
  p["encoder.gru.l1.b_hh"].data[3] = std::numeric_limits<float>::quiet_NaN();
  CHECK(error(p).message == "loadBundled: weights: tensor \"encoder.gru.l1.b_hh\"[3] (NaN) must be finite");
  p = seeded_params(cfg);
  p["decoder.attention.wv"].data[0] = -std::numeric_limits<float>::infinity();
  CHECK(error(p).message == "loadBundled: weights: tensor \"decoder.attention.wv\"[0] (-Infinity) must be finite");

  p = seeded_params(cfg);
  p["encoder.rnn.weight"] = {{2}, {1.0f, 2.0f}};
  CHECK(error(p).message == "loadBundled: weights: tensor \"encoder.rnn.weight\" is not a parameter of this model");

  GruSeq2SeqConfig bad = cfg;
  bad.hidden_size = 0;
  CHECK(GruSeq2Seq::create(bad, seeded_params(cfg), "loadBundled").status().message ==
        "loadBundled: config: hiddenSize (0) must be a positive integer");
}

TEST_CASE("GruSeq2Seq: bad ids and lengths give errors; the model still works afterwards",
          "[model][gru_seq2seq][errors]") {
  const GruSeq2SeqConfig cfg{11, 4, 8, 2, 5};
  auto created = GruSeq2Seq::create(cfg, seeded_params(cfg), "loadBundled");
  REQUIRE(created.ok());
  const GruSeq2Seq& m = *created.value();
  const std::vector<std::int32_t> src{3, 4, 5, 6}, tgt{1, 7, 8};
  auto good = m.run(src, tgt);
  REQUIRE(good.ok());

  CHECK(m.run(std::vector<std::int32_t>{3, 4, 11}, tgt).status().message ==
        "run: source[2] (11) must be an integer from 0 to 10 (vocabSize - 1)");
  CHECK(m.run(src, std::vector<std::int32_t>{1, -1}, -1, "translate").status().message ==
        "translate: target[1] (-1) must be an integer from 0 to 10 (vocabSize - 1)");
  CHECK(m.run({}, tgt).status().message == "run: source must not be empty");
  CHECK(m.run(src, {}).status().message == "run: target must not be empty");
  CHECK(m.run(src, tgt, 5).status().message == "run: sourceValidLen (5) must be an integer from 0 to 4 (source length)");
  CHECK(m.generate(src, 11, 2, 5).status().message == "generate: bos (11) must be an integer from 0 to 10 (vocabSize - 1)");
  CHECK(m.generate(src, 1, -3, 5).status().message == "generate: eos (-3) must be an integer from 0 to 10 (vocabSize - 1)");
  CHECK(m.generate(src, 1, 2, 5000).status().message == "generate: maxNewTokens (5000) must be an integer from 0 to 4096");
  CHECK(m.generate(std::vector<std::int32_t>{12}, 1, 2, 5).status().argument == "source[0]");

  auto again = m.run(src, tgt);
  REQUIRE(again.ok());
  CHECK(again.value().logits == good.value().logits);
  CHECK(again.value().weights == good.value().weights);
}
