#!/usr/bin/env bash
# Builds minigrad and runs the main example. Usage: scripts/run_example.sh [example-name]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${MINIGRAD_BUILD_PACKAGES[@]}"
example="${1:-warm_jacket}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMINIGRAD_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target "$example"
echo "== ./build/examples/$example"
"./build/examples/$example"
