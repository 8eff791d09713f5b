// Per-thread live-object counts (Note [Live counts], live_count.h).
#include "live_count.h"

#include <new>

namespace minigrad::detail {
namespace {
std::atomic<LiveSlot*> heads[2] = {nullptr, nullptr};
}

LiveSlot* new_live_slot(LiveKind kind) noexcept {
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
  std::int64_t total = 0;
  for (LiveSlot* s = heads[static_cast<int>(kind)].load(std::memory_order_acquire); s != nullptr;
       s = s->next)
    total += s->count.load(std::memory_order_relaxed);
  return total;
}

}  // namespace minigrad::detail
