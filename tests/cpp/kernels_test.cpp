// kernels_test.cpp: every kernel_list.h entry against a plain float64 reference and against its scalar
// twin. Layer: tests (kernels). Natively only the scalar entries exist; the wasm SIMD test build has
// both ISAs in one binary. References are written here, plainly, independent of src/.
// Inputs come from a fixed xorshift generator, so every run (and both compilers) sees the same numbers.
// Tolerances (|got − want| <= atol + rtol·|want|), per kernel:
//   gemm vs f64: atol 1e-5, rtol 1e-5 (entries in [-1, 1], k <= 520);   vs scalar twin: same. The gemm
//   twin is the plain reference (f32_gemm_{nn,nt}__scalar), not the scalar table's blocked 4x4 kernel.
//   softmax: atol 1e-7, rtol 2e-6 (p5 exp ~2e-7 rel, plus the sum);    masked entries exactly 0.
//   layernorm: atol 2e-5, rtol 1e-5;  constant rows give beta exactly.
//   relu, add: exact (add: within half an ulp of the double sum);  gelu: atol 1e-6, rtol 2e-6;
//   tanh: atol 1e-7, rtol 1e-6;  dot: atol 1e-6·Σ|a_i b_i|.
#include <catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernel_entries.h"
#include "support/compare.h"

namespace {

using namespace attnscope::kernels;
using attnscope::test::check_close;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kSentinel = 12345.0f;  // written around outputs; must survive every kernel call

// ---- the kernel list, expanded into one vector of entries per KernelTable slot

template <class Fn>
using Entry = attnscope::kernels::KernelEntry<Fn>;
const attnscope::kernels::KernelEntries& entries() { return attnscope::kernels::kernel_entries(); }

// ---- deterministic inputs

struct Xorshift {
  std::uint64_t s;
  explicit Xorshift(std::uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  std::uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  float uniform(float lo, float hi) {  // 24 random bits, exact in float
    return lo + (hi - lo) * static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
  }
};

std::vector<float> random_vec(std::size_t n, Xorshift& rng, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

// ---- float64 references (llm.c's _naive style)

std::vector<double> gemm_ref(bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                             const float* b, int ldb, const float* bias) {
  std::vector<double> c(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int p = 0; p < k; ++p) {
        const double b_pj = trans_b ? b[static_cast<std::size_t>(j) * ldb + p] : b[static_cast<std::size_t>(p) * ldb + j];
        acc += static_cast<double>(a[static_cast<std::size_t>(i) * lda + p]) * b_pj;
      }
      c[static_cast<std::size_t>(i) * n + j] = alpha * acc + (bias != nullptr ? bias[j] : 0.0);
    }
  return c;
}

std::vector<double> softmax_ref(int rows, int cols, const float* x, int ldx) {
  std::vector<double> y(static_cast<std::size_t>(rows) * cols, 0.0);
  for (int r = 0; r < rows; ++r) {
    double mx = -INFINITY;
    for (int j = 0; j < cols; ++j) mx = std::fmax(mx, x[static_cast<std::size_t>(r) * ldx + j]);
    if (mx == -INFINITY) continue;
    double sum = 0.0;
    for (int j = 0; j < cols; ++j) sum += std::exp(x[static_cast<std::size_t>(r) * ldx + j] - mx);
    for (int j = 0; j < cols; ++j)
      y[static_cast<std::size_t>(r) * cols + j] = std::exp(x[static_cast<std::size_t>(r) * ldx + j] - mx) / sum;
  }
  return y;
}

std::vector<double> layernorm_ref(int n, int d, const float* x, const float* gamma, const float* beta, double eps) {
  std::vector<double> y(static_cast<std::size_t>(n) * d);
  for (int r = 0; r < n; ++r) {
    const float* x_r = x + static_cast<std::size_t>(r) * d;
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < d; ++j) mean += x_r[j];
    mean /= d;
    for (int j = 0; j < d; ++j) var += (x_r[j] - mean) * (x_r[j] - mean);
    var /= d;
    for (int j = 0; j < d; ++j)
      y[static_cast<std::size_t>(r) * d + j] =
          (x_r[j] - mean) / std::sqrt(var + eps) * (gamma ? gamma[j] : 1.0) + (beta ? beta[j] : 0.0);
  }
  return y;
}

// Copy out the [rows, cols] block of a strided buffer, and check that everything else kept the sentinel.
std::vector<float> unpack_checked(const std::vector<float>& buf, int rows, int cols, int ld, const std::string& what) {
  std::vector<float> out(static_cast<std::size_t>(rows) * cols);
  std::size_t clobbered = 0;
  for (std::size_t idx = 0; idx < buf.size(); ++idx) {
    const int r = static_cast<int>(idx / static_cast<std::size_t>(ld));
    const int j = static_cast<int>(idx % static_cast<std::size_t>(ld));
    if (r < rows && j < cols) {
      out[static_cast<std::size_t>(r) * cols + j] = buf[idx];
    } else if (buf[idx] != kSentinel) {
      ++clobbered;
    }
  }
  INFO(what);
  CHECK(clobbered == 0);
  return out;
}

// ---- GEMM

const int kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 64, 67, 127};

