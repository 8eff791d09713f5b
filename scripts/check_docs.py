#!/usr/bin/env python3
"""The static half of scripts/check_docs.sh: citations that must resolve, and the doc's program
blocks written out for the compile step.

Checks, each failure printed as file:line: message:
- every `Note [Title]` cited in a doc or a code comment is defined somewhere, by a comment block
  that starts with the line `// Note [Title]` (optionally followed by `: text`); a citation that
  names a file (`Note [X] in simd.h`, `Note [X] (optimizer.h)`, `Note [X], \`ops/linalg.cpp\``)
  must name the file that defines it. `c10 Note [...]` cites PyTorch's source and is left alone;
- every repository path cited exists: in docs, backticked paths and markdown link targets; in
  code comments, paths starting with a top-level folder (core/, nn/, tests/, ...). Build output
  (build*/...), globs, placeholders (<name>, ..., $VAR) and brace lists ({h,cpp}: each checked)
  are handled as such;
- every markdown link to `file.md#anchor` (or `#anchor`) names a heading of that file;
- every ```cpp block in README.md and docs/*.md says `program` or `fragment` in its info string;
- no timing in docs/architecture.md or in a comment of core/, nn/ or optim/ (a number with ms, us,
  ns, s, minutes, GFLOP/s, tokens/s; "3x slower", "0.9 of OpenBLAS's time", "12% of a step"):
  measured figures are dated and belong in docs/performance.md with their machine and command.
  A setting is not a timing: a duration right after "for", "within", "under", "every", "after",
  "at most", "up to" or "timeout" is allowed;
- docs/reading_guide.md: each entry's line ranges (`file:A-B`) lie inside the file, hold every
  function (`name()`) and type (`struct X`, `class X`) the entry names, and add up to the count
  the entry gives in parentheses ("(44 lines)", "(43)");
- every public op in the family headers core/include/minigrad/ops/*.h (which ops.h includes) has
  a `///` line directly above one of its declarations.
With --extract DIR it also writes each `cpp program` block to DIR/NN/main.cpp (or the file name
its info string gives: `cpp program an.cpp -g`), the output block that follows it (info string
`output`, if any) to DIR/NN.expected, and DIR/index (NN doc:line file flags...).
With --figures LINE it compares the op-table figures the docs quote with LINE, what
OpTable.CoversEveryDifferentiableOp prints.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=ROOT))
CODE_DIRS = ["core", "nn", "optim", "viz", "distributed", "examples", "tests", "scripts", "bench",
             ".ci"]
TOP = ("core/", "nn/", "optim/", "viz/", "distributed/", "examples/", "tests/", "scripts/",
       "docs/", "bench/", "cmake/", ".ci/")
ROOT_FILES = {"README.md", "CMakeLists.txt", ".clang-format", ".gitignore"}
CODE_EXT = (".h", ".cpp", ".py", ".sh", ".txt", ".cmake", ".in")

errors = []


def fail(path, line, msg):
    errors.append(f"{path}:{line}: {msg}")


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def code_files():
    """The source files git tracks (or would: untracked, not ignored) in CODE_DIRS."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "--", *CODE_DIRS],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return sorted(p for p in listed if p.endswith(CODE_EXT) or p.startswith(("scripts/", ".ci/")))


def comment_text(path, line):
    """The comment part of a source line ('' when it has none)."""
    if path.endswith((".h", ".cpp")):
        i = line.find("//")
        return line[i + 2:].lstrip("/") if i >= 0 else ""
    i = line.find("#")
    return line[i + 1:] if i >= 0 and not line.lstrip().startswith("#!") else ""


def joined(lines):
    """Each line with the start of the next one, so that a citation broken across a line is seen
    whole (the next line's comment marker removed)."""
    out = []
    for i, l in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        nxt = re.sub(r"^\s*(///?|#)\s?", "", nxt)
        out.append(l.rstrip() + " " + nxt.strip())
    return out


