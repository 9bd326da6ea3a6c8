// kernels_bench.cpp: throughput of every kernel_list.h GEMM and softmax entry, medians of >= 10 timed
// runs after one warm-up (wall clock, plus process CPU time for GEMM), printed as a Markdown table with
// the wasmsimd/scalar ratio; then a profile of multi-head attention at the comparative bench's shapes: the
// whole forward (attention::multi_head_attention_unchecked, weights not returned, one thread) beside its
// phases timed alone with the active kernels — the four projections, Q·Kᵀ and weights·V per head, the
// softmax — and the rest (scale, copies into per-head panels, allocation) as the difference.
// Layer: bench (kernels). Natively only scalar entries exist; the wasm build (SIMD core) has both.
// Note: in the wasm build the scalar twins are compiled with -msimd128 too, so clang may auto-vectorize
// their element-wise loops (gemm_nn's row update); the naive column is a plain i-j-p triple loop.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <array>
#include <chrono>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#else
#include <ctime>
#endif

#include "attention/multi_head.h"
#include "core/weights.h"
#include "kernels/kernel_entries.h"
#include "kernels/kernels.h"
#include "ops/linear.h"

namespace {

using namespace attnscope::kernels;

constexpr int kSamples = 11;

// Process CPU time in seconds. The machine is shared (2 cores, many processes), so wall time of a
// long GEMM includes time-slices given to others; CPU time shows what the kernel itself achieves.
// Under Node, clock() is wall-based, hence process.cpuUsage() (user + system, all threads — V8's
// helper threads are idle while the benchmark runs).
double cpu_seconds() {
#if defined(__EMSCRIPTEN__)
  return EM_ASM_DOUBLE({
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  });
#else
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
#endif
}

double g_last_cpu_median = 0.0;  // CPU-time median of the last median_seconds call

template <class F>
double median_seconds(F&& run, int samples = kSamples) {
  // Warm-up for >= 0.2 s: grows the packing workspace and lets V8 tier the function up from Liftoff
  // to TurboFan (done in the background after enough executions; one small call is not enough).
  const auto warm0 = std::chrono::steady_clock::now();
  do {
    run();
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - warm0).count() < 0.2);
  std::vector<double> wall, cpu;
  for (int s = 0; s < samples; ++s) {
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    run();
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(cpu_seconds() - c0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  g_last_cpu_median = cpu[cpu.size() / 2];
  return wall[wall.size() / 2];
}

std::vector<float> filled(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  unsigned s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) * (1.0f / 16777216.0f) - 0.5f;
  }
  return v;
}

// The plain triple loop everybody writes first: C = A·B (nn) or A·Bᵀ (nt), one dot per (i, j).
void gemm_naive(bool trans_b, int m, int n, int k, const float* a, const float* b, float* c) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int p = 0; p < k; ++p)
        acc += a[static_cast<std::size_t>(i) * k + p] *
               (trans_b ? b[static_cast<std::size_t>(j) * k + p] : b[static_cast<std::size_t>(p) * n + j]);
      c[static_cast<std::size_t>(i) * n + j] = acc;
    }
}

template <class Fn>
using Entry = attnscope::kernels::KernelEntry<Fn>;
using Entries = attnscope::kernels::KernelEntries;
const Entries& collect() { return attnscope::kernels::kernel_entries(); }

// The entry of `isa` that fills that isa's table (the last one listed); `first` picks the first
// instead (the plain reference twin when a slot has several scalar entries).
template <class Fn>
const Entry<Fn>* find_isa(const std::vector<Entry<Fn>>& list, const std::string& isa, bool first = false) {
  const Entry<Fn>* found = nullptr;
  for (const auto& e : list) {
    if (isa != e.isa) continue;
    found = &e;
    if (first) break;
  }
  return found;
}

void cell(double v) {
  if (v > 0) std::printf(" %8.2f |", v);
  else std::printf(" %8s |", "—");
}

