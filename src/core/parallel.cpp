// parallel.cpp: the worker pool behind parallel_for. Layer: core (standard library only).
// Shape: workers sleep on a condition variable (after a short spin, so back-to-back loops such as one
// GEMM per layer hand off in microseconds); a loop publishes one Job on the caller's stack, wakes them,
// and every thread taking part (the caller, slot 0, and workers 1 .. slots - 1) takes pieces in order with an
// atomic counter. The caller spins until all pieces are done and no worker still holds the Job, then
// returns. ATTNSCOPE_THREADS=0 (the single-threaded WebAssembly builds, where std::thread cannot start)
// compiles the inline path only.
#include "core/parallel.h"

#include <algorithm>
#include <atomic>

#if ATTNSCOPE_THREADS
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace attnscope::core {
namespace {

// Set on pool workers for their lifetime and on a caller during its loop: nested loops run inline.
thread_local bool t_in_parallel = false;
std::atomic<int> g_threads{1};

}  // namespace

int parallel_chunks(std::int64_t count, std::int64_t grain, double flops) {
  const int threads = g_threads.load(std::memory_order_relaxed);
  if (threads < 2 || t_in_parallel || flops < kMinParallelFlops) return 1;
  const std::int64_t by_grain = count / std::max<std::int64_t>(grain, 1);
  return static_cast<int>(std::clamp<std::int64_t>(by_grain, 1, threads));
}

int thread_count() { return g_threads.load(std::memory_order_relaxed); }

#if !ATTNSCOPE_THREADS

int set_thread_count(int) { return 1; }

void set_worker_init(void (*)()) {}

void parallel_for(std::int64_t count, std::int64_t, double, LoopBody body) {
  if (count > 0) body(0, count, 0);
}

#else

namespace {

// How many pieces a loop of `slots` threads cuts [0, count) into: a multiple of slots (equal pieces then give each
// thread an equal share), at most kPiecesPerThread a thread and count / grain (pieces of at least `grain` items;
// parallel_chunks gave slots <= count / grain); the largest such number that divides count (equal pieces) when there
// is one, else the largest.
int piece_count(std::int64_t count, std::int64_t grain, int slots) {
  const std::int64_t by_grain = count / std::max<std::int64_t>(grain, 1);
  const std::int64_t most = std::min<std::int64_t>(by_grain, std::int64_t{slots} * kPiecesPerThread);
  const std::int64_t largest = std::max<std::int64_t>(most / slots * slots, slots);
  for (std::int64_t p = largest; p > slots; p -= slots) {
    if (count % p == 0) return static_cast<int>(p);
  }
  return static_cast<int>(count % slots == 0 ? slots : largest);
}

struct Job {
  const LoopBody* body;
  std::int64_t count;
  int pieces;
  int slots;                  // threads taking part: the caller (slot 0) and workers 1 .. slots - 1
  std::atomic<int> next{0};   // next piece to take
  std::atomic<int> done{0};   // pieces finished
  std::atomic<int> users{0};  // workers that picked this Job up and have not let go
};

// set_worker_init's function and its generation (workers compare it with the last one they ran).
std::atomic<void (*)()> g_worker_init{nullptr};
std::atomic<std::uint64_t> g_worker_init_generation{0};

void run_pieces(Job& job, int slot) {
  for (int c = job.next.fetch_add(1, std::memory_order_acq_rel); c < job.pieces;
       c = job.next.fetch_add(1, std::memory_order_acq_rel)) {
    const std::int64_t begin = job.count * c / job.pieces;
    const std::int64_t end = job.count * (c + 1) / job.pieces;
    (*job.body)(begin, end, slot);
    job.done.fetch_add(1, std::memory_order_acq_rel);
  }
}

class Pool {
 public:
  // Starts workers until there are n - 1 (never stops any: see parallel.h).
  void grow(int n) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (static_cast<int>(workers_.size()) < n - 1) {
      const int slot = static_cast<int>(workers_.size()) + 1;
      workers_.emplace_back([this, slot] { work(slot); });
    }
  }
  int workers() {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(workers_.size());
  }

  void run(Job& job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    run_pieces(job, 0);
    while (job.done.load(std::memory_order_acquire) < job.pieces) {
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = nullptr;  // late wakers find nothing to do
    }
    while (job.users.load(std::memory_order_acquire) > 0) {
    }
  }

 private:
  // Spin this many polls of the generation before sleeping (~20-60 µs in V8 and natively).
  static constexpr int kSpin = 20000;

  // A worker of slot `slot` takes pieces of the Jobs that many threads take part in.
  void work(int slot) {
    t_in_parallel = true;
    std::uint64_t seen = generation_.load(std::memory_order_acquire);
    std::uint64_t init_seen = 0;
    for (;;) {
      for (int i = 0; i < kSpin && generation_.load(std::memory_order_acquire) == seen; ++i) {
      }
      Job* job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        seen = generation_.load(std::memory_order_acquire);
        job = job_ != nullptr && slot < job_->slots ? job_ : nullptr;
        if (job != nullptr) job->users.fetch_add(1, std::memory_order_acq_rel);
      }
      if (job == nullptr) continue;
      const std::uint64_t init_now = g_worker_init_generation.load(std::memory_order_acquire);
      if (init_now != init_seen) {
        init_seen = init_now;
        if (auto* init = g_worker_init.load(std::memory_order_acquire)) init();
      }
      run_pieces(*job, slot);
      job->users.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::thread> workers_;  // detached in spirit: they run until the process ends
  Job* job_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};
};

Pool& pool() {
  // Never destroyed: joinable std::threads in a static would terminate the process at exit.
  static Pool* p = new Pool();
  return *p;
}

// One loop at a time owns the pool; a second caller thread (not used by attnscope) runs inline.
std::mutex g_call_mutex;

}  // namespace

int set_thread_count(int n) {
  n = std::clamp(n, 1, kMaxThreads);
  if (n > 1) pool().grow(n);
  g_threads.store(n, std::memory_order_relaxed);
  return n;
}

void set_worker_init(void (*init)()) {
  g_worker_init.store(init, std::memory_order_release);
  g_worker_init_generation.fetch_add(1, std::memory_order_acq_rel);
}

void parallel_for(std::int64_t count, std::int64_t grain, double flops, LoopBody body) {
  if (count <= 0) return;
  const int slots = parallel_chunks(count, grain, flops);
  std::unique_lock<std::mutex> call(g_call_mutex, std::defer_lock);
  if (slots < 2 || !call.try_lock()) {
    body(0, count, 0);
    return;
  }
  Job job;
  job.body = &body;
  job.count = count;
  job.pieces = piece_count(count, grain, slots);
  job.slots = slots;
  t_in_parallel = true;
  pool().run(job);
  t_in_parallel = false;
}

#endif

}  // namespace attnscope::core
