#!/usr/bin/python3
"""Regenerates the tensor-parallel goldens and per-rank dumps (tp.py) into a
temporary folder and checks how mtpcheck treats them (SPEC.md §2.5, Step
V3-8, §8.8):

  goldens, ref and cpu         every case PASSED (P = 2, 4, 8; every order),
                               and on opencl where an OpenCL runtime is,
                               cpu also with MTP_CPU_TP_PROCS=1 (the sums
                               made by P worker processes in shared memory)
  goldens, order swapped       every all_reduce and step case with P >= 4 run
                               under another declared order FAILED on ref, on
                               cpu over P processes and on opencl: the values
                               tell the orders apart, and the processes and
                               the GPU kernels keep them
  dumps, verify                `.ok.` PASSED; `.<DIAGNOSIS>.` FAILED and named
                               so; `.ALLREDUCE_MISSING_rank1.` FAILED and
                               ALLREDUCE_MISSING on rank 1 only, the others
                               PASSED (one rank's MoE reduction removed);
                               `.ALLREDUCE_AFTER_NORM_tokens_right.` (partials
                               far below the residual: every token right, as
                               tp.py asserts) FAILED ALLREDUCE_AFTER_NORM
  bad attributes               tp_rank >= P, an unknown reduce_order or
                               reduce_at, tp_rank on a synthetic step: one
                               line naming the case, exit 2
  goldens, selftest            every mutant over ref and cpu caught and named
                               only as itself (the four ALLREDUCE_* included)

  /usr/bin/python3 tools/gen/check_tp.py build/mtpcheck
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
ORDERS = ("one_shot", "two_shot", "ring", "tree")


def run(cmd, env=None):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env, check=False)


# the cpu backend's reductions over P worker processes in shared memory
PROCS = dict(os.environ, MTP_CPU_TP_PROCS="1")


def results(path):
    with open(path) as f:
        return json.load(f)["results"]


def expect_dump(r):
    """The reason r is wrong, or None."""
    cid, verdict = r["case"], r["verdict"]
    diag = (r.get("diagnosis") or {}).get("code")
    what, rank = cid.split(".")[-2], cid.split(".")[-1]
    if what == "ok" or (what == "ALLREDUCE_MISSING_rank1" and rank != "rank1"):
        return None if verdict == "PASSED" else "%s, not PASSED" % verdict
    want = what.replace("_rank1", "").replace("_tokens_right", "")
    if verdict != "FAILED" or diag != want:
        return "%s %s, not FAILED %s" % (verdict, diag, want)
    return None


def swap_orders(src, dst):
    """A copy of the goldens with every declared order of P >= 4 replaced by
    the next one; returns the case ids changed."""
    changed = []
    with h5py.File(src, "r") as a, h5py.File(dst, "w") as b:
        for k, v in a.attrs.items():
            b.attrs[k] = v
        for cid in a["cases"]:
            a.copy(a["cases"][cid], b.require_group("cases"), name=cid)
            g = b["cases"][cid]
            order = g.attrs.get("reduce_order")
            if isinstance(order, bytes):
                order = order.decode()
            parts = g["inputs"].get("parts", g["inputs"].get("block_out_parts"))
            if order and parts is not None and parts.shape[0] >= 4:
                nxt = ORDERS[(ORDERS.index(order) + 1) % len(ORDERS)]
                g.attrs.modify("reduce_order", nxt)
                changed.append(cid)
    return changed


BAD = (("tp_rank", 9, "9 is not below P = 4"),
       ("reduce_order", "zigzag", "'zigzag' is not one of"),
       ("reduce_at", "lm_head", "'lm_head' is not one of"),
       ("block", "synthetic", "tensor parallelism is judged"))


def bad_inputs(mtpcheck, dump, tmp):
    """Each bad TP attribute: one line naming the file, the case and the
    attribute, exit 2."""
    bad, path, cid = [], os.path.join(tmp, "bad.h5"), "tp.ring.moe.P4.ok.rank1"
    for attr, val, why in BAD:
        shutil.copy(dump, path)
        with h5py.File(path, "r+") as f:
            g = f["cases"][cid]
            if isinstance(val, str):
                g.attrs.create(attr, data=val, dtype=h5py.string_dtype())
            else:
                g.attrs[attr] = val
        p = run([mtpcheck, "verify", path, "--filter", cid])
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("mtpcheck: ")]
        if p.returncode != 2 or not lines or why not in lines[0] or cid not in lines[0]:
            bad.append("bad %s = %r: exit %d, %r" % (attr, val, p.returncode, lines[:1]))
    return bad


def check(mtpcheck, tmp):
    gold, dump = os.path.join(tmp, "tp_goldens.h5"), os.path.join(tmp, "tp_dumps.h5")
    js, bad = os.path.join(tmp, "out.json"), []
    subprocess.run([sys.executable, os.path.join(HERE, "tp.py"), "--goldens", gold,
                    "--dumps", dump], check=True)
    p = run([mtpcheck, "run", "--backend", "ref,cpu", "--fixtures", gold, "--json", js])
    if p.returncode != 0:
        bad.append("goldens: exit %d\n%s" % (p.returncode, p.stdout[-2000:]))
    p = run([mtpcheck, "run", "--backend", "cpu", "--fixtures", gold], PROCS)
    if p.returncode != 0:
        bad.append("goldens, cpu over P processes: exit %d\n%s" % (p.returncode,
                                                                 p.stdout[-2000:]))
    # the GPU composition (kernels/gpu) on PoCL; 125: no OpenCL here
    p = run([mtpcheck, "run", "--backend", "opencl", "--fixtures", gold])
    if p.returncode not in (0, 125):
        bad.append("goldens, opencl: exit %d\n%s" % (p.returncode, p.stdout[-2000:]))
    backends = [("ref", None), ("cpu", PROCS)] + ([("opencl", None)] if p.returncode == 0 else [])
    swapped = os.path.join(tmp, "tp_swapped.h5")
    changed = set(swap_orders(gold, swapped))
    for backend, env in backends:
        run([mtpcheck, "run", "--backend", backend, "--fixtures", swapped, "--json", js], env)
        for r in results(js):
            if r["case"] in changed and r["verdict"] != "FAILED":
                bad.append("%s on %s under another order: %s, not FAILED" % (
                    r["case"], backend, r["verdict"]))
    if not changed:
        bad.append("no case with a declared order and P >= 4")
    bad += bad_inputs(mtpcheck, dump, tmp)
    run([mtpcheck, "verify", dump, "--json", js])
    for r in results(js):
        why = expect_dump(r)
        if why:
            bad.append("%s: %s" % (r["case"], why))
    # filtered: the mutants of other ops find nothing to break here
    p = run([mtpcheck, "selftest", "--backend", "ref,cpu", "--fixtures", gold,
             "--filter", "tp_goldens.h5:*"])
    if p.returncode != 0 or "selftest PASSED" not in p.stdout:
        bad.append("selftest: exit %d\n%s" % (p.returncode, p.stdout[-3000:]))
    for m in ("ALLREDUCE_MISSING", "ALLREDUCE_TWICE", "ALLREDUCE_SCALED",
              "ALLREDUCE_AFTER_NORM"):
        rows = [ln for ln in p.stdout.splitlines() if ln.startswith("mutant:%s:" % m)]
        if len(rows) != 2 or not all(ln.rstrip().endswith(" ok") for ln in rows):
            bad.append("selftest rows of %s: %r" % (m, rows))
    return bad, len(changed)


def main(mtpcheck):
    with tempfile.TemporaryDirectory() as tmp:
        bad, n = check(mtpcheck, tmp)
    for b in bad:
        print("check_tp: " + b)
    if not bad:
        print("check_tp: goldens pass on ref and cpu; %d cases fail under another order; "
              "every dump named as its id says; the four mutants caught and named" % n)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
