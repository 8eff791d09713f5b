#pragma once
// Private: process-wide counts of live objects (graph nodes, storages) without locked instructions.
//
// Note [Live counts]
// live_node_count() and live_storage_count() let tests check that memory is given back. Every
// node and storage changes a count when made and when freed, so a shared std::atomic would cost
// two locked read-modify-writes per object, which showed in the per-op profile. Instead each
// thread owns a slot and adds to it with a plain load and store (only the owner writes; the slot
// is atomic so that a reader on another thread is not a data race). total() sums all slots. A
// slot is never freed: an object made on one thread and freed on another leaves +1 in one slot and
// -1 in the other, and a thread's slot keeps counting after the thread ends. One slot per thread
// per counter is the whole cost.
#include <atomic>
#include <cstdint>

namespace minigrad::detail {

enum class LiveKind { kNode = 0, kStorage = 1 };

struct LiveSlot {
  std::atomic<std::int64_t> count{0};
  LiveSlot* next = nullptr;
};

/// This thread's slot for `kind`, made and linked into the list of all slots on first use.
LiveSlot* new_live_slot(LiveKind kind) noexcept;

inline void live_add(LiveKind kind, std::int64_t delta) noexcept {
  // Trivially destructible, so usable during and after the thread's own destructors.
  static thread_local LiveSlot* slots[2] = {nullptr, nullptr};
  LiveSlot*& s = slots[static_cast<int>(kind)];
  if (s == nullptr && (s = new_live_slot(kind)) == nullptr) return;  // out of memory: uncounted
  s->count.store(s->count.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

/// The sum over every thread's slot.
std::int64_t live_total(LiveKind kind) noexcept;

}  // namespace minigrad::detail
