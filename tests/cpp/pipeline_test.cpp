// pipeline_test.cpp: the model pipeline (model/transformer.h): the classic worked example to the printed
// digits, seeded embeddings and weights, safetensors round trip and errors, and the PyTorch fixtures of
// tests/fixtures/model (generate.py) compared layer by layer.
#include <catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "model/transformer.h"
#include "support/compare.h"

using attnscope::test::max_abs_error;
using attnscope::model::Architecture;
using attnscope::model::FirstAttention;
using attnscope::model::ModelConfig;
using attnscope::model::PositionalKind;
using attnscope::model::RunTrace;
using attnscope::model::TraceLevel;
using attnscope::model::Transformer;

namespace {

std::unique_ptr<Transformer> make(const ModelConfig& c) {
  auto r = Transformer::create(c);
  INFO(r.status().message);
  REQUIRE(r.ok());
  return std::move(r).value();
}

RunTrace run(const Transformer& t, const std::string& text, TraceLevel level = TraceLevel::kFull) {
  auto r = t.run(text, level);
  INFO(r.status().message);
  REQUIRE(r.ok());
  return std::move(r).value();
}

// Every parameter of a and b holds the same values.
bool same_params(const Transformer& a, const Transformer& b) {
  const auto& x = a.parameters().tensors();
  const auto& y = b.parameters().tensors();
  if (x.size() != y.size()) return false;
  for (const auto& [name, t] : x) {
    auto it = y.find(name);
    if (it == y.end() || it->second.shape != t.shape || it->second.data != t.data) return false;
  }
  return true;
}

std::string create_error(const ModelConfig& c) {
  auto r = Transformer::create(c);
  REQUIRE_FALSE(r.ok());
  return r.status().message;
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

ModelConfig classic_config() {
  ModelConfig c;
  c.d_model = 3;
  c.positional = PositionalKind::kNone;
  c.attention = FirstAttention::kSimple;
  c.num_layers = 1;
  c.embeddings = {{"Your", {0.43f, 0.15f, 0.89f}}, {"journey", {0.55f, 0.87f, 0.66f}},
                  {"starts", {0.57f, 0.85f, 0.64f}}, {"with", {0.22f, 0.58f, 0.33f}},
                  {"one", {0.77f, 0.25f, 0.10f}},    {"step", {0.05f, 0.80f, 0.55f}}};
  return c;
}

bool same(const RunTrace& a, const RunTrace& b) {
  if (a.main.output != b.main.output || a.main.layers.size() != b.main.layers.size()) return false;
  for (std::size_t i = 0; i < a.main.layers.size(); ++i) {
    const auto &x = a.main.layers[i], &y = b.main.layers[i];
    if (x.output != y.output || x.attention.weights != y.attention.weights || x.attention.q != y.attention.q ||
        x.ff_hidden != y.ff_hidden || x.cross.weights != y.cross.weights)
      return false;
  }
  return a.next.probs == b.next.probs && a.next.ids == b.next.ids;
}

std::vector<float> floats(const nlohmann::json& j) { return j.get<std::vector<float>>(); }

}  // namespace

TEST_CASE("pipeline: the classic 'Your journey starts with one step' example to the printed digits",
          "[model][pipeline]") {
  auto t = make(classic_config());
  const RunTrace r = run(*t, "Your journey starts with one step");
  REQUIRE(r.main.n == 6);
  REQUIRE(r.num_heads == 1);
  REQUIRE(r.main.layers.size() == 1);
  const auto& L = r.main.layers[0];
  CHECK(L.kind == attnscope::model::LayerKind::kSimple);
  const std::vector<double> w2 = {0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581};
  const std::vector<double> c2 = {0.4419, 0.6515, 0.5683};
  for (int j = 0; j < 6; ++j) CHECK(std::round(L.attention.weights[6 + j] * 1e4) / 1e4 == Approx(w2[j]).margin(1e-9));
  for (int j = 0; j < 3; ++j) CHECK(std::round(L.output[3 + j] * 1e4) / 1e4 == Approx(c2[j]).margin(1e-9));
  CHECK(r.main.output == L.output);
  CHECK(r.main.input == r.main.embeddings);
  REQUIRE(r.next.tokens.size() == 5);
  float sum_first = 0.0f;
  for (float p : r.next.probs) sum_first += p;
  CHECK(sum_first < 1.0f + 1e-6f);
}

TEST_CASE("pipeline: the same token gets the same embedding row whatever the text", "[model][pipeline]") {
  ModelConfig c;
  auto t = make(c);
  const RunTrace a = run(*t, "the cat sat");
  const RunTrace b = run(*t, "a very happy cat indeed");
  const int d = c.d_model;
  const std::vector<float> row_a(a.main.embeddings.begin() + d, a.main.embeddings.begin() + 2 * d);
  const std::vector<float> row_b(b.main.embeddings.begin() + 3 * d, b.main.embeddings.begin() + 4 * d);
  CHECK(row_a == row_b);
  CHECK(a.main.ids == std::vector<std::int32_t>{0, 1, 2});
  const RunTrace rep = run(*t, "the cat the");
  CHECK(rep.main.ids == std::vector<std::int32_t>{0, 1, 0});
  CHECK(std::vector<float>(rep.main.embeddings.begin(), rep.main.embeddings.begin() + d) ==
        std::vector<float>(rep.main.embeddings.begin() + 2 * d, rep.main.embeddings.begin() + 3 * d));
  // Seeded rows: zero-mean, unit-variance uniform values.
  for (float v : a.main.embeddings) CHECK(std::fabs(v) < 1.7320509f);
}

TEST_CASE("pipeline: seeded initialisation is identical across models and differs across seeds",
          "[model][pipeline]") {
  for (auto arch : {Architecture::kEncoder, Architecture::kDecoder, Architecture::kEncoderDecoder}) {
    ModelConfig c;
    c.architecture = arch;
    c.positional = PositionalKind::kLearned;
    auto a = make(c), b = make(c);
    CHECK(same_params(*a, *b));
    CHECK(same(run(*a, "hello world again"), run(*b, "hello world again")));
    c.seed = 43;
    auto other = make(c);
    CHECK(!same_params(*other, *a));
  }
  // biases 0, norms gamma 1 beta 0, Xavier bound
  ModelConfig c;
  auto t = make(c);
  const auto& p = t->parameters();
  CHECK(p.tensors().at("encoder.layers.0.self_attn.bq").data == std::vector<float>(16, 0.0f));
  CHECK(p.tensors().at("encoder.layers.1.norm2.weight").data == std::vector<float>(16, 1.0f));
  const float bound = std::sqrt(6.0f / (16 + 64));
  for (float v : p.tensors().at("encoder.layers.0.linear1.weight").data) CHECK(std::fabs(v) <= bound);
}

TEST_CASE("pipeline: run twice gives identical results at every trace level", "[model][pipeline]") {
  ModelConfig c;
  c.architecture = Architecture::kEncoderDecoder;
  auto t = make(c);
  auto a = t->run("the source text", "la cible", TraceLevel::kFull);
  auto b = t->run("the source text", "la cible", TraceLevel::kFull);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(same(a.value(), b.value()));
  CHECK(a.value().source.output == b.value().source.output);
  auto w = t->run("the source text", "la cible", TraceLevel::kWeights);
  REQUIRE(w.ok());
  CHECK(w.value().main.output == a.value().main.output);
  CHECK(w.value().main.layers[0].attention.weights == a.value().main.layers[0].attention.weights);
  CHECK(w.value().main.layers[0].cross.weights == a.value().main.layers[0].cross.weights);
  CHECK(w.value().main.layers[0].attention.q.empty());
  CHECK(w.value().main.layers[0].ff_hidden.empty());
  auto none = t->run("the source text", "la cible", TraceLevel::kNone);
  REQUIRE(none.ok());
  CHECK(none.value().main.layers[0].attention.weights.empty());
  CHECK(none.value().main.output == a.value().main.output);
  // full trace shapes
  const auto& L = a.value().main.layers[1];
  CHECK(L.attention.scores.size() == 2u * 2 * 2);
  CHECK(std::isinf(L.attention.scores[1]));  // causal: row 0 may not see key 1
  CHECK(L.cross.weights.size() == 2u * 2 * 3);
  CHECK(L.cross.k.size() == 3u * 16);
  CHECK(L.ff_hidden.size() == 2u * 64);
}

TEST_CASE("pipeline: safetensors round trip gives identical outputs", "[model][pipeline][safetensors]") {
  ModelConfig c;
  c.architecture = Architecture::kEncoderDecoder;
  c.positional = PositionalKind::kLearned;
  c.max_positions = 32;
  c.norm_first = true;
  // word/char embedding rows are seeded per token (not part of the file): give them explicitly
  for (const char* tok : {"one", "two", "three", "un", "deux"}) {
    std::vector<float> row(16);
    for (int i = 0; i < 16; ++i) row[static_cast<std::size_t>(i)] = 0.1f * static_cast<float>(i % 5) - 0.2f + 0.01f * tok[0];
    c.embeddings.emplace_back(tok, row);
  }
  auto a = make(c);
  std::vector<attnscope::io::NamedTensor> ts;
  for (const auto& [name, shape] : a->parameter_shapes()) {
    attnscope::io::NamedTensor t;
    t.name = name;
    t.dtype = "F32";
    for (int s : shape) t.shape.push_back(s);
    t.data = a->parameters().tensors().at(name).data;
    ts.push_back(t);
  }
  c.weights = attnscope::io::write_safetensors(ts);
  c.seed = 7;  // every parameter comes from the file, so the seed no longer matters
  auto b = make(c);
  CHECK(same_params(*b, *a));
  auto ra = a->run("one two three", "un deux", TraceLevel::kFull);
  auto rb = b->run("one two three", "un deux", TraceLevel::kFull);
  REQUIRE(ra.ok());
  REQUIRE(rb.ok());
  CHECK(same(ra.value(), rb.value()));
}

TEST_CASE("pipeline: bad configs and malformed weights give precise errors", "[model][pipeline][errors]") {
  ModelConfig c;
  c.d_model = 10;
  c.num_heads = 3;
  CHECK(create_error(c) == "create: dModel (10) must be divisible by numHeads (3)");
  c = ModelConfig();
  c.weights = {1, 2, 3};
  CHECK(create_error(c) == "create: weights: safetensors buffer (3 bytes) is shorter than the 8-byte header length");
  c = ModelConfig();
  {
    attnscope::io::NamedTensor t{"encoder.layers.0.self_attn.wq", "F32", {16, 8}, std::vector<float>(128, 0.0f)};
    c.weights = attnscope::io::write_safetensors({t});
    CHECK(create_error(c) ==
          "create: weights: tensor \"encoder.layers.0.self_attn.wq\" has shape [16,8], expected [16,16]");
    t.name = "encoder.layers.5.self_attn.wq";
    c.weights = attnscope::io::write_safetensors({t});
    CHECK(create_error(c) == "create: weights: tensor \"encoder.layers.5.self_attn.wq\" is not a parameter of "
                             "this model (see docs/model.md for the names)");
    attnscope::io::NamedTensor bad{"encoder.layers.0.self_attn.bq", "F32", {16}, std::vector<float>(16, 0.0f)};
    bad.data[3] = NAN;
    c.weights = attnscope::io::write_safetensors({bad});
    CHECK(create_error(c) == "create: weights: tensor \"encoder.layers.0.self_attn.bq\"[3] (NaN) must be finite");
  }
  c = ModelConfig();
  c.d_model = 4;
  c.embeddings = {{"x", {1.0f, 2.0f}}};
  CHECK(create_error(c) == "create: embeddings[\"x\"] must have length 4 (dModel = 4), got 2");
  c = ModelConfig();
  c.architecture = Architecture::kDecoder;
  c.attention = FirstAttention::kSimple;
  CHECK(create_error(c) ==
        "create: attention ('simple') needs architecture 'encoder' or 'encoder-decoder' (it has no causal mask)");
  c = ModelConfig();
  c.max_tokens = 4;
  auto t = make(c);
  auto r = t->run("a b c d e", TraceLevel::kFull);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message == "run: text has 5 tokens, more than maxTokens (4)");
  r = t->run("   ", TraceLevel::kFull);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message == "run: text has no tokens");
  r = t->run("a", "b", TraceLevel::kFull);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message == "run: text must be a string for architecture 'encoder' ({ source, target } needs "
                              "'encoder-decoder')");
  CHECK(run(*t, "a b c d").main.n == 4);  // still fine afterwards
  c = ModelConfig();
  c.d_model = 8;
  c.positional = PositionalKind::kNone;
  c.embeddings = {{"a", std::vector<float>(8, 3e38f)}};
  auto huge = make(c);
  r = huge->run("a a", TraceLevel::kFull);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message == "run: text: layer 0 produced non-finite values (embeddings or weights too large)");
}

