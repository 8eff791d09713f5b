#!/usr/bin/env bash
# Builds the benchmarks (Release, build-bench/) and prints the full table of issue 4: every
# workload in minigrad and libtorch in one process (bench/minigrad_bench), then whole-process
# figures for learn_projections and a training script against the same programs in libtorch: peak
# resident memory, wall time, binary and library size, compile time. The table includes the
# tiny_lm example's training step (tokens/s of each side); before it, `minigrad_bench --check`
# shows that the libtorch twin of the example's model computes the same losses. The table ends
# with issue 15's targets and their verdicts (workload, reference, ratio, target, met / not met),
# from the same interleaved runs: the tiny_lm step against libtorch on 1 thread, the 2-thread
# tiny_lm step against minigrad's own 1-thread step, the medium and large attention steps and
# softmax fwd+bwd against libtorch. Then the GPT-2
# rows (issue 15): GPT-2 small trained for 5 steps (medians of the last 4) in minigrad, libtorch and PyTorch eager from the
# same weights (bench/gpt2_compare.py: the losses must agree; the phases, ms/step, tokens/s, peak
# RSS and the issue's targets with verdicts), on 1 and 2 threads. --quick runs only a 1-step tiny
# config of them (a smoke test, as CI's minigrad_bench --quick; CI does not run this script).
#
#   scripts/bench.sh [--quick] [--filter TEXT] [--budget SECONDS]   (flags go to minigrad_bench)
#
# Threads: every minigrad_bench row sets its own count (openblas_set_num_threads and
# torch::set_num_threads); the whole-process runs use OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1.
# OPENBLAS_CORETYPE is left as the environment sets it, for both frameworks alike, and printed.
# MINIGRAD_BENCH_TORCH=OFF skips libtorch (minigrad only, no libtorch-dev needed).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
torch="${MINIGRAD_BENCH_TORCH:-ON}"
extra=(time)
[ "$torch" = ON ] && extra+=(libtorch-dev)
ensure_packages "${MINIGRAD_BUILD_PACKAGES[@]}" "${extra[@]}"

quick=0
for arg in "$@"; do [ "$arg" = --quick ] || [ "$arg" = --smoke ] && quick=1; done

build="build-bench"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMINIGRAD_BUILD_BENCH=ON \
  -DMINIGRAD_BENCH_TORCH="$torch" >/dev/null
targets=(minigrad_bench learn_projections train_script_minigrad gpt2_mg tiny_lm graph_memory)
# minigrad::distributed's rows (Open MPI, installed by deps.sh): the all-reduce and tiny_lm_ddp.
have_mpi=0
if grep -q '^MINIGRAD_BUILD_DISTRIBUTED:BOOL=ON' "$build/CMakeCache.txt"; then
  have_mpi=1
  targets+=(dist_allreduce_bench tiny_lm_ddp)
fi
have_torch=0
if [ "$torch" = ON ] && grep -q '^Torch_DIR:PATH=/' "$build/CMakeCache.txt"; then
  have_torch=1
  targets+=(learn_projections_torch train_script_torch gpt2_torch graph_memory_torch)
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

echo
echo "== machine"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores;" \
  "$(uname -sr); $(g++ --version | head -1)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}"

if [ "$have_torch" = 1 ]; then
  echo
  echo "== tiny_lm: the same computation in both frameworks (minigrad_bench --check)"
  "$build/bench/minigrad_bench" --check
fi

echo
echo "== per-workload times (medians per iteration; ratio = minigrad / reference, lower is better)"
"$build/bench/minigrad_bench" "$@"

# ---- threads on a busy machine (issue 15: the pool never makes a step slower than one thread) --
# The tiny_lm example's training (100 steps) on 1 and 2 threads while one other process keeps a
# core busy (`yes > /dev/null`), alternating, 3 runs each: the medians of the tokens/s it prints.
echo
echo "== threads on a busy machine: tiny_lm example, 1 vs 2 threads next to one busy process"
busy_reps=3 busy_steps=100
[ "$quick" = 1 ] && busy_reps=1 busy_steps=5
yes >/dev/null &
busy_pid=$!
trap 'kill "$busy_pid" 2>/dev/null || true' EXIT
: >"$build/busy_1"
: >"$build/busy_2"
for ((i = 0; i < busy_reps; ++i)); do
  for t in 1 2; do
    MINIGRAD_NUM_THREADS=$t "$build/examples/tiny_lm/tiny_lm" --steps "$busy_steps" --curve '' \
      --attention '' --samples 0 | grep -oE '[0-9]+ tokens/s' | cut -d' ' -f1 >>"$build/busy_$t"
  done
