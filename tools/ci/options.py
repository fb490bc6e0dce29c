#!/usr/bin/python3
"""The docs' command lines against the option table (tools/ci/docs.sh).

Why this exists: every option of every command is one row of one table
(harness/src/cli/options.c), which `mtpcheck list options` prints; the docs
show command lines in many places (README, docs/*.md, the CI pipelines in
docs/), and a renamed or retired option must not live on in them. This reads
each `mtpcheck COMMAND ...` the docs write (to the end of its backquote span,
comment, pipe or line; a line ending in a backslash goes on) and fails on any
option that COMMAND does not take, one line each.
Usage: tools/ci/options.py [MTPCHECK_BINARY]     (default: build/mtpcheck)
       tools/ci/options.py --self-test
"""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCS = ("README.md", "CONTRIBUTING.md", "docs/*.md", "docs/*.yml", "examples/*/README.md")
COMMANDS = ("run", "verify", "selftest", "bench", "report", "audit-weights", "list")
CALL = re.compile(r"mtpcheck\s+(" + "|".join(re.escape(c) for c in COMMANDS) + r")\b")
OPTION = re.compile(r"(?<![\w./=-])(--?[A-Za-z][\w-]*)")
END = re.compile(r"[`#|;)]|&&|\s>\s")


def table(binary: str) -> set:
    """(command, option) of every row `mtpcheck list options` prints."""
    out = subprocess.run([binary, "list", "options"], capture_output=True,
                         text=True, check=True).stdout
    rows = {tuple(line.split()[:2]) for line in out.splitlines() if line.strip()}
    return {r for r in rows if len(r) == 2 and r[1].startswith("-")}


def calls(text: str):
    """(line number, command, options) of each mtpcheck command line."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        for m in CALL.finditer(line):
            rest, k = line[m.end():], i
            while rest.rstrip().endswith("\\") and k + 1 < len(lines) and not END.search(rest):
                k += 1
                rest = rest.rstrip()[:-1] + " " + lines[k]
            cut = END.search(rest)
            rest = rest[:cut.start()] if cut else rest
            cmd = m.group(1)
            if cmd == "list":  # list cases takes run's options
                if rest.split()[:1] != ["cases"]:
                    continue
                cmd = "run"
            yield i + 1, cmd, OPTION.findall(rest)


def findings(path: str, text: str, known: set) -> list:
    return [f"{path}:{n}: mtpcheck {cmd} has no option {opt} (mtpcheck list options)"
            for n, cmd, opts in calls(text) for opt in opts if (cmd, opt) not in known]


def self_test() -> bool:
    known = {("run", "--backend"), ("run", "-q"), ("bench", "--T")}
    good = "`mtpcheck run --backend ref -q` and mtpcheck bench --T 1 # --not-this\n"
    bad = "mtpcheck run --backend ref \\\n  --gone FILE\n`mtpcheck bench --backend x`"
    return not findings("a", good, known) and len(findings("a", bad, known)) == 2


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        print("options: self-test", "passed" if self_test() else "FAILED")
        return 0 if self_test() else 1
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "mtpcheck")
    if not self_test():
        print("options: the self-test failed")
        return 1
    known = table(binary)
    out, n_files = [], 0
    for pattern in DOCS:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            n_files += 1
            with open(path, encoding="utf-8") as f:
                out += findings(os.path.relpath(path, ROOT), f.read(), known)
    for line in out:
        print("options: " + line)
    print(f"options: {n_files} doc files, {len(known)} command options known, "
          f"{len(out)} unknown in the docs")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
