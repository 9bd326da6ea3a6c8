// ops_test.cpp: softmax, layerNorm, positionalEncoding and the internal GEMM/mask/activation wrappers,
// against hand-worked values, the float64 loops of support/reference.h and the PyTorch fixtures.
#include <catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.h"
#include "ops/activations.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/mask.h"
#include "ops/positional.h"
#include "ops/softmax.h"
#include "support/compare.h"
#include "support/random.h"
#include "support/fixtures.h"
#include "support/reference.h"

namespace {

using attnscope::test::check_close;
constexpr double kAtol = 1e-5;  // float32 result vs float64 reference (the fixtures' tolerance)
constexpr double kRtol = 1e-4;
constexpr float kInf = std::numeric_limits<float>::infinity();

using attnscope::test::all_finite;
using attnscope::test::random_vec;

}  // namespace

namespace ops = attnscope::ops;
namespace ref = attnscope::ref;
namespace fx = attnscope::test;

// ---------------------------------------------------------------- softmax

TEST_CASE("softmax: hand-worked row [1, 2, 3]", "[ops][softmax]") {
  // e^1, e^2, e^3 = 2.71828, 7.38906, 20.08554; sum 30.19288 -> 0.090031, 0.244728, 0.665241.
  const std::vector<float> x{1.0f, 2.0f, 3.0f};
  auto r = ops::softmax(x, 1, 3);
  REQUIRE(r.ok());
  check_close(r.value(), std::vector<double>{0.0900306, 0.2447285, 0.6652410}, 1e-6, 0.0, "softmax [1,2,3]");
}

TEST_CASE("softmax: -Infinity entries give 0 and a fully masked row gives zeros, no NaN", "[ops][softmax]") {
  const std::vector<float> x{0.5f, -kInf, 0.5f, -kInf,   // two live entries: 0.5 each
                             -kInf, -kInf, -kInf, -kInf,  // fully masked: zeros
                             80.0f, 81.0f, -kInf, 79.0f};  // large magnitudes stay finite
  auto r = ops::softmax(x, 3, 4);
  REQUIRE(r.ok());
  const std::vector<float>& y = r.value();
  REQUIRE(all_finite(y));
  CHECK(y[0] == 0.5f);
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == 0.5f);
  for (int j = 4; j < 8; ++j) CHECK(y[j] == 0.0f);
  CHECK(y[10] == 0.0f);
  check_close(y, ref::softmax_rows(ref::to_double(x), 3, 4), kAtol, kRtol, "softmax -inf rows");
}

TEST_CASE("softmax: matches the float64 reference over sizes and primes", "[ops][softmax]") {
  for (int rows : {1, 2, 3, 7}) {
    for (int cols : {1, 2, 3, 4, 5, 8, 13, 17, 31, 64}) {
      const auto x = random_vec(static_cast<std::size_t>(rows) * cols, 1000u + rows * 100u + cols, 3.0f);
      auto r = ops::softmax(x, rows, cols);
      REQUIRE(r.ok());
      check_close(r.value(), ref::softmax_rows(ref::to_double(x), rows, cols), kAtol, kRtol,
                  "softmax " + std::to_string(rows) + "x" + std::to_string(cols));
    }
  }
}

TEST_CASE("softmax: bad arguments return the documented messages", "[ops][softmax]") {
  const std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f};
  CHECK(ops::softmax(x, 0, 4).status().message == "softmax: rows (0) must be a positive integer");
  CHECK(ops::softmax(x, 1, -2).status().message == "softmax: cols (-2) must be a positive integer");
  CHECK(ops::softmax(x, 2, 3).status().message == "softmax: x must have length 6 (rows*cols = 2*3), got 4");
  CHECK(ops::softmax({}, 2, 2).status().message == "softmax: x is required");
  std::vector<float> bad = x;
  bad[2] = std::numeric_limits<float>::quiet_NaN();
  auto r = ops::softmax(bad, 2, 2);
  CHECK(r.status().kind == attnscope::core::ErrorKind::kRange);
  CHECK(r.status().argument == "x");
  CHECK(r.status().message == "softmax: x[2] (NaN) must be finite or -Infinity");
  bad[2] = kInf;
  CHECK(ops::softmax(bad, 2, 2).status().message == "softmax: x[2] (Infinity) must be finite or -Infinity");
  // The op still works after errors.
  auto ok = ops::softmax(x, 2, 2);
  REQUIRE(ok.ok());
  check_close(ok.value(), ref::softmax_rows(ref::to_double(x), 2, 2), kAtol, kRtol, "softmax after errors");
}

