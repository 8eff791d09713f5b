// The thread pool behind parallel_for (Note [Intra-op parallelism], parallel.h).
#include "parallel.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "minigrad/error.h"
#include "minigrad/parallel.h"

// OpenBLAS's thread count (declared by OpenBLAS's cblas.h; repeated here to say what is used).
extern "C" void openblas_set_num_threads(int num_threads);

namespace minigrad {
namespace detail {
namespace {

int default_num_threads() {
  for (const char* name : {"MINIGRAD_NUM_THREADS", "OMP_NUM_THREADS"}) {
    if (const char* v = std::getenv(name)) {
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n >= 1 && n <= 1024) return static_cast<int>(n);
    }
  }
  unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(std::min(cores, 1024u));
}

std::atomic<int>& num_threads_setting() {
  // OpenBLAS stays on one thread: minigrad splits large products itself (Note [GEMM on threads],
  // kernels/gemm.cpp).
  static std::atomic<int> n{(openblas_set_num_threads(1), default_num_threads())};
  return n;
}

thread_local bool in_region = false;

// The work of one parallel region: chunks of [begin, end) handed out by an atomic counter.
struct Region {
  RangeFn fn;
  std::int64_t begin, end, chunk;
  int chunks;
  std::atomic<int> next{0};
  std::atomic<int> finished{0};  // chunks run to the end (or to an exception)
  std::mutex error_mutex;
  std::exception_ptr error;

  Region(RangeFn f, std::int64_t b, std::int64_t e, std::int64_t c, int n)
      : fn(f), begin(b), end(e), chunk(c), chunks(n) {}

  /// Runs chunks until none is left.
  void work() {
    for (int i = next.fetch_add(1); i < chunks; i = next.fetch_add(1)) {
      std::int64_t b = begin + i * chunk, e = std::min(end, b + chunk);
      try {
        fn(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      finished.fetch_add(1);
    }
  }
};

// Note [Spin, then sleep]
// Waking a worker asleep on a condition variable is a futex call and, on this machine's
// paravirtualised VM, an inter-processor interrupt: tens of us of the caller's time per region
// (pthread_cond_broadcast showed in perf's profile of a 2-thread tiny_lm step), and the worker
// starts late. A tiny_lm step runs many short regions (121 since the grain is ATen's), so the
// pool cost more than it gained.
// So a worker that finished a region spins for kSpinTime, watching for the next one, before it
// sleeps, and the caller only calls notify when a worker is asleep; the caller waiting for the
// last chunk spins the same way before it sleeps. The spinning is bounded (a process that stops
// using the pool has its workers asleep within kSpinTime), and pauses between checks
// (_mm_pause), as OpenMP runtimes do (GOMP_SPINCOUNT). Every flag is an atomic; a sleeper
// registers under the mutex (sleeping_, caller_waiting_) before it tests its predicate, so a
// wake is never lost.
// On a busy machine (more runnable threads than cores) a thread that spins holds a core that the
// caller's own work, or another process, is waiting for: with one other busy process (`yes >
// /dev/null`) on this 2-core VM, the tiny_lm example ran a third slower on 2 threads than on 1.
// So every kYieldEvery pauses the spinner yields its core (sched_yield, as oneTBB's
// spin-wait does after its pauses): with nothing else runnable the call returns at once; with
// something else, that runs. The same run then made the 2-thread step about as fast as the
// 1-thread one, and the idle machine's 2-thread figure did not move (docs/performance.md,
// "Threads on a busy machine").
constexpr auto kSpinTime = std::chrono::microseconds(300);
constexpr int kYieldEvery = 8;

/// Spins until done() or kSpinTime has passed; whether done() became true.
template <typename F>
bool spin_until(F done) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1;; ++i) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % kYieldEvery == 0) std::this_thread::yield();
    if (i % 64 == 0 && std::chrono::steady_clock::now() - start > kSpinTime) return done();
  }
}

