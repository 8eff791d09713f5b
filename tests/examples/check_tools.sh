#!/usr/bin/env bash
# Every example behaves like a tool: --help and -h print a usage text and exit 0; an option it does
# not know gives a clear message and a non-zero exit (no signal); a picture, trace or checkpoint it
# cannot write (a path in a missing directory) gives the reason and a non-zero exit; into a pipe
# it prints plain lines (no '\r'), on a terminal the progress line is redrawn; learn_projections'
# text heatmap has its labels over its columns.
# Usage: check_tools.sh BUILD/examples
set -uo pipefail
bin="$(realpath "$1")"
here="$(cd "$(dirname "$0")/.." && pwd)"
# Under the sanitizers: Graphviz's and Open MPI's allocations kept until exit are not minigrad's
# leaks (the suppressions of tests/viz and tests/distributed).
lsan() { echo "suppressions=$here/$1/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0"; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail=0
missing="$work/no-such-dir"
ok() { echo "ok   $*"; }
bad() {
  echo "FAIL $*"
  fail=1
}

# tiny runs of the language models (a second or two each)
tiny_lm=(--steps 2 --batch 2 --block 8 --layers 1 --heads 2 --dim 16 --phrases 200 --samples 1)
char_gpt=(--steps 2 --warmup 1 --dim 16 --heads 2 --layers 1 --block 8 --batch 4 --eval-windows 2
  --eval-every 1 --samples 1 --length 10 --sample-every 0 --curve '' --attention '')

programs=(warm_jacket train_attention hand_built_projections batched_qkv attention_backward
  attention_graph learn_projections emergent tiny_lm/tiny_lm tiny_lm/tiny_lm_ddp char_gpt/char_gpt)
for name in "${programs[@]}"; do
  program="$bin/$name"
  if [ ! -x "$program" ]; then
    [ "$name" = tiny_lm/tiny_lm_ddp ] && echo "skip $name (not built)" && continue
    bad "$name: not built"
    continue
  fi
  for flag in --help -h; do
    out="$("$program" "$flag" 2>&1)"
    status=$?
    if [ "$status" -eq 0 ] && grep -q "^Usage: " <<<"$out"; then
      ok "$name $flag: $(grep -m1 '^Usage: ' <<<"$out" | sed "s|$bin/||")"
    else
      bad "$name $flag: exit $status, no usage text; got: $(head -n 3 <<<"$out")"
    fi
  done
  out="$("$program" --no-such-option 2>&1 </dev/null)"
  status=$?
  if [ "$status" -ne 0 ] && [ "$status" -lt 128 ] && grep -q -- "--no-such-option" <<<"$out"; then
    ok "$name --no-such-option: exit $status: $(head -n 1 <<<"$out")"
  else
    bad "$name --no-such-option: exit $status; got: $(head -n 3 <<<"$out")"
  fi
done

# expect_unwritable NAME PATH ARGS...: the program cannot write PATH: exit 1..127 and PATH named.
expect_unwritable() {
  local name="$1" path="$2"
  shift 2
  local out status
  out="$("$bin/$name" "$@" 2>&1 </dev/null)"
  status=$?
  if [ "$status" -ne 0 ] && [ "$status" -lt 128 ] && grep -qF -- "$path" <<<"$out"; then
    ok "$name cannot write $(basename "$path"): exit $status: $(grep -F -m1 -- "$path" <<<"$out")"
  else
    bad "$name cannot write $path: exit $status; got: $(tail -n 3 <<<"$out")"
  fi
}
LSAN_OPTIONS="$(lsan viz)" expect_unwritable attention_graph "$missing/graph.png" \
  "$missing/graph.png"
expect_unwritable learn_projections "$missing/lp.png" --picture "$missing/lp.png"
expect_unwritable learn_projections "$missing/losses.txt" --picture '' --loss-log \
  "$missing/losses.txt"
expect_unwritable emergent "$missing/em.png" --steps 2 --picture "$missing/em.png"
expect_unwritable tiny_lm/tiny_lm "$missing/curve.png" "${tiny_lm[@]}" --attention '' \
  --curve "$missing/curve.png"
expect_unwritable tiny_lm/tiny_lm "$missing/att.png" "${tiny_lm[@]}" --curve '' \
  --attention "$missing/att.png"
expect_unwritable tiny_lm/tiny_lm "$missing/ck.safetensors" "${tiny_lm[@]}" --curve '' \
  --attention '' --save "$missing/ck.safetensors"
expect_unwritable tiny_lm/tiny_lm "$missing/trace.json" "${tiny_lm[@]}" --profile \
  "$missing/trace.json"
expect_unwritable char_gpt/char_gpt "$missing/curve.png" "${char_gpt[@]}" --curve \
  "$missing/curve.png"
expect_unwritable char_gpt/char_gpt "$missing/ck.safetensors" "${char_gpt[@]}" --save \
  "$missing/ck.safetensors"

if [ -x "$bin/tiny_lm/tiny_lm_ddp" ]; then  # one rank, started without mpirun
  LSAN_OPTIONS="$(lsan distributed)" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    expect_unwritable tiny_lm/tiny_lm_ddp "$missing/ddp.safetensors" --steps 2 --batch 2 --block 8 \
    --layers 1 --heads 2 --dim 16 --save "$missing/ddp.safetensors"
fi

# Into a pipe: plain lines. On a terminal (script(1) gives the program one): one redrawn line.
have_tty=0
if command -v script >/dev/null && script -qec true /dev/null </dev/null >/dev/null 2>&1; then
  have_tty=1
else
  echo "skip the terminal checks (script(1) cannot open a terminal here)"
fi
# check_lines NAME ARGS...: no '\r' into a pipe; on a terminal, a redrawn progress line.
check_lines() {
  local name="$1" out
  shift
  out="$("$bin/$name" "$@" 2>&1 </dev/null)"
  if [ -n "$out" ] && ! grep -q $'\r' <<<"$out"; then
    ok "$name into a pipe: no '\\r' in $(wc -l <<<"$out") lines"
  else
    bad "$name into a pipe: carriage returns or no output"
  fi
  [ "$have_tty" -eq 1 ] || return 0
  # A terminal ends lines with \r\n; a redrawn line is a \r with more text after it.
  out="$(script -qec "$(printf '%q ' "$bin/$name" "$@")" /dev/null </dev/null)"
  if grep -q $'\r.' <<<"$out"; then
    ok "$name on a terminal: the progress line is redrawn"
  else
    bad "$name on a terminal: no redrawn line"
  fi
}
check_lines learn_projections --picture ''
check_lines emergent --steps 20 --picture ''
check_lines tiny_lm/tiny_lm "${tiny_lm[@]}" --curve '' --attention ''

# learn_projections' text heatmap: every label stands over its column, in display columns.
out="$("$bin/learn_projections" --picture '')"
if python3 - "$out" <<'EOF'; then
import sys
lines = sys.argv[1].split("\n")
words = ["warm", "jacket", "for", "winter"]
# The heatmap's header: the words, over rows of shades (the tables above have numbers).
head = next(i for i, l in enumerate(lines[:-1])
            if l.split() == words and any(c in lines[i + 1] for c in "\u2591\u2592\u2593\u2588"))
header, rows = lines[head], lines[head + 1:head + 5]
starts = [header.index(w) for w in words]
cells = [8 + 8 * j for j in range(4)]  # a row: 8 columns of label, then 8 per cell
assert all(s == c + 1 for s, c in zip(starts, cells)), (starts, cells)
for row, word in zip(rows, words):
    assert row[:8].strip() == word and len(row) == 8 + 8 * 4, (row, len(row))
    for c in cells:  # a cell: a space, 6 columns of shade, a space
        assert row[c] == " " and row[c + 7] == " " and len(set(row[c + 1:c + 7])) == 1, row
EOF
  ok "learn_projections: the heatmap's labels stand over its columns"
else
  bad "learn_projections: the heatmap's labels and columns do not line up"
fi
exit "$fail"
