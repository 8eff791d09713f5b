#pragma once
// Forward hooks of nn::Module, as PyTorch's register_forward_pre_hook / register_forward_hook:
// the handle they return (PyTorch's RemovableHandle) and the list that holds them.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad::nn {

class Module;

/// What a forward pre-hook receives and may return: the Tensor arguments given to the call, in
/// order (Note [Forward hooks]).
using ForwardPreHook =
    std::function<std::optional<std::vector<Tensor>>(Module&, const std::vector<Tensor>&)>;
/// What a forward hook receives and may return: the call's Tensor arguments (after the
/// pre-hooks) and its outputs (one Tensor, or the elements of a pair, tuple or vector of them).
using ForwardHook = std::function<std::optional<std::vector<Tensor>>(
    Module&, const std::vector<Tensor>&, const std::vector<Tensor>&)>;

/// Removes the hook it was returned for, as PyTorch's torch.utils.hooks.RemovableHandle:
/// `auto h = fc->register_forward_hook(...); ...; h.remove();`. Removing twice, or after the
/// module is gone, does nothing. Copies remove the same hook. Dropping the handle keeps the hook.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  RemovableHandle(std::size_t id, std::function<void()> remover)
      : id_(id), remover_(std::move(remover)) {}
  /// Removes the hook (PyTorch's remove()).
  void remove() {
    if (!remover_) return;
    auto remover = std::move(remover_);
    remover_ = nullptr;
    remover();
  }
  /// The hook's number, unique in the process (PyTorch's handle.id).
  std::size_t id() const noexcept { return id_; }

 private:
  std::size_t id_ = 0;
  std::function<void()> remover_;
};

namespace hook_detail {
/// A new hook number (PyTorch's RemovableHandle.next_id, process-wide).
std::size_t next_hook_id();
}  // namespace hook_detail

/// Hooks in registration order, each removable through the handle add() returns (which holds
/// no reference to the list: a handle may outlive it).
template <typename Fn>
class HookList {
 public:
  HookList() = default;
  /// A copy is empty: a module copied by its copy constructor (clone(), Note [Cloning]) starts
  /// without hooks, as clone() promises, and never shares the original's list.
  HookList(const HookList& /*other*/) {}
  HookList& operator=(const HookList& /*other*/) { return *this; }
  RemovableHandle add(Fn fn) {
    if (!entries_) entries_ = std::make_shared<Entries>();
    const std::size_t id = hook_detail::next_hook_id();
    entries_->emplace_back(id, std::move(fn));
    std::weak_ptr<Entries> weak = entries_;
    return RemovableHandle(id, [weak, id] {
      if (auto entries = weak.lock())
        std::erase_if(*entries, [id](const auto& e) { return e.first == id; });
    });
  }
  bool empty() const noexcept { return !entries_ || entries_->empty(); }
  std::size_t size() const noexcept { return entries_ ? entries_->size() : 0; }
  /// The hooks as they are now: a hook that removes itself or adds another while the list is
  /// being run changes the next call, not this one (PyTorch iterates over a copy too).
  std::vector<Fn> snapshot() const {
    std::vector<Fn> out;
    if (entries_)
      for (const auto& e : *entries_) out.push_back(e.second);
    return out;
  }

 private:
  using Entries = std::vector<std::pair<std::size_t, Fn>>;
  std::shared_ptr<Entries> entries_;
};

}  // namespace minigrad::nn
