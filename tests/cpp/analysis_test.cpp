// analysis_test.cpp: the "looking inside" analyses (issue 27) against the float64 numpy references of
// tests/fixtures/analysis (SVD for the PCA map, Edmonds-Karp for attention flow, direct loops for the head
// detectors), hand-built heads whose scores are known exactly, and the error messages.
#include <catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attention/analysis.h"
#include "core/rng.h"
#include "ops/max_flow.h"
#include "ops/pca.h"
#include "support/compare.h"
#include "support/fixtures.h"

namespace {

namespace at = attnscope::attention;
namespace fx = attnscope::test;
using attnscope::test::check_close;

std::vector<float> floats(const fx::json& j) {
  std::vector<float> v;
  for (const auto& x : j) v.push_back(x.get<float>());
  return v;
}
std::vector<double> doubles(const fx::json& j) {
  std::vector<double> v;
  for (const auto& x : j) v.push_back(x.is_null() ? std::nan("") : x.get<double>());
  return v;
}
// A list of per-layer flat lists, concatenated.
std::vector<float> concat(const fx::json& layers) {
  std::vector<float> v;
  for (const auto& l : layers)
    for (const auto& x : l) v.push_back(x.get<float>());
  return v;
}

const fx::json& analysis_fixtures() {
  static const fx::json doc = [] {
    fx::json d = fx::read_json(fx::fixtures_dir() + "/analysis/analysis.json");
    fx::check_header(d, "analysis/analysis.json");
    return d;
  }();
  return doc;
}

// [H, n, n] of one head pattern repeated for every head.
std::vector<float> heads_of(const std::vector<float>& one, int heads) {
  std::vector<float> w;
  for (int h = 0; h < heads; ++h) w.insert(w.end(), one.begin(), one.end());
  return w;
}

}  // namespace

// ---------------------------------------------------------------- fixtures

TEST_CASE("qkMap equals numpy's float64 SVD of the normalised joint set (signs by the shared convention)",
          "[analysis][qkMap]") {
  int count = 0;
  for (const auto& c : analysis_fixtures().at("cases")) {
    if (c.at("function") != "qkMap") continue;
    ++count;
    INFO("case " << c.at("case").get<std::string>());
    const auto& a = c.at("args");
    const auto q = floats(a.at("q")), k = floats(a.at("k"));
    at::QkMapArgs args;
    args.q = q; args.k = k;
    args.nq = a.at("nq"); args.nk = a.at("nk"); args.d = a.at("d");
    args.normalize = a.value("normalize", true);
    auto r = at::qk_map(args);
    REQUIRE(r.ok());
    const auto& e = c.at("expected");
    const double atol = c.at("atol"), rtol = c.at("rtol");
    check_close(r.value().queries, doubles(e.at("queries")), atol, rtol, "queries");
    check_close(r.value().keys, doubles(e.at("keys")), atol, rtol, "keys");
    check_close(r.value().explained_variance, doubles(e.at("explainedVariance")), 1e-6, 1e-5, "explainedVariance");
    check_close(r.value().components, doubles(e.at("components")), atol, rtol, "components");
  }
  CHECK(count == 4);
}

TEST_CASE("attentionFlow equals Edmonds-Karp on Abnar & Zuidema's graph", "[analysis][attentionFlow]") {
  int count = 0;
  for (const auto& c : analysis_fixtures().at("cases")) {
    if (c.at("function") != "attentionFlow") continue;
    ++count;
    INFO("case " << c.at("case").get<std::string>());
    const auto& a = c.at("args");
    const auto layers = concat(a.at("layers"));
    at::FlowArgs args;
    args.layers = layers;
    args.num_layers = static_cast<int>(a.at("layers").size());
    args.num_heads = a.at("numHeads");
    args.n = a.at("n");
    if (a.contains("output")) {
      args.output = a.at("output");
      args.has_output = true;
    }
    auto r = at::attention_flow(args);
    REQUIRE(r.ok());
    check_close(r.value(), doubles(c.at("expected").at("flow")), c.at("atol"), c.at("rtol"), "flow");
  }
  CHECK(count == 5);
}

TEST_CASE("headScores equals direct float64 loops over the definitions", "[analysis][headScores]") {
  int count = 0;
  for (const auto& c : analysis_fixtures().at("cases")) {
    if (c.at("function") != "headScores") continue;
    ++count;
    INFO("case " << c.at("case").get<std::string>());
    const auto& a = c.at("args");
    const auto w = concat(a.at("weights"));
    std::vector<std::int32_t> ids;
    for (const auto& x : a.at("ids")) ids.push_back(x.get<std::int32_t>());
    at::HeadScoresArgs args;
    args.weights = w;
    args.num_layers = static_cast<int>(a.at("weights").size());
    args.num_heads = a.at("numHeads");
    args.n = a.at("n");
    args.ids = ids;
    if (a.contains("period")) {
      args.period = a.at("period");
      args.has_period = true;
    }
    auto r = at::head_scores(args);
    REQUIRE(r.ok());
    const auto& e = c.at("expected");
    const double atol = c.at("atol"), rtol = c.at("rtol");
    check_close(r.value().previous_token, doubles(e.at("previousToken")), atol, rtol, "previousToken");
    check_close(r.value().sink_share, doubles(e.at("sinkShare")), atol, rtol, "sinkShare");
    const auto dup = doubles(e.at("duplicateToken"));
    REQUIRE(r.value().duplicate_token.size() == dup.size());
    for (std::size_t i = 0; i < dup.size(); ++i) {
      if (std::isnan(dup[i])) CHECK(std::isnan(r.value().duplicate_token[i]));
      else CHECK(std::abs(r.value().duplicate_token[i] - dup[i]) <= atol + rtol * std::abs(dup[i]));
    }
    if (args.has_period) check_close(r.value().induction, doubles(e.at("induction")), atol, rtol, "induction");
    else CHECK(r.value().induction.empty());
  }
  CHECK(count == 3);
}