TEST_CASE("pipeline: PyTorch fixtures, every layer output and attention weight", "[model][pipeline][torch]") {
  for (const char* name : {"encdec", "encoder", "decoder"}) {
    const std::string dir = std::string(ATTNSCOPE_FIXTURES_DIR) + "/model/";
    const nlohmann::json j = read_json(dir + name + ".json");
    const auto& jc = j["config"];
    ModelConfig c;
    const std::string arch = jc["architecture"];
    c.architecture = arch == "encoder" ? Architecture::kEncoder
                     : arch == "decoder" ? Architecture::kDecoder
                                         : Architecture::kEncoderDecoder;
    c.d_model = jc["dModel"];
    c.num_heads = jc["numHeads"];
    c.num_layers = jc["numLayers"];
    c.d_ff = jc["dFF"];
    c.norm_first = jc["normFirst"];
    c.activation = jc["activation"] == "gelu" ? attnscope::model::Activation::kGelu
                                              : attnscope::model::Activation::kRelu;
    for (const auto& [tok, row] : j["embeddings"].items()) c.embeddings.emplace_back(tok, floats(row));
    c.weights = read_bytes(dir + j["weights"].get<std::string>());
    auto t = make(c);
    const double atol = j["tolerance"]["atol"], rtol = j["tolerance"]["rtol"];
    auto res = c.architecture == Architecture::kEncoderDecoder
                   ? t->run(j["source"].get<std::string>(), j["target"].get<std::string>(), TraceLevel::kFull)
                   : t->run(j["text"].get<std::string>(), TraceLevel::kFull);
    INFO(res.status().message);
    REQUIRE(res.ok());
    const RunTrace& r = res.value();
    double worst = 0.0, worst_inter = 0.0;
    auto compare_side = [&](const attnscope::model::SideTrace& side, const nlohmann::json& e, const std::string& what) {
      attnscope::test::check_close(side.input, floats(e["input"]), atol, rtol, what + " input");
      REQUIRE(side.layers.size() == e["layers"].size());
      for (std::size_t i = 0; i < side.layers.size(); ++i) {
        const auto& L = side.layers[i];
        const auto& E = e["layers"][i];
        const std::string at = std::string(name) + " " + what + " layer " + std::to_string(i);
        attnscope::test::check_close(L.output, floats(E["output"]), atol, rtol, at + " output");
        attnscope::test::check_close(L.attention.weights, floats(E["weights"]), atol, rtol, at + " weights");
        worst = std::max({worst, max_abs_error(L.output, floats(E["output"])), max_abs_error(L.attention.weights, floats(E["weights"]))});
        if (E.contains("crossWeights")) {
          attnscope::test::check_close(L.cross.weights, floats(E["crossWeights"]), atol, rtol, at + " cross weights");
          worst = std::max(worst, max_abs_error(L.cross.weights, floats(E["crossWeights"])));
        }
        // every intermediate of the trace vs the float64 recomputation of the layer's forward
        const std::vector<std::pair<const char*, const std::vector<float>*>> parts = {
            {"attnOutput", &L.attention.output}, {"crossOutput", &L.cross.output}, {"residual1", &L.residual[0]},
            {"norm1", &L.norm[0]},     {"residual2", &L.residual[1]},     {"norm2", &L.norm[1]},
            {"residual3", &L.residual[2]}, {"norm3", &L.norm[2]},         {"ffHidden", &L.ff_hidden},
            {"ffOutput", &L.ff_output}};
        int seen = 0;
        for (const auto& [key, got] : parts) {
          if (!E.contains(key)) {
            CHECK(got->empty());
            continue;
          }
          ++seen;
          const std::vector<float> want = floats(E[key]);
          REQUIRE(got->size() == want.size());
          attnscope::test::check_close(*got, want, atol, rtol, at + " " + key);
          worst_inter = std::max(worst_inter, max_abs_error(*got, want));
        }
        CHECK(seen == (L.has_cross ? 10 : 7));
        CHECK(L.attention.scale == Approx(E["scale"].get<double>()).epsilon(1e-7));
        if (L.has_cross) CHECK(L.cross.scale == L.attention.scale);
      }
      attnscope::test::check_close(side.output, floats(e["output"]), atol, rtol, what + " output");
    };
    const auto& e = j["expected"];
    if (r.has_source) compare_side(r.source, e["source"], "source");
    compare_side(r.main, e, r.has_source ? "target" : "text");
    std::vector<std::string> want_tokens = e["next"]["tokens"];
    CHECK(r.next.tokens == want_tokens);
    attnscope::test::check_close(r.next.probs, floats(e["next"]["probs"]), 1e-5, 1e-4, "next probs");
    std::printf("pipeline fixture %s: max abs error vs PyTorch %.3g, intermediates %.3g\n", name, worst, worst_inter);

    // padded run (padTo): every row, pad rows included, vs the float64 recomputation with key-padding masks
    const auto& p = j["padded"];
    const int pad_to = p["padTo"];
    auto padded = c.architecture == Architecture::kEncoderDecoder
                      ? t->run(j["source"].get<std::string>(), j["target"].get<std::string>(), TraceLevel::kFull, pad_to)
                      : t->run(j["text"].get<std::string>(), TraceLevel::kFull, pad_to);
    REQUIRE(padded.ok());
    double worst_pad = 0.0;
    auto compare_padded = [&](const attnscope::model::SideTrace& side, const nlohmann::json& e, const std::string& what) {
      REQUIRE(side.n == pad_to);
      for (std::size_t i = 0; i < side.layers.size(); ++i) {
        const auto& L = side.layers[i];
        const auto& E = e["layers"][i];
        const std::string at = std::string(name) + " padded " + what + " layer " + std::to_string(i);
        attnscope::test::check_close(L.output, floats(E["output"]), atol, rtol, at + " output");
        attnscope::test::check_close(L.attention.weights, floats(E["weights"]), atol, rtol, at + " weights");
        worst_pad = std::max({worst_pad, max_abs_error(L.output, floats(E["output"])), max_abs_error(L.attention.weights, floats(E["weights"]))});
        if (E.contains("crossWeights")) {
          attnscope::test::check_close(L.cross.weights, floats(E["crossWeights"]), atol, rtol, at + " cross weights");
          worst_pad = std::max(worst_pad, max_abs_error(L.cross.weights, floats(E["crossWeights"])));
        }
      }
      attnscope::test::check_close(side.output, floats(e["output"]), atol, rtol, what + " padded output");
    };
    if (padded.value().has_source) compare_padded(padded.value().source, p["source"], "source");
    compare_padded(padded.value().main, p, "main");
    std::printf("pipeline fixture %s padded to %d: max abs error vs PyTorch-derived reference %.3g\n", name, pad_to,
                worst_pad);
  }
}

