#!/usr/bin/python3
"""Regenerates the captured-block dspark_step goldens and dumps
(dspark_captured.py, SPEC.md §13.9.1) into a temporary folder and checks how
mtpcheck treats them:

  goldens        every case (V4.1 and Qwen3) PASSED on ref and cpu; on any
                 other backend named (--backend) PASSED or UNIMPLEMENTED
  variant        the V4.1 goldens read as Qwen3 (dspark_variant flipped) are
                 refused (exit 2: the captured tensors' shapes differ)
  bad ids        a block id outside [0, V) of embed_table: exit 2, one line
  dumps, verify  each DSpark bug as the buggy engine's glue computes it FAILED
                 and named as its id says; the correct dumps PASSED

  /usr/bin/python3 tools/gen/check_dspark_captured.py build/mtpcheck [--backend ref,cpu]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_dspark_step import judge_dumps, run

HERE = os.path.dirname(os.path.abspath(__file__))


def results(p, js):
    if not os.path.exists(js):
        return []
    with open(js) as f:
        return json.load(f)["results"]


def check_goldens(mtpcheck, backends, gold, js):
    bad = []
    p = run([mtpcheck, "run", "--backend", backends, "--fixtures", gold, "--json", js])
    res = results(p, js)
    if len(res) != 10 * len(backends.split(",")):
        bad.append(f"goldens: {len(res)} results, exit {p.returncode}\n{p.stdout[-2000:]}")
    for r in res:
        ok = ("PASSED",) if r["backend"] in ("ref", "cpu") else ("PASSED", "UNIMPLEMENTED")
        if r["verdict"] not in ok:
            bad.append("{} on {}: {} {}".format(r["case"], r["backend"], r["verdict"],
                                                r.get("message", "")))
    return bad


def check_variant(mtpcheck, gold, tmp):
    path = os.path.join(tmp, "flipped.h5")
    shutil.copy(gold, path)
    with h5py.File(path, "r+") as f:
        for cid in list(f["cases"]):
            if ".v4.1." not in cid:
                del f["cases"][cid]
                continue
            f["cases"][cid].attrs.create("dspark_variant", data="qwen3",
                                         dtype=h5py.string_dtype())
    p = run([mtpcheck, "run", "--backend", "ref", "--fixtures", path])
    if p.returncode != 2 or "_mix" not in p.stdout:
        return [(f"V4.1 read as Qwen3: exit {p.returncode}, not 2 naming a V4.1 mix:\n"
                 f"{p.stdout[-1000:]}")]
    return []


def check_bad_ids(mtpcheck, gold, tmp):
    """A block id outside [0, V) of embed_table: exit 2, one line naming it
    (the reference read past the table and crashed before)."""
    path = os.path.join(tmp, "bad_ids.h5")
    shutil.copy(gold, path)
    with h5py.File(path, "r+") as f:
        for cid in f["cases"]:
            ids = f["cases"][cid]["inputs/ids"]
            ids[1] = f["cases"][cid]["inputs/embed_table"].shape[0]
    p = run([mtpcheck, "run", "--backend", "ref,cpu", "--fixtures", path])
    if p.returncode != 2 or "inputs/ids: an id is outside [0, V) of embed_table" not in p.stdout:
        return [f"ids out of range: exit {p.returncode}, not 2 naming inputs/ids:\n{p.stdout[-1000:]}"]
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mtpcheck")
    ap.add_argument("--backend", default="ref,cpu")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gold, dumps = os.path.join(tmp, "gold.h5"), os.path.join(tmp, "dumps.h5")
        js = os.path.join(tmp, "r.json")
        subprocess.run([sys.executable, os.path.join(HERE, "dspark_captured.py"),
                        "--goldens", gold, "--dumps", dumps], check=True)
        bad = check_goldens(a.mtpcheck, a.backend, gold, js)
        bad += check_variant(a.mtpcheck, gold, tmp)
        bad += check_bad_ids(a.mtpcheck, gold, tmp)
        bad += judge_dumps(a.mtpcheck, dumps, js, 8)
    for b in bad:
        print("check_dspark_captured: " + b)
    if not bad:
        print("check_dspark_captured: goldens pass on " + a.backend + "; V4.1 read as Qwen3 is "
              "refused; an id outside the table is refused; the three glue bugs' dumps are named")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