template <class Fn>
void check_gemm_case(bool trans_b, const Entry<Fn>& e, Fn twin, int m, int n, int k, float alpha, bool with_bias,
                     int pad, Xorshift& rng) {
  const int lda = k + pad;
  const int ldb = (trans_b ? k : n) + pad;
  const int ldc = n + (pad + 1) % 3;
  const int b_rows = trans_b ? n : k;
  const auto a = random_vec(static_cast<std::size_t>(m) * lda, rng);
  const auto b = random_vec(static_cast<std::size_t>(b_rows) * ldb, rng);
  const auto bias = random_vec(static_cast<std::size_t>(n), rng);
  const float* bias_p = with_bias ? bias.data() : nullptr;

  std::vector<float> c(static_cast<std::size_t>(m) * ldc + 5, kSentinel);
  std::vector<float> c_twin(c.size(), kSentinel);
  e.fn(m, n, k, alpha, a.data(), lda, b.data(), ldb, bias_p, c.data(), ldc);
  twin(m, n, k, alpha, a.data(), lda, b.data(), ldb, bias_p, c_twin.data(), ldc);

  const std::string what = e.name + " m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" +
                           std::to_string(k) + " alpha=" + std::to_string(alpha) + (with_bias ? " bias" : " no-bias") +
                           " pad=" + std::to_string(pad);
  const auto got = unpack_checked(c, m, n, ldc, what);
  const auto got_twin = unpack_checked(c_twin, m, n, ldc, what + " (twin)");
  const auto want = gemm_ref(trans_b, m, n, k, alpha, a.data(), lda, b.data(), ldb, bias_p);
  check_close(got, want, 1e-5, 1e-5, what + " vs f64");
  check_close(got, got_twin, 1e-5, 1e-5, what + " vs scalar twin");
}

template <class Fn>
void run_gemm_suite(bool trans_b, const std::vector<Entry<Fn>>& list, Fn twin) {
  REQUIRE(!list.empty());
  for (const auto& e : list) {
    Xorshift rng(trans_b ? 11 : 7);
    int case_id = 0;
    // m, n over 1..2·tile and primes; k over a spread that includes 1 and tails of the k loop.
    for (int m : kSizes)
      for (int n : kSizes)
        for (int k : {1, 3, 8, 17, 64}) {
          ++case_id;
          check_gemm_case(trans_b, e, twin, m, n, k, case_id % 3 == 0 ? 0.37f : 1.0f, case_id % 2 == 0,
                          case_id % 4, rng);
        }
    for (int s : kSizes) check_gemm_case(trans_b, e, twin, s, s, s, 1.0f, true, 2, rng);
    check_gemm_case(trans_b, e, twin, 1, 1, 1, -2.0f, false, 0, rng);
    // more than one K block (kc = 256) and more than one N block (nc = 256) of the packed kernels
    check_gemm_case(trans_b, e, twin, 300, 260, 270, 0.5f, true, 3, rng);
    check_gemm_case(trans_b, e, twin, 13, 530, 520, 1.0f, true, 1, rng);
  }
}

TEST_CASE("gemm_nn: matches float64 reference and scalar twin over sizes, strides, bias, alpha", "[kernels][gemm]") {
  run_gemm_suite(false, entries().gemm_nn, &f32_gemm_nn__scalar);
}

TEST_CASE("gemm_nt: matches float64 reference and scalar twin over sizes, strides, bias, alpha", "[kernels][gemm]") {
  run_gemm_suite(true, entries().gemm_nt, &f32_gemm_nt__scalar);
}