# ---------------------------------------------------------------- Notes

NOTE_DEF = re.compile(r"^\s*// Note \[([^\]]+)\]\s*(:.*)?$")
# A definition: the Note alone on its line, or followed by ": text" when it opens a comment block
# (a line with a Note and more text inside a comment block cites it).
NOTE_CITE = re.compile(r"(c10 )?Note \[([^\]]+)\]")
FILE_TOKEN = re.compile(r"[\w./{},-]+\.(?:h|cpp|md|py|sh)\b|[\w./{},-]+\.\{[\w,]+\}")


def note_definitions(files):
    defs = {}
    for p in files:
        if not p.endswith((".h", ".cpp")):
            continue
        lines = read(p)
        for i, l in enumerate(lines):
            m = NOTE_DEF.match(l)
            prev_is_comment = i > 0 and lines[i - 1].lstrip().startswith("//")
            if m and (not m.group(2) or not prev_is_comment):
                defs.setdefault(m.group(1), []).append(p)
    return defs


def expand_braces(token):
    m = re.search(r"\{([^}]*)\}", token)
    if not m:
        return [token]
    return [token[:m.start()] + alt + token[m.end():] for alt in m.group(1).split(",")]


def check_notes(files, defs):
    for p in files:
        lines = read(p)
        texts = lines if p.endswith(".md") else [comment_text(p, l) for l in lines]
        both = joined(texts)
        for i, text in enumerate(both):
            for m in NOTE_CITE.finditer(text):
                if m.start() >= len(texts[i].rstrip()) + 1:
                    continue  # starts on the next line: checked there
                if m.group(1) or m.group(2) in ("...", "Title"):
                    continue  # PyTorch's own Note, or a placeholder
                title = m.group(2)
                if title not in defs:
                    fail(p, i + 1, f"Note [{title}] is cited but defined nowhere "
                         f"(a definition is a comment block starting '// Note [{title}]')")
                    continue
                # A file named right after the citation must be the one that defines it.
                # Files named right after it (up to the closing parenthesis): one of them must
                # be the file that defines it (a .md names where it is described instead).
                after = text[m.end():m.end() + 160]
                if not re.match(r"\s*(?:\(|,|in\b)", after):
                    continue
                cited = [t.rstrip(".,;)") for t in FILE_TOKEN.findall(after.split(")")[0])]
                if not cited or any(c.endswith(".md") for c in cited):
                    continue
                if not any(d.endswith(alt) for c in cited for alt in expand_braces(c)
                           for d in defs[title]):
                    fail(p, i + 1, f"Note [{title}] is cited in {', '.join(cited)} but defined "
                         f"in {', '.join(defs[title])}")


# ---------------------------------------------------------------- paths and anchors

def slug(heading):
    """GitHub's anchor for a heading."""
    h = heading.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    out, seen, fence = set(), {}, False
    for l in read(path):
        if l.lstrip().startswith("```"):
            fence = not fence
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", l)
        if m and not fence:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            out.add(s if n == 0 else f"{s}-{n}")
            seen[s] = n + 1
    return out


def is_placeholder(token):
    """Globs, <name>, ..., $VAR, NAME, and build output (build/, build-bench/, ...)."""
    return (any(c in token for c in "*<>$ ") or "..." in token or token.startswith("build")
            or "/build" in token or re.search(r"(^|/)[A-Z]{3,}(\.|/|$)", token) is not None)


def resolves(alt, citing):
    """A path as cited: from the root, from a folder above the citing file (tests/CMakeLists.txt
    cites viz/lsan.supp), an installed header (`nn/module.h` is <minigrad/nn/module.h>), or a
    program by its source (bench/minigrad_bench)."""
    d = os.path.dirname(citing)
    bases = [""]
    while d:
        bases.append(d)
        d = os.path.dirname(d)
    candidates = [os.path.join(b, alt) for b in bases] + [alt + ".cpp"]
    return (any(os.path.exists(os.path.join(ROOT, os.path.normpath(c))) for c in candidates)
            or any(os.path.exists(os.path.join(d, "include", "minigrad", alt))
                   for d in glob.glob(os.path.join(ROOT, "*"))))


