#!/usr/bin/env bash
# The one-target-per-folder layering (docs/architecture.md, Build): nn and optim use core's public
# headers only, and optim does not depend on nn. Fails naming each offending line.
set -u
root="${1:-$(dirname "$0")/..}"
cd "$root" || exit 2
bad=0
report() { echo "layering: $1"; bad=1; }
# core's private headers (core/src/...) included from nn or optim
while IFS= read -r line; do report "private core header: $line"; done < <(
  grep -rnE '#include "(tensor_impl|alloc|parallel|live_count)\.h"|#include "(autograd|kernels|io|ops)/' \
    nn optim --include='*.h' --include='*.cpp')
# core/src on an include path
while IFS= read -r line; do report "core/src on an include path: $line"; done < <(
  grep -nE 'core/src' nn/CMakeLists.txt optim/CMakeLists.txt)
# optim reaching into nn
while IFS= read -r line; do report "optim depends on nn: $line"; done < <(
  grep -rnE 'minigrad/nn/|minigrad::nn|nn::' optim --include='*.h' --include='*.cpp' \
    --include=CMakeLists.txt)
[ "$bad" -eq 0 ] && echo "layering: nn and optim use core's public API only; optim does not use nn"
exit "$bad"