done
kill "$busy_pid"
trap - EXIT
middle() { sort -g "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
awk -v one="$(middle "$build/busy_1")" -v two="$(middle "$build/busy_2")" -v n="$busy_reps" \
  -v runs="$(paste -sd' ' "$build/busy_1") / $(paste -sd' ' "$build/busy_2")" 'BEGIN {
    printf "tokens/s, medians of %d: 1 thread %d, 2 threads %d (runs: %s)\n", n, one, two, runs
    r = one / two
    printf "2-thread step / 1-thread step: %.2f  target <= 1.00 %s\n", r, (r <= 1.0) ? "met" : "MISS"
  }'

# ---- GPT-2 small (issue 15): minigrad, libtorch and PyTorch eager from the same weights ----
# bench/gpt2_compare.py writes the weights and tokens into $build/gpt2 (~500 MB) the first time,
# runs the three programs one after the other, and exits 1 when their losses differ.
echo
if [ "$quick" = 1 ]; then
  echo "== GPT-2 rows: --quick runs a 1-step tiny config only (2 layers, d 64; times mean nothing)"
  bench/gpt2_compare.py --build "$build" --tiny --steps 1 --threads 1
else
  for threads in 1 2; do
    echo "== GPT-2 small (124M, B=4, T=64, AdamW), 5 steps, $threads thread(s)"
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    bench/gpt2_compare.py --build "$build" --steps 5 --threads "$threads"
  done
fi

# ---- whole-process figures ----
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
reps=5
[ "$quick" = 1 ] && reps=1
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# median of the numbers on stdin
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# run_stats CMD...: runs CMD $reps times under /usr/bin/time (peak RSS), then $reps times under
# bash's `time` (wall time in ms: /usr/bin/time's %e has 10 ms steps, and learn_projections ran in
# less, printing 0.00 s; timing /usr/bin/time itself would add its own start-up); prints
# "median-max-RSS-KiB median-wall-milliseconds". The wall time includes the process's start-up.
run_stats() {
  local i TIMEFORMAT=%3R
  : >"$tmp/rss"
  : >"$tmp/wall"
  for ((i = 0; i < reps; ++i)); do
    /usr/bin/time -f '%M' -o "$tmp/time" "$@" >/dev/null
    cat "$tmp/time" >>"$tmp/rss"
  done
  for ((i = 0; i < reps; ++i)); do
    { time "$@" >/dev/null 2>&1; } 2>>"$tmp/seconds"
  done
  awk '{printf "%.1f\n", $1 * 1000}' "$tmp/seconds" >"$tmp/wall"
  rm -f "$tmp/seconds"
  echo "$(median <"$tmp/rss") $(median <"$tmp/wall")"
}

# lib_bytes BINARY: total size of the shared libraries the binary loads (ldd, symlinks resolved).
lib_bytes() {
  ldd "$1" | awk '/=> \// {print $3}' | xargs -r readlink -f | sort -u | xargs -r stat -L -c %s |
    awk '{s += $1} END {print s + 0}'
}

row() {  # row NAME MINIGRAD LIBTORCH UNIT TARGET(or -)
  awk -v n="$1" -v a="$2" -v b="$3" -v u="$4" -v t="$5" 'BEGIN {
    r = (b > 0) ? sprintf("%.3f", a / b) : "-";
    v = (t == "-" || b <= 0) ? "-" : sprintf("<=%.2f %s", t, (a / b <= t) ? "met" : "MISS");
    printf "%-48s %12s %12s %7s  %s\n", n, a " " u, (b > 0 ? b " " u : "-"), r, v }'
}

echo
echo "== whole process (OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1; medians of $reps runs)"
printf "%-48s %12s %12s %7s  %s\n" "figure" "minigrad" "libtorch" "ratio" "target"
read -r mg_rss mg_wall < <(run_stats "$build/examples/learn_projections" --picture '')
tr_rss=0 tr_wall=0
if [ "$have_torch" = 1 ]; then
  read -r tr_rss tr_wall < <(run_stats "$build/bench/learn_projections_torch")
fi
row "learn_projections peak RSS" "$mg_rss" "$tr_rss" KiB 0.2
row "learn_projections wall time (start-up incl.)" "$mg_wall" "$tr_wall" ms -

size_of() { [ -e "$1" ] && stat -c %s "$1" || echo 0; }
for prog in learn_projections train_script; do
  if [ "$prog" = learn_projections ]; then
    mg_bin="$build/examples/learn_projections" tr_bin="$build/bench/learn_projections_torch"
  else
    mg_bin="$build/bench/train_script_minigrad" tr_bin="$build/bench/train_script_torch"
  fi
  tr_size=0 tr_libs=0
  if [ "$have_torch" = 1 ]; then tr_size=$(size_of "$tr_bin") tr_libs=$(lib_bytes "$tr_bin"); fi
  mg_size=$(size_of "$mg_bin") mg_libs=$(lib_bytes "$mg_bin")
  row "$prog binary" "$((mg_size / 1024))" "$((tr_size / 1024))" KiB -
  row "$prog shared libraries loaded (ldd)" "$((mg_libs / 1024))" "$((tr_libs / 1024))" KiB -
  row "$prog binary + libraries" "$(((mg_size + mg_libs) / 1024))" \
    "$(((tr_size + tr_libs) / 1024))" KiB -
