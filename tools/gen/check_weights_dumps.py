#!/usr/bin/python3
"""Regenerates the weights-by-reference dumps (weights_dumps.py) and checks
how `mtpcheck verify` treats them (FORMAT.md v2): SKIPPED without
--weights (exit 125), PASSED with it, a hash mismatch, a ref_file leaving
the weights folder, a ref_file that is a FIFO and a live_sha256 that is not
the data's refused (exit 2);
and the subset dumps (subset_dumps.py): partial passes, failures of the token's
necessary condition and of the logits, a logits_rows outside head_rows refused,
a subset carrying the live_sha256 of the whole parameter judged (rule 14); and
the captured-block dumps written with --live (every subset with the hash of
its whole parameter, as a real capture records it) judged exactly as the
committed ones.

  /usr/bin/python3 tools/gen/check_weights_dumps.py build/mtpcheck
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import checks


def verify(mtpcheck, *args):
    return checks.mtpcheck(mtpcheck, "verify", *args)


def verdicts(mtpcheck, h5, *args):
    with tempfile.NamedTemporaryFile(suffix=".json") as js:
        rc, out = verify(mtpcheck, h5, "--json", js.name, *args)
        with open(js.name) as f:
            return rc, {r["case"]: r["verdict"] for r in json.load(f)["results"]}, out


def subsets(mtpcheck, d):
    """Weights by subset: partial passes, the necessary token condition, a
    logits_rows outside head_rows refused."""
    h5 = os.path.join(d, "subset.h5")
    subprocess.run([sys.executable, os.path.join(HERE, "subset_dumps.py"), h5], check=True)
    fails = []
    with tempfile.NamedTemporaryFile(suffix=".json") as js:
        rc, out = verify(mtpcheck, h5, "--json", js.name)
        with open(js.name) as f:
            res = {r["case"]: r for r in json.load(f)["results"]}
    for cid, r in res.items():
        want = "PASSED" if cid.endswith(".ok") else "FAILED"
        if r["verdict"] != want or not r.get("partial"):
            fails.append("%s: %s partial=%s, want %s and partial" %
                         (cid, r["verdict"], r.get("partial"), want))
    if len(res) != 5:
        fails.append("subset.h5: %d results, want 5\n%s" % (len(res), out))
    rc, out = verify(mtpcheck, os.path.join(d, "subset_bad.h5"))
    if rc != 2:
        fails.append("subset_bad.h5: rc %d, want 2\n%s" % (rc, out))
    return fails


def captured_live(mtpcheck, d):
    """Rule 14 on every kind of subset (projections, head, embedding, chains'
    layers, float8): the hash of the whole parameter changes no verdict."""
    live = os.path.join(d, "captured_live.h5")
    subprocess.run([sys.executable, os.path.join(HERE, "captured.py"), "--dumps", live, "--live"],
                   check=True)
    committed = os.path.join(HERE, "..", "..", "fixtures", "dumps", "captured_bugs.h5")
    rc, got, out = verdicts(mtpcheck, live)
    rc0, want, _ = verdicts(mtpcheck, committed)
    if rc != rc0 or got != want or len(got) < 50:
        diff = {c: (got.get(c), v) for c, v in want.items() if got.get(c) != v}
        return ["captured --live: rc %d (committed %d), %d cases, differing %s\n%s"
                % (rc, rc0, len(got), diff, out[-2000:])]
    return []


def hostile_ref_file(mtpcheck, h5, d):
    """A ref_file that is a FIFO in --weights DIR: refused at once (exit 2,
    one line naming it), never waited on; the run is under a timeout."""
    fifo_dir = os.path.join(d, "ckpt_fifo")
    os.makedirs(fifo_dir)
    os.mkfifo(os.path.join(fifo_dir, "model.safetensors"))
    try:
        p = subprocess.run([mtpcheck, "verify", h5, "--weights", fifo_dir],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30,
                           check=False)
    except subprocess.TimeoutExpired:
        return ["ref_file a FIFO: verify --weights still waiting after 30 s"]
    out = p.stdout.decode()
    named = [s for s in out.splitlines() if "model.safetensors" in s and "not a regular file" in s]
    if p.returncode != 2 or not named:
        return ["ref_file a FIFO: rc %d, want 2 and a line naming it\n%s" % (p.returncode, out)]
    return []


def main(mtpcheck):
    fails = []
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, os.path.join(HERE, "weights_dumps.py"), d], check=True)
        h5, ck = os.path.join(d, "weights_ref.h5"), os.path.join(d, "ckpt")
        rc, v, _ = verdicts(mtpcheck, h5)
        if rc != 125 or set(v.values()) != {"SKIPPED"}:
            fails.append("without --weights: rc %d %s" % (rc, v))
        rc, v, _ = verdicts(mtpcheck, h5, "--weights", ck)
        want = {"ref.ok": "PASSED", "ref.live_ok": "PASSED", "ref.bad_hash": "INVALID"}
        if rc != 2 or v != want:
            fails.append("with --weights: rc %d %s" % (rc, v))
        for bad in ("bad_path.h5", "bad_live.h5"):
            rc, out = verify(mtpcheck, os.path.join(d, bad), "--weights", ck)
            if rc != 2:
                fails.append("%s: rc %d, want 2\n%s" % (bad, rc, out))
        fails += hostile_ref_file(mtpcheck, h5, d)
        fails += subsets(mtpcheck, d)
        fails += captured_live(mtpcheck, d)
    checks.finish(fails, "weights by reference",
                  "weights by reference: skipped without --weights, read and hash-checked with"
                  " it; by subset: judged as partial")


if __name__ == "__main__":
    main(sys.argv[1])
