#!/usr/bin/python3
"""mtpgen: regenerate or check the bundled golden fixtures of mtpcheck.

Why this exists: the golden tensors that judge the C reference and every
backend must come from an implementation that shares no code with them. This
is that implementation (NumPy, float64, written from SPEC.md and
FORMAT.md only), and `--check` lets CI prove the committed files are what
this code produces.

  /usr/bin/python3 tools/gen/mtpgen.py --out fixtures/      regenerate every file
  /usr/bin/python3 tools/gen/mtpgen.py --check fixtures/    regenerate to a temp dir, compare
  options: --only FILE[,FILE] (e.g. --only norms.h5), --list, -v

Exit status: 0 on success, 1 when --check finds a difference, 2 on usage error.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np

import captured
import cases
import writer


def generate(out_dir, only=None, verbose=False):
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for fname, specs in cases.specs_by_file().items():
        if (only and fname not in only) or (not only and fname in cases.TEST_TIME):
            continue
        t0 = time.time()
        built = [cases.build(s) for s in specs]
        path = os.path.join(out_dir, fname)
        writer.write_file(path, cases.FILES[fname], built)
        written.append(fname)
        if verbose:
            print("%-14s %3d cases %8.1f KiB %5.1f s" % (fname, len(built),
                                                         os.path.getsize(path) / 1024.0,
                                                         time.time() - t0))
    if not only or captured.FIXTURE in only:  # format version 2 (captured.py)
        captured.write_fixture(os.path.join(out_dir, captured.FIXTURE))
        written.append(captured.FIXTURE)
    return written


def check(fixture_dir, only=None, verbose=False):
    if not os.path.isdir(fixture_dir):
        print("mtpgen: %s: no such directory" % fixture_dir, file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="mtpgen-check-")
    try:
        names = generate(tmp, only, verbose)
        msgs = []
        committed = sorted(n for n in os.listdir(fixture_dir) if n.endswith(".h5"))
        if not only:
            for n in committed:
                if n not in names:
                    msgs.append("%s: committed but not produced by the generator"
                                % os.path.join(fixture_dir, n))
        for n in names:
            ref = os.path.join(fixture_dir, n)
            if not os.path.exists(ref):
                msgs.append("%s: missing (the generator produces it)" % ref)
                continue
            msgs.extend(writer.compare(ref, os.path.join(tmp, n), ref))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if msgs:
        for m in msgs[:200]:
            print("MISMATCH " + m)
        if len(msgs) > 200:
            print("... and %d more" % (len(msgs) - 200))
        print("mtpgen --check: %d difference(s) between %s and the generator; "
              "regenerate with: /usr/bin/python3 tools/gen/mtpgen.py --out %s"
              % (len(msgs), fixture_dir, fixture_dir))
        return 1
    print("mtpgen --check: %d file(s) in %s bit-identical to the generator" % (len(names), fixture_dir))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", metavar="DIR", help="write every fixture file into DIR")
    g.add_argument("--check", metavar="DIR", help="regenerate and compare with the files in DIR")
    g.add_argument("--list", action="store_true", help="list files and case ids")
    ap.add_argument("--only", metavar="FILES", help="comma-separated file names (e.g. norms.h5)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    only = set(a.only.split(",")) if a.only else None
    if only:
        unknown = only - set(cases.FILES) - {captured.FIXTURE}
        if unknown:
            print("mtpgen: unknown file(s): %s" % ", ".join(sorted(unknown)), file=sys.stderr)
            return 2
    np.seterr(all="ignore")
    if a.list:
        for fname, specs in cases.specs_by_file().items():
            for s in specs:
                print("%s:%s" % (fname, s.case_id))
        return 0
    if a.out:
        names = generate(a.out, only, a.verbose)
        print("mtpgen: wrote %d file(s) to %s" % (len(names), a.out))
        return 0
    return check(a.check, only, a.verbose)


if __name__ == "__main__":
    sys.exit(main())