def path_exists(token, citing):
    token = re.sub(r":\d+(-\d+)?$", "", token)  # file.cpp:42
    return all(resolves(alt, citing) for alt in expand_braces(token))


def looks_like_repo_path(token):
    if token in ROOT_FILES:
        return True
    return token.startswith(TOP) and re.fullmatch(r"[\w./{},:+-]+", token) is not None


def check_doc_paths_and_links(path):
    lines, fence = read(path), False
    base = os.path.dirname(path)
    for i, l in enumerate(lines):
        if l.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        prose = re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), l)
        for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", prose):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue  # http:, mailto:
            file, _, anchor = target.partition("#")
            if file and not os.path.exists(os.path.join(ROOT, base, file)):
                fail(path, i + 1, f"link to {file}, which does not exist")
                continue
            if anchor:
                doc = os.path.normpath(os.path.join(base, file)) if file else path
                if doc.endswith(".md") and anchor not in anchors(doc):
                    fail(path, i + 1, f"link to {doc}#{anchor}: no such section in {doc}")
        for m in re.finditer(r"`([^`\s]+)`", l):
            token = m.group(1).rstrip(".,;")
            if is_placeholder(token) or not looks_like_repo_path(token):
                continue
            if not path_exists(token, path):
                fail(path, i + 1, f"`{token}` does not exist in the repository")


def check_comment_paths(path):
    for i, l in enumerate(read(path)):
        text = comment_text(path, l)
        for m in re.finditer(r"(?<![\w./-])((?:%s)[\w./{},+*<>$-]*[\w}/*>])" %
                             "|".join(re.escape(t) for t in TOP), text):
            token = m.group(1)
            if is_placeholder(token) or token.endswith("/.."):
                continue
            if not path_exists(token, path):
                fail(path, i + 1, f"comment cites {token}, which does not exist")


# ---------------------------------------------------------------- timings

TIMING_UNIT = r"(?:ms|us|µs|ns|s|secs?|seconds?|minutes?|G?FLOP/s|GFLOPS|tokens/s|tok/s)"
SETTING = r"(?<!\bfor )(?<!\bwithin )(?<!\bunder )(?<!\bevery )(?<!\bafter )(?<!\bmost )" \
          r"(?<!\bup to )(?<!\btimeout )(?<!\btimeout of )"
NUMBER = r"~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
TIMING = re.compile(
    SETTING + r"(?<![\w.^-])" + NUMBER + r"(?:\s?(?:-|->|to)\s?" + NUMBER + r")?\s?" +
    TIMING_UNIT + r"(?![\w/])"
    r"|\b\d+(?:\.\d+)?x (?:(?:\w+'s|the|its|a) )?(?:[\w-]+ )?(?:time|slower|faster)\b"
    r"|\b\d+(?:\.\d+)?\s?% (?:of (?:(?:a|the|its|each|one)\s)?[\w' -]{0,30}?(?:time|step)\b"
    r"|slower|faster)"
    r"|\b[01]\.\d+ of (?:\w+'s |the |its )?[\w.' -]{0,24}?\b(?:time|step)\b"
    r"|tokens per second")


def check_timings(path, texts):
    where = path if path.endswith(".md") else "a comment"
    for i, text in enumerate(texts):
        m = TIMING.search(text)
        if m:
            fail(path, i + 1, f"a timing ('{m.group(0)}') in {where}: measured figures go to "
                 "docs/performance.md, with the machine, the date and the command; here, give "
                 "the reason and point to the section there")


