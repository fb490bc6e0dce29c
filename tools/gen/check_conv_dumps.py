#!/usr/bin/python3
"""Regenerates the convention dumps (conv_dumps.py) and checks that
`mtpcheck verify` judges each as its id says (SPEC.md §12.1):

  ok.*            PASSED
  undeclared.*    PASSED, with every value named in the id reported
  mismatch.<c>    FAILED, diagnosis CONVENTION_MISMATCH naming <c> (<c1>-<c2>: both,
                  the outputs made under the other value of each at once)
  missing_mask    FAILED, diagnosis MISSING_POS0_MASK
  bad_token       FAILED

  /usr/bin/python3 tools/gen/check_conv_dumps.py build/mtpcheck
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VALUES = {"sum": "add_norm_input=sum", "fused": "final_add=fused",
          "twice": "silu_mul_rounding=twice", "pos0_mask_0": "pos0_mask=0"}


def expect(r):
    """The reason r is wrong, or None."""
    cid, verdict = r["case"], r["verdict"]
    diag = (r.get("diagnosis") or {}).get("code")
    text = (r.get("diagnosis") or {}).get("text") or ""
    parts = cid.split(".")
    if ".ok." in cid:
        if cid.endswith("not_exercised") and \
                "not exercised: silu_mul_rounding" not in r.get("conventions_matched", ""):
            return "silu_mul_rounding not reported as not exercised"
        return None if verdict == "PASSED" else "not PASSED"
    if ".undeclared." in cid:
        if verdict != "PASSED":
            return "not PASSED"
        got = r.get("conventions_matched", "")
        for p in parts:
            if p in VALUES and VALUES[p] not in got:
                return "matched %r, not %s" % (got, VALUES[p])
        return None
    if ".mismatch." in cid:
        conv = parts[-1]
        if verdict != "FAILED" or diag != "CONVENTION_MISMATCH" or \
                any(c + " declared" not in text for c in conv.split("-")):
            return "%s %s %r: not a CONVENTION_MISMATCH of %s" % (verdict, diag, text[:80], conv)
        return None
    if cid.endswith("missing_mask"):
        return None if diag == "MISSING_POS0_MASK" else "not MISSING_POS0_MASK"
    if cid.endswith("bad_token"):
        return None if verdict == "FAILED" else "a wrong token PASSED"
    return "unknown case id"


def main(mtpcheck):
    with tempfile.TemporaryDirectory() as tmp:
        h5, js = os.path.join(tmp, "conventions.h5"), os.path.join(tmp, "out.json")
        subprocess.run([sys.executable, os.path.join(HERE, "conv_dumps.py"), h5], check=True)
        p = subprocess.run([mtpcheck, "verify", h5, "--json", js], stdout=subprocess.PIPE,
                           check=False)
        if p.returncode != 1:
            print(p.stdout.decode())
            sys.exit("verify exited %d, want 1 (some cases must fail)" % p.returncode)
        with open(js) as f:
            results = json.load(f)["results"]
    bad = [(r["case"], expect(r)) for r in results if expect(r)]
    for cid, why in bad:
        print("%s: %s" % (cid, why))
    if bad or len(results) < 30:
        sys.exit("convention dumps: %d wrong of %d" % (len(bad), len(results)))
    print("convention dumps: %d judged as their ids say" % len(results))


if __name__ == "__main__":
    main(sys.argv[1])
