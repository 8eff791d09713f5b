// Per-thread live-object counts (Note [Live counts], live_count.h).
#include "live_count.h"

#include <new>

namespace minigrad::detail {
namespace {
std::atomic<LiveSlot*> heads[2] = {nullptr, nullptr};

LiveSlot& shared_slot(LiveKind kind) {
  // Never destroyed: threads may count into it until the very end of the process.
  static LiveSlot* const shared = [] {
    auto* s = new LiveSlot[2];
    s[0].shared = s[1].shared = true;
    return s;
  }();
  return shared[static_cast<int>(kind)];
}

thread_local bool thread_exiting = false;  // trivially destructible: readable after the guard

/// Gives this thread's slots back when the thread ends.
struct SlotRelease {
  ~SlotRelease() {
    thread_exiting = true;
    for (int k = 0; k < 2; ++k) {
      if (LiveSlot* s = tls_live_slots[k]; s != nullptr && !s->shared) {
        tls_live_slots[k] = &shared_slot(static_cast<LiveKind>(k));
        s->in_use.store(false, std::memory_order_release);
      }
    }
  }
};
thread_local SlotRelease slot_release;

LiveSlot* take_free_slot(LiveKind kind) noexcept {
  for (LiveSlot* s = heads[static_cast<int>(kind)].load(std::memory_order_acquire); s != nullptr;
       s = s->next) {
    bool expected = false;
    if (s->in_use.compare_exchange_strong(expected, true, std::memory_order_acquire)) return s;
  }
  return nullptr;
}
}  // namespace

LiveSlot* new_live_slot(LiveKind kind) noexcept {
  if (thread_exiting) return &shared_slot(kind);
  (void)&slot_release;  // odr-use: the guard is constructed on this thread
  if (LiveSlot* s = take_free_slot(kind)) return s;
  auto* slot = new (std::nothrow) LiveSlot;
  if (slot == nullptr) return nullptr;
  std::atomic<LiveSlot*>& head = heads[static_cast<int>(kind)];
  slot->next = head.load(std::memory_order_relaxed);
  while (!head.compare_exchange_weak(slot->next, slot, std::memory_order_release,
                                     std::memory_order_relaxed)) {
  }
  return slot;
}

std::int64_t live_total(LiveKind kind) noexcept {
  std::int64_t total = shared_slot(kind).count.load(std::memory_order_relaxed);
  for (LiveSlot* s = heads[static_cast<int>(kind)].load(std::memory_order_acquire); s != nullptr;
       s = s->next)
    total += s->count.load(std::memory_order_relaxed);
  return total;
}

std::int64_t live_slot_count(LiveKind kind) noexcept {
  std::int64_t n = 0;
  for (LiveSlot* s = heads[static_cast<int>(kind)].load(std::memory_order_acquire); s != nullptr;
       s = s->next)
    ++n;
  return n;
}

}  // namespace minigrad::detail