TEST_CASE("gemm_nn: hand-worked 2x2 product with bias and alpha", "[kernels][gemm]") {
  // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]]: A·B = [[19, 22], [43, 50]]; 0.5·A·B + [1, -1].
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8}, bias[] = {1, -1};
  const float bt[] = {5, 7, 6, 8};  // Bᵀ stored [n, k] for gemm_nt
  for (const auto& e : entries().gemm_nn) {
    float c[4];
    e.fn(2, 2, 2, 0.5f, a, 2, b, 2, bias, c, 2);
    INFO(e.name);
    CHECK(c[0] == 10.5f);
    CHECK(c[1] == 10.0f);
    CHECK(c[2] == 22.5f);
    CHECK(c[3] == 24.0f);
  }
  for (const auto& e : entries().gemm_nt) {
    float c[4];
    e.fn(2, 2, 2, 0.5f, a, 2, bt, 2, bias, c, 2);
    INFO(e.name);
    CHECK(c[0] == 10.5f);
    CHECK(c[1] == 10.0f);
    CHECK(c[2] == 22.5f);
    CHECK(c[3] == 24.0f);
  }
}

// ---- softmax

void check_softmax(const Entry<SoftmaxRowsFn>& e, int rows, int cols, int ldx, const std::vector<float>& x,
                   const std::string& label) {
  const std::string what = e.name + " " + label + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);
  const int ldy = cols + 1;
  std::vector<float> y(static_cast<std::size_t>(rows) * ldy, kSentinel);
  e.fn(rows, cols, x.data(), ldx, y.data(), ldy);
  const auto got = unpack_checked(y, rows, cols, ldy, what);
  std::vector<float> y_twin(y.size(), kSentinel);
  scalar_kernels().softmax_rows(rows, cols, x.data(), ldx, y_twin.data(), ldy);
  const auto got_twin = unpack_checked(y_twin, rows, cols, ldy, what + " (twin)");
  check_close(got, softmax_ref(rows, cols, x.data(), ldx), 1e-7, 2e-6, (what + " vs f64").c_str());
  check_close(got, got_twin, 1e-7, 2e-6, (what + " vs scalar twin").c_str());
  // blocked entries are exactly 0 (not merely small)
  std::size_t nonzero_blocked = 0;
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j)
      if (x[static_cast<std::size_t>(r) * ldx + j] == kNegInf && got[static_cast<std::size_t>(r) * cols + j] != 0.0f)
        ++nonzero_blocked;
  INFO(what);
  CHECK(nonzero_blocked == 0);

  // in place (y aliases x) gives the same numbers bit for bit
  std::vector<float> inplace = x;
  e.fn(rows, cols, inplace.data(), ldx, inplace.data(), ldx);
  std::size_t differ = 0;
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j)
      if (inplace[static_cast<std::size_t>(r) * ldx + j] != got[static_cast<std::size_t>(r) * cols + j]) ++differ;
  CHECK(differ == 0);
}

TEST_CASE("softmax: matches float64 reference with -inf entries, blocked rows and ragged cols", "[kernels][softmax]") {
  REQUIRE(!entries().softmax_rows.empty());
  for (const auto& e : entries().softmax_rows) {
    Xorshift rng(21);
    for (int cols : {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 64, 67, 127, 1000}) {
      const int rows = 5;
      const int ldx = cols + 3;
      auto x = random_vec(static_cast<std::size_t>(rows) * ldx, rng, -10.0f, 10.0f);
      for (int j = 0; j < cols; ++j) {
        if (rng.next() % 4 == 0) x[static_cast<std::size_t>(1) * ldx + j] = kNegInf;  // row 1: some blocked
        x[static_cast<std::size_t>(2) * ldx + j] = kNegInf;                            // row 2: all blocked
        if (j != cols / 2) x[static_cast<std::size_t>(3) * ldx + j] = kNegInf;         // row 3: one open
      }
      check_softmax(e, rows, cols, ldx, x, "random/-inf");
    }
  }
}

TEST_CASE("softmax: fully blocked rows give zeros, never NaN", "[kernels][softmax]") {
  for (const auto& e : entries().softmax_rows) {
    for (int cols : {1, 3, 4, 8, 13}) {
      std::vector<float> x(static_cast<std::size_t>(2) * cols, kNegInf);
      std::vector<float> y(x.size(), kSentinel);
      e.fn(2, cols, x.data(), cols, y.data(), cols);
      INFO(e.name << " cols=" << cols);
      for (float v : y) CHECK(v == 0.0f);  // NaN would fail this too
    }
  }
}