namespace {

// Real rows [0, n_real) of a padded [N, w] tensor equal the unpadded [n_real, w] tensor bit for bit.
void check_real_rows(const std::vector<float>& padded, const std::vector<float>& plain, int n_real, int N,
                     const std::string& what) {
  INFO(what);
  REQUIRE(padded.size() % static_cast<std::size_t>(N) == 0);
  const std::size_t w = padded.size() / static_cast<std::size_t>(N);
  REQUIRE(plain.size() == w * static_cast<std::size_t>(n_real));
  CHECK(std::vector<float>(padded.begin(), padded.begin() + static_cast<std::ptrdiff_t>(w * n_real)) == plain);
}

// [H, nq, nk] padded scores/weights: real (query, key) cells equal the plain [H, nq_real, nk_real] ones, pad key
// columns are -inf (scores) / 0 (weights) for every query row.
void check_square(const std::vector<float>& padded, const std::vector<float>& plain, int nq, int nk, int nq_real,
                  int nk_real, bool scores, const std::string& what) {
  INFO(what);
  const int H = static_cast<int>(padded.size() / (static_cast<std::size_t>(nq) * nk));
  REQUIRE(plain.size() == static_cast<std::size_t>(H) * nq_real * nk_real);
  for (int h = 0; h < H; ++h) {
    for (int i = 0; i < nq; ++i) {
      for (int j = 0; j < nk; ++j) {
        const float v = padded[(static_cast<std::size_t>(h) * nq + i) * nk + j];
        if (j >= nk_real) {
          if (scores) {
            CHECK(v == -std::numeric_limits<float>::infinity());
          } else {
            CHECK(v == 0.0f);
          }
        } else if (i < nq_real) {
          CHECK(v == plain[(static_cast<std::size_t>(h) * nq_real + i) * nk_real + j]);
        }
      }
    }
  }
}

void check_side_padding(const attnscope::model::SideTrace& p, const attnscope::model::SideTrace& u,
                        const attnscope::model::SideTrace* pm, const attnscope::model::SideTrace* um, int N) {
  REQUIRE(p.n == N);
  REQUIRE(p.n_real == u.n);
  const int r = u.n;
  for (int i = r; i < N; ++i) {
    CHECK(p.tokens[static_cast<std::size_t>(i)] == "<pad>");
    CHECK(p.ids[static_cast<std::size_t>(i)] == -1);
  }
  check_real_rows(p.input, u.input, r, N, "input");
  for (std::size_t c = static_cast<std::size_t>(r) * (p.embeddings.size() / N); c < p.embeddings.size(); ++c)
    CHECK(p.embeddings[c] == 0.0f);
  for (std::size_t li = 0; li < u.layers.size(); ++li) {
    const auto &P = p.layers[li], &U = u.layers[li];
    const std::string at = "layer " + std::to_string(li);
    check_real_rows(P.output, U.output, r, N, at + " output");
    check_real_rows(P.attention.output, U.attention.output, r, N, at + " attention output");
    check_square(P.attention.scores, U.attention.scores, N, N, r, r, true, at + " scores");
    check_square(P.attention.weights, U.attention.weights, N, N, r, r, false, at + " weights");
    for (float v : P.output) CHECK(std::isfinite(v));  // pad query rows are computed over the real keys
    if (U.kind != attnscope::model::LayerKind::kSimple) {
      check_real_rows(P.residual[0], U.residual[0], r, N, at + " residual1");
      check_real_rows(P.norm[1], U.norm[1], r, N, at + " norm2");
      check_real_rows(P.ff_output, U.ff_output, r, N, at + " ffOutput");
    }
    if (U.has_cross) {
      check_square(P.cross.weights, U.cross.weights, N, pm->n, r, um->n, false, at + " cross weights");
      check_square(P.cross.scores, U.cross.scores, N, pm->n, r, um->n, true, at + " cross scores");
    }
  }
  check_real_rows(p.output, u.output, r, N, "output");
}

}  // namespace

