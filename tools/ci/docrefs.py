#!/usr/bin/python3
"""The docs name only what exists (docs.sh check 5).

Why this exists: the docs are the source of truth, and a recipe that names a
file that was moved, a symbol that was renamed or a version the code no
longer has sends a reader astray without any test failing. This reads every
tracked Markdown file and fails on:
  - a backquoted path under one of the repository's own folders that is
    neither a tracked file nor a folder of one (FOREIGN lists the few that
    name another project's file or a name made at run time);
  - a backquoted mtp_*/MTP_* symbol that no source file contains;
  - a backend API version, results schema version or newest fixture format
    version stated in a doc that differs from the code's.
Usage: tools/ci/docrefs.py   (exit 1 with one line per finding)
"""

import os
import re
import subprocess
import sys

ROOTS = ("harness/", "kernels/", "tools/", "reference/", "docs/", "cases/", "fixtures/",
         "examples/", "python/", "tests/", "cmake/", ".ci/")
# names in the docs that are not this repository's files or symbols
FOREIGN = {"cases/fuzz.case": "the name fuzz_casefile gives its input",
           "kernels/mhc/tilelang.py": "vLLM's file (SPEC.md §7.5)",
           "mtp_layer": "vLLM's attribute (SPEC.md §7.4)"}
CODE = ("*.c", "*.h", "*.cu", "*.cuh", "*.py", "*.sh", "*.txt", "*.cmake", "*.cl", "*.in")


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def code_define(path, name):
    with open(path, encoding="utf-8") as f:
        m = re.search(r"#define\s+%s\s+\"?([\d.]+)" % name, f.read())
    return m.group(1) if m else None


def version_claims():
    """(regex over a doc line, the code's value, what) for each stated version."""
    api = code_define("harness/include/mtp/backend.h", "MTP_BACKEND_API_VERSION")
    schema = code_define("harness/include/mtp/meta.h", "MTP_SCHEMA_VERSION")
    return [(r"API version (\d+)", api, "backend API version"),
            (r"`MTP_BACKEND_API_VERSION` \((\d+)\)", api, "backend API version"),
            (r"must be (\d+) \(`MTP_BACKEND_API_VERSION`\)", api, "backend API version"),
            (r"currently `\"([\d.]+)\"`", schema, "results schema_version")]


def line_findings(line, claims, words, paths):
    """What is wrong with one line of a doc: each finding as a phrase."""
    out = []
    for rx, want, what in claims:
        out += ["says %s %s, the code has %s" % (what, got, want)
                for got in re.findall(rx, line) if got != want]
    for tok in re.findall(r"`([^`]+)`", line):
        for sym, star in re.findall(r"\b((?:mtp|MTP)_\w+)(\*?)", tok):
            known = any(w.startswith(sym) for w in words) if star else sym in words
            if not known and sym not in FOREIGN:
                out.append("names %s%s, which no source file has" % (sym, star))
        path = re.sub(r"(:\w+|\(\))$", "", tok.rstrip(".,:;)")).split(":")[0].rstrip("/")
        if (" " in path or not path.startswith(ROOTS) or path in FOREIGN or
                any(c in path for c in "*{<$[?|")):
            continue
        if path not in paths:
            out.append("names %s, which is not in the repository" % path)
    return out


def selftest():
    """True if a line made with each kind of mistake goes unnoticed."""
    claims = [(r"API version (\d+)", "4", "backend API version")]
    made = ["the interface, API version 3", "call `mtp_no_such_fn()`",
            "see `harness/src/nowhere.c`", "the `mtp_zz_*` functions"]
    return any(not line_findings(x, claims, {"mtp_ok"}, {"harness/src"}) for x in made)


def main():
    tracked = set(git("ls-files").split())
    dirs = {os.path.dirname(f) for f in tracked}
    for d in list(dirs):
        while d:
            d = os.path.dirname(d)
            dirs.add(d)
    words = set()
    for f in git("ls-files", *CODE).split():
        with open(f, encoding="utf-8", errors="replace") as fh:
            words.update(re.findall(r"\w+", fh.read()))
    claims = version_claims()
    bad = []
    for md in git("ls-files", "*.md").split():
        with open(md, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                bad += ["%s:%d: %s" % (md, i, w) for w in line_findings(line, claims, words,
                                                                      tracked | dirs)]
    if selftest():
        bad.append("tools/ci/docrefs.py: its self-test found nothing in lines made to fail")
    for b in bad:
        print("docs: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
