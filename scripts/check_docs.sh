#!/usr/bin/env bash
# Checks that the docs and the code comments tell the truth (scripts/check_docs.py: Notes, file
# paths and section links that must exist, `///` lines in the ops family headers
# (minigrad/ops/*.h), every ```cpp block marked
# `program` or `fragment`), then compiles every `cpp program` block of README.md and docs/*.md
# against the INSTALLED package with the flags `pkg-config --cflags --libs minigrad` gives, runs
# it, and compares its output with the ```output block that follows it in the doc, if any.
# tests/consumer/main.cpp is built the same way (the pkg-config consumer check). The op-table
# figures the docs quote (errors.md, pytorch_parity.md) are compared with what
# build/tests/minigrad_tests prints (OpTable.CoversEveryDifferentiableOp), when it is built.
#   scripts/check_docs.sh                 installs build/ into a temporary prefix first
#   scripts/check_docs.sh --prefix DIR    uses a package already installed in DIR
#   scripts/check_docs.sh --static        the citation checks only (no install, no compiler)
# Exits non-zero, naming file:line for each problem.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=""
static=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --static) static=1; shift ;;
    *) echo "usage: scripts/check_docs.sh [--prefix DIR | --static]" >&2; exit 2 ;;
  esac
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/blocks"
status=0
python3 scripts/check_docs.py --extract "$work/blocks" || status=1
[ "$static" -eq 1 ] && exit "$status"

tests_bin=build/tests/minigrad_tests
if [ -x "$tests_bin" ]; then
  figures="$("$tests_bin" --gtest_filter=OpTable.CoversEveryDifferentiableOp | grep -m1 '^gradchecked ' || true)"
  python3 scripts/check_docs.py --figures "$figures" || status=1
  echo "check_docs: op-table figures compared with $tests_bin: $figures"
else
  echo "check_docs: $tests_bin is not built: the op-table figures are not checked"
fi

if [ -z "$prefix" ]; then
  prefix="$work/prefix"
  cmake --install build --prefix "$prefix" >/dev/null
fi
pc="$(find "$prefix" -name minigrad.pc -path '*/pkgconfig/*' | head -n 1)"
if [ -z "$pc" ]; then
  echo "check_docs: no minigrad.pc under $prefix (was it installed by this version?)" >&2
  exit 1
fi
PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
read -r -a cflags <<<"$(pkg-config --cflags minigrad)"
read -r -a libs <<<"$(pkg-config --libs minigrad)"

# build_and_run NAME SOURCE EXPECTED [FLAGS...]: compiles SOURCE (in its own directory, with
# FLAGS), runs it there, and compares its standard output with EXPECTED unless that is "".
# A flag --pkg=NAME builds with `pkg-config NAME` (minigrad-viz, minigrad-distributed) instead of
# minigrad; a flag --run=WORDS,SEPARATED,BY,COMMAS runs the program as "WORDS ... ./prog" (an
# mpirun line: --run=mpirun,--allow-run-as-root,-np,2).
build_and_run() {
  local name="$1" src="$2" expected="$3" dir flag
  local -a pcflags=("${cflags[@]}") pclibs=("${libs[@]}") flags=() run=()
  shift 3
  for flag in "$@"; do
    case "$flag" in
      --pkg=*)
        read -r -a pcflags <<<"$(pkg-config --cflags "${flag#--pkg=}")"
        read -r -a pclibs <<<"$(pkg-config --libs "${flag#--pkg=}")"
        ;;
      --run=*)
        flag="${flag#--run=}"
        read -r -a run <<<"${flag//,/ }"
        ;;
      *) flags+=("$flag") ;;
    esac
  done
  dir="$(dirname "$src")"
  if ! (cd "$dir" && g++ "${pcflags[@]}" -O1 "${flags[@]}" -o prog "$(basename "$src")" \
    "${pclibs[@]}") \
    2>"$dir/cc.log"; then
    echo "$name: does not compile against the installed package:"
    head -n 20 "$dir/cc.log" | sed 's/^/    /'
    return 1
  fi
  # </dev/null: mpirun would read the rest of the block index from the loop's stdin.
  if ! (cd "$dir" && timeout 300 "${run[@]}" ./prog </dev/null >"$dir/out" 2>"$dir/err"); then
    echo "$name: the program fails when run:"
    tail -n 10 "$dir/err" | sed 's/^/    /'
    return 1
  fi
  if [ -n "$expected" ] && ! diff -u "$expected" "$dir/out" >"$dir/diff"; then
    echo "$name: prints something else than the doc quotes (- doc, + printed):"
    sed 's/^/    /' "$dir/diff"
    return 1
  fi
}

mkdir "$work/consumer"
cp tests/consumer/main.cpp "$work/consumer/"
build_and_run "tests/consumer/main.cpp (pkg-config consumer)" "$work/consumer/main.cpp" "" ||
  status=1
n=0
while read -r id where file flags; do
  expected=""
  [ -f "$work/blocks/$id.expected" ] && expected="$work/blocks/$id.expected"
  # shellcheck disable=SC2086  # flags: words from the block's info string
  build_and_run "$where (program block)" "$work/blocks/$id/$file" "$expected" $flags || status=1
  n=$((n + 1))
done <"$work/blocks/index"
echo "check_docs: $n program blocks compiled against $prefix with pkg-config minigrad and run"
[ "$status" -eq 0 ] && echo "check_docs: ok"
exit "$status"
