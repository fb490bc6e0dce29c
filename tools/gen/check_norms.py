#!/usr/bin/python3
"""Zero-centred RMSNorm families (SPEC.md §2.6): goldens of the qwen3_next row
from the independent generator, written at test time (the committed fixtures
are at their size budget), and how mtpcheck treats them:

  goldens             every case PASSED on ref and cpu, and on any other
                      backend named (--backend, e.g. opencl) PASSED
  family -> plain     the same files with `family` set to deepseek_v3 (the
                      plain-weight row with the same math otherwise): every
                      case FAILED on ref, so the norm form is what is judged
  selftest            every mutant that acts on these cases caught and named
                      (the existing diagnoses under the new row)
  hand-off            a target_handoff golden under the row on the backends
                      (and in the selftest: HANDOFF_MISMATCH's mutant named);
                      dumps of it as an engine hands over:
                      norm with 1 + w PASSED; the pre-norm sum FAILED
                      HANDOFF_MISMATCH; the norm with plain w FAILED

  /usr/bin/python3 tools/gen/check_norms.py build/mtpcheck [--backend ref,cpu,opencl]
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np

import cases
import numerics
import ops
import version_dumps
import writer
from check_dspark_step import run
from check_dspark_step import verdicts as results

FAM = "qwen3_next"


def specs():
    """The ops whose norms the row changes, each small (H <= 64)."""
    s = []
    for rd in ("eager", "fused"):
        s.append(cases.Spec("norms", "rmsnorm.%s.bf16.%s.T5.H64" % (FAM, rd), "rmsnorm", FAM,
                            {"T": 5, "H": 64, "dt": "bfloat16", "rounding": rd}))
        s.append(cases.Spec("norms", "add_rmsnorm.%s.bf16.%s.T5.H64" % (FAM, rd), "add_rmsnorm",
                            FAM, {"T": 5, "H": 64, "dt": "bfloat16", "rounding": rd}))
        s.append(cases.Spec("norms", "mtp_block.%s.bf16.%s.residual.T5.H32" % (FAM, rd),
                            "mtp_block", FAM, {"T": 5, "H": 32, "F": 48, "state": True,
                                                "rounding": rd, "dt": "bfloat16"}))
        s.append(cases.Spec("norms", "mtp_step.%s.bf16.%s.T5.H32" % (FAM, rd), "mtp_step", FAM,
                            {"T": 5, "H": 32, "F": 48, "V": 61, "rounding": rd,
                             "dt": "bfloat16"}))
    s.append(cases.Spec("norms", "mtp_shared_head_rmsnorm.%s.bf16.T5.H64" % FAM,
                        "mtp_shared_head_rmsnorm", FAM, {"T": 5, "H": 64, "dt": "bfloat16"}))
    s.append(cases.Spec("norms", "fused_eh_norm.%s.bf16.T5.H64" % FAM, "fused_eh_norm", FAM,
                        {"T": 5, "H": 64, "dt": "bfloat16"}))
    s.append(cases.Spec("norms", "draft_chain.%s.bf16.fused.L2.K3.pass1.T3.H32" % FAM,
                        "draft_chain", FAM, {"T": 3, "H": 32, "F": 48, "V": 61, "L": 2, "K": 3,
                         "pass_step_idx": 1, "rounding": "fused", "dt": "bfloat16"}))
    return s


def check(mtpcheck, backends, tmp):
    gold, js, bad = os.path.join(tmp, "norms.h5"), os.path.join(tmp, "r.json"), []
    built = [cases.build(s) for s in specs()]
    writer.write_file(gold, "zero-centred RMSNorm family %s (SPEC.md §2.6)" % FAM, built)
    p, res = results(mtpcheck, gold, backends, js)
    if len(res) != len(built) * len(backends.split(",")):
        bad.append("goldens: %d results for %d cases, exit %d\n%s"
                   % (len(res), len(built), p.returncode, p.stdout[-2000:]))
    bad += ["%s on %s: %s" % (r["case"], r["backend"], r["verdict"])
            for r in res if r["verdict"] != "PASSED"]
    plain = os.path.join(tmp, "plain.h5")
    shutil.copy(gold, plain)
    with h5py.File(plain, "r+") as f:
        for cid in f["cases"]:
            f["cases"][cid].attrs.create("family", data="deepseek_v3", dtype=h5py.string_dtype())
    _, res = results(mtpcheck, plain, "ref", js)
    bad += ["%s read as plain w: %s, not FAILED" % (r["case"], r["verdict"])
            for r in res if r["verdict"] != "FAILED"]
    if len(res) != len(built):
        bad.append("family -> plain: %d results for %d cases" % (len(res), len(built)))
    hgold = os.path.join(tmp, "handoff_gold.h5")
    write_handoff(hgold, {"target_handoff.%s.bf16.fused.T5.H64" % FAM:
                          ("expected", handoff_tensors()[1]["ok"])})
    _, res = results(mtpcheck, hgold, backends, js)
    bad += ["%s on %s: %s" % (r["case"], r["backend"], r["verdict"])
            for r in res if r["verdict"] != "PASSED"]
    if len(res) != len(backends.split(",")):
        bad.append("hand-off golden: %d results" % len(res))
    p = run([mtpcheck, "selftest", "--fixtures", gold, "--fixtures", hgold, "--filter",
             "*.%s.*" % FAM, "--json", js])
    if p.returncode != 0:
        bad.append("selftest on the %s goldens: exit %d\n%s" % (FAM, p.returncode,
                                                                p.stdout[-3000:]))
    return bad + check_handoff(mtpcheck, tmp, js)


HANDOFF = {"bf": "bfloat16", "t": 5, "h": 64, "eps": 1e-6}


def handoff_tensors():
    """(inputs, what three engines hand step 0): the target's final norm under
    the row: right (f32(1 + w)), its pre-norm sum, and plain w."""
    bf, t, h, eps = HANDOFF["bf"], HANDOFF["t"], HANDOFF["h"], HANDOFF["eps"]
    rng = np.random.default_rng(3030)
    hidden = ops.rnd(rng.normal(size=(t, h)), bf)
    residual = ops.rnd(4.0 * rng.normal(size=(t, h)), bf)
    w = ops.rnd(0.2 * rng.normal(size=h), bf)  # zero-centred: stored near 0
    w1 = (np.float32(1.0) + w.astype(np.float32)).astype(np.float64)
    y, pre = ops.add_rmsnorm(hidden, residual, w1, eps, "fused", bf)
    plain, _ = ops.add_rmsnorm(hidden, residual, w, eps, "fused", bf)
    inputs = {"target_hidden": hidden, "target_residual": residual, "target_norm_weight": w}
    return inputs, {"ok": y, "pre_norm": pre, "plain_w": plain}


def write_handoff(path, cases):
    """cases: case id -> (group name, the handoff tensor): a golden file
    ("expected") or dumps ("observed") of target_handoff under the row."""
    bf = HANDOFF["bf"]
    inputs, _ = handoff_tensors()
    with version_dumps.new_file(path, 2) as f:
        for cid, (grp, handoff) in cases.items():
            g = f["cases"].create_group(cid)
            for k, v in {"op": "target_handoff", "family": FAM, "eps": HANDOFF["eps"],
                         "rounding": "fused", "seed": np.uint64(3030)}.items():
                g.attrs[k] = v
            for name, tensors in (("inputs", inputs), (grp, {"handoff": handoff})):
                gg = g.create_group(name)
                for k, v in tensors.items():
                    gg.create_dataset(k, data=numerics.encode(v, bf)).attrs["dtype"] = bf


def check_handoff(mtpcheck, tmp, js):
    """The three hand-offs as dumps: verify names each as it must."""
    _, out = handoff_tensors()
    want = {"ok": ("PASSED", None), "pre_norm": ("FAILED", "HANDOFF_MISMATCH"),
            "plain_w": ("FAILED", None)}
    path = os.path.join(tmp, "handoff.h5")
    write_handoff(path, {"handoff.%s.%s" % (FAM, k): ("observed", out[k]) for k in want})
    run([mtpcheck, "verify", path, "--json", js])
    with open(js) as f:
        res = json.load(f)["results"]
    bad = []
    for r in res:
        got = (r["verdict"], (r.get("diagnosis") or {}).get("code"))
        if got != want[r["case"].rsplit(".", 1)[-1]]:
            bad.append("%s: %s %s" % ((r["case"],) + got))
    if len(res) != 3:
        bad.append("hand-off dumps: %d results, not 3" % len(res))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mtpcheck")
    ap.add_argument("--backend", default="ref,cpu")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bad = check(a.mtpcheck, a.backend, tmp)
    for b in bad:
        print("check_norms: " + b)
    if not bad:
        print("check_norms: the %s goldens pass on %s; read as plain w they fail; every "
              "selftest mutant is caught and named on them" % (FAM, a.backend))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
