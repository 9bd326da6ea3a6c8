// parallel.h: one process-wide pool of worker threads and a blocking parallel_for over index ranges.
// Layer: core (standard library only). Used by ops (GEMM row/column blocks) and attention (heads).
// The pool is created once, by the first set_thread_count(n > 1), and lives for the process. Builds
// without threads (the single-threaded WebAssembly modules, compiled with ATTNSCOPE_THREADS=0) keep the
// same interface and always run on the calling thread. Nothing here allocates per call or can fail.
#pragma once

#include <cstdint>
#include <type_traits>

namespace attnscope::core {

// Threads parallel_for may use, the calling thread included (1 = no hand-off at all). Clamped to
// [1, kMaxThreads] and, in a build without threads, to 1. Starts the missing workers on first use
// (they are never stopped: a WebAssembly pthread can only start from a pre-loaded worker).
// Returns the count now in use.
int set_thread_count(int n);
int thread_count();
inline constexpr int kMaxThreads = 16;

// Work, in floating-point operations, below which parallel_for stays on the calling thread: a hand-off
// costs 17-90 µs in Node and ~20 µs in Chromium (TOOLCHAIN.md 16); 8 MFLOP is ~0.2 ms at 40 GFLOP/s.
inline constexpr double kMinParallelFlops = 8.0e6;

// A non-owning reference to a loop body `void(std::int64_t begin, std::int64_t end, int chunk)`: unlike
// std::function it never allocates (a heap block per GEMM call fragmented the wasm heap), and the
// referenced callable outlives the call it is passed to.
class LoopBody {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, LoopBody>>>
  LoopBody(F&& f)  // NOLINT(google-explicit-constructor): lambdas convert at the call site
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, std::int64_t b, std::int64_t e, int c) { (*static_cast<std::remove_reference_t<F>*>(o))(b, e, c); }) {}
  void operator()(std::int64_t begin, std::int64_t end, int chunk) const { call_(object_, begin, end, chunk); }

 private:
  void* object_;
  void (*call_)(void*, std::int64_t, std::int64_t, int);
};

// Calls body(begin, end, chunk) over contiguous pieces covering [0, count), each at least `grain` items long, on
// at most thread_count() threads; chunk is the slot of the thread running the piece, in [0, parallel_chunks(…))
// (per-thread scratch: a slot's pieces run one after another). There are up to kPiecesPerThread pieces a thread,
// handed out in order to whichever thread is free, so a thread that starts late or runs slower (a worker still
// waking, another process on its core) takes fewer pieces instead of holding up the loop. Runs everything as one
// piece on the calling thread when `flops` (the whole loop's estimated work) is under kMinParallelFlops, when count
// < 2·grain, or when called from inside another parallel_for (nested loops run inline). Returns after every piece
// has finished. The pieces write disjoint outputs; a body must not fail (core code reports errors after the loop).
// Piece boundaries depend on count, grain and thread_count() only, never on timing.
inline constexpr int kPiecesPerThread = 4;
void parallel_for(std::int64_t count, std::int64_t grain, double flops, LoopBody body);

// How many threads (chunk slots) parallel_for(count, grain, flops, …) would use: size per-chunk scratch with it.
int parallel_chunks(std::int64_t count, std::int64_t grain, double flops);

// `init` runs once on every pool worker before the next piece of work that worker takes after this call
// (not on the calling thread): a per-thread resource, e.g. the relaxed-SIMD GEMM kernel put into a WebAssembly
// thread's own function table. A later call replaces it and runs again on every worker; nullptr stops it.
// Call it while no parallel_for runs. In a build without threads it is never called.
void set_worker_init(void (*init)());

}  // namespace attnscope::core
