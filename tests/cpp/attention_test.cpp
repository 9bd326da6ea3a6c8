// attention_test.cpp: the attention family against worked examples (to the printed digit), the
// float64 loops of support/reference.h and the PyTorch fixtures; error messages and masked rows.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "core/rng.h"
#include "support/compare.h"
#include "support/random.h"
#include "support/fixtures.h"
#include "support/reference.h"

namespace {

using attnscope::test::check_close;
constexpr double kAtol = 1e-5;
constexpr double kRtol = 1e-4;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

using attnscope::test::all_finite;
using attnscope::test::random_vec;

// A value printed to 4 decimals matches when |got - printed| <= half a unit in the last place
// (plus float32 rounding).
void check_printed(const std::vector<float>& got, std::size_t offset, const std::vector<double>& printed,
                   const char* what) {
  attnscope::test::check_close(got.data() + offset, printed.data(), printed.size(), 0.5e-4 + 1e-6, 0.0, what);
}

}  // namespace

namespace at = attnscope::attention;
namespace ref = attnscope::ref;
namespace fx = attnscope::test;

// ---------------------------------------------------------------- simple self-attention

// Raschka, "Build a Large Language Model (From Scratch)", ch. 3.3, the sentence "Your journey starts
// with one step", one 3-d embedding per word (rows). Derivation of row 2 ("journey", index 1):
//   scores[1, j] = x_1 · x_j, e.g. x_1 · x_0 = 0.55*0.43 + 0.87*0.15 + 0.66*0.89 = 0.2365 + 0.1305 + 0.5874
//   = 0.9544; x_1 · x_1 = 0.3025 + 0.7569 + 0.4356 = 1.4950.
//   weights[1, :] = softmax(scores[1, :]): e^0.9544 = 2.5971, e^1.4950 = 4.4593, ... sum 18.744 ->
//   0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581.
//   context[1, :] = Σ_j weights[1, j] x_j = [0.4419, 0.6515, 0.5683].
// The full tables below were computed in double (numpy, x @ x.T, exp / row sum, @ x) and printed to 4
// decimals; the book prints the same row-2 numbers.
TEST_CASE("simpleSelfAttention: Raschka's 'Your journey starts with one step' to 4 decimals",
          "[attention][simple]") {
  const std::vector<float> x{0.43f, 0.15f, 0.89f, 0.55f, 0.87f, 0.66f, 0.57f, 0.85f, 0.64f,
                             0.22f, 0.58f, 0.33f, 0.77f, 0.25f, 0.10f, 0.05f, 0.80f, 0.55f};
  auto r = at::simple_self_attention(x, 6, 3);
  REQUIRE(r.ok());
  const at::AttentionOutput& o = r.value();
  REQUIRE(o.scores.size() == 36);
  REQUIRE(o.weights.size() == 36);
  REQUIRE(o.output.size() == 18);
  check_printed(o.scores, 6, {0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865}, "scores row 2");
  check_printed(o.weights, 6, {0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581}, "weights row 2");
  check_printed(o.output, 3, {0.4419, 0.6515, 0.5683}, "context row 2");
  check_printed(o.scores, 0,
                {0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310,  //
                 0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865,  //
                 0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605,  //
                 0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565,  //
                 0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935,  //
                 0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450},
                "scores 6x6");
  check_printed(o.weights, 0,
                {0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452,  //
                 0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581,  //
                 0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565,  //
                 0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720,  //
                 0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295,  //
                 0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896},
                "weights 6x6");
  check_printed(o.output, 0,
                {0.4421, 0.5931, 0.5790,  //
                 0.4419, 0.6515, 0.5683,  //
                 0.4431, 0.6496, 0.5671,  //
                 0.4304, 0.6298, 0.5510,  //
                 0.4671, 0.5910, 0.5266,  //
                 0.4177, 0.6503, 0.5645},
                "context 6x3");
  // And to float precision against the float64 reference (scale 1: unscaled X Xᵀ).
  const ref::Attn want = ref::sdpa(ref::to_double(x), ref::to_double(x), ref::to_double(x), 6, 6, 3, 3, {}, false, 1.0);
  check_close(o.scores, want.scores, kAtol, kRtol, "scores vs float64");
  check_close(o.weights, want.weights, kAtol, kRtol, "weights vs float64");
  check_close(o.output, want.output, kAtol, kRtol, "context vs float64");
}

