// The thread-local caching allocator (Note [Caching allocator] in alloc.h).
#include "alloc.h"

#include "live_count.h"
#include "minigrad/error.h"

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#define MINIGRAD_ALLOC_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MINIGRAD_ALLOC_CACHE 0
#endif
#endif
#ifndef MINIGRAD_ALLOC_CACHE
#define MINIGRAD_ALLOC_CACHE 1
#endif

namespace minigrad::detail {
namespace {

constexpr std::size_t kSmallStep = 64;
constexpr std::size_t kSmallMax = 1024;
constexpr std::size_t kSmallClasses = kSmallMax / kSmallStep;  // 64, 128, ..., 1024
constexpr int kSmallMaxLog = std::countr_zero(kSmallMax);
constexpr int kPow2MaxLog = 20;  // then powers of two: 2 KiB, 4 KiB, ..., 1 MiB
constexpr std::size_t kPow2Classes = kPow2MaxLog - kSmallMaxLog;
// Then four classes per power of two (at most 25% unused): 1.25 MiB, 1.5, 1.75, 2, 2.5, ...,
// up to kMaxCachedBlock.
constexpr int kMaxLog = std::countr_zero(kMaxCachedBlock);
constexpr std::size_t kClasses = kSmallClasses + kPow2Classes + 4 * (kMaxLog - kPow2MaxLog);

/// The size class of a block of n bytes (0 < n <= kMaxCachedBlock).
inline std::size_t class_of(std::size_t n) {
  if (n <= kSmallMax) return (n - 1) / kSmallStep;
  const int p = std::bit_width(n - 1);  // 2^(p-1) < n <= 2^p
  if (p <= kPow2MaxLog) return kSmallClasses - 1 + static_cast<std::size_t>(p - kSmallMaxLog);
  const std::size_t quarter = std::size_t{1} << (p - 3);  // n is 5..8 quarters of 2^(p-1)
  const std::size_t quarters = (n + quarter - 1) / quarter;
  return kSmallClasses + kPow2Classes + 4 * static_cast<std::size_t>(p - 1 - kPow2MaxLog) +
         (quarters - 5);
}

inline std::size_t class_size(std::size_t c) {
  if (c < kSmallClasses) return (c + 1) * kSmallStep;
  if (c < kSmallClasses + kPow2Classes) return kSmallMax << (c - kSmallClasses + 1);
  const std::size_t l = c - kSmallClasses - kPow2Classes;
  const std::size_t quarter = std::size_t{1} << (kPow2MaxLog - 2 + l / 4);
  return (l % 4 + 5) * quarter;
}

/// Rounds up to a multiple of 64, as aligned_alloc requires.
inline std::size_t round64(std::size_t n) { return (n + 63) / 64 * 64; }

// The memory an out-of-memory error needs to build its message and unwind (Note [Out of
// memory]): given back when the error is thrown, taken again by the next allocation that succeeds.
constexpr std::size_t kReserveBytes = std::size_t{1} << 20;
std::atomic<void*> reserve{std::malloc(kReserveBytes)};

void spend_reserve() noexcept { std::free(reserve.exchange(nullptr)); }

void* system_alloc(std::size_t bytes) noexcept {
  void* p = std::aligned_alloc(64, bytes);
  if (p != nullptr && reserve.load(std::memory_order_relaxed) == nullptr) {
    void* fresh = std::malloc(kReserveBytes);
    void* none = nullptr;
    if (!reserve.compare_exchange_strong(none, fresh)) std::free(fresh);
  }
  return p;
}

#if MINIGRAD_ALLOC_CACHE
struct FreeBlock {
  FreeBlock* next;
};

// Trivially destructible and constant-initialised: usable at any time, including after the
// thread's destructors ran (then `closed` routes everything to the system allocator).
/// One size class's free list, with (Note [Trimming idle blocks]) the blocks on it and the fewest
/// there have been since the last trim: the blocks below that mark were not asked for in the
/// whole interval. One 16-byte entry, so an allocation touches one cache line.
struct ClassList {
  FreeBlock* head;
  std::uint32_t count;
  std::uint32_t low;
};
struct Cache {
  ClassList lists[kClasses];
  std::uint32_t frees;
  std::size_t bytes;
  bool closed;
  bool registered;
};
thread_local Cache cache{};

void flush(Cache& c) noexcept {
  for (std::size_t i = 0; i < kClasses; ++i) {
    FreeBlock* b = c.lists[i].head;
    while (b != nullptr) {
      FreeBlock* next = b->next;
      std::free(b);
      b = next;
    }
    c.lists[i] = ClassList{};
  }
  c.bytes = 0;
}

// Note [Trimming idle blocks]
// A thread that frees more blocks of a class than it allocates would fill its cache with blocks
// it never asks for again: the training thread frees every batch a DataLoader worker allocated
// (572 MB after 100,000 steps of a small MLP with two workers). So every kTrimInterval frees into
// its cache a thread returns to the system, per class, the blocks that sat in its cache through
// the whole interval (the class's low-water mark), as tcmalloc's and Go's scavengers do. The
// interval (tens of tiny_lm steps, several GPT-2 steps) spans whole training steps, so a block a
// step reuses is never below the mark: steady workloads keep their cache, and a surplus is
// returned within two intervals. The cost is two integer updates per allocation and per free.
constexpr std::uint32_t kTrimInterval = 1u << 16;

void trim(Cache& c) noexcept {
  for (std::size_t i = 0; i < kClasses; ++i) {
    const std::size_t size = class_size(i);
    ClassList& list = c.lists[i];
    for (std::uint32_t n = list.low; n > 0 && list.head != nullptr; --n) {
      FreeBlock* b = list.head;
      list.head = b->next;
      std::free(b);
      --list.count;
      c.bytes -= size;
    }
    list.low = list.count;
  }
  c.frees = 0;
}

struct CacheCloser {
  ~CacheCloser() {
    flush(cache);
    cache.closed = true;
  }
};

/// Registers the thread-exit flush the first time this thread caches a block.
void register_closer() {
  static thread_local CacheCloser closer;
  (void)closer;
  cache.registered = true;
}
#endif

}  // namespace

void* cached_alloc(std::size_t nbytes) noexcept {
#if MINIGRAD_ALLOC_CACHE
  if (nbytes <= kMaxCachedBlock) {
    std::size_t c = class_of(nbytes == 0 ? 1 : nbytes);
    Cache& tc = cache;
    ClassList& list = tc.lists[c];
    if (FreeBlock* b = list.head) {
      list.head = b->next;
      tc.bytes -= class_size(c);
      if (--list.count < list.low) list.low = list.count;
      return b;
    }
    if (void* p = system_alloc(class_size(c))) return p;
    // Out of memory: give this thread's cached blocks back and try once more (Note [Out of
    // memory]).
    flush(tc);
    return system_alloc(class_size(c));
  }
  if (void* p = system_alloc(round64(nbytes == 0 ? 1 : nbytes))) return p;
  flush(cache);
#endif
  return system_alloc(round64(nbytes == 0 ? 1 : nbytes));
}

void throw_out_of_memory(std::size_t nbytes) {
  spend_reserve();
  MG_ERROR("alloc", "out of memory: could not allocate ", nbytes, " bytes, with ",
           live_total(LiveKind::kNode),
           " autograd graph nodes alive (a graph kept across steps grows until memory runs out: "
           "call backward() on it, detach() what you keep, or build it under NoGradGuard)");
}

void throw_out_of_memory_recording(const char* op) {
  spend_reserve();
  MG_ERROR("alloc", "out of memory recording ", op, " for autograd, with ",
           live_total(LiveKind::kNode),
           " autograd graph nodes alive (a graph kept across steps grows until memory runs out: "
           "call backward() on it, detach() what you keep, or build it under NoGradGuard)");
}

void cached_free(void* p, std::size_t nbytes) noexcept {
  if (p == nullptr) return;
#if MINIGRAD_ALLOC_CACHE
  if (nbytes <= kMaxCachedBlock) {
    std::size_t c = class_of(nbytes == 0 ? 1 : nbytes);
    std::size_t size = class_size(c);
    Cache& tc = cache;
    if (!tc.closed && tc.bytes + size <= kMaxCachedBytes) {
      if (!tc.registered) register_closer();
      auto* b = static_cast<FreeBlock*>(p);
      ClassList& list = tc.lists[c];
      b->next = list.head;
      list.head = b;
      ++list.count;
      tc.bytes += size;
      if (++tc.frees >= kTrimInterval) trim(tc);
      return;
    }
  }
#else
  (void)nbytes;
#endif
  std::free(p);
}

std::size_t cached_bytes() noexcept {
#if MINIGRAD_ALLOC_CACHE
  return cache.bytes;
#else
  return 0;
#endif
}

void release_cached_blocks() noexcept {
#if MINIGRAD_ALLOC_CACHE
  flush(cache);
#endif
}

bool caching_enabled() noexcept { return MINIGRAD_ALLOC_CACHE != 0; }

}  // namespace minigrad::detail
