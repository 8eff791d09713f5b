#pragma once
// The engine's observer (minigrad/backward_steps.h): called for every node the engine runs on
// this thread while one is installed, with the gradients the node received and the ones it
// passed to each input (after the engine's broadcast reduction; undefined where an input needs
// none). Off, the engine pays one thread-local load per node.
#include <functional>
#include <vector>

#include "minigrad/autograd.h"

namespace minigrad::detail {

using BackwardObserver = std::function<void(const Node& node, const std::vector<Tensor>& received,
                                            const std::vector<Tensor>& passed)>;

/// Installs observer for this thread's backward passes while alive (null: none).
class BackwardObserverGuard {
 public:
  explicit BackwardObserverGuard(BackwardObserver* observer);
  ~BackwardObserverGuard();
  BackwardObserverGuard(const BackwardObserverGuard&) = delete;
  BackwardObserverGuard& operator=(const BackwardObserverGuard&) = delete;

 private:
  BackwardObserver* previous_;
};

}  // namespace minigrad::detail
