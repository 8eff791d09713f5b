// The thread pool behind parallel_for (Note [Intra-op parallelism], parallel.h).
#include "parallel.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
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
  std::mutex error_mutex;
  std::exception_ptr error;

  Region(RangeFn f, std::int64_t b, std::int64_t e, std::int64_t c, int n)
      : fn(f), begin(b), end(e), chunk(c), chunks(n) {}

  /// Runs chunks until none is left; returns how many this thread ran.
  int work() {
    int ran = 0;
    for (int i = next.fetch_add(1); i < chunks; i = next.fetch_add(1)) {
      std::int64_t b = begin + i * chunk, e = std::min(end, b + chunk);
      try {
        fn(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      ++ran;
    }
    return ran;
  }
};

class Pool {
 public:
  /// Runs region r with up to `helpers` workers next to the caller.
  void run(Region& r, int helpers) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (static_cast<int>(workers_.size()) < helpers)
      workers_.emplace_back([this, id = static_cast<int>(workers_.size())] { loop(id); });
    region_ = &r;
    wanted_ = helpers;
    ++generation_;
    lock.unlock();
    wake_.notify_all();

    int ran = r.work();
    lock.lock();
    finished_ += ran;
    // Wait for every chunk, and for every woken worker to be done with r (it lives on our stack).
    done_.wait(lock, [&] { return finished_ == r.chunks && active_ == 0; });
    region_ = nullptr;
    finished_ = 0;
  }

 private:
  void loop(int id) {
    in_region = true;  // kernels inside a chunk never start another region
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (region_ == nullptr || id >= wanted_) continue;
      Region* r = region_;
      ++active_;
      lock.unlock();
      int ran = r->work();
      lock.lock();
      finished_ += ran;
      --active_;
      if (finished_ == r->chunks && active_ == 0) done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  Region* region_ = nullptr;
  int wanted_ = 0;
  int active_ = 0;
  int finished_ = 0;
  std::uint64_t generation_ = 0;
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
