#!/bin/sh
# ctest's pytorch_parity: minigrad against real PyTorch (/usr/bin/python3 with python3-torch).
#   run_parity.sh PARITY_DUMP EXAMPLES_DIR|'' WORK_DIR
#   1. every op-table sample, float64 and float32: parity_dump | compare.py
#   2. learn_projections' losses, seeds 0..9, sgd and adam: learn_projections_torch.py --check
#   3. batched_qkv's output, character for character: batched_qkv_torch.py
# Exits 77 (registered as SKIP_RETURN_CODE, so ctest reports "Skipped", never "Passed") when
# /usr/bin/python3 cannot import torch, or when the op table passed but the examples were not
# built (2 and 3 could not run); 1 when any comparison fails.
set -u
dump_bin=$1
examples=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3

if ! "$python" -c "import torch" >/dev/null 2>&1; then
  echo "SKIPPED: python3-torch not installed (apt-get install python3-torch)"
  exit 77
fi
mkdir -p "$work" || exit 1
status=0

echo "== op table: parity_dump | compare.py"
if "$dump_bin" "$work/op_table_dump.jsonl"; then
  "$python" "$here/compare.py" "$work/op_table_dump.jsonl" || status=1
else
  echo "FAIL: $dump_bin exited with status $?"
  status=1
fi

echo
if [ -n "$examples" ] && [ -x "$examples/learn_projections" ] &&
  [ -x "$examples/batched_qkv" ]; then
  echo "== training: learn_projections vs learn_projections_torch.py"
  "$python" "$here/learn_projections_torch.py" --check "$examples/learn_projections" \
    --seeds 0-9 || status=1

  echo
  echo "== batched_qkv vs batched_qkv_torch.py (the whole output, character for character)"
  "$examples/batched_qkv" >"$work/batched_qkv.txt" 2>&1
  "$python" "$here/batched_qkv_torch.py" >"$work/batched_qkv_torch.txt" 2>&1
  if cmp -s "$work/batched_qkv.txt" "$work/batched_qkv_torch.txt"; then
    sed 's/^/  /' "$work/batched_qkv.txt"
    echo "batched_qkv: identical to PyTorch's output"
  else
    echo "FAIL: batched_qkv differs from PyTorch (< minigrad, > PyTorch):"
    diff "$work/batched_qkv.txt" "$work/batched_qkv_torch.txt"
    status=1
  fi
else
  echo "NOT RUN: the examples are not built (configure with -DMINIGRAD_BUILD_EXAMPLES=ON)"
  [ "$status" -eq 0 ] && status=77
fi

echo
case $status in
  0) echo "pytorch_parity: passed" ;;
  77) echo "SKIPPED: the example comparisons could not run (the op table passed)" ;;
  *) echo "pytorch_parity: FAILED" ;;
esac
exit "$status"
