// gemm_tiles_test.cpp: every kernel_list.h float32 GEMM entry (gemm_nn and gemm_nt: the plain scalar reference, the
// scalar 4x4 kernel and, in the wasm build, the SIMD128 4x8 kernel) at the shapes that stress its tiling, against a
// float64 reference. Layer: tests (kernels). The SIMD128 GEMM (src/kernels/f32-gemm-4x8-wasmsimd.cpp) splits C into
// 4-row blocks and 8-column panels, hands the full panels of a row block to its micro-kernel in one call, and picks its
// K block from B's width (256, up to 1024 for a narrow B); these cases cover each edge of that split:
//   - m, n, k below, at and past every tile and block size: 1x1x1, k = 1, m % 4 = 1..3, n % 8 = 1..7, n = 8·p + r
//     with p = 0..5 full panels before a tail, n = 64 (weights·V's head_dim: the 1024-deep K block), k = 2100 (three
//     K blocks at both K block sizes, the last one short), n > 256 (two N blocks);
//   - strided A, B, C (head slices: lda, ldb, ldc > the matrix width), with C's padding columns holding a sentinel
//     that must survive, and with bias and alpha.
// Tolerance: |got − want| <= 1e-6 + 2e-6·sqrt(k)·Σ_p |alpha·a_ip·b_pj| (float32 rounding grows like sqrt(k)·2^-24 per
// summed magnitude for these random inputs; a wrong index or a lost K block is O(1) off). The wasm build has both ISAs
// in one binary, so the SIMD kernel is also checked against the scalar reference twin with the same bound. The
// relaxed (fused multiply-add) micro-kernel is loaded by JS and checked against its contract by
// tests/js/gemm-ukernel.test.js.
#include <catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_entries.h"

namespace {

using namespace attnscope::kernels;

constexpr float kSentinel = -7777.0f;

struct Lcg {  // a fixed generator: every run and both compilers see the same numbers
  std::uint32_t s;
  float next() {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1), 24 bits: exact in float
  }
};

struct Case {
  int m, n, k;
  int pad;  // extra columns of every leading dimension
  float alpha;
  bool bias;
};

// Runs fn on one case and checks C against float64 (and returns C for the twin comparison).
template <class Fn>
std::vector<float> run_case(bool trans_b, Fn fn, const std::string& name, const Case& c, std::uint32_t seed) {
  const int lda = c.k + c.pad, ldb = (trans_b ? c.k : c.n) + c.pad, ldc = c.n + c.pad;
  const int b_rows = trans_b ? c.n : c.k;
  Lcg rng{seed};
  std::vector<float> a(static_cast<std::size_t>(c.m) * lda), b(static_cast<std::size_t>(b_rows) * ldb), bias(c.n);
  for (auto& x : a) x = rng.next();
  for (auto& x : b) x = rng.next();
  for (auto& x : bias) x = rng.next();
  std::vector<float> out(static_cast<std::size_t>(c.m) * ldc, kSentinel);
  fn(c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.bias ? bias.data() : nullptr, out.data(), ldc);

  int bad = 0, sentinel_hit = 0;
  double worst = 0.0;
  for (int i = 0; i < c.m; ++i) {
    for (int j = 0; j < ldc; ++j) {
      const float got = out[static_cast<std::size_t>(i) * ldc + j];
      if (j >= c.n) {
        if (got != kSentinel) ++sentinel_hit;
        continue;
      }
      double sum = 0.0, mag = 0.0;
      for (int p = 0; p < c.k; ++p) {
        const double bv = trans_b ? b[static_cast<std::size_t>(j) * ldb + p] : b[static_cast<std::size_t>(p) * ldb + j];
        const double prod = static_cast<double>(a[static_cast<std::size_t>(i) * lda + p]) * bv;
        sum += prod;
        mag += std::fabs(prod);
      }
      const double want = c.alpha * sum + (c.bias ? bias[j] : 0.0);
      const double tol = 1e-6 + 2e-6 * std::sqrt(static_cast<double>(c.k)) * std::fabs(c.alpha) * mag;
      const double err = std::fabs(static_cast<double>(got) - want);
      if (!(err <= tol)) ++bad;
      if (err / tol > worst) worst = err / tol;
    }
  }
  INFO(name << (trans_b ? " nt" : " nn") << " m=" << c.m << " n=" << c.n << " k=" << c.k << " pad=" << c.pad
            << " alpha=" << c.alpha << " bias=" << c.bias << ": worst error / tolerance " << worst);
  CHECK(bad == 0);
  CHECK(sentinel_hit == 0);
  return out;
}