TEST_CASE("simpleSelfAttention: bad arguments", "[attention][simple]") {
  const std::vector<float> x{1, 2, 3, 4, 5};
  CHECK(at::simple_self_attention(x, 2, 3).status().message ==
        "simpleSelfAttention: x must have length 6 (n*d = 2*3), got 5");
  CHECK(at::simple_self_attention(x, 0, 5).status().message == "simpleSelfAttention: n (0) must be a positive integer");
}

TEST_CASE("simpleSelfAttention: PyTorch fixture", "[attention][simple][fixtures]") {
  const fx::Fixture f = fx::load_fixture("simpleSelfAttention", "raschka");
  const auto x = fx::floats(f.args().at("x"));
  auto r = at::simple_self_attention(x, f.args().at("n").get<int>(), f.args().at("d").get<int>());
  REQUIRE(r.ok());
  check_close(r.value().scores, fx::doubles(f.expected().at("scores")), f.atol(), f.rtol(), "scores");
  check_close(r.value().weights, fx::doubles(f.expected().at("weights")), f.atol(), f.rtol(), "weights");
  check_close(r.value().output, fx::doubles(f.expected().at("context")), f.atol(), f.rtol(), "context");
}

// ---------------------------------------------------------------- scaled dot-product

TEST_CASE("scaledDotProductAttention: matches float64 with mask, causal and scale", "[attention][sdpa]") {
  for (int nq : {1, 3, 5}) {
    for (int nk : {1, 4, 7}) {
      const int dk = 5, dv = 3;
      const auto q = random_vec(nq * dk, 100 + nq), k = random_vec(nk * dk, 200 + nk), v = random_vec(nk * dv, 300);
      std::vector<std::uint8_t> mask(static_cast<std::size_t>(nq) * nk);
      for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 7 + 3) % 5 != 0;
      for (bool causal : {false, true}) {
        at::SdpaArgs a;
        a.q = q, a.k = k, a.v = v, a.nq = nq, a.nk = nk, a.dk = dk, a.dv = dv, a.mask = mask, a.causal = causal;
        a.scale = 0.8;
        auto r = at::scaled_dot_product_attention(a);
        REQUIRE(r.ok());
        const ref::Attn want =
            ref::sdpa(ref::to_double(q), ref::to_double(k), ref::to_double(v), nq, nk, dk, dv, mask, causal, 0.8);
        check_close(r.value().scores, want.scores, kAtol, kRtol, "sdpa scores");
        check_close(r.value().weights, want.weights, kAtol, kRtol, "sdpa weights");
        check_close(r.value().output, want.output, kAtol, kRtol, "sdpa output");
        REQUIRE(all_finite(r.value().weights));
        REQUIRE(all_finite(r.value().output));
      }
    }
  }
}

TEST_CASE("scaledDotProductAttention: default scale is 1/sqrt(dk); a fully masked row gives zeros",
          "[attention][sdpa]") {
  // q = [1, 1, 1, 1], keys e0 and e0+e1 -> raw scores 1 and 2, scaled by 1/sqrt(4) -> 0.5 and 1.
  const std::vector<float> q{1, 1, 1, 1, 2, 0, 0, 0}, k{1, 0, 0, 0, 1, 1, 0, 0}, v{10, 20};
  const std::vector<std::uint8_t> mask{1, 1, 0, 0};
  at::SdpaArgs a;
  a.q = q, a.k = k, a.v = v, a.nq = 2, a.nk = 2, a.dk = 4, a.dv = 1, a.mask = mask;
  auto r = at::scaled_dot_product_attention(a);
  REQUIRE(r.ok());
  // weights row 0 = softmax([0.5, 1]) = [1/(1+e^0.5), e^0.5/(1+e^0.5)] = [0.377541, 0.622459]
  check_close(r.value().scores, std::vector<double>{0.5, 1.0, -INFINITY, -INFINITY}, 1e-6, 0, "scores");
  check_close(r.value().weights, std::vector<double>{0.3775407, 0.6224593, 0, 0}, 1e-6, 0, "weights");
  check_close(r.value().output, std::vector<double>{0.3775407 * 10 + 0.6224593 * 20, 0}, 1e-5, 0, "output");
}

