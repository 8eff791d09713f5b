#!/usr/bin/env python3
"""Ports libtorch 1.13's own C++ API tests (pytorch's test/cpp/api) to minigrad by renaming only,
builds them against an installed minigrad, runs them and counts: tests in scope, ported
(compiled), passed. A developer tool (never run by CI: it needs PyTorch's sources, which the
project does not download). See docs/libtorch_port.md for the method, the rename list and the
scope rules.

  python3 scripts/libtorch_port/port.py PYTORCH_ROOT --prefix MINIGRAD_PREFIX [--work DIR]
      [--only FILE.cpp ...] [--jobs N] [--report FILE]

PYTORCH_ROOT is a directory holding test/cpp/api (and test/cpp/common) of PyTorch 1.13;
MINIGRAD_PREFIX is where `cmake --install build --prefix DIR` put minigrad (its
lib/pkgconfig/minigrad.pc is used). Nothing is written outside --work (default
/tmp/libtorch_port).
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

# ---- the renames: spelling only, never meaning ----------------------------------------------
# Namespaces: libtorch's torch::, at:: (ATen) and c10:: are minigrad::.
NAMESPACES = ("torch", "at", "c10")
# Macros whose minigrad spelling takes the same arguments and does the same.
MACROS = {
    "TORCH_MODULE_IMPL": "MG_MODULE_IMPL",
    "TORCH_MODULE": "MG_MODULE",
    "FORWARD_HAS_DEFAULT_ARGS": "MG_FORWARD_HAS_DEFAULT_ARGS",
    "TORCH_ARG": "MG_ARG",
    "TORCH_WARN": "MG_WARN",
}
# Includes: every libtorch header (<torch/...>, <ATen/...>, <c10/...>) is minigrad's umbrella
# headers, which the prelude includes in every file; the line is blanked.
LIBTORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](torch|ATen|c10|caffe2)/[^>"]*[>"]')
PRELUDE = "#include <minigrad/minigrad.h>\n#include <minigrad/data.h>\n#include <gtest/gtest.h>\n"

# ---- the scope rules: a test is out of scope when its name or its code matches one ------------
# Applied to libtorch's text (comments and string literals removed), before any renaming.
SCOPE_RULES = [
    # libtorch's own rule (test/cpp/common/main.cpp filters *_CUDA and *_MultiCUDA), and any
    # device or layout other than the CPU's strided tensors.
    ("CUDA or another device/layout",
     re.compile(r"_(Multi)?CUDA\b|\bkCUDA\b|\bcuda\b|\.cuda\(|\bkMPS\b|\bkXLA\b|\bkMeta\b|"
                r"\bkHIP\b|\bkVulkan\b|\bkMkldnn\b|\bkSparse\w*|to_sparse|to_mkldnn|\bkMetal\b|"
                r"Device\(\s*\"(cuda|meta|mps|xla)|\bnested\w*::|\bNestedTensor")),
    # TorchScript, and its operator registry (TORCH_LIBRARY, the dispatcher, ops by schema name)
    ("TorchScript/JIT",
     re.compile(r"\bjit::|\bscript::|\bIValue\b|torch::jit\b|\bcompile\(\s*R\"|"
                r"\bTORCH_LIBRARY\w*|\bDispatcher\b|\bOperatorHandle\b|\bcallOpByName\b")),
    ("convolution", re.compile(r"\b[Cc]onv(olution)?(Transpose)?[123]d\w*|\bconv_transpose[123]d\b|"
                               r"\bconv_tbc\b|\bConvNd\b")),
    ("RNN/LSTM/GRU", re.compile(r"\b(RNN|LSTM|GRU)(Cell)?(Impl|Options)?\b|\brnn::|PackedSequence|"
                                r"pack_padded_sequence|pad_packed_sequence|pack_sequence|"
                                r"\bRNNCellOptions\w*")),
    # minigrad's dtypes are float32, float64, int64 and bool.
    ("dtype other than float32/float64/int64/bool",
     re.compile(r"\bk(Int|Int8|Int16|Int32|Short|Char|Byte|UInt8|Half|BFloat16|Float16|"
                r"ComplexHalf|ComplexFloat|ComplexDouble|QInt8|QUInt8|QInt32|QUInt4x2|"
                r"QUInt2x4|ComplexFloat)\b|\bcomplex\b|\bHalf\b|\bBFloat16\b|"
                r"\bdtype<\s*(int|int8_t|uint8_t|int16_t|int32_t|short|char|unsigned)")),
]

TEST_HEAD = re.compile(r"\s*(TEST|TEST_F|TEST_P|TYPED_TEST)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")


# ---- lexing: code vs comments, literals and preprocessor lines ----------------------------
def lex(text):
    """Yields (kind, start, end), kind in code/comment/string/pp. Preprocessor directives are one
    'pp' piece each (with their continuation lines)."""
    i, n, start = 0, len(text), 0
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            if start < i:
                yield ("code", start, i)
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                if text.startswith("/*", j):
                    k = text.find("*/", j + 2)
                    j = n if k < 0 else k + 2
                    continue
                j += 1
            yield ("pp", i, j)
            i = start = j
            continue
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t":
            i += 1
            continue
        at_line_start = False
        if text.startswith("//", i) or text.startswith("/*", i):
            if start < i:
                yield ("code", start, i)
            if text[i + 1] == "/":
                j = text.find("\n", i)
                j = n if j < 0 else j
            else:
                j = text.find("*/", i + 2)
                j = n if j < 0 else j + 2
            yield ("comment", i, j)
            i = start = j
            continue
        m = re.compile(r'(u8|u|U|L)?R"([^(\s]*)\(').match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            if start < i:
                yield ("code", start, i)
            end = text.find(")" + m.group(2) + '"', m.end())
            j = n if end < 0 else end + len(m.group(2)) + 2
            yield ("string", i, j)
            i = start = j
            continue
        if c in "\"'":
            # a digit separator (1'000) is not a character literal
            if c == "'" and i > 0 and text[i - 1].isalnum() and text[i + 1: i + 2].isalnum() \
                    and not re.match(r"(u8|u|U|L)$", text[max(0, i - 2):i]):
                i += 1
                continue
            if start < i:
                yield ("code", start, i)
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + 1)
            yield ("string", i, j)
            i = start = j
            continue
        i += 1
    if start < n:
        yield ("code", start, n)


def masked(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines kept),
    so that offsets and line numbers stay those of the text."""
    out = []
    for kind, a, b in lex(text):
        piece = text[a:b]
        out.append(piece if kind == "code" else re.sub(r"[^\n]", " ", piece))
    return "".join(out)