std::vector<Case> awkward_cases() {
  std::vector<Case> cases = {
      {1, 1, 1, 0, 1.0f, false},    {1, 1, 1, 3, -2.0f, true},   {1, 9, 1, 0, 1.0f, true},
      {7, 13, 1, 1, 0.5f, false},   {4, 8, 5, 0, 1.0f, false},   {3, 8, 300, 2, 1.0f, true},
      {1, 64, 2100, 0, 1.0f, false}, {6, 64, 2100, 5, 0.125f, true}, {5, 7, 2100, 0, 1.0f, true},
      {9, 300, 2100, 1, 1.0f, false}, {33, 64, 700, 64, 1.0f, false}, {70, 520, 33, 4, 0.37f, true},
      {2, 257, 1025, 0, 1.0f, true}, {13, 2, 1030, 3, -1.0f, false},
  };
  // every column tail after 0..5 full panels, with a row tail of 1..3 rows
  for (int p = 0; p <= 5; ++p)
    for (int r = 1; r <= 7; r += 3)
      cases.push_back({4 * p + 1 + (p + r) % 3, 8 * p + r, 40 + 17 * p, p % 2, 1.0f, p % 2 == 0});
  return cases;
}

template <class Fn>
void run_suite(bool trans_b, const std::vector<KernelEntry<Fn>>& list) {
  const auto cases = awkward_cases();
  std::uint32_t seed = 1;
  for (const Case& c : cases) {
    ++seed;
    std::vector<float> twin;  // the first entry (the plain scalar reference) of the list
    for (const auto& e : list) {
      const auto out = run_case(trans_b, e.fn, e.name, c, seed);
      if (twin.empty()) {
        twin = out;
        continue;
      }
      // the same bound against the reference twin's float32 result (both are within it of float64)
      int off = 0;
      for (std::size_t i = 0; i < out.size(); ++i) {
        const double d = std::fabs(static_cast<double>(out[i]) - twin[i]);
        if (!(d <= 2e-6 + 4e-6 * std::sqrt(static_cast<double>(c.k)) * (1.0 + std::fabs(twin[i])))) ++off;
      }
      INFO(e.name << " vs " << list.front().name << " m=" << c.m << " n=" << c.n << " k=" << c.k);
      CHECK(off == 0);
    }
  }
}

}  // namespace

TEST_CASE("gemm_nn tiles: awkward m, n, k (1x1, k = 1, tails, long K, strides) against float64",
          "[kernels][gemm][tiles]") {
  run_suite(false, kernel_entries().gemm_nn);
}

TEST_CASE("gemm_nt tiles: awkward m, n, k (1x1, k = 1, tails, long K, strides) against float64",
          "[kernels][gemm][tiles]") {
  run_suite(true, kernel_entries().gemm_nt);
}

TEST_CASE("gemm tiles: C computed twice in a row is identical (no state kept between calls)",
          "[kernels][gemm][tiles]") {
  for (const auto& e : kernel_entries().gemm_nn) {
    const Case c{37, 75, 1100, 3, 1.0f, true};
    const auto first = run_case(false, e.fn, e.name, c, 99);
    const auto second = run_case(false, e.fn, e.name, c, 99);
    CHECK(first == second);
  }
}
