#!/usr/bin/env bash
# char_gpt's command line: bad flags and missing data give a clear message and exit 2 (CLI11's
# own checks exit with its codes), never a crash; the same seed prints the same samples, another
# seed others; a checkpoint resumes, and one of another model is refused with the reason.
set -uo pipefail
bin="$(realpath "$1")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0
# A tiny model that runs in a second or two (also under the sanitizers).
tiny=(--steps 4 --warmup 1 --dim 16 --heads 2 --layers 1 --block 8 --batch 4 --eval-windows 4
  --eval-every 2 --samples 2 --length 40 --sample-every 0 --curve '' --attention '')

# expect_error WHAT PATTERN FLAGS...: exits 1..127 (no signal) and prints PATTERN.
expect_error() {
  local what="$1" pattern="$2"
  shift 2
  local out status
  out="$("$bin" "$@" 2>&1)"
  status=$?
  if [ "$status" -eq 0 ] || [ "$status" -ge 128 ] || ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL $what: exit $status, expected a message with '$pattern'; got: $(tail -n 3 <<<"$out")"
    fail=1
  else
    echo "ok   $what: exit $status: $(grep -F -m1 -- "$pattern" <<<"$out")"
  fi
}

if "$bin" --help | grep -q -- "--resume"; then echo "ok   --help"; else echo "FAIL --help"; fail=1; fi
expect_error "missing data" "apt-get install -y fortunes" --data "$work/no-such-dir" "${tiny[@]}"
mkdir empty
expect_error "a directory without fortunes" "apt-get install -y fortunes" --data empty "${tiny[@]}"
mkdir few
for i in $(seq 1 20); do printf 'Fortune number %d is a short one.\n%%\n' "$i"; done >few/mine
if out="$("$bin" --data few "${tiny[@]}")" && grep -q "note: only 1 fortune file in few" <<<"$out"; then
  echo "ok   a directory of one fortune file trains, with a note"
else
  echo "FAIL a directory of one fortune file: no note or no run"
  fail=1
fi
expect_error "a text shorter than the context" "shorter than the context" --data few "${tiny[@]}" \
  --block 1000
expect_error "--dim not divisible by --heads" "must be divisible by --heads" --dim 30 --heads 4
expect_error "warm-up as long as the run" "must be smaller than --steps" --steps 10 --warmup 10
expect_error "--min-lr above --lr" "--min-lr must not exceed --lr" --lr 1e-3 --min-lr 1e-2
expect_error "--top-k above the vocabulary" "--top-k" --top-k 98
expect_error "a negative temperature" "must be positive" --temperature -1
expect_error "--steps not a number" "'many' is not a number" --steps many
expect_error "an unknown flag" "--stpes" --stpes 5
expect_error "a prompt outside the vocabulary" "outside the vocabulary" --prompt $'caf\xc3\xa9'
expect_error "a missing checkpoint" "no-such.safetensors" --resume no-such.safetensors "${tiny[@]}"
expect_error "a picture that is not a .png" ".png" "${tiny[@]}" --curve curve.txt

samples() { "$bin" "${tiny[@]}" "$@" | sed -n '/^samples (/,$p'; }
a="$(samples --seed 3)"
b="$(samples --seed 3)"
c="$(samples --seed 4)"
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ]; then
  echo "ok   the same seed prints the same samples, another seed others"
else
  echo "FAIL sampling determinism: seed 3 gave"$'\n'"$a"$'\n'"then"$'\n'"$b"$'\n'"seed 4"$'\n'"$c"
  fail=1
fi

if "$bin" "${tiny[@]}" --save ck.safetensors >/dev/null &&
  out="$("$bin" "${tiny[@]}" --steps 6 --resume ck.safetensors)" &&
  grep -q "resumed from ck.safetensors at step 4" <<<"$out"; then
  echo "ok   --save, then --resume at step 4"
else
  echo "FAIL --save / --resume"
  fail=1
fi
expect_error "a checkpoint of another model" "made for the model" "${tiny[@]}" --dim 32 \
  --resume ck.safetensors

# --profile: 3 steps after a warm-up one (profiler::schedule(0, 1, 3)), added up: the table with
# its thread CPU column, and the Chrome trace with one loss backward (CrossEntropyBackward0) per
# step (counted in the trace: the table shows only the 25 rows of most self CPU, where that row's
# place depends on the machine).
if out="$("$bin" "${tiny[@]}" --profile trace.json --profile-steps 3)" &&
  grep -q "^3 training steps (2 to 4, after one warm-up step)" <<<"$out" &&
  grep -q "Self thr CPU" <<<"$out" &&
  grep -q '"traceEvents"' trace.json &&
  [ "$(grep -o '"name": *"CrossEntropyBackward0"' trace.json | wc -l)" = 3 ]; then
  echo "ok   --profile --profile-steps 3: 3 CrossEntropyBackward0 calls, a trace"
else
  echo "FAIL --profile --profile-steps 3:"$'\n'"$out"
  fail=1
fi
expect_error "--profile-steps 0" "--profile-steps" "${tiny[@]}" --profile trace.json \
  --profile-steps 0
exit "$fail"