// ---- decoding at the Llama-3.2-1B shape (issue 30): `attnscope_bench_kernels decode` runs only this. One decoder
// layer's seven projections as one-row products (ops::linear: the BF16 GEMV, and weights8's Q8_0 path with its
// activation quantisation), a tied head's rows (ops::table_row_dots: BF16 dots / the Q8_0 GEMV over the transposed
// table; 32,768 of the 128,256 rows, far out of cache), bytes of weights read per CPU second against a memcpy probe;
// then a short prompt's rows against Q8_0 weights: ops::linear (integer rows) vs the float GEMM on the same rows
// (kernels.h gemm_nn_q8, which dequantises W while packing).
struct Q8W {
  std::vector<std::int8_t> q;
  std::vector<float> s;
  attnscope::core::WeightSpan span() const { return attnscope::core::WeightSpan::q8_0(q.data(), s.data(), q.size()); }
};
Q8W q8_of(int k, int n, unsigned seed) {
  const int kb = (k + kQ8Block - 1) / kQ8Block;
  Q8W w{std::vector<std::int8_t>(static_cast<std::size_t>(kb) * n * kQ8Block), filled(static_cast<std::size_t>(kb) * n, seed)};
  unsigned r = seed;
  for (auto& v : w.q) {
    r = r * 1664525u + 1013904223u;
    v = static_cast<std::int8_t>(static_cast<int>(r >> 24) % 255 - 127);
  }
  for (auto& v : w.s) v *= 0.01f;
  return w;
}
std::vector<std::uint16_t> bf16_of(std::size_t n, unsigned seed) {
  const auto f = filled(n, seed);
  std::vector<std::uint16_t> h(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &f[i], 4);
    h[i] = static_cast<std::uint16_t>(u >> 16);
  }
  return h;
}