TEST_CASE("scaledDotProductAttention: bad arguments", "[attention][sdpa]") {
  const std::vector<float> q(6, 1.0f), k(8, 1.0f), v(4, 1.0f);
  const std::vector<std::uint8_t> mask(5, 1);
  at::SdpaArgs a;
  a.q = q, a.k = k, a.v = v, a.nq = 3, a.nk = 4, a.dk = 2, a.dv = 1;
  REQUIRE(at::scaled_dot_product_attention(a).ok());
  at::SdpaArgs b = a;
  b.v = {};
  CHECK(at::scaled_dot_product_attention(b).status().message == "scaledDotProductAttention: v is required");
  b = a, b.dk = 3;
  CHECK(at::scaled_dot_product_attention(b).status().message ==
        "scaledDotProductAttention: q must have length 9 (nq*dk = 3*3), got 6");
  b = a, b.mask = mask;
  CHECK(at::scaled_dot_product_attention(b).status().message ==
        "scaledDotProductAttention: mask must have length 12 (nq*nk = 3*4), got 5");
  b = a, b.scale = std::numeric_limits<double>::infinity();
  CHECK(at::scaled_dot_product_attention(b).status().message ==
        "scaledDotProductAttention: scale (Infinity) must be a finite number");
  std::vector<float> bad_k = k;
  bad_k[5] = std::numeric_limits<float>::quiet_NaN();
  b = a, b.k = bad_k;
  CHECK(at::scaled_dot_product_attention(b).status().message == "scaledDotProductAttention: k[5] (NaN) must be finite");
  b = a, b.nk = -1;
  CHECK(at::scaled_dot_product_attention(b).status().message ==
        "scaledDotProductAttention: nk (-1) must be a positive integer");
}

TEST_CASE("scaledDotProductAttention: PyTorch fixtures", "[attention][sdpa][fixtures]") {
  const auto cases = fx::fixture_cases("scaledDotProductAttention");
  REQUIRE(cases.size() >= 3);
  for (const auto& c : cases) {
    const fx::Fixture f = fx::load_fixture("scaledDotProductAttention", c);
    const fx::ArgArrays arr(f.args());
    at::SdpaArgs a;
    a.q = arr.f("q"), a.k = arr.f("k"), a.v = arr.f("v"), a.mask = arr.mask("mask");
    a.nq = f.args().at("nq"), a.nk = f.args().at("nk"), a.dk = f.args().at("dk"), a.dv = f.args().at("dv");
    a.causal = f.args().value("causal", false);
    if (f.args().contains("scale")) a.scale = f.args().at("scale").get<double>();
    auto r = at::scaled_dot_product_attention(a);
    REQUIRE(r.ok());
    check_close(r.value().scores, fx::doubles(f.expected().at("scores")), f.atol(), f.rtol(), f.name + " scores");
    check_close(r.value().weights, fx::doubles(f.expected().at("weights")), f.atol(), f.rtol(), f.name + " weights");
    check_close(r.value().output, fx::doubles(f.expected().at("output")), f.atol(), f.rtol(), f.name + " output");
  }
}

// ---------------------------------------------------------------- multi-head

namespace {

struct MhaCase {
  int nq, nk, d_model, heads, kdim, vdim;
  bool self, bias;
};

// Random weights for a case, owned here; spans handed to MhaArgs.
struct MhaData {
  std::vector<float> query, key, value, wq, wk, wv, wo, bq, bk, bv, bo;
  MhaData(const MhaCase& c, std::uint64_t seed) {
    query = random_vec(c.nq * c.d_model, seed);
    key = c.self ? query : random_vec(c.nk * c.kdim, seed + 1);
    value = c.self ? query : random_vec(c.nk * c.vdim, seed + 2);
    wq = random_vec(c.d_model * c.d_model, seed + 3, 0.4f);
    wk = random_vec(c.kdim * c.d_model, seed + 4, 0.4f);
    wv = random_vec(c.vdim * c.d_model, seed + 5, 0.4f);
    wo = random_vec(c.d_model * c.d_model, seed + 6, 0.4f);
    if (c.bias) {
      bq = random_vec(c.d_model, seed + 7, 0.2f);
      bk = random_vec(c.d_model, seed + 8, 0.2f);
      bv = random_vec(c.d_model, seed + 9, 0.2f);
      bo = random_vec(c.d_model, seed + 10, 0.2f);
    }
  }
  at::MhaArgs args(const MhaCase& c) const {
    at::MhaArgs a;
    a.query = query, a.key = key, a.value = value;
    a.nq = c.nq, a.nk = c.nk, a.d_model = c.d_model, a.num_heads = c.heads, a.kdim = c.kdim, a.vdim = c.vdim;
    a.w = {wq, wk, wv, wo, bq, bk, bv, bo};
    return a;
  }
  ref::MhaParams params() const {
    return {ref::to_double(wq), ref::to_double(wk), ref::to_double(wv), ref::to_double(wo),
            ref::to_double(bq), ref::to_double(bk), ref::to_double(bv), ref::to_double(bo)};
  }
};

}  // namespace

