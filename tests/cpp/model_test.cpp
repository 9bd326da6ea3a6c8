// model_test.cpp: transformer encoder and decoder layers against the float64 loops of
// support/reference.h and the PyTorch fixtures (post-/pre-norm x relu/gelu, masks); error messages
// naming the nested params; fully masked rows stay finite.
#include <catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.h"
#include "model/decoder_layer.h"
#include "model/encoder_layer.h"
#include "support/compare.h"
#include "support/fixtures.h"
#include "support/reference.h"

namespace {

using attnscope::test::check_close;
constexpr double kAtol = 1e-5;
constexpr double kRtol = 1e-4;

std::vector<float> random_vec(std::size_t n, std::uint64_t seed, float scale = 1.0f, float shift = 0.0f) {
  attnscope::core::Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = shift + scale * rng.normal();
  return v;
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

namespace at = attnscope::attention;
namespace md = attnscope::model;
namespace ref = attnscope::ref;

// One attention block's weights (all biases present, as the layers require).
struct AttnData {
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo;
  AttnData(int d, std::uint64_t s)
      : wq(random_vec(d * d, s, 0.4f)), wk(random_vec(d * d, s + 1, 0.4f)), wv(random_vec(d * d, s + 2, 0.4f)),
        wo(random_vec(d * d, s + 3, 0.4f)), bq(random_vec(d, s + 4, 0.2f)), bk(random_vec(d, s + 5, 0.2f)),
        bv(random_vec(d, s + 6, 0.2f)), bo(random_vec(d, s + 7, 0.2f)) {}
  at::MhaWeights spans() const { return {wq, wk, wv, wo, bq, bk, bv, bo}; }
  ref::MhaParams params() const {
    return {ref::to_double(wq), ref::to_double(wk), ref::to_double(wv), ref::to_double(wo),
            ref::to_double(bq), ref::to_double(bk), ref::to_double(bv), ref::to_double(bo)};
  }
};

struct LayerData {
  int d_model, d_ff;
  AttnData self, cross;
  std::vector<float> w1, b1, w2, b2, g1, be1, g2, be2, g3, be3;
  LayerData(int d, int dff, std::uint64_t s)
      : d_model(d), d_ff(dff), self(d, s), cross(d, s + 10), w1(random_vec(d * dff, s + 20, 0.4f)),
        b1(random_vec(dff, s + 21, 0.2f)), w2(random_vec(dff * d, s + 22, 0.3f)), b2(random_vec(d, s + 23, 0.2f)),
        g1(random_vec(d, s + 24, 0.2f, 1.0f)), be1(random_vec(d, s + 25, 0.2f)),
        g2(random_vec(d, s + 26, 0.2f, 1.0f)), be2(random_vec(d, s + 27, 0.2f)),
        g3(random_vec(d, s + 28, 0.2f, 1.0f)), be3(random_vec(d, s + 29, 0.2f)) {}
  md::FeedForwardWeights ff() const { return {w1, b1, w2, b2, {}, {}}; }
  ref::LayerParams params() const {
    ref::LayerParams p;
    p.attn = self.params();
    p.cross = cross.params();
    p.w1 = ref::to_double(w1), p.b1 = ref::to_double(b1), p.w2 = ref::to_double(w2), p.b2 = ref::to_double(b2);
    p.g1 = ref::to_double(g1), p.be1 = ref::to_double(be1), p.g2 = ref::to_double(g2);
    p.be2 = ref::to_double(be2), p.g3 = ref::to_double(g3), p.be3 = ref::to_double(be3);
    return p;
  }
  md::EncoderLayerArgs encoder(std::span<const float> x, int n, int heads) const {
    md::EncoderLayerArgs a;
    a.x = x, a.n = n, a.d_model = d_model, a.num_heads = heads, a.d_ff = d_ff;
    a.attn = self.spans(), a.ff = ff(), a.norm1 = {g1, be1}, a.norm2 = {g2, be2};
    return a;
  }
  md::DecoderLayerArgs decoder(std::span<const float> x, std::span<const float> mem, int n, int m, int heads) const {
    md::DecoderLayerArgs a;
    a.x = x, a.memory = mem, a.n = n, a.m = m, a.d_model = d_model, a.num_heads = heads, a.d_ff = d_ff;
    a.self_attn = self.spans(), a.cross_attn = cross.spans(), a.ff = ff();
    a.norm1 = {g1, be1}, a.norm2 = {g2, be2}, a.norm3 = {g3, be3};
    return a;
  }
};

}  // namespace

namespace fx = attnscope::test;

// ---------------------------------------------------------------- encoder layer

TEST_CASE("transformerEncoderLayer: post/pre-norm x relu/gelu x masks match float64", "[model][encoder]") {
  const int n = 6, d_model = 8, d_ff = 12;
  const LayerData ld(d_model, d_ff, 100);
  const auto x = random_vec(n * d_model, 7);
  std::vector<std::uint8_t> mask(n * n);
  for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 3 + 2) % 5 != 0 || i % (n + 1) == 0;
  for (int heads : {1, 2, 4}) {
    for (bool norm_first : {false, true}) {
      for (bool gelu : {false, true}) {
        for (int masking = 0; masking < 3; ++masking) {
          md::EncoderLayerArgs a = ld.encoder(x, n, heads);
          a.norm_first = norm_first;
          a.activation = gelu ? md::Activation::kGelu : md::Activation::kRelu;
          a.causal = masking >= 1;
          if (masking == 2) a.mask = mask;
          auto r = md::encoder_layer(a);
          REQUIRE(r.ok());
          const ref::EncoderRef want = ref::encoder_layer(ref::to_double(x), n, d_model, heads, d_ff, ld.params(),
                                                          norm_first, gelu, 1e-5, a.mask, a.causal);
          const std::string what = std::string("encoder H=") + std::to_string(heads) +
                                   (norm_first ? " pre" : " post") + (gelu ? " gelu" : " relu") + " masking " +
                                   std::to_string(masking);
          check_close(r.value().output, want.output, kAtol, kRtol, what + " output");
          check_close(r.value().weights, want.weights, kAtol, kRtol, what + " weights");
        }
      }
    }
  }
}