def check_no_timings(files):
    check_timings("docs/architecture.md", read("docs/architecture.md"))
    for p in files:
        if p.startswith(("core/", "nn/", "optim/")) and p.endswith((".h", ".cpp")):
            check_timings(p, [comment_text(p, l) for l in read(p)])


# ---------------------------------------------------------------- the reading guide

def guide_entries(lines):
    """The numbered entries of a list: (line number, text joined over continuation lines)."""
    entries, current = [], None
    for i, l in enumerate(lines):
        if re.match(r"^\d+\. ", l):
            current = [i + 1, l]
            entries.append(current)
        elif current and l.startswith("    ") and l.strip():
            current[1] += " " + l.strip()
        else:
            current = None
    return entries


def check_reading_guide(path="docs/reading_guide.md"):
    if not os.path.exists(os.path.join(ROOT, path)):
        return
    for line, text in guide_entries(read(path)):
        ranges = re.findall(r"`([\w./-]+):(\d+)-(\d+)`", text)
        if not ranges:
            continue
        code, total = [], 0
        for f, a, b in ranges:
            a, b = int(a), int(b)
            if not os.path.exists(os.path.join(ROOT, f)):
                continue  # reported by the path check
            lines = read(f)
            if a < 1 or b < a or b > len(lines):
                fail(path, line, f"{f}:{a}-{b} is not a range of {f} ({len(lines)} lines)")
                continue
            code += lines[a - 1:b]
            total += b - a + 1
        body = "\n".join(code)
        names = re.findall(r"`(?:[\w:]+::)?(\w+)\(\)`", text)
        names += re.findall(r"`(?:struct|class) (\w+)`", text)
        for name in names:
            if not re.search(r"\b%s\b" % re.escape(name), body):
                fail(path, line, f"names `{name}` but its line ranges do not contain it (the code "
                     "moved: update the range)")
        m = re.search(r"\((\d+)(?: lines)?\):", text)
        if m and int(m.group(1)) != total:
            fail(path, line, f"says ({m.group(1)} lines) but its ranges hold {total} lines")


# ---------------------------------------------------------------- ops.h

def check_ops_doc_lines(path="core/include/minigrad/ops.h"):
    lines, documented, first_line, in_detail = read(path), {}, {}, False
    for i, l in enumerate(lines):
        if l.startswith("namespace detail"):
            in_detail = True
        if in_detail:
            in_detail = not l.startswith("}  // namespace detail")
            continue
        m = re.match(r"^(?:[\w:<>, ]+?)\s+(operator\S+|[a-z_]\w*)\(", l)
        if not m or l.startswith(("//", "#", "template", "  ")):
            continue
        name = m.group(1)
        j = i - 1
        while j >= 0 and lines[j].startswith("template"):
            j -= 1
        first_line.setdefault(name, i + 1)
        documented[name] = documented.get(name, False) or lines[j].startswith("///")
    for name, ok in documented.items():
        if not ok and not name.startswith("operator"):
            fail(path, first_line[name], f"{name} has no /// line directly above a declaration")


# ---------------------------------------------------------------- program blocks

def check_blocks(path, extract_dir, index):
    lines, i = read(path), 0
    while i < len(lines):
        m = re.match(r"^\s*```\s*(\S[^`]*)?$", lines[i])
        if not m:
            i += 1
            continue
        info = (m.group(1) or "").split()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        if info and info[0] in ("cpp", "c++"):
            if "program" not in info and "fragment" not in info:
                fail(path, i + 1, "a ```cpp block must say `cpp program` (a complete program, "
                     "compiled and run by scripts/check_docs.sh) or `cpp fragment`")
            if "program" in info and extract_dir:
                # `cpp program an.cpp -g`: the file name the program is compiled as (its
                # messages may quote it) and extra compiler flags.
                n = len(index)
                name = next((w for w in info[2:] if w.endswith(".cpp")), "main.cpp")
                flags = [w for w in info[2:] if w.startswith("-")]
                os.makedirs(os.path.join(extract_dir, f"{n:02d}"))
                with open(os.path.join(extract_dir, f"{n:02d}", name), "w") as f:
                    f.write("\n".join(lines[i + 1:j]) + "\n")
                # The output it claims: the next fenced block, if marked `output`.
                k = j + 1
                while k < len(lines) and not lines[k].lstrip().startswith("```"):
                    k += 1
                if k < len(lines) and "output" in lines[k].strip()[3:].split():
                    e = k + 1
                    while e < len(lines) and not re.match(r"^\s*```\s*$", lines[e]):
                        e += 1
                    with open(os.path.join(extract_dir, f"{n:02d}.expected"), "w") as f:
                        f.write("\n".join(lines[k + 1:e]) + "\n")
                index.append(f"{n:02d} {path}:{i + 1} {name} {' '.join(flags)}".rstrip())
        i = j + 1


