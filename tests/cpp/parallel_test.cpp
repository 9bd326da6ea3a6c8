// parallel_test.cpp: the core's thread pool (core/parallel.h) and the loops that use it — every index
// visited once, nested loops inline, and GEMM / multi-head attention results with several threads equal
// to the single-threaded ones (bit for bit: each output element is summed in the same order) and to the
// float64 reference. Natively the pool has real threads; the single-threaded wasm test build runs the
// same cases on the calling thread (set_thread_count returns 1 there).
#include <catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "attention/attention.h"
#include "core/parallel.h"
#include "ops/linear.h"
#include "support/compare.h"
#include "support/random.h"
#include "support/reference.h"

namespace {

namespace core = attnscope::core;
namespace at = attnscope::attention;
using attnscope::test::random_vec;

// Restores one thread when a test ends, so test order does not matter.
struct Threads {
  explicit Threads(int n) : in_use(core::set_thread_count(n)) {}
  ~Threads() { core::set_thread_count(1); }
  int in_use;
};

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("parallel_for: every index once, pieces within the thread count", "[core][parallel]") {
  const Threads threads(3);
  for (const std::int64_t count : {1, 2, 5, 7, 64, 1000, 1009}) {
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(count));
    std::atomic<int> pieces{0};
    int max_chunk = -1;
    std::atomic<int> max_seen{-1};
    core::parallel_for(count, 1, 1e9, [&](std::int64_t begin, std::int64_t end, int chunk) {
      REQUIRE(begin < end);
      pieces.fetch_add(1);
      int m = max_seen.load();
      while (chunk > m && !max_seen.compare_exchange_weak(m, chunk)) {
      }
      for (auto i = begin; i < end; ++i) seen[static_cast<std::size_t>(i)].fetch_add(1);
    });
    max_chunk = max_seen.load();
    for (const auto& s : seen) REQUIRE(s.load() == 1);
    REQUIRE(pieces.load() == core::parallel_chunks(count, 1, 1e9));
    REQUIRE(pieces.load() <= threads.in_use);
    REQUIRE(max_chunk < pieces.load());
  }
}

namespace {
thread_local int t_init_runs = 0;     // how often this thread ran the worker init
thread_local int t_init_version = 0;  // which init it ran last
std::atomic<int> g_init_total{0};
void init_one() { ++t_init_runs, t_init_version = 1, g_init_total.fetch_add(1); }
void init_two() { ++t_init_runs, t_init_version = 2, g_init_total.fetch_add(1); }
}  // namespace

TEST_CASE("set_worker_init: every worker runs it once before its next piece; a new one runs again", "[core][parallel]") {
  const Threads threads(3);
  const auto caller = std::this_thread::get_id();
  for (const auto& step : {std::pair{&init_one, 1}, std::pair{&init_two, 2}}) {
    const int version = step.second;  // not a structured binding: clang 14 cannot capture those
    core::set_worker_init(step.first);
    for (int round = 0; round < 20; ++round) {
      std::atomic<int> bad{0};
      core::parallel_for(64, 1, 1e9, [&](std::int64_t, std::int64_t, int) {
        // each piece lasts ~0.5 ms, so the workers wake in time to take some (an empty one the caller does alone)
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(500);
        while (std::chrono::steady_clock::now() < until) {
        }
        if (std::this_thread::get_id() == caller) return;  // the caller never runs it
        if (t_init_version != version || t_init_runs != version) bad.fetch_add(1);
      });
      REQUIRE(bad.load() == 0);
    }
  }
  core::set_worker_init(nullptr);
  // natively workers took pieces in 40 rounds and each ran each init once (the pool keeps every worker an earlier
  // test started, and any of them may take a piece); the single-threaded build never runs it
  INFO("worker init runs: " << g_init_total.load());
  if (threads.in_use > 1) REQUIRE((g_init_total.load() >= 2 && g_init_total.load() % 2 == 0));
  else REQUIRE(g_init_total.load() == 0);
  REQUIRE(t_init_runs == 0);
}

TEST_CASE("parallel_for: small work and nested loops stay on the calling thread", "[core][parallel]") {
  const Threads threads(2);
  REQUIRE(core::parallel_chunks(100, 1, core::kMinParallelFlops / 2) == 1);
  REQUIRE(core::parallel_chunks(3, 2, 1e9) == 1);  // fewer than two grains
  std::atomic<int> inner_pieces{0};
  core::parallel_for(4, 1, 1e9, [&](std::int64_t begin, std::int64_t end, int) {
    for (auto i = begin; i < end; ++i) {
      REQUIRE(core::parallel_chunks(100, 1, 1e9) == 1);
      core::parallel_for(100, 1, 1e9, [&](std::int64_t b, std::int64_t e, int chunk) {
        REQUIRE(b == 0);
        REQUIRE(e == 100);
        REQUIRE(chunk == 0);
        inner_pieces.fetch_add(1);
      });
    }
  });
  REQUIRE(inner_pieces.load() == 4);
}

TEST_CASE("set_thread_count: clamps to 1..kMaxThreads", "[core][parallel]") {
  REQUIRE(core::set_thread_count(0) == 1);
  REQUIRE(core::set_thread_count(-5) == 1);
  const int many = core::set_thread_count(1000);
  REQUIRE((many == core::kMaxThreads || many == 1));
  REQUIRE(core::thread_count() == many);
  REQUIRE(core::set_thread_count(1) == 1);
}

