#!/usr/bin/env bash
# Builds minigrad with its tests and runs all of them, then prints one summary line: how many
# tests ran, passed, failed and were skipped, and why each skipped one was (its "SKIPPED:" line).
# MINIGRAD_WERROR=ON treats warnings as errors (CI sets it);
# MINIGRAD_SANITIZERS="address;undefined" builds and runs under ASan+UBSan in build-asan/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
# python3-torch: the reference of the pytorch_parity test, which is skipped without it;
# fortunes: the text char_gpt's test trains on.
ensure_packages "${MINIGRAD_BUILD_PACKAGES[@]}" "${MINIGRAD_DATA_PACKAGES[@]}" libgtest-dev python3-torch
build=build
type=Release
flags=()
# Under the sanitizers: -O1 with line tables only (-g1), as the sanitizers' own docs advise; -O2 -g
# builds took twice as long (docs/performance.md, CI's time).
if [ -n "${MINIGRAD_SANITIZERS:-}" ]; then
  build=build-asan
  type=RelWithDebInfo
  flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG")
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE="$type" -DMINIGRAD_BUILD_TESTS=ON "${flags[@]}" \
  -DMINIGRAD_WERROR="${MINIGRAD_WERROR:-OFF}" -DMINIGRAD_SANITIZERS="${MINIGRAD_SANITIZERS:-}" >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
# One job per core (the 2-rank MPI tests run alone: RUN_SERIAL in tests/distributed); every
# output line starts with its test's number.
ctest --output-on-failure --verbose -j"$(nproc)" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# Result lines look like "12/57 Test #12: pytorch_parity ......***Skipped   0.02 sec".
results="$(grep -E '^ *[0-9]+/[0-9]+ +Test +#[0-9]+: ' "$log" || true)"
count() { grep -cE "$1" <<<"$results" || true; }
ran=$(count '.')
passed=$(count ' Passed ')
skipped=$(count '\*\*\*Skipped|\(Disabled\)')
failed=$((ran - passed - skipped))
why=""
while read -r num name; do
  [ -n "$num" ] || continue
  reason="$(grep -m1 -E "^$num: .*SKIP" "$log" | sed -E "s/^$num: //" || true)"
  why+="; $name: ${reason:-no reason printed}"
done < <(grep -E '\*\*\*Skipped|\(Disabled\)' <<<"$results" |
  sed -E 's/.*Test +#([0-9]+): ([^ ]+) .*/\1 \2/')
echo "== $ran tests: $passed passed, $failed failed, $skipped skipped$why"
exit "$status"