class Pool {
 public:
  /// Runs region r with up to `helpers` workers next to the caller.
  void run(Region& r, int helpers) {
    bool notify = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (static_cast<int>(workers_.size()) < helpers)
        workers_.emplace_back([this, id = static_cast<int>(workers_.size())] { loop(id); });
      wanted_.store(helpers);
      region_.store(&r);
      generation_.fetch_add(1);
      notify = sleeping_ > 0;
    }
    if (notify) wake_.notify_all();
    r.work();
    // Wait for every chunk, then for every worker that may still hold r (it lives on our stack).
    wait_until([&] { return r.finished.load() == r.chunks; });
    region_.store(nullptr);
    wait_until([&] { return active_.load() == 0; });
  }

 private:
  template <typename F>
  void wait_until(F done) {
    if (spin_until(done)) return;
    std::unique_lock<std::mutex> lock(mutex_);
    caller_waiting_.store(true);
    done_.wait(lock, done);
    caller_waiting_.store(false);
  }

  void loop(int id) {
    in_region = true;  // kernels inside a chunk never start another region
    std::uint64_t seen = 0;
    for (;;) {
      auto fresh = [&] { return generation_.load() != seen; };
      if (!spin_until(fresh)) {
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleeping_;
        wake_.wait(lock, fresh);
        --sleeping_;
      }
      seen = generation_.load();
      active_.fetch_add(1);
      // region_ may already be null (the caller ran every chunk) or a later region: either is
      // fine, active_ keeps the caller of the one read here waiting until it is let go.
      if (Region* r = region_.load(); r != nullptr && id < wanted_.load()) r->work();
      active_.fetch_sub(1);
      if (caller_waiting_.load()) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_all();
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;  // under mutex_
  int sleeping_ = 0;                  // under mutex_
  std::atomic<Region*> region_{nullptr};
  std::atomic<int> wanted_{0};
  std::atomic<int> active_{0};
  std::atomic<bool> caller_waiting_{false};
  std::atomic<std::uint64_t> generation_{0};
};

// Never destroyed: workers sleep in it until the process exits (joining them from a static
// destructor could deadlock with a region still running on another thread).
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}
std::mutex region_mutex;  // one parallel region at a time
std::atomic<std::int64_t> regions_run{0};

}  // namespace

std::int64_t parallel_regions_run() noexcept { return regions_run.load(std::memory_order_relaxed); }

bool parallel_available() noexcept {
  return !in_region && num_threads_setting().load(std::memory_order_relaxed) > 1;
}

void run_parallel(std::int64_t begin, std::int64_t end, std::int64_t grain, std::int64_t align,
                  RangeFn f) {
  const std::int64_t n = end - begin;
  const std::int64_t threads = num_threads_setting().load(std::memory_order_relaxed);
  const std::int64_t pieces = std::min<std::int64_t>(threads, (n + grain - 1) / grain);
  std::int64_t chunk = (n + pieces - 1) / pieces;
  chunk = (chunk + align - 1) / align * align;
  const auto chunks = static_cast<int>((n + chunk - 1) / chunk);
  std::unique_lock<std::mutex> lock(region_mutex, std::try_to_lock);
  if (chunks <= 1 || !lock.owns_lock()) {  // another thread's region is running: go alone
    f(begin, end);
    return;
  }
  Region r(f, begin, end, chunk, chunks);
  in_region = true;
  bool ran = true;
  try {
    pool().run(r, chunks - 1);
  } catch (...) {  // starting a worker failed (chunks never throw out of run): nothing ran yet
    ran = false;
  }
  in_region = false;
  if (!ran) {
    lock.unlock();
    f(begin, end);
    return;
  }
  regions_run.fetch_add(1, std::memory_order_relaxed);
  if (r.error) std::rethrow_exception(r.error);
}

}  // namespace detail

void set_num_threads(int n) {
  MG_CHECK(n >= 1, "set_num_threads", "the number of threads must be at least 1, got ", n);
  detail::num_threads_setting().store(n, std::memory_order_relaxed);
  openblas_set_num_threads(1);  // Note [GEMM on threads]: minigrad's pool splits the products
}

int get_num_threads() { return detail::num_threads_setting().load(std::memory_order_relaxed); }

}  // namespace minigrad
