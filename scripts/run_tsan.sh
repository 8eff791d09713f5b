#!/usr/bin/env bash
# Builds the tests that run threads under ThreadSanitizer (build-tsan/, minigrad_thread_tests in
# tests/CMakeLists.txt) and runs them: the thread pool and the parallel kernels, the caching
# allocator, live counts, concurrent graphs, the profiler, DataLoader's workers
# (docs/architecture.md, threads).
# DeepGraph.* and Memory.TenThousand* are left out: ThreadSanitizer's shadow memory makes the
# million-op chain need tens of GB.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${MINIGRAD_BUILD_PACKAGES[@]}" libgtest-dev
# -O1 with line tables only, as in scripts/run_tests.sh's sanitizer build.
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMINIGRAD_BUILD_TESTS=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DMINIGRAD_BUILD_EXAMPLES=OFF -DMINIGRAD_WERROR="${MINIGRAD_WERROR:-OFF}" \
  -DMINIGRAD_SANITIZERS=thread >/dev/null
cmake --build build-tsan -j"$(nproc)" --target minigrad_thread_tests
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
build-tsan/tests/minigrad_thread_tests --gtest_filter='-DeepGraph.*:Memory.TenThousand*' \
  --gtest_brief=1
echo "ThreadSanitizer: no data race reported"
