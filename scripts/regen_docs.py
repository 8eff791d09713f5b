#!/usr/bin/env python3
"""Regenerates the docs' pictures (docs/images) and the example output they quote, from the examples.

    scripts/regen_docs.py                 # redraw every picture, rewrite every marked block
    scripts/regen_docs.py --check         # redraw into a temporary directory and compare (CI)
    scripts/regen_docs.py --check --skip-long   # without char_gpt's full training run (3 min)
    scripts/regen_docs.py --only tiny_lm  # one run (the names below)
    --build DIR                           # the build with the examples (default build/)

Each RUN below is one command of an example, run in a temporary directory; it writes pictures
(copied to docs/images) and prints lines. A doc quotes those lines in a fenced block preceded by
the line `<!-- regen_docs: RUN -->`: the block holds some of the run's lines, in order. The
script rewrites each quoted line with the run's line of the same shape (the same words, its
numbers updated); a quoted line whose words the run no longer prints is an error to fix by hand.

--check compares instead of writing. Pictures: the same size, and at most a fraction of the
pixels different (tests/viz/png_compare: float sums that round differently on another CPU move
a few anti-aliased pixels, a stale picture moves many). Lines: the same words, and each number
equal to within the run's tolerance. Timing figures (tokens/s, steps/s, elapsed times) are never
compared. Tables of timings (profiles, benchmarks) are not generated here: their commands are in
the docs next to them, with the date they were taken.

Exit status: 0 when everything is current (or was regenerated), 1 when --check found a
difference or a quoted line no longer matches, 2 for a usage or build problem.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (command relative to the build directory, the docs pictures it draws (each written in its
# working directory under the picture's own file name), how it is compared: "exact" (the same on every CPU to the printed digits) or
# "trained" (a long training run: float sums rounded differently on another CPU drift a little),
# whether it is long (--skip-long leaves it out)).
CHAR_GPT_ONE_STEP = ["examples/char_gpt/char_gpt", "--steps", "2", "--warmup", "0", "--samples",
                     "0", "--sample-every", "0", "--curve", "", "--attention", "",
                     "--eval-windows", "8"]
RUNS = {
    "learn_projections": (["examples/learn_projections", "--picture", "learn_projections.png"],
                          ["docs/images/learn_projections.png"], "exact", False),
    "emergent": (["examples/emergent", "--picture",
                  "emergent_attention.png"], ["docs/images/emergent_attention.png"], "exact", False),
    "attention_graph": (["examples/attention_graph", "attention_graph.png"],
                        ["docs/images/attention_graph.png"], "exact", False),
    "char_gpt_block": (CHAR_GPT_ONE_STEP + ["--graph", "char_gpt_block.png"],
                       ["docs/images/char_gpt_block.png"], "exact", False),
    "char_gpt_model_graph": (CHAR_GPT_ONE_STEP + ["--layers", "2", "--model-graph",
                                                  "char_gpt_model_graph.png"],
                             ["docs/images/char_gpt_model_graph.png"], "exact", False),
    "tiny_lm_summary": (["examples/tiny_lm/tiny_lm", "--summary", "--steps", "1", "--samples", "0",
                         "--curve", "", "--attention", ""], [], "exact", False),
    # With its defaults: it writes tiny_lm_loss_curve.png and tiny_lm_attention.png.
    "tiny_lm": (["examples/tiny_lm/tiny_lm"],
                ["docs/images/tiny_lm_loss_curve.png", "docs/images/tiny_lm_attention.png"],
                "trained", False),
    "char_gpt": (["examples/char_gpt/char_gpt"],
                 ["docs/images/char_gpt_loss_curve.png", "docs/images/char_gpt_attention.png"],
                 "trained", True),
}
# How far a picture may move: the largest fraction of pixels that may differ (png_compare).
PIXELS = {"exact": 0.002, "trained": 0.02}
# How far a number may move: exact runs by one unit of the last printed digit; trained runs by
# 3% as well (a count of agreeing pairs in generated text, a loss at the 3rd decimal).
REL = {"exact": 0.0, "trained": 0.03}
# Timing figures, never compared.
TIMING = re.compile(r"\d+(?:[.,]\d+)* ?(tokens/s|tok/s|step/s|steps/s|ms|s\b)|tok/s=\d+|"
                    r"\[\d\d:\d\d(<\d\d:\d\d)?")
# Lines of generated text (samples), compared by shape only in trained runs: their words change
# with the model.
SAMPLE = re.compile(r"^ {2,}\S.*$")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
MARKER = re.compile(r"^<!-- regen_docs: (\S+) -->\s*$")


def shape(line):
    """The line with its timing figures and numbers masked: what must not change."""
    return NUMBER.sub("#", TIMING.sub("T", line)).rstrip()


def numbers_close(doc_line, new_line, kind):
    a = NUMBER.findall(TIMING.sub("T", doc_line))
    b = NUMBER.findall(TIMING.sub("T", new_line))
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        decimals = len(x.split(".")[1]) if "." in x and "e" not in x else 0
        tol = 1.01 * 10 ** -decimals + REL[kind] * abs(float(x))
        if abs(float(x) - float(y)) > tol:
            return False
    return True


def run(name, build, workdir):
    cmd, _, _, _ = RUNS[name]
    exe = os.path.join(build, cmd[0])
    if not os.access(exe, os.X_OK):
        sys.exit(f"regen_docs: {exe} is not built (cmake --build {build} --target "
                 f"{os.path.basename(cmd[0])})")
    start = time.time()
    p = subprocess.run([exe] + cmd[1:], cwd=workdir, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"regen_docs: {name} failed (exit {p.returncode}): "
                 f"{' '.join(cmd)}\n{p.stderr[-2000:]}")
    # Progress bars redraw with \r: keep the last state of each line.
    lines = [seg.split("\r")[-1] for seg in p.stdout.split("\n")]
    return lines, time.time() - start


def blocks(path):
    """(run name, first line index, end index) of each marked block of a doc."""
    lines = open(path).read().split("\n")
    found = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        if m.group(1) not in RUNS:
            sys.exit(f"regen_docs: {path}:{i + 1}: no run named {m.group(1)}")
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            sys.exit(f"regen_docs: {path}:{i + 1}: the marker must precede a ``` block")
        end = i + 2
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        found.append((m.group(1), i + 2, end))
    return lines, found


def match_block(doc_lines, out_lines, kind):
    """For each quoted line, the run's line of the same shape (in order), or None. In a trained
    run a quoted line of generated text matches the run's next line of generated text."""
    result, k = [], 0
    for line in doc_lines:
        if line.strip() == "...":  # the doc leaves the rest out
            result.append(line)
            continue
        want = shape(line)
        free = kind == "trained" and SAMPLE.match(line)
        j = k
        while j < len(out_lines):
            if shape(out_lines[j]) == want or (free and SAMPLE.match(out_lines[j])):
                break
            j += 1
        if j == len(out_lines):
            result.append(None)
            continue
        result.append(out_lines[j])
        k = j + 1
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--skip-long", action="store_true")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    compare = os.path.join(build, "tests", "png_compare")
    if args.check and not os.access(compare, os.X_OK):
        sys.exit(f"regen_docs: {compare} is not built (cmake --build {build} --target png_compare)")
    names = args.only or list(RUNS)
    for n in names:
        if n not in RUNS:
            sys.exit(f"regen_docs: no run named {n}; runs: {', '.join(RUNS)}")
    docs = sorted(os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
                  if f.endswith(".md")) + [os.path.join(ROOT, "README.md")]
    marked = {d: blocks(d) for d in docs}
    problems, rewritten = [], set()
    # The runs side by side, one per core, the long ones first (each writes into its own
    # directory); their reports follow in RUNS' order.
    todo = [n for n in names if not (RUNS[n][3] and args.skip_long)]
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
    started = {}
    for name in sorted(todo, key=lambda n: (not RUNS[n][3], RUNS[n][2] != "trained")):
        tmp = tempfile.TemporaryDirectory(prefix="regen_docs-")
        started[name] = (tmp, pool.submit(run, name, build, tmp.name))
    for name in names:
        cmd, pictures, kind, long_run = RUNS[name]
        if name not in started:
            print(f"-- {name}: skipped (--skip-long): {' '.join(cmd)}")
            continue
        tmp_dir, future = started[name]
        with tmp_dir as tmp:
            out, seconds = future.result()
            print(f"== {name} ({seconds:.1f} s): {' '.join(repr(c) if c == '' else c for c in cmd)}")
            for target in pictures:
                made = os.path.join(tmp, os.path.basename(target))
                if not os.path.exists(made):
                    problems.append(f"{name}: wrote no {os.path.basename(target)}")
                    continue
                if args.check:
                    p = subprocess.run([compare, made, os.path.join(ROOT, target), "--max-fraction",
                                        str(PIXELS[kind])], capture_output=True, text=True)
                    verdict = "current" if p.returncode == 0 else "STALE"
                    print(f"   {target}: {verdict} ({p.stdout.strip() or p.stderr.strip()})")
                    if p.returncode != 0:
                        problems.append(f"{target} is stale: scripts/regen_docs.py --only {name}")
                else:
                    shutil.copyfile(made, os.path.join(ROOT, target))
                    print(f"   {target}: redrawn")
        for doc, (lines, found) in marked.items():
            for run_name, first, end in found:
                if run_name != name:
                    continue
                where = f"{os.path.relpath(doc, ROOT)}:{first}"
                quoted = lines[first:end]
                new = match_block(quoted, out, kind)
                stale = 0
                for i, (q, n) in enumerate(zip(quoted, new)):
                    if n is None:
                        problems.append(f"{os.path.relpath(doc, ROOT)}:{first + i + 1}: {name} no "
                                        f"longer prints a line like: {q.strip()}")
                    elif args.check:
                        same = (kind == "trained" and SAMPLE.match(q)) or numbers_close(q, n, kind)
                        if not same:
                            stale += 1
                            problems.append(f"{os.path.relpath(doc, ROOT)}:{first + i + 1}: "
                                            f"quotes '{q.strip()}', {name} prints '{n.strip()}'")
                    else:
                        lines[first + i] = n.rstrip()
                if args.check:
                    print(f"   {where}: {len(quoted)} quoted lines, "
                          f"{'current' if stale == 0 else f'{stale} STALE'}")
                else:
                    rewritten.add(doc)
                    print(f"   {where}: {len(quoted)} quoted lines rewritten")
    if not args.check:
        for doc in rewritten:
            with open(doc, "w") as f:
                f.write("\n".join(marked[doc][0]))
    for p in problems:
        print(f"regen_docs: {p}")
    print(f"regen_docs: {'checked' if args.check else 'regenerated'} {len(names)} run(s), "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