TEST_CASE("multiHeadAttention: matches float64 for heads 1/2/4, self and cross, masks", "[attention][mha]") {
  const MhaCase cases[] = {{5, 5, 8, 1, 8, 8, true, true},   {5, 5, 8, 2, 8, 8, true, false},
                           {6, 6, 8, 4, 8, 8, true, true},   {3, 7, 8, 2, 6, 4, false, true},
                           {4, 5, 12, 4, 5, 3, false, false}, {1, 1, 4, 4, 4, 4, true, true},
                           {7, 3, 6, 3, 2, 9, false, true}};
  std::uint64_t seed = 500;
  for (const MhaCase& c : cases) {
    const MhaData d(c, seed += 20);
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(c.nq) * c.nk);
    for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 5 + 1) % 4 != 0;
    for (int variant = 0; variant < 3; ++variant) {
      at::MhaArgs a = d.args(c);
      if (variant >= 1) a.causal = true;
      if (variant == 2) a.mask = mask;
      auto r = at::multi_head_attention(a);
      REQUIRE(r.ok());
      const ref::Mha want = ref::mha(ref::to_double(d.query), ref::to_double(d.key), ref::to_double(d.value), c.nq,
                                     c.nk, c.d_model, c.heads, c.kdim, c.vdim, d.params(), a.mask, a.causal);
      const std::string what = "mha H=" + std::to_string(c.heads) + " nq=" + std::to_string(c.nq) +
                               " variant " + std::to_string(variant);
      check_close(r.value().output, want.output, kAtol, kRtol, what + " output");
      check_close(r.value().weights, want.weights, kAtol, kRtol, what + " weights");
      REQUIRE(all_finite(r.value().output));
    }
  }
}

TEST_CASE("multiHeadAttention: a fully blocked row gives zero weights and output row bo", "[attention][mha]") {
  const MhaCase c{3, 4, 8, 2, 8, 8, false, true};
  const MhaData d(c, 900);
  std::vector<std::uint8_t> mask(12, 1);
  for (int j = 0; j < 4; ++j) mask[4 + j] = 0;  // query row 1 may attend nothing
  at::MhaArgs a = d.args(c);
  a.mask = mask;
  auto r = at::multi_head_attention(a);
  REQUIRE(r.ok());
  const at::MhaOutput& o = r.value();
  REQUIRE(all_finite(o.output));
  REQUIRE(all_finite(o.weights));
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j) CHECK(o.weights[h * 12 + 4 + j] == 0.0f);
  for (int c2 = 0; c2 < 8; ++c2) CHECK(o.output[8 + c2] == d.bo[c2]);
  // Without biases the row is exactly zero.
  const MhaCase c0{3, 4, 8, 2, 8, 8, false, false};
  const MhaData d0(c0, 901);
  at::MhaArgs a0 = d0.args(c0);
  a0.mask = mask;
  auto r0 = at::multi_head_attention(a0);
  REQUIRE(r0.ok());
  for (int c2 = 0; c2 < 8; ++c2) CHECK(r0.value().output[8 + c2] == 0.0f);
}

TEST_CASE("multiHeadAttention: needWeights false and keep_trace", "[attention][mha]") {
  const MhaCase c{4, 4, 8, 2, 8, 8, true, true};
  const MhaData d(c, 950);
  at::MhaArgs a = d.args(c);
  a.causal = true;
  auto full = at::multi_head_attention(a);
  REQUIRE(full.ok());
  a.need_weights = false;
  auto lean = at::multi_head_attention(a);
  REQUIRE(lean.ok());
  CHECK(lean.value().weights.empty());
  CHECK(lean.value().output == full.value().output);
  CHECK(lean.value().q.empty());
  a.need_weights = true;
  a.keep_trace = true;
  auto tr = at::multi_head_attention(a);
  REQUIRE(tr.ok());
  const at::MhaOutput& t = tr.value();
  CHECK(t.output == full.value().output);
  CHECK(t.weights == full.value().weights);
  REQUIRE(t.q.size() == 32);
  REQUIRE(t.k.size() == 32);
  REQUIRE(t.v.size() == 32);
  REQUIRE(t.scores.size() == 2 * 16);
  REQUIRE(t.concat.size() == 32);
  // q = query·Wq + bq
  const ref::Vec q_ref = ref::linear(ref::to_double(d.query), 4, 8, ref::to_double(d.wq), 8, ref::to_double(d.bq));
  check_close(t.q, q_ref, kAtol, kRtol, "trace q");
  // scores of head h = Q_h K_hᵀ / sqrt(4), -inf above the diagonal; their softmax is the weights.
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const float s = t.scores[h * 16 + i * 4 + j];
        if (j > i) {
          CHECK(s == kNegInf);
        } else {
          double acc = 0;
          for (int c2 = 0; c2 < 4; ++c2) acc += double(t.q[i * 8 + h * 4 + c2]) * t.k[j * 8 + h * 4 + c2];
          CHECK(std::fabs(s - acc / 2.0) <= 1e-5 + 1e-4 * std::fabs(acc));
        }
      }
  const ref::Vec w_from_scores = ref::softmax_rows(ref::to_double(t.scores), 8, 4);
  check_close(t.weights, w_from_scores, kAtol, kRtol, "softmax(trace scores) = weights");
  const ref::Vec out_from_concat = ref::linear(ref::to_double(t.concat), 4, 8, ref::to_double(d.wo), 8,
                                               ref::to_double(d.bo));
  check_close(t.output, out_from_concat, kAtol, kRtol, "concat·Wo + bo = output");
}

