// parallel_test.cpp: the core's thread pool (core/parallel.h) and the loops that use it — every index
// visited once, nested loops inline, and GEMM / multi-head attention results with several threads equal
// to the single-threaded ones (bit for bit: each output element is summed in the same order) and to the
// float64 reference. Natively the pool has real threads; the single-threaded wasm test build runs the
// same cases on the calling thread (set_thread_count returns 1 there).
#include <catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "attention/attention.h"
#include "attention/tiled.h"
#include "core/parallel.h"
#include "ops/activations.h"
#include "ops/linear.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"
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

// BF16 = the top 16 bits of a binary32 (truncated here: any pattern will do), and back (libc++ 13 has no bit_cast)
std::uint16_t bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>(u >> 16);
}
double bf16_value(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

TEST_CASE("parallel_for: every index once, pieces of at least a grain, one thread per chunk slot", "[core][parallel]") {
  const Threads threads(3);
  for (const std::int64_t grain : {1, 3}) {
    for (const std::int64_t count : {1, 2, 5, 7, 64, 1000, 1009}) {
      std::vector<std::atomic<int>> seen(static_cast<std::size_t>(count));
      std::atomic<int> pieces{0}, short_pieces{0};
      const int slots = core::parallel_chunks(count, grain, 1e9);
      std::vector<std::atomic<std::thread::id>> slot_thread(static_cast<std::size_t>(core::kMaxThreads));
      std::atomic<int> bad_slot{0};
      core::parallel_for(count, grain, 1e9, [&](std::int64_t begin, std::int64_t end, int chunk) {
        REQUIRE(begin < end);
        pieces.fetch_add(1);
        if (end - begin < grain && count >= grain) short_pieces.fetch_add(1);
        if (chunk < 0 || chunk >= slots) {
          bad_slot.fetch_add(1);
          return;
        }
        // a slot is one thread: the first piece of a slot claims it, every later piece must run on that thread
        std::thread::id none{};
        const auto me = std::this_thread::get_id();
        if (!slot_thread[static_cast<std::size_t>(chunk)].compare_exchange_strong(none, me) && none != me) {
          bad_slot.fetch_add(1);
        }
        for (auto i = begin; i < end; ++i) seen[static_cast<std::size_t>(i)].fetch_add(1);
      });
      for (const auto& s : seen) REQUIRE(s.load() == 1);
      REQUIRE(bad_slot.load() == 0);
      REQUIRE(short_pieces.load() == 0);
      REQUIRE(slots <= threads.in_use);
      // up to kPiecesPerThread pieces a thread; one piece (the whole range) when the loop runs inline
      REQUIRE(pieces.load() <= slots * core::kPiecesPerThread);
      if (slots == 1) REQUIRE(pieces.load() == 1);
      if (slots > 1) REQUIRE(pieces.load() % slots == 0);  // a multiple of the threads: equal shares
    }
  }
}

TEST_CASE("parallel_for: the pieces divide the range equally where they can", "[core][parallel]") {
  const Threads threads(2);
  // count, grain -> the one piece size seen (18 half-heads: 6 pieces of 3, not 8 of 2 or 3; SmolLM2's K/V GEMM, 24
  // column blocks in grains of 8: 2 of 12, not 3 of 8)
  struct Case {
    std::int64_t count, grain, size;
  };
  for (const Case c : {Case{18, 1, 3}, Case{72, 1, 9}, Case{256, 1, 32}, Case{36, 1, 6}, Case{24, 8, 12}, Case{1024, 8, 128}}) {
    const std::int64_t want = threads.in_use < 2 ? c.count : c.size;  // the single-threaded build: one piece
    std::atomic<int> other{0};
    core::parallel_for(c.count, c.grain, 1e9, [&](std::int64_t begin, std::int64_t end, int) {
      if (end - begin != want) other.fetch_add(1);
    });
    INFO("count " << c.count << ", grain " << c.grain);
    REQUIRE(other.load() == 0);
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

TEST_CASE("linear: one row over a BF16 W splits columns in blocks of 16 and keeps the result", "[ops][parallel]") {
  // SmolLM2's widths: 576 x 576 (0.66 MB, above the GEMV threshold) and 576 x 1,536 (the gate)
  for (const int out : {576, 1536}) {
    const int in = 576;
    const auto x = random_vec(in, 24);
    const auto wf = random_vec(static_cast<std::size_t>(in) * out, 25);
    std::vector<std::uint16_t> bits(wf.size());
    for (std::size_t i = 0; i < wf.size(); ++i) bits[i] = bf16_bits(wf[i]);
    const core::WeightSpan w(bits.data(), bits.size(), core::WeightType::kBF16);
    const auto b = random_vec(out, 26);
    const auto y1 = attnscope::ops::linear(x, 1, in, w, out, b);
    std::vector<float> y2;
    {
      const Threads threads(2);
      y2 = attnscope::ops::linear(x, 1, in, w, out, b);
    }
    REQUIRE(y2 == y1);
    // and it is the product with the BF16 values (float64 reference)
    std::vector<double> want(static_cast<std::size_t>(out));
    for (int j = 0; j < out; ++j) {
      double acc = b[static_cast<std::size_t>(j)];
      for (int p = 0; p < in; ++p) {
        const std::size_t at = static_cast<std::size_t>(p) * out + j;
        acc += static_cast<double>(x[static_cast<std::size_t>(p)]) * bf16_value(bits[at]);
      }
      want[static_cast<std::size_t>(j)] = acc;
    }
    attnscope::test::check_close(y2, want, 1e-4, 1e-4, "BF16 GEMV with 2 threads");
  }
}

TEST_CASE("linear_many: one row against Q, K and V in one loop gives each linear() bit for bit, at 1, 2 and 4 threads",
          "[ops][parallel]") {
  // SmolLM2's Q, K and V (576 x 576, 576 x 192 twice: K and V alone stay under the hand-off threshold), BF16 and F16
  // mixed, with biases and without; and a 2-row input (linear() a matrix)
  const int in = 576;
  const std::array<int, 3> outs{576, 192, 200};
  std::vector<std::vector<std::uint16_t>> bits;
  std::vector<core::WeightSpan> ws;
  std::vector<std::vector<float>> bs;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const auto wf = random_vec(static_cast<std::size_t>(in) * outs[i], 40 + static_cast<unsigned>(i));
    std::vector<std::uint16_t> h(wf.size());
    // F16 for the second: any pattern is a valid weight (sign, exponent 0-29, mantissa), finite
    for (std::size_t j = 0; j < wf.size(); ++j) h[j] = i == 1 ? static_cast<std::uint16_t>((bf16_bits(wf[j]) & 0x83FF) | (0x3800)) : bf16_bits(wf[j]);
    bits.push_back(std::move(h));
    bs.push_back(i == 2 ? std::vector<float>{} : random_vec(static_cast<std::size_t>(outs[i]), 50 + static_cast<unsigned>(i)));
  }
  for (std::size_t i = 0; i < outs.size(); ++i) {
    ws.emplace_back(bits[i].data(), bits[i].size(), i == 1 ? core::WeightType::kF16 : core::WeightType::kBF16);
  }
  for (const int rows : {1, 2}) {
    const auto x = random_vec(static_cast<std::size_t>(rows) * in, 60);
    std::vector<std::vector<float>> want;
    for (std::size_t i = 0; i < outs.size(); ++i) want.push_back(attnscope::ops::linear(x, rows, in, ws[i], outs[i], bs[i]));
    for (const int n : {1, 2, 4}) {
      std::vector<std::vector<float>> got;
      std::vector<attnscope::ops::LinearTarget> targets;
      for (std::size_t i = 0; i < outs.size(); ++i) got.emplace_back(static_cast<std::size_t>(rows) * outs[i], 12345.0f);
      for (std::size_t i = 0; i < outs.size(); ++i) {
        targets.push_back({&ws[i], bs[i], core::MatView{got[i].data(), rows, outs[i], outs[i]}});
      }
      {
        const Threads threads(n);
        attnscope::ops::linear_many(attnscope::core::as_view(x, rows, in), targets);
      }
      for (std::size_t i = 0; i < outs.size(); ++i) {
        INFO("rows " << rows << " threads " << n << " matrix " << i);
        REQUIRE(got[i] == want[i]);
      }
    }
  }
}

TEST_CASE("table_row_dots: a tied head's rows over 2 and 4 threads give the one-thread logits", "[ops][parallel]") {
  // 5,003 rows (not a multiple of the kernel's 4-row groups, so pieces start inside a group) x 1,000: 10 MFLOP, above
  // the hand-off threshold; BF16 and float32 tables
  const std::size_t rows = 5003, d = 1000;
  const auto h = random_vec(d, 27);
  const auto tf = random_vec(rows * d, 28);
  std::vector<std::uint16_t> bits(tf.size());
  for (std::size_t i = 0; i < tf.size(); ++i) bits[i] = bf16_bits(tf[i]);
  for (const bool half : {true, false}) {
    const core::WeightSpan w = half ? core::WeightSpan(bits.data(), bits.size(), core::WeightType::kBF16)
                                    : core::WeightSpan(std::span<const float>(tf));
    std::vector<float> z1(rows);
    attnscope::ops::table_row_dots(h, w, z1);
    for (const int n : {2, 4}) {
      std::vector<float> zn(rows);
      {
        const Threads threads(n);
        attnscope::ops::table_row_dots(h, w, zn);
      }
      INFO((half ? "BF16" : "F32") << " threads " << n);
      REQUIRE(zn == z1);
    }
    std::vector<double> want(rows);
    for (std::size_t v = 0; v < rows; ++v) {
      double acc = 0.0;
      for (std::size_t i = 0; i < d; ++i) {
        acc += static_cast<double>(h[i]) * (half ? bf16_value(bits[v * d + i]) : static_cast<double>(tf[v * d + i]));
      }
      want[v] = acc;
    }
    attnscope::test::check_close(z1, want, 1e-4, 1e-4, half ? "BF16 table rows" : "F32 table rows");
  }
}

TEST_CASE("activations, RMSNorm and RoPE over many rows: the pool's pieces give the one-thread result", "[ops][parallel]") {
  const int n = 256, d = 576, heads = 9, hd = 64;  // a SmolLM2-shaped prompt: every op above the hand-off threshold
  const auto x = random_vec(static_cast<std::size_t>(n) * d * 3, 41, 4.0f);  // also n x 1,728 for the activations
  const auto gate = random_vec(x.size(), 42);
  const auto weight = random_vec(d, 43);
  attnscope::ops::RopeSpec spec;
  spec.rotary_dim = hd;
  spec.theta = 100000.0;
  const auto freqs = attnscope::ops::rope_frequencies(spec, n + 7);
  const auto run = [&](int threads_wanted) {
    const Threads threads(threads_wanted);
    std::vector<std::vector<float>> out;
    for (const auto act : {attnscope::ops::Activation::kSilu, attnscope::ops::Activation::kGelu,
                           attnscope::ops::Activation::kGeluTanh, attnscope::ops::Activation::kRelu}) {
      std::vector<float> y = x;
      attnscope::ops::activate(act, y);
      out.push_back(y);
      y = x;
      attnscope::ops::activate_gated(act, y, gate);
      out.push_back(y);
    }
    std::vector<float> y(static_cast<std::size_t>(n) * d);
    attnscope::ops::rms_norm_rows(std::span<const float>(x).first(y.size()), n, d, weight, 1e-5f, false, y);
    out.push_back(y);
    std::vector<float> r(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n) * heads * hd);
    attnscope::ops::apply_rope(r, n, heads, hd, 7, freqs);
    out.push_back(r);
    return out;
  };
  const auto one = run(1);
  const auto two = run(2);
  REQUIRE(two.size() == one.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    INFO("output " << i);
    REQUIRE(two[i] == one[i]);
  }
  // activate_gated is activate, then the float32 product
  std::vector<float> a = x, g = x;
  attnscope::ops::activate(attnscope::ops::Activation::kSilu, a);
  attnscope::ops::activate_gated(attnscope::ops::Activation::kSilu, g, gate);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] *= gate[i];
  REQUIRE(g == a);
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

TEST_CASE("tiled_attention: (head, query block) pieces over threads give the one-thread result, summaries too",
          "[attention][parallel]") {
  // 9 heads sharing 3 K/V heads (SmolLM2), 300 causal queries (5 blocks of 64, the last short), a window, padding
  const int n = 300, heads = 9, kv = 3, hd = 64;
  const auto q = random_vec(static_cast<std::size_t>(n) * heads * hd, 51);
  const auto k = random_vec(static_cast<std::size_t>(n) * kv * hd, 52);
  const auto v = random_vec(static_cast<std::size_t>(n) * kv * hd, 53);
  const std::vector<std::uint8_t> keep = {1, 1, 0, 1, 1, 1, 1, 1, 1};  // head 2 ablated
  at::TiledArgs a;
  a.q = q;
  a.k = k;
  a.v = v;
  a.nq = a.nk = n;
  a.num_heads = heads;
  a.kv_heads = kv;
  a.head_dim = hd;
  a.causal = true;
  a.window = 200;
  a.nk_real = 290;
  a.head_keep = keep;
  a.summaries = true;
  a.summary_rows = 290;
  a.top_k = 3;
  const at::TiledOutput one = at::tiled_attention(a);
  for (const int t : {2, 4}) {
    const Threads threads(t);
    const at::TiledOutput many = at::tiled_attention(a);
    REQUIRE(many.concat == one.concat);
    REQUIRE(many.summary.entropy == one.summary.entropy);
    REQUIRE(many.summary.distance == one.summary.distance);
    REQUIRE(many.summary.sink == one.summary.sink);
    REQUIRE(many.summary.top_ids == one.summary.top_ids);
    REQUIRE(many.summary.top_weights == one.summary.top_weights);
  }
  // the entropy of a summarised head is a mean over its rows of non-negative entropies; the ablated head's is 0
  REQUIRE(one.summary.entropy[2] == 0.0f);
  REQUIRE(one.summary.entropy[0] > 0.0f);
}