TEST_CASE("softmax: huge magnitudes (+-1e30, +-80) stay finite and exact where the answer is 0 or 1", "[kernels][softmax]") {
  for (const auto& e : entries().softmax_rows) {
    // row 0: 1e30 dominates everything -> [0, 1, 0, 0, 0, 0, 0]
    // row 1: +-80 around each other: exp(-160) underflows float -> winners share the mass
    const int cols = 7;
    const std::vector<float> x = {-1e30f, 1e30f, 80.0f, -80.0f, 0.0f, kNegInf, -1e30f,
                                  80.0f,  -80.0f, 80.0f, -80.0f, 79.0f, -1e30f, 1.0f};
    check_softmax(e, 2, cols, cols, x, "huge");
    std::vector<float> y(x.size());
    e.fn(2, cols, x.data(), cols, y.data(), cols);
    INFO(e.name);
    CHECK(y[1] == 1.0f);
    CHECK(y[0] == 0.0f);
    CHECK(y[2] == 0.0f);
    for (float v : y) CHECK(std::isfinite(v));
  }
}

TEST_CASE("softmax: exp accuracy over [-87, 0] via two-entry rows", "[kernels][softmax]") {
  // Row [0, t]: y1 = e^t / (1 + e^t), compared with double to rel 2e-6 (the p5 exp is ~2e-7).
  for (const auto& e : entries().softmax_rows) {
    const int rows = 2000;
    std::vector<float> x(static_cast<std::size_t>(rows) * 2);
    for (int r = 0; r < rows; ++r) {
      x[2 * r] = 0.0f;
      x[2 * r + 1] = -87.0f * static_cast<float>(r) / static_cast<float>(rows - 1);
    }
    check_softmax(e, rows, 2, 2, x, "exp sweep");
  }
}

// ---- layer norm

TEST_CASE("layer_norm: matches float64 reference, gamma/beta null or not, constant rows", "[kernels][layernorm]") {
  REQUIRE(!entries().layer_norm_rows.empty());
  for (const auto& e : entries().layer_norm_rows) {
    Xorshift rng(31);
    for (int d : {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 64, 67, 127, 768}) {
      for (int variant = 0; variant < 4; ++variant) {
        const int n = 4;
        auto x = random_vec(static_cast<std::size_t>(n) * d, rng, -3.0f, 3.0f);
        for (int j = 0; j < d; ++j) {
          x[static_cast<std::size_t>(1) * d + j] = 0.75f;                       // constant row: var 0
          x[static_cast<std::size_t>(2) * d + j] += 1000.0f;                    // large offset: cancellation
        }
        const auto gamma = random_vec(static_cast<std::size_t>(d), rng, 0.5f, 1.5f);
        const auto beta = random_vec(static_cast<std::size_t>(d), rng);
        const float* g = (variant & 1) ? gamma.data() : nullptr;
        const float* b = (variant & 2) ? beta.data() : nullptr;
        const float eps = 1e-5f;
        std::vector<float> y(x.size(), kSentinel);
        e.fn(n, d, x.data(), g, b, eps, y.data());
        const std::string what = e.name + " d=" + std::to_string(d) + (g ? " gamma" : "") + (b ? " beta" : "");
        check_close(y, layernorm_ref(n, d, x.data(), g, b, eps), 2e-5, 1e-5, what + " vs f64");
        std::vector<float> y_twin(x.size(), kSentinel);
        scalar_kernels().layer_norm_rows(n, d, x.data(), g, b, eps, y_twin.data());
        check_close(y, y_twin, 2e-5, 1e-5, what + " vs scalar twin");
        std::size_t not_beta = 0;  // constant row -> exactly beta (or 0)
        for (int j = 0; j < d; ++j)
          if (y[static_cast<std::size_t>(1) * d + j] != (b ? b[j] : 0.0f)) ++not_beta;
        INFO(what);
        CHECK(not_beta == 0);
        std::vector<float> inplace = x;  // y aliases x
        e.fn(n, d, inplace.data(), g, b, eps, inplace.data());
        check_close(inplace, y, 0.0, 0.0, what + " in place");
      }
    }
  }
}

// ---- element-wise