# ---- renaming --------------------------------------------------------------------------------
NS_QUAL = re.compile(r"(?<![\w.])(%s)(?=\s*::)" % "|".join(NAMESPACES))
NS_DECL = re.compile(r"\bnamespace(\s+)(%s)\b" % "|".join(NAMESPACES))
STRING_NS = re.compile(r"\btorch::(?=[A-Za-z_])")
MACRO_RE = re.compile(r"\b(%s)\b" % "|".join(sorted(MACROS, key=len, reverse=True)))


def rename_code(piece):
    piece = NS_QUAL.sub("minigrad", piece)
    piece = NS_DECL.sub(lambda m: "namespace" + m.group(1) + "minigrad", piece)
    return MACRO_RE.sub(lambda m: MACROS[m.group(1)], piece)


def rename(text):
    """Applies the renames to code (and to code inside #define); inside string literals only a
    qualified name torch::X becomes minigrad::X; libtorch include lines are blanked. Line numbers
    are kept."""
    out = []
    for kind, a, b in lex(text):
        piece = text[a:b]
        if kind == "code":
            piece = rename_code(piece)
        elif kind == "string":
            # a C++ name libtorch prints ("torch::nn::Linear(...)") is the renamed name
            piece = STRING_NS.sub("minigrad::", piece)
        elif kind == "pp":
            if LIBTORCH_INCLUDE.match(piece):
                piece = "// (libtorch include: minigrad's umbrella headers come from the prelude)"
            elif re.match(r"\s*#\s*define\b", piece):
                body = " " + piece[1:]
                piece = "".join(rename_code(body[x:y]) if k == "code" else
                                STRING_NS.sub("minigrad::", body[x:y]) if k == "string" else body[x:y]
                                for k, x, y in lex(body))
                piece = "#" + piece[1:]
        out.append(piece)
    return "".join(out)


