#!/usr/bin/python3
"""Reads a `mtpcheck verify` console log of captured-block dumps whose case
ids end with the expected outcome (`ok`, or the diagnosis the harness must
name) and says whether every case was judged so. Exit 0 when all were,
1 otherwise (each mismatch on one line).

  /usr/bin/python3 tools/ci/captured_check.py LOG [--min N]
"""
import re
import sys

RESULT = re.compile(r"^\[\s*\d+/\d+\] (\S+)\s+\S+\s+\S+?:(\S+)\s")
DIAG = re.compile(r"^\s+diagnosis: (\S+) ")


def main(argv):
    path = argv[1]
    need = int(argv[3]) if len(argv) > 3 and argv[2] == "--min" else 1
    results = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = RESULT.match(line)
            if m:
                results.append([m.group(1), m.group(2), None])
                continue
            d = DIAG.match(line)
            if d and results:
                results[-1][2] = d.group(1)
    bad = []
    for verdict, cid, diag in results:
        want = cid.rsplit(".", 1)[-1]
        if want == "ok" and (verdict != "PASSED" or diag):
            bad.append("%s: %s %s, expected PASSED" % (cid, verdict, diag or ""))
        elif want != "ok" and (verdict != "FAILED" or diag != want):
            bad.append("%s: %s named %s, expected FAILED named %s" % (cid, verdict, diag, want))
    for b in bad:
        print("MISJUDGED " + b)
    if len(results) < need:
        print("only %d results in %s (expected at least %d)" % (len(results), path, need))
        return 1
    print("%d of %d captured-block cases judged as their ids say" % (len(results) - len(bad),
                                                                    len(results)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
