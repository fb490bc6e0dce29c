#!/usr/bin/env python3
"""Classifies what libFuzzer saved (crash-*, leak-*, timeout-*, oom-*) by
re-running each input: "ours" when the first frame of the report that is not
the sanitizer runtime, libFuzzer or libc is in our code, or when the report is
a memory error (overflow, use after free) or a leak involving our frames;
"hdf5" when every such frame is inside the HDF5 library (a bug of HDF5 1.10
on a malformed file, docs/CI.md "Fuzzing"); "unattributed" for an RSS
overrun with no single allocation to blame; "gone" if it does not reproduce. Prints one line per input and
exits 1 if any is ours.
  fuzz_triage.py TARGET_BINARY ARTIFACT...
"""
import os
import re
import subprocess
import sys

FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in (\S+) (.*)$|^\s*#\d+ 0x[0-9a-f]+ +\((.*)\)")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + "/"
RUNTIME = ("__asan", "__sanitizer", "__interceptor", "__lsan", "fuzzer::",
           "malloc", "calloc", "realloc", "free", "strdup", "memcpy", "memmove",
           "memset", "__libc", "_start", "main", "LLVMFuzzerTestOneInput")


def frames(report):
    """(function, where) of every frame, with blank lines separating stacks."""
    out = []
    for line in report.splitlines():
        m = FRAME.match(line)
        if m:
            fn, where = (m.group(1), m.group(2)) if m.group(1) else ("?", m.group(3))
            out.append((fn, where))
        elif not line.strip():
            out.append(None)
    return out


def first_owner(stack):
    """Who owns the first frame that is neither a runtime nor a system
    library: HDF5, or this repository's code."""
    for fn, where in stack:
        if fn.startswith(RUNTIME):
            continue
        if "libhdf5" in where:
            return "hdf5", fn
        if ROOT in where:
            return "ours", fn
    return "ours", "?"


def classify(binary, path):
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", ""))
    try:
        p = subprocess.run([binary, "-runs=1", "-timeout=10", "-rss_limit_mb=2048",
                            "-malloc_limit_mb=512", path],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           errors="replace", timeout=120, env=env, check=False)
        report = p.stdout + p.stderr
        if p.returncode == 0:
            return "gone", "does not reproduce"
    except subprocess.TimeoutExpired:
        return "ours", "hangs past libFuzzer's own timeout"
    stacks, cur = [], []
    for f in frames(report):
        if f is None:
            if cur:
                stacks.append(cur)
            cur = []
        else:
            cur.append(f)
    if cur:
        stacks.append(cur)
    kind = next((l.split("ERROR: ", 1)[1].strip() for l in report.splitlines()
                 if "ERROR: " in l), "unknown")
    if "runtime error:" in report:
        return "ours", "UBSan: " + next(l for l in report.splitlines() if "runtime error:" in l)
    owners = [first_owner(s) for s in stacks] or [("ours", "?")]
    memory_error = "AddressSanitizer" in kind and "SEGV" not in kind and \
        "allocation" not in kind and "out-of-memory" not in kind
    if memory_error:
        # access and allocation stacks: HDF5's only if both are in HDF5
        who = "hdf5" if all(o == "hdf5" for o, _ in owners) else "ours"
    elif "LeakSanitizer" in kind:
        who = "hdf5" if all(o == "hdf5" for o, _ in owners) else "ours"
    elif "out-of-memory (used:" in kind:
        # RSS over the limit without one large malloc to blame: seen only in
        # HDF5's variable-length conversion (docs/CI.md); reported, not fatal
        who = "unattributed"
    else:
        who = owners[0][0]
    short = re.sub(r"\s*\(pc 0x.*|on unknown address 0x[0-9a-f]+|0x[0-9a-f]{6,}", "", kind)
    return who, "%s in %s" % (short.strip(), owners[0][1])


def main():
    binary, paths = sys.argv[1], sys.argv[2:]
    bad = 0
    for path in paths:
        who, why = classify(binary, path)
        bad += who == "ours"
        print("%-12s %s: %s" % (who, os.path.basename(path), why))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
