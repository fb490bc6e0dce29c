#!/usr/bin/python3
"""The size limits of STYLE.md, checked (tools/ci/test.sh).

Why this exists: a file past 600 lines or a function past 100 is where a
house stops being legible, and a limit that nobody checks is a wish. This
counts every tracked C, CUDA, Python and shell file's lines, and every C/CUDA
function's (Linux style: the body opens with a `{` alone in column 0 and ends
with a `}` in column 0) and Python function's (ast) lines, and fails on any
over the limit, one line each.
Usage: tools/ci/sizes.py [--self-test]
"""

import ast
import re
import subprocess
import sys

FILE_MAX = 600
FUNC_MAX = 100
SOURCES = ("*.c", "*.h", "*.cu", "*.cuh", "*.py", "*.sh")
# functions over the limit today, each with what will bring it under; a new
# one is not added here but split
OVER = {"kernels/cuda/hc_tc.cu:tc_dots": "the tensor-core dot kernel; to split with issue 33's rewrite",
        "kernels/cuda/hc_tile.cuh:hc_tile_dots": "the tiled dot kernel; to split with issue 33's rewrite"}


def c_functions(lines):
    """(name line, length in lines) of each function body in C text."""
    out, start = [], None
    for i, ln in enumerate(lines):
        if ln.startswith("{"):
            start = i
        elif ln.startswith("}") and start is not None:
            top = start
            while top > 0 and lines[top - 1].strip() and \
                    not lines[top - 1].rstrip().endswith((";", "}", "*/")):
                top -= 1
            sig = " ".join(lines[top:start])
            names = re.findall(r"(\w+)\s*\(", sig)
            out.append((start, i - start + 2, names[0] if names else "?"))  # with the signature
            start = None
    return out


def py_functions(text):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [(n.lineno, n.end_lineno - n.lineno + 1, n.name) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def findings(path, text):
    lines = text.split("\n")
    n = len(lines) - (1 if text.endswith("\n") else 0)
    out = []
    if n > FILE_MAX:
        out.append("%s: %d lines (the limit is %d)" % (path, n, FILE_MAX))
    funcs = py_functions(text) if path.endswith(".py") else \
        c_functions(lines) if path.endswith((".c", ".h", ".cu", ".cuh")) else []
    for at, length, name in funcs:
        if length > FUNC_MAX and "%s:%s" % (path, name) not in OVER:
            out.append("%s:%d: a function of %d lines (the limit is %d)"
                       % (path, at, length, FUNC_MAX))
    return out


def self_test():
    long_c = "int f(void)\n{\n" + "\tx();\n" * FUNC_MAX + "}\n"
    long_py = "def f():\n" + "    x()\n" * FUNC_MAX
    return bool(findings("a.c", long_c) and findings("a.py", long_py) and
                findings("a.sh", "x\n" * (FILE_MAX + 1)) and not findings("a.c", "int x;\n"))


def main(argv):
    if not self_test():
        print("sizes: the self-test found nothing in files made to fail")
        return 1
    if "--self-test" in argv:
        return 0
    files = subprocess.run(["git", "ls-files", *SOURCES], capture_output=True, text=True,
                           check=True).stdout.split()
    bad = []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            bad += findings(f, fh.read())
    for b in bad:
        print("sizes: " + b)
    print("sizes: %d files, %d over a limit (files %d lines, functions %d)"
          % (len(files), len(bad), FILE_MAX, FUNC_MAX))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