TEST_CASE("softmax: PyTorch fixtures", "[ops][softmax][fixtures]") {
  const auto cases = fx::fixture_cases("softmax");
  REQUIRE(cases.size() >= 2);
  for (const auto& c : cases) {
    const fx::Fixture f = fx::load_fixture("softmax", c);
    const auto x = fx::floats(f.args().at("x"));
    auto r = ops::softmax(x, f.args().at("rows").get<int>(), f.args().at("cols").get<int>());
    REQUIRE(r.ok());
    check_close(r.value(), fx::doubles(f.expected().at("output")), f.atol(), f.rtol(), f.name);
  }
}

// ---------------------------------------------------------------- layerNorm

TEST_CASE("layerNorm: hand-worked row [1, 2, 3, 4]", "[ops][layer_norm]") {
  // mean 2.5, biased var 1.25, eps 0 -> (x - 2.5) / 1.118034 = -1.341641, -0.447214, 0.447214, 1.341641.
  // With eps = 1e-5 the denominator is sqrt(1.25001): values shrink by 4e-6 relative.
  const std::vector<float> x{1, 2, 3, 4};
  auto r = ops::layer_norm(x, 1, 4, {}, {}, 1e-5);
  REQUIRE(r.ok());
  const double s = 1.0 / std::sqrt(1.25 + 1e-5);
  check_close(r.value(), std::vector<double>{-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s}, 1e-6, 0.0, "layerNorm [1..4]");
  // gamma/beta scale and shift.
  const std::vector<float> g{2, 2, 2, 2}, b{1, 1, 1, 1};
  auto r2 = ops::layer_norm(x, 1, 4, g, b, 1e-5);
  REQUIRE(r2.ok());
  check_close(r2.value(), std::vector<double>{1 - 3 * s, 1 - s, 1 + s, 1 + 3 * s}, 1e-6, 0.0, "layerNorm affine");
}

TEST_CASE("layerNorm: a constant row gives beta, never NaN", "[ops][layer_norm]") {
  const std::vector<float> x(6, 3.25f), g{1, 2, 3}, b{0.5f, -1.0f, 2.0f};
  auto r = ops::layer_norm(x, 2, 3, g, b, 1e-5);
  REQUIRE(r.ok());
  check_close(r.value(), std::vector<double>{0.5, -1, 2, 0.5, -1, 2}, 1e-6, 0.0, "layerNorm constant");
}

TEST_CASE("layerNorm: matches the float64 reference", "[ops][layer_norm]") {
  for (int d : {1, 2, 3, 5, 8, 13, 32}) {
    const int n = 3;
    const auto x = random_vec(static_cast<std::size_t>(n) * d, 2000u + d, 2.0f);
    const auto g = random_vec(d, 3000u + d), b = random_vec(d, 4000u + d);
    auto r = ops::layer_norm(x, n, d, g, b, 1e-5);
    REQUIRE(r.ok());
    check_close(r.value(), ref::layer_norm(ref::to_double(x), n, d, ref::to_double(g), ref::to_double(b), 1e-5),
                kAtol, kRtol, "layerNorm d=" + std::to_string(d));
  }
}