void decode_bench() {
  namespace core = attnscope::core;
  namespace ops = attnscope::ops;
  const KernelTable& kt = active_kernels();
  constexpr int d = 2048, f = 8192, kv = 512, head_rows = 32768;
  std::vector<std::uint8_t> buf(256u << 20, 1);
  const std::size_t half = buf.size() / 2;
  median_seconds([&] {
    std::memcpy(buf.data(), buf.data() + half, half);
    std::memcpy(buf.data() + half, buf.data(), half);
  }, 5);
  const double copy_rate = 2.0 * static_cast<double>(half) / g_last_cpu_median;
  buf = {};
  std::printf("Decoding at the Llama-3.2-1B shape (%s): weights read per CPU second; memcpy probe %.2f GB/s (bytes"
              " read, 256 MiB)\n\n| what | MB BF16 / Q8_0 | BF16 ms | BF16 GB/s | ÷ probe | Q8_0 ms | Q8_0 GB/s |"
              " ÷ probe | BF16 ÷ Q8_0 time |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", kt.isa, copy_rate / 1e9);
  const std::array<std::array<int, 2>, 7> shapes = {{{d, d}, {d, kv}, {d, kv}, {d, d}, {d, f}, {d, f}, {f, d}}};
  std::vector<std::vector<std::uint16_t>> wb;
  std::vector<Q8W> wq;
  unsigned seed = 10;
  for (const auto& s : shapes) {
    wb.push_back(bf16_of(static_cast<std::size_t>(s[0]) * s[1], ++seed));
    wq.push_back(q8_of(s[0], s[1], ++seed));
  }
  const auto x = filled(static_cast<std::size_t>(64) * f, 5);
  std::vector<float> y(static_cast<std::size_t>(64) * f);
  const auto layer = [&](bool q8, int m, bool float_gemm) {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const int k = shapes[i][0], n = shapes[i][1];
      if (float_gemm) {
        kt.gemm_nn_q8(m, n, k, 1.0f, x.data(), k, wq[i].q.data(), wq[i].s.data(), n, nullptr, y.data(), n);
        continue;
      }
      const core::WeightSpan w = q8 ? wq[i].span() : core::WeightSpan(wb[i].data(), wb[i].size(), core::WeightType::kBF16);
      ops::linear(core::ConstMatView{x.data(), m, k, k}, w, {}, core::MatView{y.data(), m, n, n});
    }
  };
  double bytes_b = 0, bytes_q = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    bytes_b += 2.0 * static_cast<double>(wb[i].size());
    bytes_q += static_cast<double>(wq[i].q.size()) + 4.0 * static_cast<double>(wq[i].s.size());
  }
  const auto row = [&](const char* what, double bb, double bq, double tb, double tq) {
    std::printf("| %s | %.0f / %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", what, bb / 1e6, bq / 1e6,
                tb * 1e3, bb / tb / 1e9, bb / tb / copy_rate, tq * 1e3, bq / tq / 1e9, bq / tq / copy_rate, tb / tq);
    std::fflush(stdout);
  };
  median_seconds([&] { layer(false, 1, false); }, 7);
  const double tlb = g_last_cpu_median;
  median_seconds([&] { layer(true, 1, false); }, 7);
  row("one layer's 7 projections (ops::linear, 1 row)", bytes_b, bytes_q, tlb, g_last_cpu_median);
  {
    const auto tb = bf16_of(static_cast<std::size_t>(head_rows) * d, 40);
    const Q8W tq = q8_of(d, head_rows, 41);  // the table's transpose [d, rows] (weights8's tied head)
    std::vector<float> z(head_rows);
    const std::span<const float> h(x.data(), d);
    median_seconds([&] { ops::table_row_dots(h, core::WeightSpan(tb.data(), tb.size(), core::WeightType::kBF16), z); }, 7);
    const double thb = g_last_cpu_median;
    median_seconds([&] { ops::table_row_dots(h, tq.span(), z); }, 7);
    row("tied head, 32,768 rows (ops::table_row_dots)", 2.0 * static_cast<double>(tb.size()),
        static_cast<double>(tq.q.size()) + 4.0 * static_cast<double>(tq.s.size()), thb, g_last_cpu_median);
  }
  std::printf("\nA short prompt against Q8_0 weights (one layer's 7 projections), CPU ms: ops::linear (integer rows up"
              " to 32 rows, else the float GEMM) vs the float GEMM on the same rows (gemm_nn_q8)\n\n"
              "| rows | ops::linear ms | float GEMM ms | float ÷ ops::linear |\n|---:|---:|---:|---:|\n");
  for (const int m : {2, 8, 16, 32, 64}) {
    median_seconds([&] { layer(true, m, false); }, 5);
    const double ti = g_last_cpu_median;
    median_seconds([&] { layer(true, m, true); }, 5);
    std::printf("| %d | %.2f | %.2f | %.2f |\n", m, ti * 1e3, g_last_cpu_median * 1e3, g_last_cpu_median / ti);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "decode") {
    decode_bench();
    return 0;
  }
  const Entries entries = collect();
#if defined(__EMSCRIPTEN__)
  std::printf("attnscope kernels bench (wasm, %s, active table: %s)\n\n", __VERSION__, active_kernels().isa);
#else
  std::printf("attnscope kernels bench (native, %s, active table: %s)\n\n", __VERSION__, active_kernels().isa);