TEST_CASE("multiHeadAttention: bad arguments return the documented messages", "[attention][mha]") {
  const MhaCase c{3, 3, 10, 2, 10, 10, true, true};
  const MhaData d(c, 990);
  at::MhaArgs a = d.args(c);
  REQUIRE(at::multi_head_attention(a).ok());
  at::MhaArgs b = a;
  b.num_heads = 3;
  auto r = at::multi_head_attention(b);
  CHECK(r.status().message == "multiHeadAttention: dModel (10) must be divisible by numHeads (3)");
  CHECK(r.status().argument == "dModel");
  CHECK(r.status().kind == attnscope::core::ErrorKind::kRange);
  b = a, b.num_heads = 0;
  CHECK(at::multi_head_attention(b).status().message == "multiHeadAttention: numHeads (0) must be a positive integer");
  b = a, b.w.wq = std::span<const float>(d.wq).first(99);
  CHECK(at::multi_head_attention(b).status().message ==
        "multiHeadAttention: wq must have length 100 (dModel*dModel = 10*10), got 99");
  b = a, b.w.wo = {};
  CHECK(at::multi_head_attention(b).status().message == "multiHeadAttention: wo is required");
  b = a, b.w.bk = std::span<const float>(d.bk).first(4);
  CHECK(at::multi_head_attention(b).status().message ==
        "multiHeadAttention: bk must have length 10 (dModel = 10), got 4");
  b = a, b.kdim = 4;  // key defaults to query, which is [3, 10], not [3, 4]
  CHECK(at::multi_head_attention(b).status().message ==
        "multiHeadAttention: key must have length 12 (nk*kdim = 3*4), got 30");
  const std::vector<std::uint8_t> mask(8, 1);
  b = a, b.mask = mask;
  CHECK(at::multi_head_attention(b).status().message ==
        "multiHeadAttention: mask must have length 9 (nq*nk = 3*3), got 8");
  std::vector<float> bad_wv = d.wv;
  bad_wv[17] = std::numeric_limits<float>::infinity();
  b = a, b.w.wv = bad_wv;
  CHECK(at::multi_head_attention(b).status().message == "multiHeadAttention: wv[17] (Infinity) must be finite");
  std::vector<float> bad_q = d.query;
  bad_q[2] = std::numeric_limits<float>::quiet_NaN();
  b = a, b.query = bad_q, b.key = bad_q, b.value = bad_q;
  CHECK(at::multi_head_attention(b).status().message == "multiHeadAttention: query[2] (NaN) must be finite");
  b = a, b.fn = "transformerEncoderLayer", b.num_heads = 3;
  CHECK(at::multi_head_attention(b).status().message ==
        "transformerEncoderLayer: dModel (10) must be divisible by numHeads (3)");
  // Still correct after the errors.
  auto ok = at::multi_head_attention(a);
  REQUIRE(ok.ok());
  const ref::Mha want = ref::mha(ref::to_double(d.query), ref::to_double(d.query), ref::to_double(d.query), 3, 3, 10,
                                 2, 10, 10, d.params(), {}, false);
  check_close(ok.value().output, want.output, kAtol, kRtol, "mha after errors");
}