TEST_CASE("transformerEncoderLayer: keep_trace pieces are consistent", "[model][encoder]") {
  const int n = 4, d_model = 8, d_ff = 10;
  const LayerData ld(d_model, d_ff, 200);
  const auto x = random_vec(n * d_model, 8);
  for (bool norm_first : {false, true}) {
    md::EncoderLayerArgs a = ld.encoder(x, n, 2);
    a.norm_first = norm_first;
    auto plain = md::encoder_layer(a);
    a.keep_trace = true;
    auto tr = md::encoder_layer(a);
    REQUIRE(plain.ok());
    REQUIRE(tr.ok());
    const md::EncoderLayerOutput& t = tr.value();
    CHECK(t.output == plain.value().output);
    CHECK(t.weights == plain.value().weights);
    CHECK(t.attn.weights == t.weights);
    REQUIRE(t.attn.q.size() == static_cast<std::size_t>(n * d_model));
    REQUIRE(t.attn_residual.size() == static_cast<std::size_t>(n * d_model));
    for (int i = 0; i < n * d_model; ++i) CHECK(t.attn_residual[i] == x[i] + t.attn.output[i]);
    REQUIRE(t.ff_hidden.size() == static_cast<std::size_t>(n * d_ff));
    for (float h : t.ff_hidden) CHECK(h >= 0.0f);  // relu
    // residual/norm pieces: post-norm norm1 = LN1(residual1), norm2 = output = LN2(norm1 + ffOutput);
    // pre-norm norm1 = LN1(x) (attention input), norm2 = LN2(residual1) (FFN input), residual2 = output.
    REQUIRE(t.norm1.size() == static_cast<std::size_t>(n * d_model));
    REQUIRE(t.ff_output.size() == static_cast<std::size_t>(n * d_model));
    REQUIRE(t.residual2.size() == static_cast<std::size_t>(n * d_model));
    REQUIRE(t.norm2.size() == static_cast<std::size_t>(n * d_model));
    const std::vector<float> ln1_in = norm_first ? x : t.attn_residual;
    check_close(t.norm1, ref::layer_norm(ref::to_double(ln1_in), n, d_model, ref::to_double(ld.g1),
                                         ref::to_double(ld.be1), 1e-5),
                kAtol, kRtol, "norm1");
    if (norm_first) {
      CHECK(t.residual2 == t.output);
      for (int i = 0; i < n * d_model; ++i) CHECK(t.residual2[i] == t.attn_residual[i] + t.ff_output[i]);
    } else {
      CHECK(t.norm2 == t.output);
      for (int i = 0; i < n * d_model; ++i) CHECK(t.residual2[i] == t.norm1[i] + t.ff_output[i]);
    }
  }
  CHECK(md::encoder_layer(ld.encoder(x, n, 2)).value().ff_hidden.empty());
}

