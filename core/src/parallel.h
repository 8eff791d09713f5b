#pragma once
// Private: parallel_for, the one way kernels use more than one core.
//
// Note [Intra-op parallelism]
// A kernel hands parallel_for a range [begin, end) of independent work items (elements, rows,
// output elements, matrices) and a grain: the least number of items worth a thread. When the range
// is at most one grain, or set_num_threads(1), or the caller already runs inside a parallel region,
// f(begin, end) runs at once on the calling thread: the small-op path costs one comparison and
// never touches a thread. Otherwise the range is cut into at most get_num_threads() chunks of at
// least a grain each; the caller runs chunks too, and the pool's workers (started on the first
// large op; between regions they spin for a short while, then sleep on a condition variable:
// Note [Spin, then sleep] in parallel.cpp) run the others.
// One parallel region runs at a time; a second thread that asks meanwhile runs its range alone.
// f must only write its own items' outputs (no shared accumulators, no random draws).
#include <cstdint>
#include <type_traits>

namespace minigrad::detail {

/// Items per chunk below which splitting does not pay: the elements of a cheap elementwise op
/// (a worker spinning between regions (Note [Spin, then sleep]) starts on it within a
/// microsecond, much less than such an add takes). ATen's grain. Before the pool spun, waking a
/// sleeping worker cost more than such a chunk and this grain made the tiny_lm step slower on 2
/// threads than on 1; with the spinning pool, raising it to 131072 kept most of that step on one
/// thread.
/// Pass a smaller grain for costlier items.
constexpr std::int64_t kGrainSize = 1 << 15;

/// How many ranges were split across threads so far (tests check that a large op was).
std::int64_t parallel_regions_run() noexcept;

/// Whether a range of more than one grain would be split now (threads > 1, not nested).
bool parallel_available() noexcept;

/// A non-owning reference to a callable void(int64 begin, int64 end).
class RangeFn {
 public:
  template <typename F>
  requires(!std::is_same_v<std::remove_cv_t<F>, RangeFn>)  // copies stay copies
      RangeFn(F& f)  // NOLINT: implicit, built from the caller's lambda
      : object_(&f),
        call_([](void* o, std::int64_t b, std::int64_t e) { (*static_cast<F*>(o))(b, e); }) {}
  void operator()(std::int64_t b, std::int64_t e) const { call_(object_, b, e); }

 private:
  void* object_;
  void (*call_)(void*, std::int64_t, std::int64_t);
};

/// Runs f over [begin, end) in chunks on the pool (Note [Intra-op parallelism]); rethrows the
/// first exception a chunk threw, after every chunk finished.
void run_parallel(std::int64_t begin, std::int64_t end, std::int64_t grain, std::int64_t align,
                  RangeFn f);

/// Runs f(b, e) over pieces of [begin, end) (Note [Intra-op parallelism]). Every piece but the
/// last starts and ends a multiple of `align` after begin: a vectorised kernel whose scalar tail
/// rounds differently from its SIMD body (xsimd's exp) then treats every element as on one thread.
template <typename F>
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, F&& f,
                  std::int64_t align = 1) {
  if (end - begin <= grain || !parallel_available()) {
    if (begin < end) f(begin, end);
    return;
  }
  run_parallel(begin, end, grain, align, RangeFn(f));
}

/// The align for float kernels vectorised by xsimd: 16 floats, one AVX-512 register.
constexpr std::int64_t kSimdAlign = 16;

}  // namespace minigrad::detail