TEST_CASE("multiHeadAttention: PyTorch fixtures", "[attention][mha][fixtures]") {
  const auto cases = fx::fixture_cases("multiHeadAttention");
  REQUIRE(cases.size() >= 8);
  for (const auto& c : cases) {
    const fx::Fixture f = fx::load_fixture("multiHeadAttention", c);
    const auto& j = f.args();
    const fx::ArgArrays arr(j);
    at::MhaArgs a;
    a.query = arr.f("query");
    a.key = j.contains("key") ? arr.f("key") : a.query;
    a.value = j.contains("value") ? arr.f("value") : a.key;
    a.nq = j.at("nq");
    a.nk = j.value("nk", a.nq);
    a.d_model = j.at("dModel");
    a.num_heads = j.at("numHeads");
    a.kdim = j.value("kdim", a.d_model);
    a.vdim = j.value("vdim", a.d_model);
    a.w = {arr.f("wq"), arr.f("wk"), arr.f("wv"), arr.f("wo"), arr.f("bq"), arr.f("bk"), arr.f("bv"), arr.f("bo")};
    a.mask = arr.mask("mask");
    a.causal = j.value("causal", false);
    auto r = at::multi_head_attention(a);
    REQUIRE(r.ok());
    check_close(r.value().output, fx::doubles(f.expected().at("output")), f.atol(), f.rtol(), f.name + " output");
    check_close(r.value().weights, fx::doubles(f.expected().at("weights")), f.atol(), f.rtol(), f.name + " weights");
  }
}

// ---------------------------------------------------------------- additive (Bahdanau)

// d2l.ai 11.3.2.1: queries (2, 1, 20) ~ N(0, 1), keys = ones((2, 10, 2)), values = arange(40)
// reshaped (10, 4) for both batches, valid_lens = [2, 6]. Every key is the same vector, so every valid
// score is equal and the weights are uniform over the valid keys: output = mean of the first validLen
// value rows. d2l prints [[2, 3, 4, 5]] and [[10, 11, 12, 13]] (whatever the random W_q, W_k, w_v).
TEST_CASE("additiveAttention: d2l.ai setup gives the printed outputs", "[attention][additive]") {
  const int nk = 10, dq = 20, dk = 2, dv = 4, hidden = 8;
  const std::vector<float> keys(nk * dk, 1.0f);
  std::vector<float> values(nk * dv);
  for (int i = 0; i < nk * dv; ++i) values[i] = static_cast<float>(i);
  const auto wq = random_vec(dq * hidden, 31), wk = random_vec(dk * hidden, 32), wv = random_vec(hidden, 33);
  const int valid_lens[2] = {2, 6};
  const std::vector<double> printed[2] = {{2, 3, 4, 5}, {10, 11, 12, 13}};
  for (int b = 0; b < 2; ++b) {
    const auto queries = random_vec(dq, 40 + b);
    at::AdditiveArgs a;
    a.queries = queries, a.keys = keys, a.values = values;
    a.nq = 1, a.nk = nk, a.dq = dq, a.dk = dk, a.dv = dv, a.hidden = hidden;
    a.wq = wq, a.wk = wk, a.wv = wv, a.valid_len = valid_lens[b];
    auto r = at::additive_attention(a);
    REQUIRE(r.ok());
    check_close(r.value().output, printed[b], 1e-5, 1e-6, "d2l additive output");
    for (int j = 0; j < nk; ++j) {
      CHECK(r.value().weights[j] == Approx(j < valid_lens[b] ? 1.0 / valid_lens[b] : 0.0).margin(1e-6));
      if (j >= valid_lens[b]) CHECK(r.value().scores[j] == kNegInf);
    }
  }
}