// ---------------------------------------------------------------- hand-built heads

TEST_CASE("headScores: a previous-token diagonal scores 1, a uniform head 1/n, an induction stripe >= 0.9",
          "[analysis][headScores]") {
  // [BOS] + R + R with T = 5: n = 11. Head 0: w[i, i-1] = 1 (w[0, 0] = 1). Head 1: uniform over all n keys.
  // Head 2: the induction stripe of the second half w[i, i-T+1] = 0.95 (rest on BOS), causal rows elsewhere
  // attend to BOS.
  constexpr int T = 5, n = 2 * T + 1;
  std::vector<float> w(3 * n * n, 0.0f);
  auto W = [&](int h, int i, int j) -> float& { return w[static_cast<std::size_t>((h * n + i) * n + j)]; };
  W(0, 0, 0) = 1.0f;
  for (int i = 1; i < n; ++i) W(0, i, i - 1) = 1.0f;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) W(1, i, j) = 1.0f / n;
  for (int i = 0; i < n; ++i) W(2, i, 0) = 1.0f;
  for (int i = n - T; i < n; ++i) {
    W(2, i, 0) = 0.05f;
    W(2, i, i - T + 1) = 0.95f;
  }
  auto ids = at::repeated_tokens(50, T, 7, 49);
  REQUIRE(ids.ok());
  REQUIRE(ids.value().size() == static_cast<std::size_t>(n));
  at::HeadScoresArgs a;
  a.weights = w; a.num_heads = 3; a.n = n; a.period = T; a.has_period = true;
  a.ids = ids.value();
  auto r = at::head_scores(a);
  REQUIRE(r.ok());
  const auto& s = r.value();
  CHECK(s.previous_token[0] == 1.0f);
  CHECK(std::abs(s.previous_token[1] - 1.0f / n) < 1e-7);
  CHECK(s.induction[2] >= 0.9f);
  CHECK(std::abs(s.induction[2] - 0.95f) < 1e-6);
  CHECK(s.induction[0] == 0.0f);  // a previous-token head puts nothing on i-T+1 (T > 2)
  CHECK(std::abs(s.sink_share[2] - (T + 1 + 0.05f * T) / n) < 1e-6);
  CHECK(std::abs(s.sink_share[1] - 1.0f / n) < 1e-7);
}

TEST_CASE("repeatedTokens: [bos] + R + R, deterministic per seed, ids in range", "[analysis][repeatedTokens]") {
  auto a = at::repeated_tokens(1000, 20, 42, -1), b = at::repeated_tokens(1000, 20, 42, -1),
       c = at::repeated_tokens(1000, 20, 43, -1), d = at::repeated_tokens(1000, 20, 42, 999);
  REQUIRE((a.ok() && b.ok() && c.ok() && d.ok()));
  REQUIRE(a.value().size() == 40);
  CHECK(a.value() == b.value());
  CHECK(a.value() != c.value());
  REQUIRE(d.value().size() == 41);
  CHECK(d.value()[0] == 999);
  CHECK(std::vector<std::int32_t>(d.value().begin() + 1, d.value().end()) == a.value());
  for (int t = 0; t < 20; ++t) {
    CHECK(a.value()[static_cast<std::size_t>(t)] == a.value()[static_cast<std::size_t>(t + 20)]);
    CHECK(a.value()[static_cast<std::size_t>(t)] >= 0);
    CHECK(a.value()[static_cast<std::size_t>(t)] < 1000);
  }
}

TEST_CASE("attentionFlow: identity attention carries each output's unit of flow to its own input only",
          "[analysis][attentionFlow]") {
  constexpr int n = 4;
  std::vector<float> eye(n * n, 0.0f);
  for (int i = 0; i < n; ++i) eye[static_cast<std::size_t>(i * n + i)] = 1.0f;
  std::vector<float> layers = heads_of(eye, 3);  // 3 layers of one head
  at::FlowArgs a;
  a.layers = layers; a.num_layers = 3; a.num_heads = 1; a.n = n;
  auto r = at::attention_flow(a);
  REQUIRE(r.ok());
  for (int o = 0; o < n; ++o)
    for (int v = 0; v < n; ++v) CHECK(r.value()[static_cast<std::size_t>(o * n + v)] == (o == v ? 1.0f : 0.0f));
}

