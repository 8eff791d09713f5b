#!/usr/bin/env bash
# Builds minigrad with its tests and runs all of them.
# MINIGRAD_WERROR=ON treats warnings as errors (CI sets it);
# MINIGRAD_SANITIZERS="address;undefined" builds and runs under ASan+UBSan in build-asan/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${MINIGRAD_BUILD_PACKAGES[@]}" libgtest-dev
build=build
type=Release
if [ -n "${MINIGRAD_SANITIZERS:-}" ]; then build=build-asan; type=RelWithDebInfo; fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE="$type" -DMINIGRAD_BUILD_TESTS=ON \
  -DMINIGRAD_WERROR="${MINIGRAD_WERROR:-OFF}" -DMINIGRAD_SANITIZERS="${MINIGRAD_SANITIZERS:-}" >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build" && ctest --output-on-failure --verbose