TEST_CASE("pipeline: padTo appends <pad> keys that no query sees; real rows are the unpadded run's",
          "[model][pipeline][padding]") {
  for (auto arch : {Architecture::kEncoder, Architecture::kDecoder, Architecture::kEncoderDecoder}) {
    for (bool norm_first : {false, true}) {
      ModelConfig c;
      c.architecture = arch;
      c.norm_first = norm_first;
      c.num_heads = 4;
      auto t = make(c);
      const bool ed = arch == Architecture::kEncoderDecoder;
      auto u = ed ? t->run("the quick brown fox", "le renard", TraceLevel::kFull)
                  : t->run("the quick brown fox", TraceLevel::kFull);
      for (int N : {4, 5, 11}) {
        auto p = ed ? t->run("the quick brown fox", "le renard", TraceLevel::kFull, N)
                    : t->run("the quick brown fox", TraceLevel::kFull, N);
        REQUIRE(u.ok());
        REQUIRE(p.ok());
        INFO("arch " << static_cast<int>(arch) << " norm_first " << norm_first << " padTo " << N);
        if (ed) check_side_padding(p.value().source, u.value().source, nullptr, nullptr, N);
        check_side_padding(p.value().main, u.value().main, ed ? &p.value().source : nullptr,
                           ed ? &u.value().source : nullptr, N);
        CHECK(p.value().next.ids == u.value().next.ids);
        CHECK(p.value().next.probs == u.value().next.probs);
      }
    }
  }
  // the simple first layer, offsets of pads, errors
  ModelConfig c = classic_config();
  c.num_layers = 2;
  c.num_heads = 1;
  auto t = make(c);
  const RunTrace u = run(*t, "Your journey starts with one step");
  auto p = t->run("Your journey starts with one step", TraceLevel::kFull, 8);
  REQUIRE(p.ok());
  check_side_padding(p.value().main, u.main, nullptr, nullptr, 8);
  CHECK(p.value().main.offsets[12] == 33);
  CHECK(p.value().main.offsets[15] == 33);
  CHECK(p.value().main.layers[0].attention.scale == 1.0);
  auto bad = t->run("Your journey starts", TraceLevel::kFull, 2);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message == "run: padTo (2) must be at least the number of tokens of the text (3)");
  CHECK(bad.status().argument == "padTo");
  c = ModelConfig();
  c.max_tokens = 6;
  auto small = make(c);
  bad = small->run("a b", TraceLevel::kFull, 7);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message == "run: padTo (7) must be at most maxTokens (6)");
}