# ---- chunks: the top-level declarations of a file (TESTs, helpers), namespaces descended ----
Chunk = collections.namedtuple("Chunk", "start end first_line last_line test name")


def chunks(text):
    m = masked(text)
    res, stack, depth, paren, start, i, n = [], [], 0, 0, None, 0, len(m)
    line_of = lambda pos: m.count("\n", 0, pos) + 1

    def close(end):
        nonlocal paren
        paren = 0
        head = text[start:end]
        t = TEST_HEAD.match(m[start:end])
        if t:
            name, test = t.group(2) + "." + t.group(3), True
        else:
            test = False
            k = re.search(r"\b(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)", m[start:end])
            if k and m[start:end].find("{") > k.start():
                name = k.group(1)
            else:
                k = re.search(r"(\w+)\s*\(", m[start:end]) or re.search(r"(\w+)\s*[;=]", m[start:end])
                name = k.group(1) if k else head.strip()[:30]
        res.append(Chunk(start, end, line_of(start), line_of(end - 1), test, name))

    while i < n:
        c = m[i]
        if depth == 0 and start is None and not c.isspace():
            start = i
        if c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        elif c == "{":
            if depth == 0 and paren == 0 and re.match(r"\s*(inline\s+)?namespace\b[^;{}()]*$|\s*extern\s+\"C\"\s*$",
                                       text[start:i] if start is not None else ""):
                stack.append("ns")
                start = None
            else:
                depth += 1
        elif c == "}":
            if depth == 0:
                if stack:
                    stack.pop()
                start = None
            else:
                depth -= 1
                if depth == 0 and paren == 0:
                    j = i + 1
                    while j < n and m[j].isspace():
                        j += 1
                    if j < n and m[j] == ";":  # struct X {...}; or x = {...};
                        i = j
                    close(i + 1)
                    start = None
        elif c == ";" and depth == 0 and paren == 0 and start is not None:
            close(i + 1)
            start = None
        i += 1
    return res


def blank(text, a, b):
    return text[:a] + re.sub(r"[^\n]", " ", text[a:b]) + text[b:]


# ---- compiler diagnostics --------------------------------------------------------------------
DIAG = re.compile(r"^(.*?):(\d+):(?:\d+:)? (error|fatal error|note|warning): (.*)$")
CTX = re.compile(r"^(.*?):(\d+):(?:\d+:)?\s+(required from here|required from .*|"
                 r"in expansion of macro .*|  required by .*)$")


def error_sites(output, target):
    """[(message, [line in target...], context)] for each error; the lines are where the error is
    in target, or, for an error in a header, the lines of target that instantiated it or whose
    macro expanded to it; context is the compiler's text for that error."""
    lines = output.splitlines()
    res, ctx, ctx_start = [], [], 0
    for idx, line in enumerate(lines):
        d = DIAG.match(line)
        if d and d.group(3) in ("error", "fatal error"):
            msg = d.group(4)
            where = []
            if os.path.abspath(d.group(1)) == target:
                where = [int(d.group(2))]
            else:
                where = [ln for f, ln in ctx if f == target]
            for nxt in lines[idx + 1: idx + 40]:
                e = DIAG.match(nxt)
                if e and e.group(3) in ("error", "fatal error"):
                    break
                if e and e.group(3) == "note" and e.group(4).startswith("in expansion of macro") \
                        and os.path.abspath(e.group(1)) == target:
                    where.append(int(e.group(2)))
            res.append((msg, where, "\n".join(lines[ctx_start:idx + 1])))
            ctx, ctx_start = [], idx + 1
            continue
        c = CTX.match(line)
        if c:
            ctx.append((os.path.abspath(c.group(1)), int(c.group(2))))
    return res


INT_AS_SIZE = "one int as a size (libtorch's IntArrayRef from one int: randn(5), ones(3))"


def normalize(msg):
    if re.search(r"call to '(\w+)\((int|long int|size_t|long unsigned int)&?(, [^)]*)?\)'|"
                 r"of type 'const minigrad::Shape&' from expression of type 'int'", msg):
        return INT_AS_SIZE
    msg = re.sub(r";? did you mean .*$", "", msg)
    msg = re.sub(r"\[-f[\w-]+\]$", "", msg).strip()
    msg = re.sub(r"\b(\w+)_(\w+)_Test\b", "TEST", msg)
    return msg[:150]