TEST_CASE("additiveAttention: matches float64; validLen 0 gives zero weights and output", "[attention][additive]") {
  const int nq = 3, nk = 7, dq = 5, dk = 4, dv = 3, hidden = 6;
  const auto queries = random_vec(nq * dq, 51), keys = random_vec(nk * dk, 52), values = random_vec(nk * dv, 53);
  const auto wq = random_vec(dq * hidden, 54, 0.5f), wk = random_vec(dk * hidden, 55, 0.5f),
             wv = random_vec(hidden, 56);
  for (int valid_len : {-1, 0, 1, 4, 7}) {
    at::AdditiveArgs a;
    a.queries = queries, a.keys = keys, a.values = values;
    a.nq = nq, a.nk = nk, a.dq = dq, a.dk = dk, a.dv = dv, a.hidden = hidden;
    a.wq = wq, a.wk = wk, a.wv = wv;
    if (valid_len >= 0) a.valid_len = valid_len;
    auto r = at::additive_attention(a);
    REQUIRE(r.ok());
    const ref::Attn want = ref::additive(ref::to_double(queries), ref::to_double(keys), ref::to_double(values), nq,
                                         nk, dq, dk, dv, hidden, ref::to_double(wq), ref::to_double(wk),
                                         ref::to_double(wv), valid_len);
    const std::string what = "additive validLen " + std::to_string(valid_len);
    check_close(r.value().scores, want.scores, kAtol, kRtol, what + " scores");
    check_close(r.value().weights, want.weights, kAtol, kRtol, what + " weights");
    check_close(r.value().output, want.output, kAtol, kRtol, what + " output");
    if (valid_len == 0) {
      for (float w : r.value().weights) CHECK(w == 0.0f);
      for (float o : r.value().output) CHECK(o == 0.0f);
    }
  }
  at::AdditiveArgs a;
  a.queries = queries, a.keys = keys, a.values = values;
  a.nq = nq, a.nk = nk, a.dq = dq, a.dk = dk, a.dv = dv, a.hidden = hidden;
  a.wq = wq, a.wk = wk, a.wv = wv, a.valid_len = 8;
  CHECK(at::additive_attention(a).status().message ==
        "additiveAttention: validLen (8) must be an integer from 0 to nk (7)");
  a.valid_len = -1;  // absent means every key; a given validLen is 0..nk
  CHECK(at::additive_attention(a).status().message ==
        "additiveAttention: validLen (-1) must be an integer from 0 to nk (7)");
  a.valid_len = std::nullopt, a.wv = std::span<const float>(wv).first(5);
  CHECK(at::additive_attention(a).status().message == "additiveAttention: wv must have length 6 (hidden = 6), got 5");
  a.wv = wv, a.hidden = 0;
  CHECK(at::additive_attention(a).status().message == "additiveAttention: hidden (0) must be a positive integer");
}

TEST_CASE("additiveAttention: PyTorch fixtures", "[attention][additive][fixtures]") {
  const auto cases = fx::fixture_cases("additiveAttention");
  REQUIRE(cases.size() >= 3);
  for (const auto& c : cases) {
    const fx::Fixture f = fx::load_fixture("additiveAttention", c);
    const auto& j = f.args();
    const fx::ArgArrays arr(j);
    at::AdditiveArgs a;
    a.queries = arr.f("queries"), a.keys = arr.f("keys"), a.values = arr.f("values");
    a.nq = j.at("nq"), a.nk = j.at("nk"), a.dq = j.at("dq"), a.dk = j.at("dk"), a.dv = j.at("dv");
    a.hidden = j.at("hidden");
    a.wq = arr.f("wq"), a.wk = arr.f("wk"), a.wv = arr.f("wv");
    if (j.contains("validLen")) a.valid_len = j.at("validLen").get<int>();
    auto r = at::additive_attention(a);
    REQUIRE(r.ok());
    check_close(r.value().scores, fx::doubles(f.expected().at("scores")), f.atol(), f.rtol(), f.name + " scores");
    check_close(r.value().weights, fx::doubles(f.expected().at("weights")), f.atol(), f.rtol(), f.name + " weights");
    check_close(r.value().output, fx::doubles(f.expected().at("output")), f.atol(), f.rtol(), f.name + " output");
  }
}

// ---------------------------------------------------------------- kernel regression (Nadaraya-Watson)

// d2l.ai 11.2: 50 training points x ~ U[0, 5) sorted, y = 2 sin x + x^0.8 + N(0, 0.5); queries
// 0, 0.1, ..., 4.9; Gaussian kernel softmax(-(x_q - x_i)² / 2). Generated here with core::Rng.
TEST_CASE("kernelRegression: d2l.ai setup matches float64 and its weights are row-stochastic",
          "[attention][kernel_regression]") {
  attnscope::core::Rng rng(2024);
  std::vector<float> x_train(50), y_train(50), x_query(50);
  for (float& x : x_train) x = 5.0f * rng.uniform();
  std::sort(x_train.begin(), x_train.end());
  for (int i = 0; i < 50; ++i) {
    y_train[i] = static_cast<float>(2 * std::sin(double(x_train[i])) + std::pow(double(x_train[i]), 0.8) +
                                    0.5 * rng.normal());
    x_query[i] = 0.1f * static_cast<float>(i);
  }
  for (double w : {1.0, 3.0, -0.5}) {
    auto r = at::kernel_regression(x_train, y_train, x_query, w);
    REQUIRE(r.ok());
    const auto want = ref::kernel_regression(ref::to_double(x_train), ref::to_double(y_train),
                                             ref::to_double(x_query), w);
    check_close(r.value().weights, want.first, kAtol, kRtol, "NW weights");
    check_close(r.value().y_pred, want.second, kAtol, kRtol, "NW yPred");
    for (int i = 0; i < 50; ++i) {
      double row = 0;
      for (int j = 0; j < 50; ++j) row += r.value().weights[i * 50 + j];
      CHECK(row == Approx(1.0).margin(1e-5));
    }
  }
  // Hand-worked: two training points 0 and 1 with y 0 and 1, query 0, w 1:
  // weights = softmax([0, -0.5]) = [1/(1+e^-0.5), e^-0.5/(1+e^-0.5)] = [0.622459, 0.377541]; yPred 0.377541.
  const std::vector<float> xt{0, 1}, yt{0, 1}, xq{0};
  auto r = at::kernel_regression(xt, yt, xq, 1.0);
  REQUIRE(r.ok());
  check_close(r.value().weights, std::vector<double>{0.6224593, 0.3775407}, 1e-6, 0, "NW hand weights");
  check_close(r.value().y_pred, std::vector<double>{0.3775407}, 1e-6, 0, "NW hand yPred");
}

