#!/usr/bin/env bash
# Builds the tests that run threads under ThreadSanitizer (build-tsan/, minigrad_thread_tests in
# tests/CMakeLists.txt) and runs them: the thread pool and the parallel kernels, the caching
# allocator, live counts, concurrent graphs, the profiler, DataLoader's workers (and a short
# training run with them), then DistributedDataParallel on 2 ranks (docs/architecture.md, threads).
# DeepGraph.*, Memory.TenThousand* and DeepModules.* are left out: under ThreadSanitizer's shadow
# memory the million-op chain needs tens of GB, and the 2,000-deep module tree passed 4 GB.
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
build-tsan/tests/minigrad_thread_tests --gtest_filter='-DeepGraph.*:Memory.TenThousand*:DeepModules.*' \
  --gtest_brief=1
# DistributedDataParallel on 2 ranks: its hooks run during backward and its buckets' transfers
# are pushed along from them (tests/distributed/test_ddp.cpp). Open MPI itself is not
# instrumented; tests/distributed/tsan.supp names the one report from inside it.
if grep -q '^MINIGRAD_BUILD_DISTRIBUTED:BOOL=ON' build-tsan/CMakeCache.txt; then
  cmake --build build-tsan -j"$(nproc)" --target minigrad_dist_ddp_tests
  TSAN_OPTIONS="$TSAN_OPTIONS suppressions=$PWD/tests/distributed/tsan.supp" \
    tests/distributed/mpirun.sh mpiexec -x TSAN_OPTIONS -np 2 \
    build-tsan/tests/distributed/minigrad_dist_ddp_tests --gtest_brief=1
fi
echo "ThreadSanitizer: no data race reported"