TEST_CASE("transformerEncoderLayer: a fully masked row stays finite", "[model][encoder]") {
  const int n = 3, d_model = 4, d_ff = 6;
  const LayerData ld(d_model, d_ff, 300);
  const auto x = random_vec(n * d_model, 9);
  const std::vector<std::uint8_t> mask{1, 1, 1, 0, 0, 0, 1, 0, 1};
  md::EncoderLayerArgs a = ld.encoder(x, n, 2);
  a.mask = mask;
  auto r = md::encoder_layer(a);
  REQUIRE(r.ok());
  CHECK(all_finite(r.value().output));
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < n; ++j) CHECK(r.value().weights[h * 9 + 3 + j] == 0.0f);
  const ref::EncoderRef want =
      ref::encoder_layer(ref::to_double(x), n, d_model, 2, d_ff, ld.params(), false, false, 1e-5, mask, false);
  check_close(r.value().output, want.output, kAtol, kRtol, "encoder masked row");
}

TEST_CASE("transformerEncoderLayer: bad arguments name the nested params", "[model][encoder]") {
  const int n = 3, d_model = 10, d_ff = 6;
  const LayerData ld(d_model, d_ff, 400);
  const auto x = random_vec(n * d_model, 10);
  const md::EncoderLayerArgs a = ld.encoder(x, n, 2);
  REQUIRE(md::encoder_layer(a).ok());
  md::EncoderLayerArgs b = a;
  b.num_heads = 3;
  CHECK(md::encoder_layer(b).status().message == "transformerEncoderLayer: dModel (10) must be divisible by numHeads (3)");
  b = a, b.d_ff = 0;
  CHECK(md::encoder_layer(b).status().message == "transformerEncoderLayer: dFF (0) must be a positive integer");
  b = a, b.norm1.gamma = {};
  CHECK(md::encoder_layer(b).status().message == "transformerEncoderLayer: params.norm1Gamma is required");
  b = a, b.attn.bv = {};
  CHECK(md::encoder_layer(b).status().message == "transformerEncoderLayer: params.bv is required");
  b = a, b.ff.w1 = std::span<const float>(ld.w1).first(59);
  CHECK(md::encoder_layer(b).status().message ==
        "transformerEncoderLayer: params.w1 must have length 60 (dModel*dFF = 10*6), got 59");
  b = a, b.attn.wk = std::span<const float>(ld.self.wk).first(10);
  CHECK(md::encoder_layer(b).status().message ==
        "transformerEncoderLayer: params.wk must have length 100 (dModel*dModel = 10*10), got 10");
  std::vector<float> bad = ld.b2;
  bad[3] = std::numeric_limits<float>::quiet_NaN();
  b = a, b.ff.b2 = bad;
  CHECK(md::encoder_layer(b).status().message == "transformerEncoderLayer: params.b2[3] (NaN) must be finite");
  b = a, b.x = std::span<const float>(x).first(29);
  CHECK(md::encoder_layer(b).status().message ==
        "transformerEncoderLayer: x must have length 30 (n*dModel = 3*10), got 29");
  const std::vector<std::uint8_t> mask(4, 1);
  b = a, b.mask = mask;
  CHECK(md::encoder_layer(b).status().message == "transformerEncoderLayer: mask must have length 9 (n*n = 3*3), got 4");
  b = a, b.eps = -1.0;
  CHECK(md::encoder_layer(b).status().argument == "eps");
  REQUIRE(md::encoder_layer(a).ok());
}

// ---------------------------------------------------------------- decoder layer

TEST_CASE("transformerDecoderLayer: post/pre-norm x relu/gelu x memoryMask match float64", "[model][decoder]") {
  const int n = 5, m = 7, d_model = 8, d_ff = 12;
  const LayerData ld(d_model, d_ff, 500);
  const auto x = random_vec(n * d_model, 11), mem = random_vec(m * d_model, 12);
  std::vector<std::uint8_t> mmask(n * m);
  for (std::size_t i = 0; i < mmask.size(); ++i) mmask[i] = (i * 4 + 1) % 3 != 0;
  for (int heads : {1, 2, 4}) {
    for (bool norm_first : {false, true}) {
      for (bool gelu : {false, true}) {
        for (int variant = 0; variant < 3; ++variant) {
          md::DecoderLayerArgs a = ld.decoder(x, mem, n, m, heads);
          a.norm_first = norm_first;
          a.activation = gelu ? md::Activation::kGelu : md::Activation::kRelu;
          if (variant >= 1) a.memory_mask = mmask;
          if (variant == 2) a.causal = false;
          auto r = md::decoder_layer(a);
          REQUIRE(r.ok());
          const ref::DecoderRef want = ref::decoder_layer(ref::to_double(x), ref::to_double(mem), n, m, d_model, heads,
                                                          d_ff, ld.params(), norm_first, gelu, 1e-5, a.causal,
                                                          a.memory_mask);
          const std::string what = std::string("decoder H=") + std::to_string(heads) +
                                   (norm_first ? " pre" : " post") + (gelu ? " gelu" : " relu") + " variant " +
                                   std::to_string(variant);
          check_close(r.value().output, want.output, kAtol, kRtol, what + " output");
          check_close(r.value().self_weights, want.self_weights, kAtol, kRtol, what + " selfWeights");
          check_close(r.value().cross_weights, want.cross_weights, kAtol, kRtol, what + " crossWeights");
        }
      }
    }
  }
}