#endif
  std::printf("GEMM, GFLOP/s (2·M·N·K / median time of %d runs)\n\n", kSamples);
  std::printf("Columns naive..ratio use wall-clock medians; the last two use process CPU-time medians.\n\n");
  std::printf("scalar ref = the plain reference twin (f32_gemm_*__scalar); scalar = the scalar table's kernel.\n\n");
  std::printf("| op | M=N=K | naive | scalar ref | scalar | wasmsimd | wasmsimd/scalar | scalar (cpu) |"
              " wasmsimd (cpu) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int trans = 0; trans < 2; ++trans) {
    for (int s : {64, 256, 512, 1024}) {
      const auto a = filled(static_cast<std::size_t>(s) * s, 1);
      const auto b = filled(static_cast<std::size_t>(s) * s, 2);
      std::vector<float> c(static_cast<std::size_t>(s) * s);
      const double flop = 2.0 * s * s * s;
      double naive = 0, scalar_ref = 0, scalar = 0, simd = 0, scalar_cpu = 0, simd_cpu = 0;
      if (s <= 512) {
        naive = flop / median_seconds([&] { gemm_naive(trans != 0, s, s, s, a.data(), b.data(), c.data()); }) / 1e9;
      }
      auto time_entry = [&](auto* e) {
        if (e == nullptr) return 0.0;
        return flop / median_seconds([&] { e->fn(s, s, s, 1.0f, a.data(), s, b.data(), s, nullptr, c.data(), s); }) / 1e9;
      };
      if (trans == 0) {
        scalar_ref = time_entry(find_isa(entries.gemm_nn, "scalar", true));
        scalar = time_entry(find_isa(entries.gemm_nn, "scalar"));
        scalar_cpu = flop / g_last_cpu_median / 1e9;
        simd = time_entry(find_isa(entries.gemm_nn, "wasmsimd"));
        if (simd > 0) simd_cpu = flop / g_last_cpu_median / 1e9;
      } else {
        scalar_ref = time_entry(find_isa(entries.gemm_nt, "scalar", true));
        scalar = time_entry(find_isa(entries.gemm_nt, "scalar"));
        scalar_cpu = flop / g_last_cpu_median / 1e9;
        simd = time_entry(find_isa(entries.gemm_nt, "wasmsimd"));
        if (simd > 0) simd_cpu = flop / g_last_cpu_median / 1e9;
      }
      std::printf("| gemm_%s | %d |", trans ? "nt" : "nn", s);
      cell(naive);
      cell(scalar_ref);
      cell(scalar);
      cell(simd);
      if (simd > 0 && scalar > 0) std::printf(" %6.2fx |", simd / scalar);
      else std::printf(" — |");
      cell(scalar_cpu);
      cell(simd_cpu);
      std::printf("\n");
      std::fflush(stdout);
    }
  }

  std::printf("\nSoftmax rows (with 1/8 of the entries -inf), M elements/s\n\n");
  std::printf("| rows x cols | scalar | wasmsimd | wasmsimd/scalar |\n|---|---:|---:|---:|\n");
  for (const auto& shape : {std::pair{256, 256}, std::pair{64, 4096}, std::pair{1024, 1024}}) {
    const int rows = shape.first, cols = shape.second;  // clang 14 cannot capture structured bindings
    auto x = filled(static_cast<std::size_t>(rows) * cols, 3);
    for (std::size_t i = 0; i < x.size(); i += 8) x[i] = -__builtin_inff();
    for (auto& v : x) v *= 20.0f;
    std::vector<float> y(x.size());
    double rate[2] = {0, 0};
    const char* isas[2] = {"scalar", "wasmsimd"};
    for (int t = 0; t < 2; ++t) {
      const auto* e = find_isa(entries.softmax_rows, isas[t]);
      if (e == nullptr) continue;
      rate[t] = static_cast<double>(x.size()) / median_seconds([&] { e->fn(rows, cols, x.data(), cols, y.data(), cols); }) / 1e6;
    }
    std::printf("| %d x %d |", rows, cols);
    cell(rate[0]);
    cell(rate[1]);
    if (rate[0] > 0 && rate[1] > 0) std::printf(" %6.2fx |\n", rate[1] / rate[0]);
    else std::printf(" — |\n");
  }

  // ---- multi-head attention: where the time goes (one thread, the active table)
  const KernelTable& kt = active_kernels();
  std::printf("\nMulti-head self-attention profile (%s kernels, one thread): median ms of the whole forward and of its"
              " phases run alone; GFLOP/s of each GEMM phase\n\n", kt.isa);
  std::printf("| (n, d, h) | whole | projections ×4 | Q·Kᵀ | softmax | weights·V | rest | whole GFLOP/s | proj GFLOP/s |"
              " Q·Kᵀ GFLOP/s | w·V GFLOP/s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& shape : {std::array{64, 256, 4}, std::array{128, 512, 8}, std::array{512, 768, 12},
                            std::array{1024, 768, 12}}) {
    const int n = shape[0], d = shape[1], h = shape[2], hd = d / h;
    const auto x = filled(static_cast<std::size_t>(n) * d, 5);
    const auto wq = filled(static_cast<std::size_t>(d) * d, 6), wk = filled(static_cast<std::size_t>(d) * d, 7);
    const auto wv = filled(static_cast<std::size_t>(d) * d, 8), wo = filled(static_cast<std::size_t>(d) * d, 9);
    const attnscope::attention::MhaArgs args{.query = x, .key = x, .value = x, .nq = n, .nk = n, .d_model = d,
                                             .num_heads = h, .kdim = d, .vdim = d,
                                             .w = {.wq = wq, .wk = wk, .wv = wv, .wo = wo},
                                             .need_weights = false, .weights_checked = true};
    const int samples = n >= 512 ? 5 : kSamples;
    const double whole = median_seconds([&] { (void)attnscope::attention::detail::multi_head_attention_unchecked(args); }, samples);
    std::vector<float> q(static_cast<std::size_t>(n) * d), p(static_cast<std::size_t>(n) * n), o(static_cast<std::size_t>(n) * d);
    const double proj = median_seconds([&] {
      for (const auto* w : {&wq, &wk, &wv, &wo}) kt.gemm_nn(n, d, d, 1.0f, x.data(), d, w->data(), d, nullptr, q.data(), d);
    }, samples);
    const double qk = median_seconds([&] {
      for (int hh = 0; hh < h; ++hh) kt.gemm_nt(n, n, hd, 0.125f, x.data() + hh * hd, d, x.data() + hh * hd, d, nullptr, p.data(), n);
    }, samples);
    const double sm = median_seconds([&] {
      for (int hh = 0; hh < h; ++hh) kt.softmax_rows(n, n, p.data(), n, p.data(), n);
    }, samples);
    const double pv = median_seconds([&] {
      for (int hh = 0; hh < h; ++hh) kt.gemm_nn(n, hd, n, 1.0f, p.data(), n, x.data() + hh * hd, d, nullptr, o.data() + hh * hd, d);
    }, samples);
    const double proj_flop = 8.0 * n * d * d, attn_flop = 2.0 * n * n * d;
    std::printf("| %d, %d, %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f |\n", n, d, h,
                whole * 1e3, proj * 1e3, qk * 1e3, sm * 1e3, pv * 1e3, (whole - proj - qk - sm - pv) * 1e3,
                (proj_flop + 2 * attn_flop) / whole / 1e9, proj_flop / proj / 1e9, attn_flop / qk / 1e9, attn_flop / pv / 1e9);
    std::fflush(stdout);
  }

  // ---- half-width weights (issue 30): GEMM with BF16 / F16 B widened while packing, and the one-row GEMV of decoding
  std::printf("\nHalf-width weights (issue 30), active table (%s): GEMM GFLOP/s with B float32 / BF16 / F16 (B widened"
              " while packing), M=N=K\n\n| M=N=K | f32 | bf16 | f16 | bf16 ÷ f32 |\n|---|---:|---:|---:|---:|\n", kt.isa);
  for (const int sz : {256, 512}) {
    const auto a = filled(static_cast<std::size_t>(sz) * sz, 1), bf = filled(static_cast<std::size_t>(sz) * sz, 2);
    std::vector<std::uint16_t> bh(bf.size());
    for (std::size_t i = 0; i < bf.size(); ++i) {
      std::uint32_t u;
      std::memcpy(&u, &bf[i], 4);
      bh[i] = static_cast<std::uint16_t>(u >> 16);  // BF16 (truncated); F16 reuses the bits: values differ, speed not
    }
    std::vector<float> c(static_cast<std::size_t>(sz) * sz);
    const double flop = 2.0 * sz * sz * sz;
    const double t32 = median_seconds([&] { kt.gemm_nn(sz, sz, sz, 1.0f, a.data(), sz, bf.data(), sz, nullptr, c.data(), sz); }, kSamples);
    const double tb = median_seconds([&] { kt.gemm_nn_bf16(sz, sz, sz, 1.0f, a.data(), sz, bh.data(), sz, nullptr, c.data(), sz); }, kSamples);
    const double th = median_seconds([&] { kt.gemm_nn_f16(sz, sz, sz, 1.0f, a.data(), sz, bh.data(), sz, nullptr, c.data(), sz); }, kSamples);
    std::printf("| %d | %.1f | %.1f | %.1f | %.2f |\n", sz, flop / t32 / 1e9, flop / tb / 1e9, flop / th / 1e9, t32 / tb);
  }
  // memory-copy probe: bytes read per second by memcpy over 128 MiB (cold in cache: 64 MiB per half)
  std::vector<std::uint8_t> buf(128u << 20, 1);
  const std::size_t half = buf.size() / 2;
  const double tcopy = median_seconds([&] {
    std::memcpy(buf.data(), buf.data() + half, half);
    std::memcpy(buf.data() + half, buf.data(), half);
  }, kSamples);
  const double copy_rate = 2.0 * half / tcopy;
  std::printf("\nOne-row GEMV y = x·W (decoding), W [k, n] as the decoder stores it; bytes of W read per second vs a"
              " memcpy probe (%.2f GB/s read)\n\n| k x n | f32 row update GB/s | bf16 GB/s | f16 GB/s | bf16 ÷ probe |"
              "\n|---|---:|---:|---:|---:|\n", copy_rate / 1e9);
  for (const auto& kn : {std::array{2048, 8192}, std::array{8192, 2048}}) {
    const int k = kn[0], n = kn[1];
    const auto x = filled(static_cast<std::size_t>(k), 3), w32 = filled(static_cast<std::size_t>(k) * n, 4);
    std::vector<std::uint16_t> w16(w32.size());
    for (std::size_t i = 0; i < w32.size(); ++i) {
      std::uint32_t u;
      std::memcpy(&u, &w32[i], 4);
      w16[i] = static_cast<std::uint16_t>(u >> 16);
    }
    std::vector<float> y(static_cast<std::size_t>(n));
    const double t32 = median_seconds([&] {  // ops::linear's float32 one-row path: y += x_p · W[p, :]
      for (int j = 0; j < n; ++j) y[static_cast<std::size_t>(j)] = 0.0f;
      for (int p = 0; p < k; ++p) {
        const float xp = x[static_cast<std::size_t>(p)];
        const float* row = w32.data() + static_cast<std::size_t>(p) * n;
        for (int j = 0; j < n; ++j) y[static_cast<std::size_t>(j)] += xp * row[j];
      }
    }, kSamples);
    const double tb = median_seconds([&] { kt.gemv_bf16(k, n, x.data(), w16.data(), n, nullptr, y.data()); }, kSamples);
    const double th = median_seconds([&] { kt.gemv_f16(k, n, x.data(), w16.data(), n, nullptr, y.data()); }, kSamples);
    const double bytes16 = 2.0 * k * n;
    std::printf("| %d x %d | %.2f | %.2f | %.2f | %.2f |\n", k, n, 2 * bytes16 / t32 / 1e9, bytes16 / tb / 1e9,
                bytes16 / th / 1e9, bytes16 / tb / copy_rate);
    std::fflush(stdout);
  }
  return 0;
}