TEST_CASE("pipeline: full trace residual/norm tensors follow post-norm and pre-norm order", "[model][pipeline]") {
  for (auto arch : {Architecture::kEncoder, Architecture::kEncoderDecoder}) {
    for (bool norm_first : {false, true}) {
      ModelConfig c;
      c.architecture = arch;
      c.norm_first = norm_first;
      auto t = make(c);
      const RunTrace r = arch == Architecture::kEncoderDecoder ? t->run("a b c", "x y", TraceLevel::kFull).value()
                                                               : run(*t, "a b c");
      const int hd = c.d_model / c.num_heads;
      for (const auto& L : r.main.layers) {
        const std::size_t nd = static_cast<std::size_t>(r.main.n) * c.d_model;
        CHECK(L.attention.scale == static_cast<double>(static_cast<float>(1.0 / std::sqrt(double(hd)))));
        REQUIRE(L.residual[0].size() == nd);
        REQUIRE(L.ff_output.size() == nd);
        // residual1 = x + attention output
        for (std::size_t i = 0; i < nd; ++i) CHECK(L.residual[0][i] == L.input[i] + L.attention.output[i]);
        const std::vector<float>& last_res = L.has_cross ? L.residual[2] : L.residual[1];
        const std::vector<float>& last_norm = L.has_cross ? L.norm[2] : L.norm[1];
        const std::vector<float>& ff_in_res = L.has_cross ? L.residual[1] : L.residual[0];
        const std::vector<float>& ff_in_norm = L.has_cross ? L.norm[1] : L.norm[0];
        if (norm_first) {
          CHECK(last_res == L.output);
          for (std::size_t i = 0; i < nd; ++i) CHECK(last_res[i] == ff_in_res[i] + L.ff_output[i]);
        } else {
          CHECK(last_norm == L.output);
          for (std::size_t i = 0; i < nd; ++i) CHECK(last_res[i] == ff_in_norm[i] + L.ff_output[i]);
        }
        if (L.has_cross) {
          for (std::size_t i = 0; i < nd; ++i)
            CHECK(L.residual[1][i] == (norm_first ? L.residual[0][i] : L.norm[0][i]) + L.cross.output[i]);
        }
      }
      auto w = arch == Architecture::kEncoderDecoder ? t->run("a b c", "x y", TraceLevel::kWeights)
                                                     : t->run("a b c", TraceLevel::kWeights);
      REQUIRE(w.ok());
      for (const auto& L : w.value().main.layers) {
        CHECK(L.residual[0].empty());
        CHECK(L.norm[1].empty());
        CHECK(L.ff_output.empty());
        CHECK(L.attention.scale == 0.0);
      }
    }
  }
}