TEST_CASE("kernelRegression: bad arguments", "[attention][kernel_regression]") {
  const std::vector<float> xt{0, 1, 2}, yt{0, 1}, xq{0.5f};
  CHECK(at::kernel_regression(xt, yt, xq, 1.0).status().message ==
        "kernelRegression: yTrain must have length 3 (nTrain = 3), got 2");
  CHECK(at::kernel_regression({}, yt, xq, 1.0).status().message == "kernelRegression: xTrain must not be empty");
  CHECK(at::kernel_regression(xt, xt, {}, 1.0).status().message == "kernelRegression: xQuery must not be empty");
  CHECK(at::kernel_regression(xt, xt, xq, std::numeric_limits<double>::quiet_NaN()).status().message ==
        "kernelRegression: w (NaN) must be a finite number");
}

TEST_CASE("kernelRegression: PyTorch fixtures", "[attention][kernel_regression][fixtures]") {
  const auto cases = fx::fixture_cases("kernelRegression");
  REQUIRE(cases.size() >= 2);
  for (const auto& c : cases) {
    const fx::Fixture f = fx::load_fixture("kernelRegression", c);
    const fx::ArgArrays arr(f.args());
    auto r = at::kernel_regression(arr.f("xTrain"), arr.f("yTrain"), arr.f("xQuery"), f.args().value("w", 1.0));
    REQUIRE(r.ok());
    check_close(r.value().weights, fx::doubles(f.expected().at("weights")), f.atol(), f.rtol(), f.name + " weights");
    check_close(r.value().y_pred, fx::doubles(f.expected().at("yPred")), f.atol(), f.rtol(), f.name + " yPred");
  }
}

// Found by fuzz/fuzz_attention (fuzz/crashes/fuzz_attention-sdpa-overflow-nan): finite inputs whose
// product overflows float32 used to give NaN weights with an ok status.
TEST_CASE("scaledDotProductAttention: finite inputs that overflow float32 are an error, not NaN", "[attention][sdpa]") {
  const std::vector<float> q{3e38f}, k{3e38f}, v{1.0f};
  at::SdpaArgs a;
  a.q = q; a.k = k; a.v = v;
  a.nq = a.nk = a.dk = a.dv = 1;
  const auto r = at::scaled_dot_product_attention(a);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message ==
        "scaledDotProductAttention: scores is not finite: an intermediate value overflowed float32 (inputs too large)");
  // A score that overflows to -inf would silently act as a mask: also an error.
  const std::vector<float> neg{-3e38f};
  a.k = neg;
  CHECK(at::scaled_dot_product_attention(a).status().message ==
        "scaledDotProductAttention: scores is not finite: an intermediate value overflowed float32 (inputs too large)");
  a.k = k;
  // The same call with representable scores works.
  const std::vector<float> small{2.0f};
  a.q = small;
  a.k = small;
  REQUIRE(at::scaled_dot_product_attention(a).ok());
}

TEST_CASE("multiHeadAttention: a key projection that overflows float32 is an error, not NaN", "[attention][mha]") {
  const int d = 2;
  const std::vector<float> x{1.0f, 1.0f}, big_key{3.38e38f, 3.38e38f}, w{1.0f, 0.0f, 0.0f, 1.0f}, w2{2.0f, 0.0f, 0.0f, 2.0f};
  at::MhaArgs a;
  a.query = x; a.key = big_key; a.value = x;
  a.nq = a.nk = 1; a.d_model = a.kdim = a.vdim = d; a.num_heads = 1;
  a.w = {w, w2, w, w, {}, {}, {}, {}};  // key·W_K = 6.76e38: overflows
  const auto r = at::multi_head_attention(a);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message ==
        "multiHeadAttention: scores is not finite: an intermediate value overflowed float32 (inputs too large)");
}
