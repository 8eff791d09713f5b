#pragma once
// Private: the thread-local caching allocator behind Storage buffers and the small objects every
// op creates (TensorImpl, Storage, graph nodes, the engine's maps).
//
// Note [Caching allocator]
// A small training step creates and frees a few hundred tensors and nodes; through malloc that was
// much of its time (aligned_alloc is glibc's slowest path, and glibc's per-thread tcache holds
// only 7 blocks per size, so a step's burst of frees falls through to _int_free). Instead, blocks
// of up to kMaxCachedBlock bytes are rounded up to a size class (multiples of 64 bytes up to 1 KiB,
// then powers of two) and a freed block is pushed onto its class's free list in the *freeing*
// thread's cache, to be handed out again by the next allocation of that class on that thread.
// Above 1 MiB the classes are four per power of two (1.25, 1.5, 1.75, 2 MiB, 2.5, ...: at most 25%
// unused) up to kMaxCachedBlock (256 MiB): a medium or large training step frees and re-creates
// activations of several MiB each (and GPT-2 small's step 500 MB of gradients, the largest, the
// token embedding's, 154 MB), and handing the same pages back saves the page faults that a
// fresh mmap or a trimmed heap costs on every step (docs/performance.md). Every block comes from
// std::aligned_alloc(64, class size), so a block allocated on one thread and freed on another is
// simply cached (or freed) by the second: no cross-thread bookkeeping. Each thread caches at most
// kMaxCachedBytes (1 GiB, which holds GPT-2 small's gradients and activations at batch 4 x 64;
// with 256 MiB a 3-step run page-faulted 1.35 million times, with 1 GiB 0.70 million: the figures
// are in docs/performance.md's git history); beyond that, and for
// larger blocks, free() is called. So a process may keep up to 1 GiB per thread that used minigrad
// resident after its tensors are gone, as PyTorch's CUDA caching allocator keeps GPU memory. A
// thread's cache is released when the thread exits; frees after that (static tensors destroyed at
// exit) go straight to free(). Under AddressSanitizer (gcc's __SANITIZE_ADDRESS__, clang's
// __has_feature(address_sanitizer)) nothing is cached: every block is a separate
// aligned_alloc/free, so a use after free is still reported at the faulty access.
#include <cstddef>
#include <new>

namespace minigrad::detail {

inline constexpr std::size_t kMaxCachedBlock = std::size_t{256} << 20;  // 256 MiB
inline constexpr std::size_t kMaxCachedBytes = std::size_t{1} << 30;    // 1 GiB per thread

/// A 64-byte aligned block of at least nbytes, or nullptr when the system is out of memory.
void* cached_alloc(std::size_t nbytes) noexcept;
/// Returns a block from cached_alloc(nbytes) (the same nbytes); p may be null.
void cached_free(void* p, std::size_t nbytes) noexcept;
/// Bytes held in this thread's cache; 0 when caching is compiled out.
std::size_t cached_bytes() noexcept;
/// Frees every block in this thread's cache.
void release_cached_blocks() noexcept;
/// False under AddressSanitizer.
bool caching_enabled() noexcept;

// Note [Out of memory]
// Running out of memory is a minigrad::Error like any other (issue 36: a 1e7-node graph built
// under a memory cap ended in std::bad_alloc): a Storage, a TensorImpl or a graph node that
// cannot be allocated throws "[alloc] out of memory: could not allocate N bytes, with K autograd
// graph nodes alive (...)", and recording a node (detail::record) turns the std::bad_alloc of its
// edge list into "[alloc] out of memory recording <op> for autograd, ...". The node count is
// there because the usual cause is a graph that is never freed (a loss summed across steps
// without backward). Before it gives up, cached_alloc returns the thread's cached blocks to the
// system and tries once more, as PyTorch's CUDA caching allocator frees its cache on a failed
// cudaMalloc. Building the message needs memory too, when there is none left (the first version
// of this test ended in std::bad_alloc thrown by the message's own string): a 1 MiB reserve,
// allocated at start-up, is freed just before the error is built, and taken again by the next
// allocation from the system that succeeds.

/// Throws "[alloc] out of memory: could not allocate nbytes bytes, ..." (Note [Out of memory]).
[[noreturn]] void throw_out_of_memory(std::size_t nbytes);
/// Throws "[alloc] out of memory recording op for autograd, ..." (Note [Out of memory]).
[[noreturn]] void throw_out_of_memory_recording(const char* op);

/// A std allocator over cached_alloc, for std::allocate_shared and containers.
/// Out of memory throws minigrad::Error (Note [Out of memory]), not std::bad_alloc.
template <typename T>
struct CachingAllocator {
  using value_type = T;
  CachingAllocator() noexcept = default;
  template <typename U>
  CachingAllocator(const CachingAllocator<U>&) noexcept {}  // NOLINT: implicit by design
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= 64, "CachingAllocator aligns to 64 bytes");
    if (n > static_cast<std::size_t>(-1) / sizeof(T))
      throw_out_of_memory(static_cast<std::size_t>(-1));
    void* p = cached_alloc(n * sizeof(T));
    if (p == nullptr) throw_out_of_memory(n * sizeof(T));
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept { cached_free(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const CachingAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace minigrad::detail