# ---- building --------------------------------------------------------------------------------
class Builder:
    def __init__(self, work, prefix):
        self.work = work
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
        os.environ["LC_ALL"] = "C"  # plain quotes in the compiler's messages
        pc = lambda what: subprocess.run(["pkg-config", what, "minigrad"], env=env, check=True,
                                         capture_output=True, text=True).stdout.split()
        self.cflags = pc("--cflags")
        self.libs = pc("--libs")
        self.cxx = ["nice", "-n", "15"] + (["ccache"] if shutil.which("ccache") else []) + ["g++"]
        self.base = self.cflags + ["-O0", "-g0", "-w", "-I", work, "-fdiagnostics-plain-output",
                                   "-fmax-errors=0", "-include", os.path.join(work, "prelude.h")]

    def prelude(self):
        path = os.path.join(self.work, "prelude.h")
        with open(path, "w") as f:
            f.write(PRELUDE)
        # a precompiled prelude: minigrad's headers are parsed once, not once per compile
        subprocess.run(self.cxx[:3] + ["g++"] + self.cflags + ["-O0", "-g0", "-w", "-x", "c++-header",
                       path, "-o", path + ".gch"], check=True)

    def compile(self, src, obj=None):
        cmd = self.cxx + self.base + ["-c", src] + (["-o", obj] if obj else ["-fsyntax-only"])
        r = subprocess.run(cmd, capture_output=True, text=True)
        return r.returncode == 0, r.stdout + r.stderr

    def link(self, objs, out):
        cmd = ["nice", "-n", "15", "g++"] + objs + ["-o", out] + self.libs + \
              ["-lgtest", "-lgtest_main", "-pthread"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return r.returncode == 0, r.stdout + r.stderr


def scope_reason(code, name):
    for reason, rule in SCOPE_RULES:
        if rule.search(name) or rule.search(code):
            return reason
    return None


def port_file(builder, path, out_path, cuda_only, log, support_dropped):
    """Ports one test file; returns {test: record} and a list of dropped helpers."""
    text = open(path).read()
    ported = rename(text)
    cs = chunks(ported)
    orig_masked = masked(text)
    orig_code = {ch.name: orig_masked[ch.start:ch.end] for ch in chunks(text) if ch.test}
    tests = collections.OrderedDict()
    for ch in cs:
        if not ch.test:
            continue
        reason = "CUDA or another device/layout" if cuda_only else \
            scope_reason(orig_code.get(ch.name, ""), ch.name)
        tests[ch.name] = {"scope": reason, "status": None, "why": None}
        if reason:
            ported = blank(ported, ch.start, ch.end)
    live = [ch for ch in cs if not (ch.test and tests[ch.name]["scope"])]
    if not any(ch.test for ch in live):
        return tests, {}, ported, live, False
    helpers = {name: "support.h helper %s: %s" % (name, why) for name, why in support_dropped.items()}
    target = os.path.abspath(out_path)
    first_error = None
    for _ in range(12):
        with open(out_path, "w") as f:
            f.write(ported)
        ok, out = builder.compile(out_path)
        if ok:
            break
        sites = error_sites(out, target)
        drop = collections.OrderedDict()
        unmapped = None
        for msg, where, context in sites:
            hit = False
            for ln in where:
                for ch in live:
                    if ch.first_line <= ln <= ch.last_line:
                        drop.setdefault(ch, msg)
                        hit = True
            if not hit:
                # an instantiation whose chain the compiler printed without a line of target:
                # the test is named by its gtest class (Suite_Name_Test::TestBody)
                for ch in live:
                    if ch.test and ch.name.replace(".", "_") + "_Test::TestBody" in context:
                        drop.setdefault(ch, msg)
                        hit = True
            if not hit and unmapped is None:
                unmapped = msg
        if not drop and unmapped:
            for ch in isolate(builder, ported, live, unmapped, out_path):
                drop[ch] = unmapped
        if not drop:
            first_error = unmapped or (out.strip().splitlines() or ["?"])[-1]
            break
        for ch, msg in drop.items():
            ported = blank(ported, ch.start, ch.end)
            live.remove(ch)
            why = root_reason(msg, helpers)
            if ch.test:
                tests[ch.name]["status"] = "does not compile"
                tests[ch.name]["why"] = why
            else:
                helpers[ch.name] = why
    else:
        first_error = "still does not compile after 12 rounds"
    if first_error:
        for t in tests.values():
            if not t["scope"] and t["status"] is None:
                t["status"], t["why"] = "does not compile", "file: " + normalize(first_error)
        log.write("%s: does not compile: %s\n" % (path, first_error))
    return tests, helpers, ported, live, first_error is None


def isolate(builder, ported, live, msg, out_path):
    """The chunks that cause an error the compiler printed with no line of the file (an
    instantiation chain that starts in a header): each test is compiled alone (with every helper);
    if the error comes with no test at all, the helper whose removal makes it go is found."""
    key = msg[:60]
    probe = out_path + ".probe.cpp"
    tests = [c for c in live if c.test]
    no_tests = ported
    for c in tests:
        no_tests = blank(no_tests, c.start, c.end)

    def has_error(text):
        with open(probe, "w") as f:
            f.write(text)
        ok, out = builder.compile(probe)
        return not ok and key in out

    try:
        if has_error(no_tests):
            for h in (c for c in live if not c.test):
                if not has_error(blank(no_tests, h.start, h.end)):
                    return [h]
            return []
        found = []
        for t in tests:
            alone = ported
            for c in tests:
                if c is not t:
                    alone = blank(alone, c.start, c.end)
            if has_error(alone):
                found.append(t)
        return found
    finally:
        if os.path.exists(probe):
            os.remove(probe)


def root_reason(msg, helpers):
    for name, why in helpers.items():
        if re.search(r"\b%s\b" % re.escape(name), msg):
            return why if why.startswith("helper ") else "helper %s: %s" % (name, why)
    return normalize(msg)


def run_tests(binary, names, work):
    """{test: (passed, message)}; the binary is run once, or test by test when it dies."""
    res = {}
    js = binary + ".json"
    if os.path.exists(js):
        os.remove(js)
    try:
        subprocess.run(["nice", "-n", "15", binary, "--gtest_output=json:" + js], cwd=work,
                       capture_output=True, timeout=600)
    except subprocess.TimeoutExpired:
        pass
    if os.path.exists(js):
        for suite in json.load(open(js)).get("testsuites", []):
            for t in suite.get("testsuite", []):
                key = suite["name"] + "." + t["name"]
                fails = t.get("failures", [])
                if t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
                    res[key] = (False, "skipped")
                else:
                    res[key] = (not fails, fails[0]["failure"] if fails else "")
        return res
    for name in names:
        try:
            r = subprocess.run(["nice", "-n", "15", binary, "--gtest_filter=" + name], cwd=work,
                               capture_output=True, text=True, timeout=120)
            tail = (r.stdout + r.stderr).strip().splitlines()
            if r.returncode == 0 and "[  PASSED  ] 1 test" in r.stdout:
                res[name] = (True, "")
            elif r.returncode < 0:
                res[name] = (False, "crashed (signal %d)" % -r.returncode)
            else:
                fail = [ln for ln in tail if "Failure" in ln or "rror" in ln]
                res[name] = (False, "\n".join(fail[:3]) or tail[-1] if tail else "failed")
        except subprocess.TimeoutExpired:
            res[name] = (False, "timed out")
    return res


def failure_reason(msg):
    m = re.search(r'did not contain expected substring "(.*)"', msg)
    if m:
        return "error message wording (libtorch's phrase: \"%s\")" % m.group(1)[:80]
    m = re.search(r"Expected statement `(.*?)` to throw", msg, re.S)
    if m:
        return "does not throw"
    lines = [ln for ln in msg.splitlines() if ln.strip() and not re.match(r"^\S*:\d+$", ln)]
    return " ".join(ln.strip() for ln in lines[:3])[:160] or "failed"


def cmake_sources(root):
    """test_api's sources as libtorch's CMakeLists.txt lists them, and those it adds only with
    USE_CUDA."""
    cm = open(os.path.join(root, "test/cpp/api/CMakeLists.txt")).read()
    files, cuda_only = [], set()
    blocks = re.findall(r"(if\s*\(\s*USE_CUDA\s*\)\s*)?(?:set|list)\s*\(\s*(?:APPEND\s+)?"
                        r"TORCH_API_TEST_SOURCES\b([^)]*)\)", cm)
    for cuda, body in blocks:
        for f in re.findall(r"\$\{TORCH_API_TEST_DIR\}/([\w.-]+\.cpp)", body):
            files.append(f)
            if cuda:
                cuda_only.add(f)
    return files, cuda_only


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", help="PyTorch 1.13 source tree (holding test/cpp/api)")
    ap.add_argument("--prefix", required=True, help="minigrad's install prefix")
    ap.add_argument("--work", default="/tmp/libtorch_port")
    ap.add_argument("--only", nargs="*", help="only these files (e.g. optim.cpp)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", help="also write the report (markdown) here")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    work = os.path.abspath(args.work)
    api_out = os.path.join(work, "test", "cpp", "api")
    os.makedirs(api_out, exist_ok=True)
    os.makedirs(os.path.join(work, "test", "cpp", "common"), exist_ok=True)
    log = open(os.path.join(work, "port.log"), "w")
    builder = Builder(work, os.path.abspath(args.prefix))
    builder.prelude()

    # headers the tests include, renamed; support.h's helpers that do not compile are dropped
    for sub in ("api", "common"):
        d = os.path.join(root, "test", "cpp", sub)
        for f in sorted(os.listdir(d)):
            if f.endswith(".h"):
                with open(os.path.join(work, "test", "cpp", sub, f), "w") as o:
                    o.write(rename(open(os.path.join(d, f)).read()))
    support_dropped = {}
    sup = os.path.join(api_out, "support.h")
    probe = os.path.join(work, "support_probe.cpp")
    for _ in range(8):
        with open(probe, "w") as f:
            f.write("#include <test/cpp/api/support.h>\n")
        ok, out = builder.compile(probe)
        if ok:
            break
        text = open(sup).read()
        cs = chunks(text)
        dropped = False
        for msg, where, _ in error_sites(out, os.path.abspath(sup)):
            for ch in cs:
                if any(ch.first_line <= ln <= ch.last_line for ln in where) and \
                        ch.name not in support_dropped:
                    support_dropped[ch.name] = normalize(msg)
                    text = blank(text, ch.start, ch.end)
                    dropped = True
        if not dropped:
            sys.exit("support.h does not compile:\n" + out[-3000:])
        open(sup, "w").write(text)
    for name, why in support_dropped.items():
        log.write("support.h: %s dropped: %s\n" % (name, why))
    support_src = os.path.join(root, "test/cpp/api/support.cpp")
    support_obj = None
    if os.path.exists(support_src):
        s_out = os.path.join(api_out, "support.cpp")
        text = rename(open(support_src).read())
        if "AutoDefaultDtypeMode" in support_dropped:
            text = "\n".join(ln for ln in text.splitlines() if "AutoDefaultDtypeMode" not in ln)
        open(s_out, "w").write(text)
        support_obj = s_out + ".o"
        ok, out = builder.compile(s_out, support_obj)
        if not ok:
            sys.exit("support.cpp does not compile:\n" + out[-3000:])

    files, cuda_only = cmake_sources(root)
    if args.only:
        files = [f for f in files if f in args.only]
    results = collections.OrderedDict()

    def one(f):
        src = os.path.join(root, "test/cpp/api", f)
        out_path = os.path.join(api_out, f)
        tests, helpers, ported, live, ok = port_file(builder, src, out_path, f in cuda_only, log,
                                                     support_dropped)
        for h, why in helpers.items():
            if h in support_dropped:
                continue
            log.write("%s: helper %s dropped: %s\n" % (f, h, why))
        live_tests = [n for n, t in tests.items() if not t["scope"] and t["status"] is None]
        if ok and live_tests:
            binary = os.path.join(work, f[:-4].replace("-", "_") + "_test")
            for _ in range(5):
                with open(out_path, "w") as o:
                    o.write(ported)
                cok, out = builder.compile(out_path, out_path + ".o")
                lok, lout = (False, out) if not cok else \
                    builder.link([out_path + ".o"] + ([support_obj] if support_obj else []), binary)
                if lok:
                    break
                bad = set(re.findall(r"in function `(\w+)_(\w+)_Test::TestBody", lout))
                bad = {a + "." + b for a, b in bad if a + "." + b in tests}
                if not bad:
                    missing = re.findall(r"undefined reference to `([^']*)'", lout)
                    for n in live_tests:
                        tests[n]["status"] = "does not compile"
                        tests[n]["why"] = "link: " + (missing[0][:100] if missing else lout[-200:])
                    live_tests = []
                    break
                sym = re.findall(r"undefined reference to `([^']*)'", lout)
                for ch in chunks(ported):
                    if ch.test and ch.name in bad:
                        ported = blank(ported, ch.start, ch.end)
                        tests[ch.name]["status"] = "does not compile"
                        tests[ch.name]["why"] = "link: undefined " + \
                            re.sub(r"\(.*", "", sym[0] if sym else "?")[:100]
                        live_tests.remove(ch.name)
            if live_tests:
                ran = run_tests(binary, live_tests, work)
                for n in live_tests:
                    passed, msg = ran.get(n, (False, "did not run"))
                    tests[n]["status"] = "passed" if passed else "failed"
                    if not passed:
                        tests[n]["why"] = failure_reason(msg)
        return f, tests

    files = [f for f in files if TEST_HEAD.search(open(os.path.join(root, "test/cpp/api", f)).read())]
    if args.jobs > 1:
        import concurrent.futures as cf
        with cf.ThreadPoolExecutor(args.jobs) as ex:
            for f, tests in ex.map(one, files):
                results[f] = tests
    else:
        for f in files:
            results[f] = one(f)[1]
    json.dump(results, open(os.path.join(work, "results.json"), "w"), indent=1)
    report = make_report(results, support_dropped)
    print(report)
    if args.report:
        open(args.report, "w").write(report)


def make_report(results, support_dropped):
    lines = ["| file | tests | out of scope | in scope | ported | passed |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    tot = collections.Counter()
    scope_count = collections.Counter()
    blockers = collections.Counter()
    failures = collections.Counter()
    for f, tests in results.items():
        c = collections.Counter()
        for t in tests.values():
            c["tests"] += 1
            if t["scope"]:
                c["out"] += 1
                scope_count[t["scope"]] += 1
                continue
            c["in"] += 1
            if t["status"] in ("passed", "failed"):
                c["ported"] += 1
            if t["status"] == "passed":
                c["passed"] += 1
            if t["status"] == "does not compile":
                blockers[t["why"]] += 1
            if t["status"] == "failed":
                failures[t["why"]] += 1
        tot.update(c)
        lines.append("| %s | %d | %d | %d | %d | %d |" % (f, c["tests"], c["out"], c["in"],
                                                            c["ported"], c["passed"]))
    lines.append("| **total** | %d | %d | %d | %d | %d |" % (tot["tests"], tot["out"], tot["in"],
                                                             tot["ported"], tot["passed"]))
    pct = lambda a, b: 100.0 * a / b if b else 0.0
    lines += ["", "In scope %d; ported %d (%.1f%%); passed %d (%.1f%% of ported, %.1f%% of in scope)."
              % (tot["in"], tot["ported"], pct(tot["ported"], tot["in"]), tot["passed"],
                 pct(tot["passed"], tot["ported"]), pct(tot["passed"], tot["in"])), "",
              "Out of scope, by rule:"]
    lines += ["- %s: %d" % (r, n) for r, n in scope_count.most_common()]
    if support_dropped:
        lines += ["", "support.h helpers that do not compile (tests using them do not port):"]
        lines += ["- %s: %s" % (n, w) for n, w in support_dropped.items()]
    lines += ["", "Blockers (tests in scope that do not compile, by the first error that stops "
              "them; an error in a helper of the file or of support.h counts for the tests that "
              "use the helper):"]
    roots, via = collections.Counter(), collections.defaultdict(set)
    for r, n in blockers.items():
        helper = re.findall(r"(?:support\.h )?helper (\w+): ", r)
        root = re.sub(r"^((support\.h )?helper \w+: )+", "", r)
        roots[root] += n
        via[root].update(helper)
    lines += ["- %d: %s%s" % (n, r, " (through helper %s)" % ", ".join(sorted(via[r])) if via[r]
                                  else "") for r, n in roots.most_common(40)]
    lines += ["", "Failures (ported tests that fail, by first failure):"]
    lines += ["- %d: %s" % (n, r.replace("\n", " ")) for r, n in failures.most_common(40)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