TEST_CASE("MaxFlow: a textbook network (CLRS Fig. 26.1, value 23)", "[analysis][maxflow]") {
  attnscope::ops::MaxFlow g(6);
  const int e[][3] = {{0, 1, 16}, {0, 2, 13}, {1, 3, 12}, {2, 1, 4}, {2, 4, 14},
                      {3, 2, 9},  {3, 5, 20}, {4, 3, 7},  {4, 5, 4}};
  for (const auto& x : e) g.add_edge(x[0], x[1], x[2]);
  CHECK(g.solve(0, 5) == 23.0);
  CHECK(g.solve(0, 5) == 23.0);  // a second solve starts from the original capacities
  CHECK(g.solve(5, 0) == 0.0);
}

TEST_CASE("symmetric_eigen: known spectra", "[analysis][pca]") {
  auto e = attnscope::ops::symmetric_eigen({2, 1, 1, 2}, 2);
  CHECK(std::abs(e.values[0] - 3.0) < 1e-14);
  CHECK(std::abs(e.values[1] - 1.0) < 1e-14);
  CHECK(std::abs(std::abs(e.vectors[0]) - std::sqrt(0.5)) < 1e-14);
  // diag(1, 5, 3): already diagonal, sorted descending
  auto f = attnscope::ops::symmetric_eigen({1, 0, 0, 0, 5, 0, 0, 0, 3}, 3);
  CHECK(f.values == std::vector<double>{5, 3, 1});
}

// ---------------------------------------------------------------- errors

TEST_CASE("analysis errors name the function and the argument", "[analysis][errors]") {
  std::vector<float> w(2 * 3 * 3, 1.0f / 3);
  at::HeadScoresArgs h;
  h.weights = w; h.num_heads = 2; h.n = 3; h.period = 2; h.has_period = true;
  auto r = at::head_scores(h);
  REQUIRE(!r.ok());
  CHECK(r.status().message ==
        "headScores: period (2) must be at most n/2 (n = 3): the input is [BOS?] + R + R with R of length period");
  h.has_period = false;
  w[4] = std::nanf("");
  CHECK(at::head_scores(h).status().message == "headScores: weights[4] (NaN) must be finite");
  w[4] = 0.5f;
  h.n = 1;
  h.weights = std::span<const float>(w.data(), 2);
  CHECK(at::head_scores(h).status().message == "headScores: n (1) must be at least 2");

  at::FlowArgs f;
  f.layers = w; f.num_layers = 1; f.num_heads = 2; f.n = 3; f.output = 3; f.has_output = true;
  CHECK(at::attention_flow(f).status().message == "attentionFlow: output (3) must be a position from 0 to n-1 = 2");
  at::FlowArgs big;  // 64 layers of 257 tokens: over the edge bound, refused before the (absent) weights are read
  big.num_layers = 64; big.num_heads = 1; big.n = 257;
  CHECK(at::attention_flow(big).status().message ==
        "attentionFlow: layers: numLayers*n*n (4227136) must be at most 4194304 (the flow graph's edges)");

  CHECK(at::repeated_tokens(10, 4, 1, 10).status().message == "repeatedTokens: bos (10) must be less than vocabSize (10)");
  CHECK(at::repeated_tokens(0, 4, 1, -1).status().message == "repeatedTokens: vocabSize (0) must be a positive integer");

  std::vector<float> q(4, 1.0f);
  at::QkMapArgs m;
  m.q = q; m.k = q; m.nq = 4; m.nk = 4; m.d = 1;
  CHECK(at::qk_map(m).status().message == "qkMap: d (1) must be at least 2");
  m.nq = 2; m.nk = 2; m.d = 2;
  q[3] = INFINITY;
  CHECK(at::qk_map(m).status().message == "qkMap: q[3] (Infinity) must be finite");
}

TEST_CASE("attentionFlow: a causal model sends nothing from later inputs", "[analysis][attentionFlow]") {
  constexpr int L = 4, H = 2, n = 40;
  attnscope::core::Rng rng(5);
  std::vector<float> w(static_cast<std::size_t>(L * H * n * n), 0.0f);
  for (int r = 0; r < L * H * n; ++r) {  // causal softmax rows of random logits
    const int i = r % n;
    float s = 0.0f;
    for (int j = 0; j <= i; ++j) s += (w[static_cast<std::size_t>(r * n + j)] = std::exp(3.0f * rng.uniform()));
    for (int j = 0; j <= i; ++j) w[static_cast<std::size_t>(r * n + j)] /= s;
  }
  at::FlowArgs a;
  a.layers = w; a.num_layers = L; a.num_heads = H; a.n = n;
  auto one = at::attention_flow(a);
  REQUIRE(one.ok());
  // a causal model: output o receives nothing from inputs after it, and input o receives a positive flow
  for (int o = 0; o < n; ++o) {
    CHECK(one.value()[static_cast<std::size_t>(o * n + o)] > 0.0f);
    for (int v = o + 1; v < n; ++v) CHECK(one.value()[static_cast<std::size_t>(o * n + v)] == 0.0f);
  }
}