TEST_CASE("layerNorm: bad arguments return the documented messages", "[ops][layer_norm]") {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  const std::vector<float> g3{1, 1, 1}, g2{1, 1};
  CHECK(ops::layer_norm(x, 0, 3, {}, {}, 1e-5).status().message == "layerNorm: n (0) must be a positive integer");
  CHECK(ops::layer_norm(x, 4, 3, {}, {}, 1e-5).status().message ==
        "layerNorm: x must have length 12 (n*d = 4*3), got 6");
  CHECK(ops::layer_norm(x, 2, 3, g2, {}, 1e-5).status().message ==
        "layerNorm: gamma must have length 3 (d = 3), got 2");
  CHECK(ops::layer_norm(x, 2, 3, g3, g2, 1e-5).status().message ==
        "layerNorm: beta must have length 3 (d = 3), got 2");
  CHECK(ops::layer_norm(x, 2, 3, {}, {}, 0.0).status().message ==
        "layerNorm: eps (0) must be a positive finite number");
  std::vector<float> bad = x;
  bad[4] = -kInf;
  CHECK(ops::layer_norm(bad, 2, 3, {}, {}, 1e-5).status().message == "layerNorm: x[4] (-Infinity) must be finite");
}

TEST_CASE("layerNorm: PyTorch fixtures", "[ops][layer_norm][fixtures]") {
  const auto cases = fx::fixture_cases("layerNorm");
  REQUIRE(cases.size() >= 2);
  for (const auto& c : cases) {
    const fx::Fixture f = fx::load_fixture("layerNorm", c);
    const fx::ArgArrays a(f.args());
    auto r = ops::layer_norm(a.f("x"), f.args().at("n").get<int>(), f.args().at("d").get<int>(), a.f("gamma"),
                             a.f("beta"), f.args().value("eps", 1e-5));
    REQUIRE(r.ok());
    check_close(r.value(), fx::doubles(f.expected().at("output")), f.atol(), f.rtol(), f.name);
  }
}

// ---------------------------------------------------------------- positionalEncoding

TEST_CASE("positionalEncoding: hand-worked entries", "[ops][positional]") {
  // Row 0 is [sin 0, cos 0, ...] = [0, 1, 0, 1]. Row 1, d = 4: angles 1 and 1/10000^(2/4) = 0.01:
  // [sin 1, cos 1, sin 0.01, cos 0.01] = [0.841471, 0.540302, 0.0099998, 0.99995].
  auto r = ops::positional_encoding(2, 4, 10000.0);
  REQUIRE(r.ok());
  check_close(r.value(), std::vector<double>{0, 1, 0, 1, 0.8414710, 0.5403023, 0.0099998333, 0.99995}, 1e-6, 0.0,
              "PE n=2 d=4");
}

TEST_CASE("positionalEncoding: odd d and other bases match the float64 reference", "[ops][positional]") {
  for (int d : {1, 3, 7, 16}) {
    for (double base : {10000.0, 100.0, 2.5}) {
      auto r = ops::positional_encoding(9, d, base);
      REQUIRE(r.ok());
      check_close(r.value(), ref::positional(9, d, base), 1e-6, 1e-6, "PE d=" + std::to_string(d));
    }
  }
}

TEST_CASE("positionalEncoding: bad arguments return the documented messages", "[ops][positional]") {
  CHECK(ops::positional_encoding(0, 4, 1e4).status().message ==
        "positionalEncoding: n (0) must be a positive integer");
  CHECK(ops::positional_encoding(3, -1, 1e4).status().message ==
        "positionalEncoding: d (-1) must be a positive integer");
  CHECK(ops::positional_encoding(3, 4, 0.0).status().message ==
        "positionalEncoding: base (0) must be a positive finite number");
  CHECK(ops::positional_encoding(3, 4, std::numeric_limits<double>::quiet_NaN()).status().argument == "base");
}

TEST_CASE("positionalEncoding: PyTorch fixtures", "[ops][positional][fixtures]") {
  const auto cases = fx::fixture_cases("positionalEncoding");
  REQUIRE(cases.size() >= 2);
  for (const auto& c : cases) {
    const fx::Fixture f = fx::load_fixture("positionalEncoding", c);
    auto r = ops::positional_encoding(f.args().at("n").get<int>(), f.args().at("d").get<int>(),
                                      f.args().value("base", 10000.0));
    REQUIRE(r.ok());
    check_close(r.value(), fx::doubles(f.expected().at("output")), f.atol(), f.rtol(), f.name);
  }
}