TEST_CASE("pipeline: logProbs[i] is ln p(token i+1 | tokens 0..i), the same number next gives the prefix",
          "[model][pipeline][logprobs]") {
  for (bool norm_first : {false, true}) {
    ModelConfig c;
    c.architecture = Architecture::kDecoder;
    c.norm_first = norm_first;
    auto t = make(c);
    // the prefix already holds every word, so both runs have the same run vocabulary (the, cat, saw)
    attnscope::model::RunOptions o;
    o.top_k = 3;
    auto prefix = t->run("the cat saw the", o);
    o.log_probs = true;
    auto whole = t->run("the cat saw the cat", o);
    REQUIRE(prefix.ok());
    REQUIRE(whole.ok());
    const auto& lp = whole.value().log_probs;
    REQUIRE(lp.size() == 4);
    const auto& next = prefix.value().next;
    const auto it = std::find(next.tokens.begin(), next.tokens.end(), "cat");
    REQUIRE(it != next.tokens.end());
    const double p = next.probs[static_cast<std::size_t>(it - next.tokens.begin())];
    CHECK(lp[3] == Approx(std::log(p)).margin(1e-6));
    double total = 0.0;  // the three words' probabilities after "the cat saw the" sum to 1
    for (float q : next.probs) total += q;
    CHECK(total == Approx(1.0).margin(1e-6));
    for (float v : lp) {
      CHECK(std::isfinite(v));
      CHECK(v <= 0.0f);
    }
    CHECK(prefix.value().log_probs.empty());  // not asked for
  }
}
