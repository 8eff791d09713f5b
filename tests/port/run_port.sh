#!/usr/bin/env bash
# Runs a build of port_program.cpp and compares what it prints with expected_libtorch.txt (printed
# by the libtorch build): the same words, and numbers equal to within 2e-4 (float32 sums may
# round the last printed digit differently on another CPU).
set -euo pipefail
program="$1"
expected="$(dirname "$0")/expected_libtorch.txt"
got="$("$program")"
echo "$got"
awk -v tol=2e-4 'NR == FNR { want[NR] = $0; n = NR; next }
  {
    m = split(want[FNR], a, /[ ,:]+/); k = split($0, b, /[ ,:]+/)
    if (m != k) { printf "line %d differs:\n  got:      %s\n  expected: %s\n", FNR, $0, want[FNR]; bad = 1; next }
    for (i = 1; i <= m; i++) {
      if (a[i] ~ /^-?[0-9.]+$/ && b[i] ~ /^-?[0-9.]+$/) {
        d = a[i] - b[i]; if (d < 0) d = -d
        if (d > tol) { printf "line %d: %s != %s (expected)\n", FNR, b[i], a[i]; bad = 1 }
      } else if (a[i] != b[i]) { printf "line %d: \"%s\" != \"%s\" (expected)\n", FNR, b[i], a[i]; bad = 1 }
    }
    lines = FNR
  }
  END { if (lines != n) { printf "%d lines, expected %d\n", lines, n; bad = 1 }; exit bad }' \
  "$expected" <(echo "$got")
echo "port: $(basename "$program") prints libtorch's numbers"