done

# Compile (and link) the ~60-line training script with g++ -O2, as a user would from the
# command line; the minigrad side links the static libraries build-bench just built.
mg_compile=(g++ -O2 -std=c++20 -Icore/include -Inn/include -Ioptim/include
  bench/train_script_minigrad.cpp -o "$tmp/train_mg"
  "$build/optim/libminigrad_optim.a" "$build/nn/libminigrad_nn.a" "$build/core/libminigrad_core.a"
  -lopenblas -lpthread)
# The core library calls GCC's libbacktrace when the build found it (anomaly mode; CMake's
# package and minigrad.pc name it for a consumer, a command line must too).
if [ -f "$build/libbacktrace/backtrace.h" ]; then
  mg_compile+=("$(g++ -print-file-name=libbacktrace.a)")
fi
tr_compile=(g++ -O2 -std=c++20 -I/usr/include/torch/csrc/api/include -D_GLIBCXX_USE_CXX11_ABI=1
  bench/train_script_torch.cpp -o "$tmp/train_torch" -ltorch -ltorch_cpu -lc10)
creps=2
[ "$quick" = 1 ] && creps=1
: >"$tmp/cmg"
: >"$tmp/ctr"
for ((i = 0; i < creps; ++i)); do  # alternate, keep the fastest of each
  /usr/bin/time -f '%e %M' -o "$tmp/time" "${mg_compile[@]}" && cat "$tmp/time" >>"$tmp/cmg"
  if [ "$have_torch" = 1 ]; then
    /usr/bin/time -f '%e %M' -o "$tmp/time" "${tr_compile[@]}" && cat "$tmp/time" >>"$tmp/ctr"
  fi
done
read -r mg_ct mg_cm < <(sort -g "$tmp/cmg" | head -1)
tr_ct=0 tr_cm=0
[ -s "$tmp/ctr" ] && read -r tr_ct tr_cm < <(sort -g "$tmp/ctr" | head -1)
row "compile+link train script, g++ -O2 (best of $creps)" "$mg_ct" "$tr_ct" s 0.15
row "compiler peak memory for it" "$((mg_cm / 1024))" "$((tr_cm / 1024))" MiB -
"$tmp/train_mg" | tail -1 | sed 's/^/minigrad train script: /'
[ "$have_torch" = 1 ] && "$tmp/train_torch" | tail -1 | sed 's/^/libtorch train script: /'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# Issue 39 item 5: a long autograd chain (1M ops; 10,000 with --quick), each chain in a process
# of its own: heap held per op (mallinfo2, the same in any load) and CPU time to build it.
echo
echo "== long autograd graphs (bench/graph_memory, the same source against both)"
chain_ops=$([ "$quick" = 1 ] && echo 10000 || echo 1000000)
"$build/bench/graph_memory" "$chain_ops" >"$tmp/gm"
: >"$tmp/gt"
[ "$have_torch" = 1 ] && "$build/bench/graph_memory_torch" "$chain_ops" >"$tmp/gt"
cat "$tmp/gm" "$tmp/gt"
printf "%-48s %12s %12s %7s  %s\n" "figure" "minigrad" "libtorch" "ratio" "target"
# field: 4 = bytes per op held, 8 = build ns per op
chain_field() { awk -v c="$2" -v f="$3" '$2 == c { print $f; exit }' "$1"; }
for chain in mul tanh add mul_t; do
  row "$chain chain: bytes per op held" "$(chain_field "$tmp/gm" "$chain" 4)" \
    "$(chain_field "$tmp/gt" "$chain" 4 || true)" B 1.0
  row "$chain chain: build CPU per op" "$(chain_field "$tmp/gm" "$chain" 8)" \
    "$(chain_field "$tmp/gt" "$chain" 8 || true)" ns 0.8
done

if [ "$have_mpi" = 1 ]; then
  echo
  echo "== distributed (Open MPI, 1 thread per rank): all-reduce and tiny_lm data-parallel"
  mpirun=(tests/distributed/mpirun.sh mpiexec)
  "${mpirun[@]}" -np 2 "$build/bench/dist_allreduce_bench" "$([ "$quick" = 1 ] && echo 3 || echo 30)"
  steps=$([ "$quick" = 1 ] && echo 5 || echo 200)
  for np in 1 2; do
    "${mpirun[@]}" -np "$np" -x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS \
      "$build/examples/tiny_lm/tiny_lm_ddp" --steps "$steps" --threads 1 | tail -1 |
      sed "s/^/tiny_lm_ddp -np $np: /"
  done
fi
