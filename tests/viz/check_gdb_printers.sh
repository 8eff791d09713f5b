#!/usr/bin/env bash
# Runs gdb in batch mode on tests/viz/gdb_program.cpp with viz/gdb/minigrad_printers.py loaded and
# checks what `print` shows. Exit 77 (ctest: skipped) when gdb is missing.
#   check_gdb_printers.sh PROGRAM PRINTERS
set -euo pipefail
program="$1"
printers="$2"
if ! command -v gdb >/dev/null; then
  echo "SKIPPED: gdb is not installed (apt-get install gdb)"
  exit 77
fi
out="$(gdb -batch -nx -ex "source $printers" -ex "break stop_here" -ex run -ex up \
  -ex "print w" -ex "print y" -ex "print ids" -ex "print none" -ex "print model" \
  "$program" 2>&1)"
fail=0
for want in \
  '= Tensor(shape=(2, 3), dtype=float32, values=[1, 2, 3, 4, 5, 6], requires_grad=true)' \
  '= Tensor(shape=(2, 3), dtype=float32, values=[2, 4, 6, 8, 10, 12], grad_fn=MulBackward0)' \
  '= Tensor(shape=(8,), dtype=int64, values=[0, 1, 2, 3, 4, 5, ...])' \
  '= Tensor(undefined)' \
  '= Attention(parameters: W_q.weight (3, 3), W_k.weight (3, 3); children: W_q, W_k)'; do
  if ! grep -Fq -- "$want" <<<"$out"; then
    echo "FAIL: gdb did not print: $want"
    fail=1
  fi
done
if [ "$fail" -ne 0 ]; then
  echo "gdb printed:"
  echo "$out"
  exit 1
fi
echo "ok   gdb printers: Tensor (leaf, grad_fn, int64, undefined) and Module"
