// half_kernels_test.cpp: the half-width (kernels.h *_bf16 / *_f16) and 8-bit Q8_0 (*_q8) weight kernels (issue 30) against float64
// references and against their scalar twins. Layer: tests (kernels). Natively only the scalar entries exist; the
// wasm test build has both ISAs. The widening reference is written here from the formats' definitions, independent
// of src/: BF16 = the top 16 bits of a binary32; F16 = (-1)^s · 2^(e-15) · (1 + m/1024), subnormals 2^-14 · m/1024.
// Tolerances: widening exact (all 65,536 patterns of each type, bit for bit; NaN stays NaN);
//   gemm / gemv vs f64 (entries in [-1, 1], k <= 520): atol 1e-5, rtol 1e-5; vs scalar twin the same;
//   row dots: atol 1e-6 · Σ|h_i t_i| a row, and bit for bit whatever rows are computed beside it.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernel_entries.h"
#include "support/compare.h"
#include "support/random.h"

namespace {

using namespace attnscope::kernels;
using attnscope::test::check_close;

const KernelEntries& entries() { return kernel_entries(); }

double bf16_ref(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

double f16_ref(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v;
  if (e == 0) {
    v = std::ldexp(static_cast<double>(m), -24);
  } else if (e == 31) {
    v = m == 0 ? INFINITY : NAN;
  } else {
    v = std::ldexp(1.0 + m / 1024.0, e - 15);
  }
  return s ? -v : v;
}

// Round a float to the nearest representable half of each kind (ties to even is not needed: any nearby pattern is a
// valid weight); returns the bits.
std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<std::uint16_t>((u + 0x8000u) >> 16);
}
std::uint16_t to_f16(float f) {
  // search-free: scale into the F16 grid of f's binade (weights here are in [-1, 1], normal or subnormal in F16)
  const std::uint16_t sign = f < 0 ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (a < std::ldexp(1.0, -14)) return sign | static_cast<std::uint16_t>(std::lround(a * std::ldexp(1.0, 24)));
  int e;
  const double fr = std::frexp(a, &e);  // a = fr · 2^e, fr in [0.5, 1)
  long mant = std::lround((fr * 2.0 - 1.0) * 1024.0);
  int be = e - 1 + 15;
  if (mant == 1024) { mant = 0; ++be; }
  return sign | static_cast<std::uint16_t>((be << 10) | mant);
}

using Widen = double (*)(std::uint16_t);

struct Kind {
  const char* name;
  Widen ref;
  std::uint16_t (*round)(float);
  const std::vector<KernelEntry<GemmNNHalfFn>>* gemm;
  const std::vector<KernelEntry<GemvHalfFn>>* gemv;
  const std::vector<KernelEntry<RowDotsHalfFn>>* row_dots;
  const std::vector<KernelEntry<CvtHalfFn>>* cvt;
  GemmNNHalfFn gemm_twin;
  GemvHalfFn gemv_twin;
  RowDotsHalfFn row_dots_twin;
};

std::vector<Kind> kinds() {
  const KernelEntries& e = entries();
  return {Kind{"bf16", &bf16_ref, &to_bf16, &e.gemm_nn_bf16, &e.gemv_bf16, &e.row_dots_bf16, &e.cvt_bf16,
               &bf16_gemm_nn__scalar, &bf16_gemv__scalar, &bf16_row_dots__scalar},
          Kind{"f16", &f16_ref, &to_f16, &e.gemm_nn_f16, &e.gemv_f16, &e.row_dots_f16, &e.cvt_f16, &f16_gemm_nn__scalar,
               &f16_gemv__scalar, &f16_row_dots__scalar}};
}

std::vector<std::uint16_t> random_halves(std::size_t n, std::uint64_t seed, const Kind& k) {
  const std::vector<float> v = attnscope::test::random_vec(n, seed, 0.5f);
  std::vector<std::uint16_t> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = k.round(std::fmax(-1.0f, std::fmin(1.0f, v[i])));
  return h;
}

TEST_CASE("x16 cvt: every one of the 65,536 BF16 and F16 patterns widens exactly", "[kernels][x16]") {
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  for (const Kind& k : kinds()) {
    REQUIRE(!k.cvt->empty());
    for (const auto& e : *k.cvt) {
      // odd offsets and lengths too: the SIMD body and its scalar tail
      for (std::size_t first : {std::size_t{0}, std::size_t{3}}) {
        std::vector<float> y(all.size() - first, 12345.0f);
        e.fn(y.size(), all.data() + first, y.data());
        std::size_t wrong = 0, shown = 0;
        for (std::size_t i = 0; i < y.size(); ++i) {
          const double want = k.ref(all[first + i]);
          const bool ok = std::isnan(want) ? std::isnan(y[i]) : static_cast<double>(y[i]) == want &&
                                                                    std::signbit(y[i]) == std::signbit(want);
          if (!ok) {
            ++wrong;
            if (shown++ < 4) UNSCOPED_INFO(e.name << " pattern " << all[first + i] << ": got " << y[i] << ", want " << want);
          }
        }
        INFO(e.name << " first " << first);
        CHECK(wrong == 0);
      }
    }
  }
}

TEST_CASE("x16 gemm_nn: matches float64 reference and the scalar twin over sizes, strides, bias, alpha",
          "[kernels][x16]") {
  struct Case { int m, n, k; float alpha; bool bias; int pad; };
  const Case cases[] = {{1, 1, 1, -2.0f, false, 0}, {3, 5, 7, 1.0f, true, 1},  {4, 8, 16, 0.5f, false, 0},
                        {5, 9, 17, 1.0f, true, 3},  {17, 33, 65, 1.0f, true, 2}, {300, 260, 270, 0.5f, true, 3},
                        {13, 530, 520, 1.0f, true, 1}};
  std::uint64_t seed = 1;
  for (const Kind& kind : kinds()) {
    REQUIRE(!kind.gemm->empty());
    for (const auto& e : *kind.gemm) {
      for (const Case& c : cases) {
        const int lda = c.k + c.pad, ldb = c.n + c.pad, ldc = c.n + c.pad;
        const std::vector<float> a = attnscope::test::random_vec(static_cast<std::size_t>(c.m) * lda, ++seed, 0.5f);
        const std::vector<std::uint16_t> b = random_halves(static_cast<std::size_t>(c.k) * ldb, ++seed, kind);
        const std::vector<float> bias = attnscope::test::random_vec(static_cast<std::size_t>(c.n), ++seed, 0.5f);
        std::vector<float> got(static_cast<std::size_t>(c.m) * ldc, 12345.0f), twin = got;
        e.fn(c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.bias ? bias.data() : nullptr, got.data(), ldc);
        kind.gemm_twin(c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.bias ? bias.data() : nullptr,
                       twin.data(), ldc);
        std::vector<double> want(got.size(), 12345.0);
        for (int i = 0; i < c.m; ++i)
          for (int j = 0; j < c.n; ++j) {
            double acc = 0.0;
            for (int p = 0; p < c.k; ++p)
              acc += static_cast<double>(a[static_cast<std::size_t>(i) * lda + p]) *
                     kind.ref(b[static_cast<std::size_t>(p) * ldb + j]);
            want[static_cast<std::size_t>(i) * ldc + j] = c.alpha * acc + (c.bias ? bias[static_cast<std::size_t>(j)] : 0.0);
          }
        const std::string what = e.name + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                                 " k=" + std::to_string(c.k);
        // padding columns included: they must keep the sentinel
        check_close(got.data(), want.data(), got.size(), 1e-5, 1e-5, (what + " vs f64").c_str());
        check_close(got, twin, 1e-5, 1e-5, (what + " vs scalar twin").c_str());
      }
    }
  }
}

TEST_CASE("x16 gemv: one row against float64 and the scalar twin, column tails, bias, ldw > n", "[kernels][x16]") {
  std::uint64_t seed = 100;
  for (const Kind& kind : kinds()) {
    REQUIRE(!kind.gemv->empty());
    for (const auto& e : *kind.gemv) {
      for (const int n : {1, 7, 8, 9, 31, 32, 33, 40, 71, 300}) {
        for (const int k : {1, 5, 64, 257}) {
          const bool with_bias = (n + k) % 2 == 0;
          const int ldw = n + (n % 3);
          const std::vector<float> x = attnscope::test::random_vec(static_cast<std::size_t>(k), ++seed, 0.5f);
          const std::vector<std::uint16_t> w = random_halves(static_cast<std::size_t>(k) * ldw, ++seed, kind);
          const std::vector<float> bias = attnscope::test::random_vec(static_cast<std::size_t>(n), ++seed);
          std::vector<float> got(static_cast<std::size_t>(n) + 1, 12345.0f), twin = got;
          e.fn(k, n, x.data(), w.data(), ldw, with_bias ? bias.data() : nullptr, got.data());
          kind.gemv_twin(k, n, x.data(), w.data(), ldw, with_bias ? bias.data() : nullptr, twin.data());
          std::vector<double> want(got.size(), 12345.0);
          for (int j = 0; j < n; ++j) {
            double acc = with_bias ? bias[static_cast<std::size_t>(j)] : 0.0;
            for (int p = 0; p < k; ++p)
              acc += static_cast<double>(x[static_cast<std::size_t>(p)]) * kind.ref(w[static_cast<std::size_t>(p) * ldw + j]);
            want[static_cast<std::size_t>(j)] = acc;
          }
          const std::string what = e.name + " n=" + std::to_string(n) + " k=" + std::to_string(k);
          check_close(got.data(), want.data(), got.size(), 1e-5, 1e-5, (what + " vs f64").c_str());
          check_close(got, twin, 1e-5, 1e-5, (what + " vs scalar twin").c_str());
        }
      }
    }
  }
}

TEST_CASE("x16 row dots: each row matches float64 within 1e-6 · Σ|h_i t_i|, and any split of the rows gives the same bits",
          "[kernels][x16]") {
  std::uint64_t seed = 500;
  for (const Kind& kind : kinds()) {
    REQUIRE(!kind.row_dots->empty());
    for (const auto& e : *kind.row_dots) {
      // rows: below, at and past the SIMD kernel's group of 4; n: its 8-wide steps and scalar tails; ld > n too
      for (std::size_t rows : {1, 3, 4, 5, 9}) {
        for (std::size_t n : {1, 2, 7, 8, 15, 16, 17, 33, 1000, 2048, 4099}) {
          const std::size_t ld = n + (rows % 2);
          const std::vector<float> h = attnscope::test::random_vec(n, ++seed);
          const std::vector<std::uint16_t> t = random_halves(rows * ld, ++seed, kind);
          std::vector<float> got(rows, 12345.0f), twin(rows, 12345.0f);
          e.fn(rows, n, h.data(), t.data(), ld, got.data());
          kind.row_dots_twin(rows, n, h.data(), t.data(), ld, twin.data());
          for (std::size_t r = 0; r < rows; ++r) {
            double want = 0.0, abs_sum = 0.0;
            for (std::size_t i = 0; i < n; ++i) {
              const double p = static_cast<double>(h[i]) * kind.ref(t[r * ld + i]);
              want += p;
              abs_sum += std::fabs(p);
            }
            const std::string what = e.name + " rows=" + std::to_string(rows) + " n=" + std::to_string(n) + " row " +
                                     std::to_string(r);
            check_close(&got[r], &want, 1, 1e-6 * abs_sum, 0.0, what.c_str());
            check_close(&got[r], &twin[r], 1, 1e-6 * abs_sum, 0.0, (what + " vs scalar twin").c_str());
            // the row alone, and the rows from it on: the same bits (threads split the rows anywhere)
            float alone = 0.0f;
            e.fn(1, n, h.data(), t.data() + r * ld, ld, &alone);
            std::vector<float> from(rows - r);
            e.fn(rows - r, n, h.data(), t.data() + r * ld, ld, from.data());
            INFO(what);
            CHECK(std::memcmp(&alone, &got[r], sizeof alone) == 0);
            CHECK(std::memcmp(&from[0], &got[r], sizeof alone) == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("x16 dispatch: every half-width slot is filled, by the SIMD128 kernels in the SIMD core", "[kernels][x16]") {
  auto filled = [](const KernelTable& t) {
    return t.gemm_nn_bf16 && t.gemm_nn_f16 && t.gemv_bf16 && t.gemv_f16 && t.row_dots_bf16 && t.row_dots_f16 &&
           t.cvt_bf16 &&
           t.cvt_f16;
  };
  CHECK(filled(scalar_kernels()));
  CHECK(filled(active_kernels()));
#if defined(__wasm_simd128__)
  CHECK(active_kernels().gemm_nn_bf16 == &bf16_gemm_nn_4x8__wasmsimd);
  CHECK(active_kernels().gemv_f16 == &f16_gemv_32__wasmsimd);
#endif
}

// ---- Q8_0 (loadPretrained's weights8): 32 int8 values per block times the block's scale

struct Q8Matrix {
  std::vector<std::int8_t> q;
  std::vector<float> scales;
  std::vector<double> value;  // [k, ldb] dequantised, the reference's B
};

// A random [k, ldb] Q8_0 matrix in kernels.h's layout: block (b, j) = rows 32b..32b+32 of column j; the padding of
// a partial last block is random too (kernels must not read it into results).
Q8Matrix random_q8(int k, int ldb, std::uint64_t seed) {
  Q8Matrix m;
  const std::size_t blocks = static_cast<std::size_t>((k + kQ8Block - 1) / kQ8Block) * ldb;
  m.q.resize(blocks * kQ8Block);
  m.scales = attnscope::test::random_vec(blocks, seed, 0.01f);
  const std::vector<float> r = attnscope::test::random_vec(m.q.size(), seed + 1, 60.0f);
  for (std::size_t i = 0; i < m.q.size(); ++i) m.q[i] = static_cast<std::int8_t>(std::fmax(-127.0f, std::fmin(127.0f, std::round(r[i]))));
  m.value.resize(static_cast<std::size_t>(k) * ldb);
  for (int p = 0; p < k; ++p)
    for (int j = 0; j < ldb; ++j) {
      const std::size_t at = static_cast<std::size_t>(p / kQ8Block) * ldb + j;
      m.value[static_cast<std::size_t>(p) * ldb + j] = static_cast<double>(m.q[at * kQ8Block + p % kQ8Block]) * m.scales[at];
    }
  return m;
}

TEST_CASE("q8 gemm_nn: matches float64 over the dequantised blocks, and the scalar twin", "[kernels][q8]") {
  REQUIRE(!entries().gemm_nn_q8.empty());
  struct Case { int m, n, k; float alpha; bool bias; };
  // k: whole blocks, and partial last blocks (k % 32 != 0, zero-padded), across the GEMM's kc = 256 blocking
  const Case cases[] = {{1, 1, 32, 1.0f, false}, {3, 5, 64, 0.5f, true}, {4, 8, 32, 1.0f, true},
                        {9, 13, 96, 1.0f, false}, {70, 260, 288, 1.0f, true}, {5, 33, 544, -1.0f, true},
                        {2, 16, 24, 1.0f, true},  {7, 9, 40, 1.0f, false}, {6, 35, 300, 0.5f, true}};
  std::uint64_t seed = 900;
  for (const Case& c : cases) {
    const int ldb = c.n + 2, lda = c.k + 1, ldc = c.n + 3;
    const Q8Matrix w = random_q8(c.k, ldb, seed += 2);
    const std::vector<float> a = attnscope::test::random_vec(static_cast<std::size_t>(c.m) * lda, ++seed, 0.5f);
    const std::vector<float> bias = attnscope::test::random_vec(static_cast<std::size_t>(c.n), ++seed, 0.5f);
    const float* bp = c.bias ? bias.data() : nullptr;
    std::vector<double> want(static_cast<std::size_t>(c.m) * ldc, 12345.0);
    for (int i = 0; i < c.m; ++i)
      for (int j = 0; j < c.n; ++j) {
        double acc = 0.0;
        for (int p = 0; p < c.k; ++p) acc += static_cast<double>(a[static_cast<std::size_t>(i) * lda + p]) * w.value[static_cast<std::size_t>(p) * ldb + j];
        want[static_cast<std::size_t>(i) * ldc + j] = c.alpha * acc + (c.bias ? bias[static_cast<std::size_t>(j)] : 0.0);
      }
    const std::string shape = " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k);
    for (const auto& e : entries().gemm_nn_q8) {
      std::vector<float> got(want.size(), 12345.0f), twin = got;
      e.fn(c.m, c.n, c.k, c.alpha, a.data(), lda, w.q.data(), w.scales.data(), ldb, bp, got.data(), ldc);
      q8_gemm_nn__scalar(c.m, c.n, c.k, c.alpha, a.data(), lda, w.q.data(), w.scales.data(), ldb, bp, twin.data(), ldc);
      check_close(got.data(), want.data(), got.size(), 1e-5, 1e-5, (e.name + shape + " vs f64").c_str());
      check_close(got, twin, 1e-5, 1e-5, (e.name + shape + " vs scalar twin").c_str());
    }
  }
}

// ---- the integer GEMV of a decoding step (kernels.h QuantizeQ8Fn / GemvQ8Fn)

// the Q8_0 activation blocks of x as every quantize_q8 entry writes them; all entries must agree bit for bit
struct XQ8 {
  std::vector<std::int8_t> q;
  std::vector<float> s;
};
XQ8 quantize(const KernelEntry<QuantizeQ8Fn>& e, const std::vector<float>& x, int k) {
  const std::size_t blocks = static_cast<std::size_t>((k + kQ8Block - 1) / kQ8Block);
  XQ8 r{std::vector<std::int8_t>(blocks * kQ8Block, std::int8_t{99}), std::vector<float>(blocks, -1.0f)};
  e.fn(k, x.data(), r.q.data(), r.s.data());
  return r;
}

TEST_CASE("q8 quantize: a hand-worked block (scale 1: exact halves round to even) and a padded partial block", "[kernels][q8]") {
  REQUIRE(!entries().quantize_q8.empty());
  // max |x| = 127, so s = 1 and x · (1/s) = x exactly: 2.5 -> 2 and 3.5 -> 4 (ties to even), -0.5 -> 0, 1.4 -> 1
  std::vector<float> x(35, 0.0f);
  const float head[] = {127.0f, -127.0f, 2.5f, 3.5f, -0.5f, 1.4f, -100.6f};
  for (int t = 0; t < 7; ++t) x[static_cast<std::size_t>(t)] = head[t];
  // second, partial block (3 of 32): max |x| = 0.254 -> s = 0.002, q = 127, -63 (-0.126/0.002 = -63), 25 (0.05 / 0.002)
  x[32] = 0.254f, x[33] = -0.126f, x[34] = 0.05f;
  const std::int8_t want0[] = {127, -127, 2, 4, 0, 1, -101};
  for (const auto& e : entries().quantize_q8) {
    const XQ8 r = quantize(e, x, 35);
    INFO(e.name);
    CHECK(r.s[0] == 1.0f);
    for (int t = 0; t < 7; ++t) CHECK(r.q[static_cast<std::size_t>(t)] == want0[t]);
    for (int t = 7; t < 32; ++t) CHECK(r.q[static_cast<std::size_t>(t)] == 0);
    CHECK(r.s[1] == Approx(0.002).epsilon(1e-6));
    CHECK(r.q[32] == 127);
    CHECK(r.q[33] == -63);
    CHECK(r.q[34] == 25);
    for (int t = 35; t < 64; ++t) CHECK(r.q[static_cast<std::size_t>(t)] == 0);  // zero padding, not left as is
  }
}

TEST_CASE("q8 quantize: random rows — s = max|x|/127, |q - x/s| <= 1/2, ISAs bit-equal", "[kernels][q8]") {
  for (const int k : {32, 64, 96, 100, 576, 1537}) {
    const std::vector<float> x = attnscope::test::random_vec(static_cast<std::size_t>(k), 1200 + static_cast<std::uint64_t>(k), 3.0f);
    const XQ8 twin = quantize(entries().quantize_q8.front(), x, k);
    for (const auto& e : entries().quantize_q8) {
      const XQ8 r = quantize(e, x, k);
      INFO(e.name << " k=" << k);
      CHECK(r.q == twin.q);
      CHECK(std::memcmp(r.s.data(), twin.s.data(), r.s.size() * sizeof(float)) == 0);
      for (int b = 0; b * kQ8Block < k; ++b) {
        double amax = 0.0;
        for (int t = b * kQ8Block; t < std::min(k, (b + 1) * kQ8Block); ++t) amax = std::fmax(amax, std::fabs(static_cast<double>(x[static_cast<std::size_t>(t)])));
        const double s = amax / 127.0;
        CHECK(r.s[static_cast<std::size_t>(b)] == Approx(s).epsilon(1e-6));
        int top = 0;
        for (int t = b * kQ8Block; t < std::min(k, (b + 1) * kQ8Block); ++t) {
          const int q = r.q[static_cast<std::size_t>(t)];
          CHECK(std::fabs(q - x[static_cast<std::size_t>(t)] / s) <= 0.5 + 1e-4);
          top = std::max(top, std::abs(q));
        }
        CHECK(top == 127);
      }
    }
  }
}

// y[j] by the definition, in int64 block sums and float64 scales
std::vector<double> gemv_q8_ref(int k, int n, const XQ8& x, const Q8Matrix& w, int ldb, const float* bias) {
  std::vector<double> y(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    double acc = bias != nullptr ? bias[j] : 0.0;
    for (int b = 0; b * kQ8Block < k; ++b) {
      const std::size_t at = static_cast<std::size_t>(b) * ldb + j;
      std::int64_t dot = 0;
      for (int t = 0; t < kQ8Block; ++t) dot += std::int64_t{x.q[static_cast<std::size_t>(b * kQ8Block + t)]} * w.q[at * kQ8Block + t];
      acc += static_cast<double>(dot) * w.scales[at] * x.s[static_cast<std::size_t>(b)];
    }
    y[static_cast<std::size_t>(j)] = acc;
  }
  return y;
}

TEST_CASE("q8 gemv: a hand-worked block dot", "[kernels][q8]") {
  // x block q = {127, -127, 2, 4, 0, 1, -101, 0 ...}, s = 1 (the hand-worked quantize case); one column of weights
  // {1, 1, 10, -10, 5, 3, -1, 0 ...} with scale 0.5, bias 0.25: 127 - 127 + 20 - 40 + 0 + 3 + 101 = 84 -> 42.25
  XQ8 x{std::vector<std::int8_t>(32, 0), std::vector<float>{1.0f}};
  const std::int8_t xq[] = {127, -127, 2, 4, 0, 1, -101};
  const std::int8_t wq[] = {1, 1, 10, -10, 5, 3, -1};
  std::vector<std::int8_t> w(5 * 32, 0);  // 5 columns: the SIMD kernel's 4-column group and its 1-column tail
  for (int t = 0; t < 7; ++t) x.q[static_cast<std::size_t>(t)] = xq[t];
  for (int c = 0; c < 5; ++c)
    for (int t = 0; t < 7; ++t) w[static_cast<std::size_t>(c * 32 + t)] = static_cast<std::int8_t>(wq[t] * (c + 1));
  const std::vector<float> scales(5, 0.5f), bias(5, 0.25f);
  for (const auto& e : entries().gemv_q8) {
    std::vector<float> y(5, 12345.0f);
    e.fn(7, 5, x.q.data(), x.s.data(), w.data(), scales.data(), 5, bias.data(), y.data());
    INFO(e.name);
    for (int c = 0; c < 5; ++c) CHECK(y[static_cast<std::size_t>(c)] == 42.0f * static_cast<float>(c + 1) + 0.25f);
  }
}

TEST_CASE("q8 gemv: random and extreme blocks — exact integer sums, float64 reference, ISAs bit-equal", "[kernels][q8]") {
  REQUIRE(!entries().gemv_q8.empty());
  CHECK(scalar_kernels().quantize_q8 == &q8_quantize__scalar);
  CHECK(scalar_kernels().gemv_q8 == &q8_gemv__scalar);
#if defined(__wasm_simd128__)
  CHECK(active_kernels().quantize_q8 == &q8_quantize__wasmsimd);
  CHECK(active_kernels().gemv_q8 == &q8_gemv_4__wasmsimd);
#endif
  struct Case { int n, k; bool bias; };
  const Case cases[] = {{1, 32, false}, {4, 64, true}, {5, 96, true}, {13, 40, false}, {33, 544, true}, {260, 288, true}, {7, 24, true}};
  std::uint64_t seed = 1300;
  for (const Case& c : cases) {
    const int ldb = c.n + 3;
    const Q8Matrix w = random_q8(c.k, ldb, seed += 2);
    const std::vector<float> xf = attnscope::test::random_vec(static_cast<std::size_t>(c.k), ++seed, 2.0f);
    const std::vector<float> bias = attnscope::test::random_vec(static_cast<std::size_t>(c.n), ++seed, 0.5f);
    const float* bp = c.bias ? bias.data() : nullptr;
    const XQ8 x = quantize(entries().quantize_q8.front(), xf, c.k);
    const std::vector<double> want = gemv_q8_ref(c.k, c.n, x, w, ldb, bp);
    const std::string shape = " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k);
    std::vector<float> twin(static_cast<std::size_t>(c.n) + 1, 12345.0f);
    q8_gemv__scalar(c.k, c.n, x.q.data(), x.s.data(), w.q.data(), w.scales.data(), ldb, bp, twin.data());
    for (const auto& e : entries().gemv_q8) {
      std::vector<float> got(static_cast<std::size_t>(c.n) + 1, 12345.0f);
      e.fn(c.k, c.n, x.q.data(), x.s.data(), w.q.data(), w.scales.data(), ldb, bp, got.data());
      INFO(e.name << shape);
      CHECK(got.back() == 12345.0f);  // nothing past n
      got.pop_back();
      check_close(got, want, 1e-5, 1e-5, (e.name + shape + " vs f64").c_str());
      CHECK(std::memcmp(got.data(), twin.data(), got.size() * sizeof(float)) == 0);  // same operations, same order
    }
    // unit scales: y[j] = Σ_b float(block sum), exact while the partial sums stay below 2^24 (17 blocks x 32 x 128²
    // < 2^24): the int32 block sums themselves, compared with int64 ones
    Q8Matrix unit = w;
    std::fill(unit.scales.begin(), unit.scales.end(), 1.0f);
    XQ8 xu = x;
    std::fill(xu.s.begin(), xu.s.end(), 1.0f);
    const std::vector<double> exact = gemv_q8_ref(c.k, c.n, xu, unit, ldb, nullptr);
    for (const auto& e : entries().gemv_q8) {
      std::vector<float> got(static_cast<std::size_t>(c.n));
      e.fn(c.k, c.n, xu.q.data(), xu.s.data(), unit.q.data(), unit.scales.data(), ldb, nullptr, got.data());
      for (int j = 0; j < c.n; ++j) REQUIRE(static_cast<double>(got[static_cast<std::size_t>(j)]) == exact[static_cast<std::size_t>(j)]);
    }
  }
  // extremes: every weight -128 or 127 against activations ±127 (the largest products; i16 pair sums would overflow)
  const int n = 6, k = 64;
  Q8Matrix w = random_q8(k, n, 77);
  for (std::size_t i = 0; i < w.q.size(); ++i) w.q[i] = i % 3 == 0 ? std::int8_t{127} : std::int8_t{-128};
  std::fill(w.scales.begin(), w.scales.end(), 1.0f);
  XQ8 x{std::vector<std::int8_t>(k), std::vector<float>(2, 1.0f)};
  for (int t = 0; t < k; ++t) x.q[static_cast<std::size_t>(t)] = t % 5 == 0 ? std::int8_t{127} : std::int8_t{-127};
  const std::vector<double> exact = gemv_q8_ref(k, n, x, w, n, nullptr);
  for (const auto& e : entries().gemv_q8) {
    std::vector<float> got(n);
    e.fn(k, n, x.q.data(), x.s.data(), w.q.data(), w.scales.data(), n, nullptr, got.data());
    INFO(e.name << " extremes");
    for (int j = 0; j < n; ++j) CHECK(static_cast<double>(got[static_cast<std::size_t>(j)]) == exact[static_cast<std::size_t>(j)]);
  }
}

}  // namespace