# ---------------------------------------------------------------- figures

# Figures the docs quote that the op table determines, as (doc, pattern, names of the groups).
# The op table's coverage test prints them: OpTable.CoversEveryDifferentiableOp's line
# "gradchecked N ops, S samples (...); gradgradchecked ...; E error inputs".
FIGURES = [
    ("docs/errors.md", r"holds (\d+) error inputs over all (\d+) differentiable ops",
     ("errors", "ops")),
    ("docs/pytorch_parity.md", r"compared (\d+) ops, (\d+) samples", ("ops", "samples")),
    ("docs/pytorch_parity.md", r"The (\d+) ops are every entry of the table", ("ops",)),
]


def check_figures(printed):
    m = re.search(r"gradchecked (\d+) ops, (\d+) samples .*; (\d+) error inputs", printed)
    if not m:
        fail("tests/core/test_op_table.cpp", 1, "OpTable.CoversEveryDifferentiableOp printed no "
             f"'gradchecked N ops, S samples ...; E error inputs' line: {printed!r}")
        return
    actual = {"ops": m.group(1), "samples": m.group(2), "errors": m.group(3)}
    for doc, pattern, names in FIGURES:
        lines = read(doc)
        hits = [(i, f) for i, l in enumerate(lines) for f in [re.search(pattern, l)] if f]
        hits = hits or [(i, f) for i, l in enumerate(joined(lines))
                        for f in [re.search(pattern, l)] if f]
        if not hits:
            fail(doc, 1, f"no longer quotes /{pattern}/ (update FIGURES in scripts/check_docs.py)")
        for i, f in hits[:1]:
            for k, name in enumerate(names):
                if f.group(k + 1) != actual[name]:
                    fail(doc, i + 1, f"says {f.group(k + 1)} {name}; the op table has "
                         f"{actual[name]} (OpTable.CoversEveryDifferentiableOp prints "
                         f"'{m.group(0)}')")


def main():
    extract_dir = None
    args = sys.argv[1:]
    if args[:1] == ["--figures"]:
        os.chdir(ROOT)
        check_figures(args[1])
        for e in errors:
            print(e)
        return 1 if errors else 0
    if args[:1] == ["--extract"]:
        extract_dir = args[1]
    os.chdir(ROOT)
    files = code_files()
    defs = note_definitions(files)
    check_notes(DOCS + files, defs)
    for d in DOCS:
        check_doc_paths_and_links(d)
    for f in files:
        check_comment_paths(f)
    check_reading_guide()
    check_no_timings(files)
    for family in sorted(glob.glob("core/include/minigrad/ops/*.h", root_dir=ROOT)):
        check_ops_doc_lines(family)
    index = []
    for d in DOCS:
        check_blocks(d, extract_dir, index)
    if extract_dir:
        with open(os.path.join(extract_dir, "index"), "w") as f:
            f.write("\n".join(index) + ("\n" if index else ""))
    for e in errors:
        print(e)
    print(f"check_docs: {len(DOCS)} docs, {len(files)} source files, {len(defs)} Notes: "
          f"{len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