TEST_CASE("transformerDecoderLayer: causal self-weights, trace and a fully masked memory row", "[model][decoder]") {
  const int n = 3, m = 4, d_model = 4, d_ff = 6;
  const LayerData ld(d_model, d_ff, 600);
  const auto x = random_vec(n * d_model, 13), mem = random_vec(m * d_model, 14);
  const std::vector<std::uint8_t> mmask{1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1};  // query row 1 sees no memory
  md::DecoderLayerArgs a = ld.decoder(x, mem, n, m, 2);
  a.memory_mask = mmask;
  a.keep_trace = true;
  auto r = md::decoder_layer(a);
  REQUIRE(r.ok());
  const md::DecoderLayerOutput& o = r.value();
  CHECK(all_finite(o.output));
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) CHECK(o.self_weights[h * 9 + i * 3 + j] == 0.0f);
    for (int j = 0; j < m; ++j) CHECK(o.cross_weights[h * 12 + 4 + j] == 0.0f);
  }
  CHECK(o.self_attn.weights == o.self_weights);
  CHECK(o.cross_attn.weights == o.cross_weights);
  CHECK(o.cross_attn.k.size() == static_cast<std::size_t>(m * d_model));
  CHECK(o.ff_hidden.size() == static_cast<std::size_t>(n * d_ff));
  // post-norm: residualK = previous norm + block output, normK its LayerNorm; norm3 is the output
  REQUIRE(o.norm3 == o.output);
  for (int i = 0; i < n * d_model; ++i) {
    CHECK(o.residual1[i] == x[i] + o.self_attn.output[i]);
    CHECK(o.residual2[i] == o.norm1[i] + o.cross_attn.output[i]);
    CHECK(o.residual3[i] == o.norm2[i] + o.ff_output[i]);
  }
  const ref::DecoderRef want = ref::decoder_layer(ref::to_double(x), ref::to_double(mem), n, m, d_model, 2, d_ff,
                                                  ld.params(), false, false, 1e-5, true, mmask);
  check_close(o.output, want.output, kAtol, kRtol, "decoder masked memory row");
}

TEST_CASE("transformerDecoderLayer: bad arguments name the nested params", "[model][decoder]") {
  const int n = 3, m = 2, d_model = 8, d_ff = 6;
  const LayerData ld(d_model, d_ff, 700);
  const auto x = random_vec(n * d_model, 15), mem = random_vec(m * d_model, 16);
  const md::DecoderLayerArgs a = ld.decoder(x, mem, n, m, 2);
  REQUIRE(md::decoder_layer(a).ok());
  md::DecoderLayerArgs b = a;
  b.num_heads = 3;
  CHECK(md::decoder_layer(b).status().message == "transformerDecoderLayer: dModel (8) must be divisible by numHeads (3)");
  b = a, b.m = 0;
  CHECK(md::decoder_layer(b).status().message == "transformerDecoderLayer: m (0) must be a positive integer");
  b = a, b.memory = std::span<const float>(mem).first(15);
  CHECK(md::decoder_layer(b).status().message ==
        "transformerDecoderLayer: memory must have length 16 (m*dModel = 2*8), got 15");
  b = a, b.cross_attn.wk = std::span<const float>(ld.cross.wk).first(8);
  CHECK(md::decoder_layer(b).status().message ==
        "transformerDecoderLayer: params.cross.wk must have length 64 (dModel*dModel = 8*8), got 8");
  b = a, b.self_attn.bq = {};
  CHECK(md::decoder_layer(b).status().message == "transformerDecoderLayer: params.self.bq is required");
  b = a, b.norm3.beta = {};
  CHECK(md::decoder_layer(b).status().message == "transformerDecoderLayer: params.norm3Beta is required");
  const std::vector<std::uint8_t> mmask(5, 1);
  b = a, b.memory_mask = mmask;
  CHECK(md::decoder_layer(b).status().message ==
        "transformerDecoderLayer: memoryMask must have length 6 (n*m = 3*2), got 5");
  REQUIRE(md::decoder_layer(a).ok());
}

