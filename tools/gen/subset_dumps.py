#!/usr/bin/python3
"""Dumps whose head weight is a row subset (FORMAT.md v2, rules 1-3, 6).

  /usr/bin/python3 tools/gen/subset_dumps.py OUT.h5

From the bundled V3 and V4 mtp_step goldens (tools/gen, NumPy): head_weight
keeps every other row plus each row the greedy tokens name (head_rows,
full_rows = V), and the observed logits are stored at a subset of those
(logits_rows). Cases:
  subset.v3.ok, subset.v4.ok   PASSED, partial
  subset.v3.live.ok            PASSED, partial: the subset carries the
                               live_sha256 of the whole parameter (rule 14:
                               informational on a subset, not checked)
  subset.v3.token_unlisted     FAILED: the observed token is not in logits_rows
  subset.v3.wrong_logits       FAILED: logits of another head row
  bad.logits_rows_unlisted     (in OUT_bad.h5) refused: logits_rows outside head_rows
"""

import hashlib
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numerics as nx
from bug_dumps import FIX, V3, V4, attrs_of, read, write


def subset_case(out, src, cid, mutate=None, lrows_extra=(), live=False):
    inp, exp = read(src["inputs"]), read(src["expected"])
    w, wdt = inp.pop("head_weight")
    v = w.shape[0]
    tokens = exp["token"][0].astype(np.int64)
    head_rows = np.unique(np.concatenate([np.arange(0, v, 2), tokens]))
    logits_rows = np.unique(np.concatenate([head_rows[::3], tokens, np.array(lrows_extra, dtype=np.int64)]))
    obs = {k: val for k, val in exp.items() if k not in ("logits", "token")}
    logits = exp["logits"][0][:, logits_rows]
    token = tokens.copy()
    if mutate == "token_unlisted":
        token[0] = int(np.setdiff1d(np.arange(v), logits_rows)[0])
    if mutate == "wrong_logits":
        logits = exp["logits"][0][:, np.roll(logits_rows, 1)]
    obs["logits"] = (logits, exp["logits"][1])
    obs["logits_rows"] = (logits_rows.astype(np.int64), "int64")
    obs["token"] = (token, "int64")
    g = out["cases"].create_group(cid)
    for k, val in attrs_of(src).items():
        g.attrs[k] = val
    gi = g.create_group("inputs")
    write(gi, inp)
    write(gi, {"head_rows": (head_rows.astype(np.int64), "int64")})
    d = gi.create_dataset("head_weight", data=nx.encode(w[head_rows], wdt))
    d.attrs["dtype"] = wdt
    d.attrs["full_rows"] = np.int64(v)
    if live:  # what a capture records: the hash of the whole parameter
        d.attrs["live_sha256"] = hashlib.sha256(nx.encode(w, wdt).tobytes()).hexdigest()
    write(g.create_group("observed"), obs)


def new_file(path):
    out = h5py.File(path, "w")
    out.attrs["format"] = "mtpcheck-fixture"
    out.attrs["format_version"] = np.int64(2)
    out.attrs["generator"] = "tools/gen/subset_dumps.py"
    out.attrs["created"] = "2026-12-01T00:00:00Z"
    out.create_group("cases")
    return out


def main(path):
    with h5py.File(os.path.join(FIX, "steps_v3.h5"), "r") as f3, \
            h5py.File(os.path.join(FIX, "steps_v4.h5"), "r") as f4:
        with new_file(path) as out:
            subset_case(out, f3["cases"][V3], "subset.v3.ok")
            subset_case(out, f4["cases"][V4], "subset.v4.ok")
            subset_case(out, f3["cases"][V3], "subset.v3.live.ok", live=True)
            subset_case(out, f3["cases"][V3], "subset.v3.token_unlisted", "token_unlisted")
            subset_case(out, f3["cases"][V3], "subset.v3.wrong_logits", "wrong_logits")
        with new_file(path[:-3] + "_bad.h5") as out:
            subset_case(out, f3["cases"][V3], "bad.logits_rows_unlisted", lrows_extra=(1,))


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].endswith(".h5"):
        sys.exit("usage: subset_dumps.py OUT.h5")
    main(sys.argv[1])
