#pragma once
// Private: process-wide counts of live objects (graph nodes, storages) without locked instructions.
//
// Note [Live counts]
// live_node_count() and live_storage_count() let tests check that memory is given back. Every
// node and storage changes a count when made and when freed, so a shared std::atomic would cost
// two locked read-modify-writes per object, which showed in the per-op profile. Instead each
// thread owns a slot and adds to it with a plain load and store (only the owner writes; the slot
// is atomic so that a reader on another thread is not a data race). total() sums all slots. A
// slot is never freed (an object made on one thread and freed on another leaves +1 in one slot and
// -1 in the other), but it is reused: when a thread ends, its slots go back to a free list with
// their counts, and the next new thread takes one over, so a server that starts a thread per
// request keeps as many slots as it ever ran threads at once. What a thread frees after its slots
// went back (its own thread_local destructors run late) goes to a shared slot, with a locked add.
#include <atomic>
#include <cstdint>

namespace minigrad::detail {

enum class LiveKind { kNode = 0, kStorage = 1 };

struct LiveSlot {
  std::atomic<std::int64_t> count{0};
  /// Owned by a running thread (false: on the free list, for the next new thread).
  std::atomic<bool> in_use{true};
  /// The slot of threads whose own slots already went back: updated with locked adds.
  bool shared = false;
  LiveSlot* next = nullptr;
};

/// This thread's slots (trivially destructible, so usable during the thread's own destructors).
inline thread_local LiveSlot* tls_live_slots[2] = {nullptr, nullptr};

/// A slot for this thread: a free one taken over, or a new one linked into the list of all slots.
LiveSlot* new_live_slot(LiveKind kind) noexcept;

inline void live_add(LiveKind kind, std::int64_t delta) noexcept {
  LiveSlot*& s = tls_live_slots[static_cast<int>(kind)];
  if (s == nullptr && (s = new_live_slot(kind)) == nullptr) return;  // out of memory: uncounted
  if (s->shared) {
    s->count.fetch_add(delta, std::memory_order_relaxed);
    return;
  }
  s->count.store(s->count.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

/// How many slots exist for `kind` (a test of "slots are reused").
std::int64_t live_slot_count(LiveKind kind) noexcept;

/// The sum over every thread's slot.
std::int64_t live_total(LiveKind kind) noexcept;

}  // namespace minigrad::detail