// ---------------------------------------------------------------- PyTorch fixtures

namespace {

at::MhaWeights mha_weights(const fx::ArgArrays& arr, const std::string& p) {
  return {arr.f(p + "wq"), arr.f(p + "wk"), arr.f(p + "wv"), arr.f(p + "wo"),
          arr.f(p + "bq"), arr.f(p + "bk"), arr.f(p + "bv"), arr.f(p + "bo")};
}

md::Activation activation(const fx::json& args) {
  return args.value("activation", std::string("relu")) == "gelu" ? md::Activation::kGelu : md::Activation::kRelu;
}

}  // namespace

TEST_CASE("transformerEncoderLayer: PyTorch fixtures", "[model][encoder][fixtures]") {
  const auto cases = fx::fixture_cases("transformerEncoderLayer");
  REQUIRE(cases.size() >= 5);
  for (const auto& c : cases) {
    const fx::Fixture f = fx::load_fixture("transformerEncoderLayer", c);
    const auto& j = f.args();
    const fx::ArgArrays arr(j);
    md::EncoderLayerArgs a;
    a.x = arr.f("x"), a.n = j.at("n"), a.d_model = j.at("dModel"), a.num_heads = j.at("numHeads");
    a.d_ff = j.at("dFF");
    a.attn = mha_weights(arr, "params.");
    a.ff = {arr.f("params.w1"), arr.f("params.b1"), arr.f("params.w2"), arr.f("params.b2")};
    a.norm1 = {arr.f("params.norm1Gamma"), arr.f("params.norm1Beta")};
    a.norm2 = {arr.f("params.norm2Gamma"), arr.f("params.norm2Beta")};
    a.norm_first = j.value("normFirst", false);
    a.activation = activation(j);
    a.eps = j.value("eps", 1e-5);
    a.mask = arr.mask("mask");
    a.causal = j.value("causal", false);
    auto r = md::encoder_layer(a);
    REQUIRE(r.ok());
    check_close(r.value().output, fx::doubles(f.expected().at("output")), f.atol(), f.rtol(), f.name + " output");
    check_close(r.value().weights, fx::doubles(f.expected().at("weights")), f.atol(), f.rtol(), f.name + " weights");
  }
}

TEST_CASE("transformerDecoderLayer: PyTorch fixtures", "[model][decoder][fixtures]") {
  const auto cases = fx::fixture_cases("transformerDecoderLayer");
  REQUIRE(cases.size() >= 4);
  for (const auto& c : cases) {
    const fx::Fixture f = fx::load_fixture("transformerDecoderLayer", c);
    const auto& j = f.args();
    const fx::ArgArrays arr(j);
    md::DecoderLayerArgs a;
    a.x = arr.f("x"), a.memory = arr.f("memory"), a.n = j.at("n"), a.m = j.at("m");
    a.d_model = j.at("dModel"), a.num_heads = j.at("numHeads"), a.d_ff = j.at("dFF");
    a.self_attn = mha_weights(arr, "params.self.");
    a.cross_attn = mha_weights(arr, "params.cross.");
    a.ff = {arr.f("params.w1"), arr.f("params.b1"), arr.f("params.w2"), arr.f("params.b2")};
    a.norm1 = {arr.f("params.norm1Gamma"), arr.f("params.norm1Beta")};
    a.norm2 = {arr.f("params.norm2Gamma"), arr.f("params.norm2Beta")};
    a.norm3 = {arr.f("params.norm3Gamma"), arr.f("params.norm3Beta")};
    a.norm_first = j.value("normFirst", false);
    a.activation = activation(j);
    a.eps = j.value("eps", 1e-5);
    a.causal = j.value("causal", true);
    a.memory_mask = arr.mask("memoryMask");
    auto r = md::decoder_layer(a);
    REQUIRE(r.ok());
    check_close(r.value().output, fx::doubles(f.expected().at("output")), f.atol(), f.rtol(), f.name + " output");
    check_close(r.value().self_weights, fx::doubles(f.expected().at("selfWeights")), f.atol(), f.rtol(),
                f.name + " selfWeights");
    check_close(r.value().cross_weights, fx::doubles(f.expected().at("crossWeights")), f.atol(), f.rtol(),
                f.name + " crossWeights");
  }
}