std::vector<float> unary_inputs() {
  std::vector<float> x;
  for (int i = -2000; i <= 2000; ++i) x.push_back(static_cast<float>(i) * 0.005f);  // [-10, 10] step 0.005
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, -3e-5f, 0.4999f, 0.5f, 0.5001f, -0.5f, 9.5f, -30.0f, 30.0f})
    x.push_back(v);
  Xorshift rng(41);
  for (int i = 0; i < 1001; ++i) x.push_back(rng.uniform(-10.0f, 10.0f));  // odd count: tails
  return x;
}

template <class RefFn>
void check_unary(const std::vector<Entry<UnaryFn>>& list, UnaryFn twin, RefFn ref, double atol, double rtol,
                 const char* label) {
  REQUIRE(!list.empty());
  const auto x = unary_inputs();
  std::vector<double> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = ref(static_cast<double>(x[i]));
  for (const auto& e : list) {
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{7}, std::size_t{9}, x.size()}) {
      std::vector<float> y(n + 3, kSentinel);
      e.fn(n, x.data(), y.data());
      const std::string what = e.name + " " + label + " n=" + std::to_string(n);
      check_close(y.data(), want.data(), n, atol, rtol, what.c_str());
      INFO(what);
      CHECK((y[n] == kSentinel && y[n + 1] == kSentinel && y[n + 2] == kSentinel));
      std::vector<float> y_twin(n);
      twin(n, x.data(), y_twin.data());
      check_close(y.data(), y_twin.data(), n, atol, rtol, (what + " vs scalar twin").c_str());
    }
    std::vector<float> inplace = x;
    e.fn(inplace.size(), inplace.data(), inplace.data());
    check_close(inplace, want, atol, rtol, e.name + " " + label + " in place");
  }
}

TEST_CASE("relu: exact over [-10, 10]", "[kernels][relu]") {
  check_unary(entries().relu, scalar_kernels().relu, [](double v) { return v > 0.0 ? v : 0.0; }, 0.0, 0.0, "relu");
}

TEST_CASE("gelu: matches exact erf gelu in double over [-10, 10]", "[kernels][gelu]") {
  check_unary(entries().gelu, scalar_kernels().gelu,
              [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }, 1e-6, 2e-6, "gelu");
}

TEST_CASE("tanh: matches std::tanh in double over [-10, 10]", "[kernels][tanh]") {
  check_unary(entries().tanh, scalar_kernels().tanh, [](double v) { return std::tanh(v); }, 1e-7, 1e-6, "tanh");
}

TEST_CASE("add: within half an ulp of the double sum, any length", "[kernels][add]") {
  REQUIRE(!entries().add.empty());
  Xorshift rng(51);
  for (const auto& e : entries().add) {
    for (std::size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 1001}) {
      const auto a = random_vec(n, rng, -100.0f, 100.0f);
      const auto b = random_vec(n, rng, -1.0f, 1.0f);
      std::vector<double> want(n);
      for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<double>(a[i]) + b[i];
      std::vector<float> y(n);
      e.fn(n, a.data(), b.data(), y.data());
      check_close(y, want, 0.0, 6e-8, e.name + " n=" + std::to_string(n));
      std::vector<float> y_twin(n);
      scalar_kernels().add(n, a.data(), b.data(), y_twin.data());
      check_close(y, y_twin, 0.0, 0.0, e.name + " vs scalar twin n=" + std::to_string(n));
      std::vector<float> inplace = a;  // y aliases a
      e.fn(n, inplace.data(), b.data(), inplace.data());
      check_close(inplace, y, 0.0, 0.0, e.name + " in place");
    }
  }
}

TEST_CASE("dot: matches float64 sum within 1e-6 * sum|a_i b_i|", "[kernels][dot]") {
  REQUIRE(!entries().dot.empty());
  Xorshift rng(61);
  for (const auto& e : entries().dot) {
    for (std::size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 13, 15, 16, 17, 31, 33, 64, 67, 127, 1000, 4097}) {
      const auto a = random_vec(n, rng);
      const auto b = random_vec(n, rng);
      double want = 0.0, abs_sum = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        want += static_cast<double>(a[i]) * b[i];
        abs_sum += std::fabs(static_cast<double>(a[i]) * b[i]);
      }
      const float got = e.fn(n, a.data(), b.data());
      const float twin = scalar_kernels().dot(n, a.data(), b.data());
      const std::string what = e.name + " n=" + std::to_string(n);
      check_close(&got, &want, 1, 1e-6 * abs_sum, 0.0, what.c_str());
      check_close(&got, &twin, 1, 1e-6 * abs_sum, 0.0, (what + " vs scalar twin").c_str());
    }
    // exact small case: [1, 2, 3, 4, 5] · [5, 4, 3, 2, 1] = 5 + 8 + 9 + 8 + 5 = 35
    const float a5[] = {1, 2, 3, 4, 5}, b5[] = {5, 4, 3, 2, 1};
    CHECK(e.fn(5, a5, b5) == 35.0f);
  }
}

