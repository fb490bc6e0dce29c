#!/usr/bin/python3
"""Regenerates the dspark_step goldens (dspark_step.py) into a temporary
folder and checks how mtpcheck treats them (SPEC.md §13.9):

  goldens                 every case PASSED on ref and cpu; on any other
                          backend named (--backend) PASSED or, where it does
                          not implement the op yet (the GPU backends),
                          UNIMPLEMENTED, never another verdict
  block_mask flipped      every case run under the other in-block mask FAILED
                          (the mask changes the numbers: a causal drafter is
                          told from the engines' non-causal one)
  positions shifted       the block's positions + 1 (a drafter seeded one
                          position late) FAILED on every case
  dumps, verify           a dump of each DSpark bug as the buggy engine
                          computes it (dspark_step.py --dumps) FAILED and
                          named as its id says; the correct dump PASSED
  --full                  also the V4.1-shaped cases (H = 5120, 7168), on the
                          backends: over 10 GB and half an hour of NumPy on 2
                          cores, so no CTest passes it

  /usr/bin/python3 tools/gen/check_dspark_step.py build/mtpcheck [--backend ref,cpu] [--full]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=False)


def verdicts(mtpcheck, fixture, backends, js):
    p = run([mtpcheck, "run", "--backend", backends, "--fixtures", fixture, "--json", js])
    if not os.path.exists(js):
        return p, []
    with open(js) as f:
        return p, json.load(f)["results"]


def edited(src, dst, edit):
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        for cid in f["cases"]:
            edit(f["cases"][cid])


def flip_mask(g):
    other = "causal" if g.attrs["block_mask"] in ("non_causal", b"non_causal") else "non_causal"
    g.attrs.create("block_mask", data=other, dtype=h5py.string_dtype())


def shift_positions(g):
    pos = g["inputs/positions"]
    pos[...] = pos[...] + 1


def check(mtpcheck, backends, full, tmp):
    gold, js, bad = os.path.join(tmp, "dspark_step.h5"), os.path.join(tmp, "r.json"), []
    args = [sys.executable, os.path.join(HERE, "dspark_step.py"), "--goldens", gold]
    if full:
        args += ["--full", os.path.join(tmp, "dspark_step_full.h5")]
    subprocess.run(args, check=True)
    files = [gold] + ([os.path.join(tmp, "dspark_step_full.h5")] if full else [])
    for fx in files:
        p, res = verdicts(mtpcheck, fx, backends, js)
        if not res:
            bad.append(f"{fx}: no results, exit {p.returncode}\n{p.stdout[-2000:]}")
        for r in res:
            ok = ("PASSED",) if r["backend"] in ("ref", "cpu") else ("PASSED", "UNIMPLEMENTED")
            if r["verdict"] not in ok:
                bad.append("{} on {}: {}".format(r["case"], r["backend"], r["verdict"]))
    for name, edit in (("block_mask flipped", flip_mask), ("positions + 1", shift_positions)):
        path = os.path.join(tmp, "edited.h5")
        edited(gold, path, edit)
        _, res = verdicts(mtpcheck, path, "ref", js)
        for r in res:
            if r["verdict"] != "FAILED":
                bad.append("{}, {}: {}, not FAILED".format(r["case"], name, r["verdict"]))
        if not res:
            bad.append(f"{name}: no results")
    bad += check_dumps(mtpcheck, tmp, js)
    return bad


def check_dumps(mtpcheck, tmp, js):
    """Each dump made from the engine's mistake is FAILED and named as its id
    says by `mtpcheck verify`; the correct one PASSED."""
    dumps, bad = os.path.join(tmp, "dspark_dumps.h5"), []
    subprocess.run([sys.executable, os.path.join(HERE, "dspark_step.py"), "--dumps", dumps],
                   check=True)
    run([mtpcheck, "verify", dumps, "--json", js])
    with open(js) as f:
        res = json.load(f)["results"]
    for r in res:
        what = r["case"].rsplit(".", 1)[-1]
        diag = (r.get("diagnosis") or {}).get("code")
        want = ("PASSED", None) if what == "ok" else ("FAILED", what)
        if (r["verdict"], diag) != want:
            bad.append(f"{r['case']}: {r['verdict']} {diag}, not {want[0]} {want[1]}")
    if len(res) != 5:
        bad.append(f"dumps: {len(res)} results, not 5")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mtpcheck")
    ap.add_argument("--backend", default="ref,cpu")
    ap.add_argument("--full", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bad = check(a.mtpcheck, a.backend, a.full, tmp)
    for b in bad:
        print("check_dspark_step: " + b)
    if not bad:
        print("check_dspark_step: goldens pass; a flipped block mask and shifted positions fail; "
              "the four DSpark bug dumps are named")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
