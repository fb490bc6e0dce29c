#!/usr/bin/python3
"""Whether two `mtpcheck run --json` files hold the same results (a refactor's proof).

Why this exists: a change that only moves code must leave every verdict and
every error figure of a suite unchanged, to the bit. This compares two
results files case by case (file, case, backend) on everything but the
wall time and the tree's own folder in the repro lines, and prints the first
differences.
Usage: tools/ci/same_results.py BEFORE.json AFTER.json   (exit 0 same, 1 not)
"""

import json
import re
import sys


def results(path):
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    out = {}
    for r in doc["results"]:
        r = dict(r)
        r.pop("seconds", None)
        # the tree's folder differs between two checkouts of one suite
        r["repro"] = re.sub(r"(--(?:cases|fixtures) )\S*?/((?:cases|fixtures)/)", r"\1\2",
                            r.get("repro") or "")
        out[(r.get("file"), r.get("case"), r.get("backend"))] = r
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().split("\n")[-1])
        return 2
    a, b = results(argv[0]), results(argv[1])
    diff = [k for k in a if k in b and a[k] != b[k]]
    only = sorted(set(a) ^ set(b), key=str)
    for k in diff[:5]:
        fields = [f for f in a[k] if a[k][f] != b[k].get(f)]
        print("differs: %s %s %s: %s" % (*k, ", ".join(fields)))
    for k in only[:5]:
        print("in one file only: %s %s %s" % k)
    print("same_results: %d results, %d differ, %d in one file only" % (len(a), len(diff), len(only)))
    return 1 if diff or only else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