TEST_CASE("row dots: each row matches float64 within 1e-6 * sum|h_i t_i|, and any split of the rows gives the same bits",
          "[kernels][dot]") {
  REQUIRE(!entries().row_dots.empty());
  Xorshift rng(62);
  for (const auto& e : entries().row_dots) {
    for (std::size_t rows : {1, 3, 4, 5, 9}) {
      for (std::size_t n : {1, 7, 8, 9, 16, 17, 33, 1000, 2051}) {
        const std::size_t ld = n + 3 * (rows % 2);
        const auto h = random_vec(n, rng);
        const auto t = random_vec(rows * ld, rng);
        std::vector<float> got(rows, 12345.0f), twin(rows, 12345.0f);
        e.fn(rows, n, h.data(), t.data(), ld, got.data());
        scalar_kernels().row_dots(rows, n, h.data(), t.data(), ld, twin.data());
        for (std::size_t r = 0; r < rows; ++r) {
          double want = 0.0, abs_sum = 0.0;
          for (std::size_t i = 0; i < n; ++i) {
            want += static_cast<double>(h[i]) * t[r * ld + i];
            abs_sum += std::fabs(static_cast<double>(h[i]) * t[r * ld + i]);
          }
          const std::string what = e.name + " rows=" + std::to_string(rows) + " n=" + std::to_string(n) + " row " +
                                   std::to_string(r);
          check_close(&got[r], &want, 1, 1e-6 * abs_sum, 0.0, what.c_str());
          check_close(&got[r], &twin[r], 1, 1e-6 * abs_sum, 0.0, (what + " vs scalar twin").c_str());
          float alone = 0.0f;  // the row alone: the same bits (threads split the rows anywhere)
          e.fn(1, n, h.data(), t.data() + r * ld, ld, &alone);
          INFO(what);
          CHECK(std::memcmp(&alone, &got[r], sizeof alone) == 0);
        }
      }
    }
    // exact small case: h = [1, 2, 3, 4, 5] against rows [5, 4, 3, 2, 1] (35) and [1, 1, 1, 1, 1] (15)
    const float h5[] = {1, 2, 3, 4, 5}, t5[] = {5, 4, 3, 2, 1, 1, 1, 1, 1, 1};
    float o[2];
    e.fn(2, 5, h5, t5, 5, o);
    CHECK(o[0] == 35.0f);
    CHECK(o[1] == 15.0f);
  }
}

// ---- dispatch

TEST_CASE("kernel_list: every table slot is filled and active_kernels matches the build", "[kernels][dispatch]") {
  auto filled = [](const KernelTable& t) {
    return t.gemm_nn && t.gemm_nt && t.softmax_rows && t.layer_norm_rows && t.relu && t.gelu && t.tanh && t.add &&
           t.dot && t.row_dots && t.isa;
  };
  CHECK(filled(scalar_kernels()));
  CHECK(std::string(scalar_kernels().isa) == "scalar");
  // the last scalar entry of a slot fills the table: the blocked GEMMs, not their plain reference twins
  CHECK(scalar_kernels().gemm_nn == &f32_gemm_nn_4x4__scalar);
  CHECK(scalar_kernels().gemm_nt == &f32_gemm_nt_4x4__scalar);
  CHECK(filled(active_kernels()));
#if defined(__wasm_simd128__)
  CHECK(filled(wasmsimd_kernels()));
  CHECK(std::string(active_kernels().isa) == "wasmsimd");
  CHECK(active_kernels().gemm_nn == &f32_gemm_nn_4x8__wasmsimd);
  CHECK(entries().gemm_nn.size() == 3);
#else
  CHECK(std::string(active_kernels().isa) == "scalar");
  CHECK(entries().gemm_nn.size() == 2);
#endif
}

}  // namespace
