#!/usr/bin/env bash
# Builds minigrad and runs the main example, learn_projections (it writes learn_projections.png here).
# Usage: scripts/run_example.sh [example-name [flags...]], e.g. scripts/run_example.sh warm_jacket
# or scripts/run_example.sh char_gpt (installs Debian's fortunes package as root, else prints the line)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${MINIGRAD_BUILD_PACKAGES[@]}"
example="${1:-learn_projections}"
shift || true
# char_gpt trains on the text of Debian's fortunes package.
if [ "$example" = char_gpt ]; then ensure_packages "${MINIGRAD_DATA_PACKAGES[@]}"; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMINIGRAD_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target "$example"
bin="./build/examples/$example"
[ -f "$bin" ] || bin="./build/examples/$example/$example"  # examples in their own dir (tiny_lm)
echo "== $bin"
"$bin" "$@"
