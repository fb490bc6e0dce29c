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
  --full                  instead, the V4.1-shaped goldens (dspark_step.py
                          --full: the step at H = 5120 and 7168, M = 4, and the
                          five DSpark primitives at V4.1 sizes): every case
                          PASSED on ref and cpu (--require: the backends that
                          must pass), PASSED or UNIMPLEMENTED on the other
                          backends named, and the two steps FAILED on ref
                          under the other block mask (CTest dspark_step_full)

  /usr/bin/python3 tools/gen/check_dspark_step.py build/mtpcheck [--backend ref,cpu] [--full]
      [--require ref,cpu]
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


def verdicts(mtpcheck, fixture, backends, js, extra=()):
    p = run([mtpcheck, "run", "--backend", backends, "--fixtures", fixture, "--json", js, *extra])
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


def goldens_pass(mtpcheck, backends, fx, js, required=("ref", "cpu")):
    """Every case of fx PASSED on the required backends, PASSED or UNIMPLEMENTED elsewhere."""
    p, res = verdicts(mtpcheck, fx, backends, js)
    bad = [] if res else [f"{fx}: no results, exit {p.returncode}\n{p.stdout[-2000:]}"]
    for r in res:
        ok = ("PASSED",) if r["backend"] in required else ("PASSED", "UNIMPLEMENTED")
        if r["verdict"] not in ok:
            bad.append("{} on {}: {}".format(r["case"], r["backend"], r["verdict"]))
    return bad


def check_full(mtpcheck, backends, tmp, required):
    """The V4.1-shaped goldens pass, all of them (13 cases a backend), and the
    steps fail on ref under the other block mask: the judge still tells the
    mask at H = 7168, so their PASSED says something."""
    full, js = os.path.join(tmp, "dspark_step_full.h5"), os.path.join(tmp, "r.json")
    subprocess.run([sys.executable, os.path.join(HERE, "dspark_step.py"), "--full", full],
                   check=True)
    bad = goldens_pass(mtpcheck, backends, full, js, required)
    with open(js) as f:
        n = len(json.load(f)["results"])
    with h5py.File(full, "r+") as f:
        if n != len(f["cases"]) * len(backends.split(",")) or len(f["cases"]) != 13:
            bad.append(f"{full}: {n} results of {len(f['cases'])} cases (13 written)")
        for cid in f["cases"]:
            if cid.startswith("dspark_step."):
                flip_mask(f["cases"][cid])
    _, res = verdicts(mtpcheck, full, "ref", js, ("--filter", "dspark_step.*"))
    bad += [f"{r['case']}, block_mask flipped: {r['verdict']}, not FAILED"
            for r in res if r["verdict"] != "FAILED"]
    if len(res) != 2:
        bad.append(f"block_mask flipped: {len(res)} results, not 2")
    return bad


def check(mtpcheck, backends, tmp):
    gold, js = os.path.join(tmp, "dspark_step.h5"), os.path.join(tmp, "r.json")
    subprocess.run([sys.executable, os.path.join(HERE, "dspark_step.py"), "--goldens", gold],
                   check=True)
    bad = goldens_pass(mtpcheck, backends, gold, js)
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
    dumps = os.path.join(tmp, "dspark_dumps.h5")
    subprocess.run([sys.executable, os.path.join(HERE, "dspark_step.py"), "--dumps", dumps],
                   check=True)
    return judge_dumps(mtpcheck, dumps, js, 9)


def judge_dumps(mtpcheck, dumps, js, n):
    """verify on dumps whose case ids end in `ok` (PASSED) or in the
    diagnosis that must be named; n: how many cases."""
    bad = []
    run([mtpcheck, "verify", dumps, "--json", js])
    with open(js) as f:
        res = json.load(f)["results"]
    for r in res:
        what = r["case"].rsplit(".", 1)[-1]
        diag = (r.get("diagnosis") or {}).get("code")
        want = ("PASSED", None) if what == "ok" else ("FAILED", what)
        if (r["verdict"], diag) != want:
            bad.append(f"{r['case']}: {r['verdict']} {diag}, not {want[0]} {want[1]}")
    if len(res) != n:
        bad.append(f"dumps: {len(res)} results, not {n}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mtpcheck")
    ap.add_argument("--backend", default="ref,cpu")
    ap.add_argument("--require", default="ref,cpu",
                    help="with --full: the backends that must PASS (not UNIMPLEMENTED)")
    ap.add_argument("--full", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if a.full:
            bad = check_full(a.mtpcheck, a.backend, tmp, a.require.split(","))
        else:
            bad = check(a.mtpcheck, a.backend, tmp)
    for b in bad:
        print("check_dspark_step: " + b)
    if not bad and a.full:
        print(f"check_dspark_step: the V4.1-shaped goldens pass on {a.backend}")
    elif not bad:
        print("check_dspark_step: goldens pass; a flipped block mask and shifted positions fail; "
              "the eight DSpark bug dumps are named")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
