// q8ops_test.cpp: the weights8 (Q8_0) matrix products above the kernels (ops/linear.h), issue 30: a short prompt's
// rows in integers (each row bit-equal to a decoding step's GEMV), the float path of longer prompts, and a tied
// head's Q8_0 token table (table_rows / table_row / table_row_dots), against int64 block sums with float64 scales.
#include <catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/weights.h"
#include "kernels/kernels.h"
#include "ops/linear.h"
#include "support/compare.h"
#include "support/random.h"

namespace {

namespace ops = attnscope::ops;
namespace core = attnscope::core;
namespace kernels = attnscope::kernels;
using attnscope::test::check_close;
using attnscope::test::random_vec;
constexpr int kB = kernels::kQ8Block;

// A random Q8_0 matrix [k, n] in kernels.h's layout (block (b, j) = rows 32b..32b+32 of column j, ldb = n), its
// padding zero as the loader writes it.
struct Q8 {
  std::vector<std::int8_t> q;
  std::vector<float> s;
  core::WeightSpan span() const { return core::WeightSpan::q8_0(q.data(), s.data(), q.size()); }
};
Q8 random_q8(int k, int n, std::uint64_t seed) {
  const int kb = (k + kB - 1) / kB;
  Q8 m{std::vector<std::int8_t>(static_cast<std::size_t>(kb) * n * kB), random_vec(static_cast<std::size_t>(kb) * n, seed, 0.01f)};
  const std::vector<float> r = random_vec(m.q.size(), seed + 1, 60.0f);
  for (int b = 0; b < kb; ++b)
    for (int j = 0; j < n; ++j)
      for (int t = 0; t < kB; ++t) {
        const std::size_t at = (static_cast<std::size_t>(b) * n + j) * kB + t;
        m.q[at] = b * kB + t < k ? static_cast<std::int8_t>(std::fmax(-127.0f, std::fmin(127.0f, std::round(r[at])))) : 0;
      }
  return m;
}

// y[j] = b[j] + Σ_blocks (int64 Σ xq·q) · s · xs, with x quantised by the kernels' own quantize_q8 (tested against its
// definition in half_kernels_test.cpp)
std::vector<double> reference(const std::vector<float>& x, int rows, int k, const Q8& w, int n, const std::vector<float>& bias) {
  const int kb = (k + kB - 1) / kB;
  std::vector<double> y(static_cast<std::size_t>(rows) * n);
  std::vector<std::int8_t> xq(static_cast<std::size_t>(kb) * kB);
  std::vector<float> xs(static_cast<std::size_t>(kb));
  for (int i = 0; i < rows; ++i) {
    kernels::scalar_kernels().quantize_q8(k, x.data() + static_cast<std::size_t>(i) * k, xq.data(), xs.data());
    for (int j = 0; j < n; ++j) {
      double acc = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(j)];
      for (int b = 0; b < kb; ++b) {
        std::int64_t dot = 0;
        for (int t = 0; t < kB; ++t) {
          dot += std::int64_t{xq[static_cast<std::size_t>(b * kB + t)]} * w.q[(static_cast<std::size_t>(b) * n + j) * kB + t];
        }
        acc += static_cast<double>(dot) * w.s[static_cast<std::size_t>(b) * n + j] * xs[static_cast<std::size_t>(b)];
      }
      y[static_cast<std::size_t>(i) * n + j] = acc;
    }
  }
  return y;
}

}  // namespace

TEST_CASE("linear, Q8_0 weights: prompt rows equal one-row decoding steps bit for bit, and the int64 reference",
          "[ops][q8]") {
  struct Case { int rows, k, n; bool bias; };
  // rows <= 32: the integer rows path (column chunks), > 32: the float GEMM on the same 8-bit activations; k with a
  // partial last block; n past one 256-column piece; k large enough that the column chunks are narrower than n
  const Case cases[] = {{2, 72, 37, true}, {5, 96, 300, false}, {32, 2080, 70, true}, {40, 72, 37, true}};
  std::uint64_t seed = 4100;
  for (const Case& c : cases) {
    const Q8 w = random_q8(c.k, c.n, seed += 3);
    const std::vector<float> x = random_vec(static_cast<std::size_t>(c.rows) * c.k, seed + 1, 1.5f);
    const std::vector<float> bias = c.bias ? random_vec(static_cast<std::size_t>(c.n), seed + 2, 0.5f) : std::vector<float>();
    const std::vector<float> got = ops::linear(x, c.rows, c.k, w.span(), c.n, bias);
    const std::string shape = "rows=" + std::to_string(c.rows) + " k=" + std::to_string(c.k) + " n=" + std::to_string(c.n);
    // float32 sums over up to 65 block terms of |term| ~ 0.1: atol 1e-4
    check_close(got, reference(x, c.rows, c.k, w, c.n, bias), 1e-4, 1e-5, "vs int64/float64 reference " + shape);
    if (c.rows <= 32) {
      for (int i = 0; i < c.rows; ++i) {
        const std::vector<float> row(x.begin() + static_cast<std::ptrdiff_t>(i) * c.k, x.begin() + static_cast<std::ptrdiff_t>(i + 1) * c.k);
        const std::vector<float> one = ops::linear(row, 1, c.k, w.span(), c.n, bias);
        INFO(shape << " row " << i);
        CHECK(std::memcmp(one.data(), got.data() + static_cast<std::size_t>(i) * c.n, one.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("table_row / table_row_dots: a tied head's Q8_0 table, stored as the layout of its transpose", "[ops][q8]") {
  // a [V, d] table quantised along d is kernels.h's Q8_0 layout of its transpose [d, V]
  const int V = 300, d = 80;  // d: two whole blocks and a padded one
  const Q8 t = random_q8(d, V, 4200);
  const core::WeightSpan table = t.span();
  CHECK(ops::table_rows(table, static_cast<std::size_t>(d)) == static_cast<std::size_t>(V));
  // row v = the dequantised values q · s of its blocks
  std::vector<float> row(static_cast<std::size_t>(d));
  for (const int v : {0, 1, 77, V - 1}) {
    ops::table_row(table, static_cast<std::size_t>(v), static_cast<std::size_t>(d), row);
    for (int c = 0; c < d; ++c) {
      const std::size_t at = static_cast<std::size_t>(c / kB) * V + v;
      REQUIRE(row[static_cast<std::size_t>(c)] == static_cast<float>(t.q[at * kB + c % kB]) * t.s[at]);
    }
  }
  // logits: h quantised to Q8_0, integer block dots; equal to the one-row product with the transpose
  const std::vector<float> h = random_vec(static_cast<std::size_t>(d), 4300, 2.0f);
  std::vector<float> z(static_cast<std::size_t>(V), 12345.0f);
  ops::table_row_dots(h, table, z);
  check_close(z, reference(h, 1, d, t, V, {}), 1e-5, 1e-5, "table_row_dots vs int64/float64 reference");
  const std::vector<float> same = ops::linear(h, 1, d, table, V, {});
  CHECK(std::memcmp(same.data(), z.data(), z.size() * sizeof(float)) == 0);
}