TEST_CASE("matmul: several threads give the single-threaded result bit for bit", "[ops][parallel]") {
  // Wide C (column blocks, a 5-column tail past the last 8-wide panel) and narrow C (row blocks).
  struct Shape {
    int m, n, k;
  };
  for (const Shape s : {Shape{97, 261, 130}, Shape{301, 24, 257}}) {
    const auto a = random_vec(static_cast<std::size_t>(s.m) * s.k, 11);
    const auto b = random_vec(static_cast<std::size_t>(s.k) * s.n, 12);
    const auto bt = random_vec(static_cast<std::size_t>(s.n) * s.k, 13);
    const auto bias = random_vec(static_cast<std::size_t>(s.n), 14);
    const core::ConstMatView av{a.data(), s.m, s.k, s.k};
    std::vector<float> nn1(static_cast<std::size_t>(s.m) * s.n), nt1(nn1.size()), nn3(nn1.size()), nt3(nn1.size());
    attnscope::ops::matmul_nn(av, {b.data(), s.k, s.n, s.n}, {nn1.data(), s.m, s.n, s.n}, 0.5f, bias.data());
    attnscope::ops::matmul_nt(av, {bt.data(), s.n, s.k, s.k}, {nt1.data(), s.m, s.n, s.n}, 0.25f);
    {
      const Threads threads(3);
      attnscope::ops::matmul_nn(av, {b.data(), s.k, s.n, s.n}, {nn3.data(), s.m, s.n, s.n}, 0.5f, bias.data());
      attnscope::ops::matmul_nt(av, {bt.data(), s.n, s.k, s.k}, {nt3.data(), s.m, s.n, s.n}, 0.25f);
    }
    REQUIRE(nn3 == nn1);
    REQUIRE(nt3 == nt1);
    // and the single-threaded result is the product (float64 reference)
    std::vector<double> want(nn1.size());
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j) {
        double acc = 0.0;
        for (int p = 0; p < s.k; ++p) acc += static_cast<double>(a[i * s.k + p]) * b[p * s.n + j];
        want[static_cast<std::size_t>(i) * s.n + j] = 0.5 * acc + bias[static_cast<std::size_t>(j)];
      }
    attnscope::test::check_close(nn3, want, 1e-4, 1e-4, "matmul_nn with 3 threads");
  }
}

TEST_CASE("linear: one row over a wide W splits columns and keeps the result", "[ops][parallel]") {
  const int in = 300, out = 20011;  // 2·300·20011 = 12 MFLOP: above the hand-off threshold
  const auto x = random_vec(in, 21);
  const auto w = random_vec(static_cast<std::size_t>(in) * out, 22);
  const auto b = random_vec(out, 23);
  const auto y1 = attnscope::ops::linear(x, 1, in, w, out, b);
  std::vector<float> y2;
  {
    const Threads threads(2);
    y2 = attnscope::ops::linear(x, 1, in, w, out, b);
  }
  REQUIRE(y2 == y1);
}

TEST_CASE("multi_head_attention: threads over heads equal one thread, with and without weights", "[attention][parallel]") {
  const int nq = 67, nk = 131, d_model = 96, heads = 6;
  const auto query = random_vec(static_cast<std::size_t>(nq) * d_model, 31);
  const auto key = random_vec(static_cast<std::size_t>(nk) * d_model, 32);
  attnscope::ref::MhaParams p;
  p.wq = widen(random_vec(static_cast<std::size_t>(d_model) * d_model, 33, 0.2f));
  p.wk = widen(random_vec(static_cast<std::size_t>(d_model) * d_model, 34, 0.2f));
  p.wv = widen(random_vec(static_cast<std::size_t>(d_model) * d_model, 35, 0.2f));
  p.wo = widen(random_vec(static_cast<std::size_t>(d_model) * d_model, 36, 0.2f));
  const std::vector<float> wq(p.wq.begin(), p.wq.end()), wk(p.wk.begin(), p.wk.end()), wv(p.wv.begin(), p.wv.end()),
      wo(p.wo.begin(), p.wo.end());
  at::MhaArgs a;
  a.query = query;
  a.key = key;
  a.value = key;
  a.nq = nq;
  a.nk = nk;
  a.d_model = d_model;
  a.num_heads = heads;
  a.kdim = d_model;
  a.vdim = d_model;
  a.w = at::MhaWeights{wq, wk, wv, wo, {}, {}, {}, {}};
  a.causal = true;
  for (const bool need_weights : {true, false}) {
    a.need_weights = need_weights;
    auto one = at::multi_head_attention(a);
    REQUIRE(one.ok());
    for (const int n : {2, 4}) {
      const Threads threads(n);
      auto many = at::multi_head_attention(a);
      REQUIRE(many.ok());
      REQUIRE(many.value().output == one.value().output);
      REQUIRE(many.value().weights == one.value().weights);
    }
    const auto want = attnscope::ref::mha(widen(query), widen(key), widen(key), nq, nk, d_model, heads, d_model,
                                          d_model, p, {}, true);
    attnscope::test::check_close(one.value().output, want.output, 1e-4, 1e-3, "multi_head_attention output");
  }
}