// ---------------------------------------------------------------- internal wrappers

TEST_CASE("matmul_nt / matmul_nn: strided head views match the float64 reference", "[ops][linear]") {
  // A [5, 12] "projection" whose columns 4..7 are head 1 (ld = 12), as multi-head attention uses it.
  const int n = 5, d_model = 12, hd = 4, off = 4;
  const auto q = random_vec(n * d_model, 11), k = random_vec(n * d_model, 12);
  std::vector<float> s(n * n);
  ops::matmul_nt({q.data() + off, n, hd, d_model}, {k.data() + off, n, hd, d_model}, {s.data(), n, n, n}, 0.5f);
  std::vector<double> want(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int c = 0; c < hd; ++c) acc += double(q[i * d_model + off + c]) * k[j * d_model + off + c];
      want[i * n + j] = 0.5 * acc;
    }
  check_close(s, want, kAtol, kRtol, "matmul_nt head view");
  // s [5, 5] · V_head [5, 4] into columns 4..7 of out [5, 12]; other columns untouched.
  std::vector<float> out(n * d_model, 7.0f);
  ops::matmul_nn({s.data(), n, n, n}, {k.data() + off, n, hd, d_model}, {out.data() + off, n, hd, d_model});
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < d_model; ++c) {
      if (c >= off && c < off + hd) {
        double acc = 0;
        for (int j = 0; j < n; ++j) acc += double(s[i * n + j]) * k[j * d_model + c];
        CHECK(std::fabs(out[i * d_model + c] - acc) <= kAtol + kRtol * std::fabs(acc));
      } else {
        CHECK(out[i * d_model + c] == 7.0f);
      }
    }
  }
}

TEST_CASE("linear: x·W + b with W stored [in, out]", "[ops][linear]") {
  // x [2, 3] = [[1, 2, 3], [4, 5, 6]], W [3, 2] = [[1, 0], [0, 1], [1, 1]], b = [10, 20]:
  // rows: [1+3+10, 2+3+20] = [14, 25]; [4+6+10, 5+6+20] = [20, 31].
  const std::vector<float> x{1, 2, 3, 4, 5, 6}, w{1, 0, 0, 1, 1, 1}, b{10, 20};
  check_close(ops::linear(x, 2, 3, w, 2, b), std::vector<double>{14, 25, 20, 31}, 0, 0, "linear");
  check_close(ops::linear(x, 2, 3, w, 2, {}), std::vector<double>{4, 5, 10, 11}, 0, 0, "linear no bias");
}

TEST_CASE("apply_attention_mask: causal is top-left and combines with the mask", "[ops][mask]") {
  std::vector<float> s(3 * 4, 1.0f);
  const std::vector<std::uint8_t> mask{1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0};
  ops::apply_attention_mask({s.data(), 3, 4, 4}, mask, true);
  const float b = -kInf;
  const std::vector<float> want{1, b, b, b, b, 1, b, b, 1, 1, 1, b};
  CHECK(s == want);
}

TEST_CASE("activations: relu, exact gelu, tanh, add, dot vs float64", "[ops][activations]") {
  const auto x = random_vec(37, 21, 3.0f), y = random_vec(37, 22);
  std::vector<float> out(x.size());
  std::vector<double> want(x.size());
  ops::gelu(x, out);
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = ref::gelu(x[i]);
  check_close(out, want, kAtol, kRtol, "gelu");
  ops::relu(x, out);
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = ref::relu(x[i]);
  check_close(out, want, 0, 0, "relu");
  ops::tanh(x, out);
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = std::tanh(double(x[i]));
  check_close(out, want, kAtol, kRtol, "tanh");
  ops::add(x, y, out);
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = double(x[i]) + y[i], d += double(x[i]) * y[i];
  check_close(out, want, kAtol, kRtol, "add");
  CHECK(std::fabs(ops::dot(x, y) - d) <= 1e-4);
}
