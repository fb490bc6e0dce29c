#!/usr/bin/python3
"""Captured-block steps and chains (FORMAT.md version 2, SPEC.md §12.3).

Why this exists: a real engine's MTP block (MLA/DSA attention + MoE) is a
black box to mtpcheck; a dump carries the block's input and output as the
engine captured them, and the harness judges the glue around it. To test
that without a real engine, this file plays the engine: the glue is written
here from the spec (NumPy float64, sharing no code with reference/), and the
block is a small attention-free mixer that exists only here (a causal
running mean over tokens, sigmoid gates, a fixed mixing of the hc streams),
so the harness cannot recompute it and must take its output as given. Each
glue bug of SPEC.md §8 can be injected, as the buggy engine would run it.

  --fixture OUT.h5   small goldens (expected/), committed as fixtures/captured.h5
                     (also written by mtpgen.py, which --check compares)
  --dumps OUT.h5     small dumps (observed/): controls that pass and each glue
                     bug, named in the case id
  --real DIR         real sizes (H = 7168, V = 129280, M = 4): the same kinds of
                     dumps in DIR/steps.h5, chains_l1.h5, chains_l2.h5 (2.5 GB
                     each), generated at test time (never committed)
  --T N              tokens of the real-size cases (default 4)
  --cases IDS        with --real: only these case ids (for cost measurements)
  --live             with --dumps or --real: each weight by row subset carries
                     live_sha256 of the whole parameter, as a capture that
                     hashes what the engine holds records it (FORMAT.md v2
                     rule 14: informational on a subset)

Case ids: <kind>.<family>[.<contract>][.L<l>.K<k>].<bug or ok>; the bug part is
the diagnosis the harness must name (MISSING_POS0_MASK on a declared
pos0_mask = 1). A `sub_<what>` part makes the dump carry weights by row subset
(FORMAT.md v2 rules 1-6, see `subsets`): `sub_proj` the projections, `sub_head`
the head (with logits_rows), `sub_embed` the embedding table, `sub_all` all three.

The engine is captured_engine.py, the cases captured_cases.py, the
weights-by-subset rewriting captured_subset.py; this file writes them.
"""

import argparse
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tp
import writer
from captured_cases import PLAN, SMALL_ONLY, build
from captured_engine import BF, CHUNK, Mat, Pending, resolve_pending
from captured_subset import LogitsAt, Sub, subsets

FIXTURE = "captured.h5"  # the committed goldens, also written by mtpgen.py


# --------------------------------------------------------------------------- writing

class V2Writer(writer._FileWriter):
    """The generator's writer with format_version 2, observed/ groups, and
    large matrices written in chunks once, then soft-linked."""

    def __init__(self, path, description):
        super().__init__(path, description)
        writer._set_attr(self.f, "format_version", 2)
        self.mats = {}

    def matrix(self, group, name, mat):
        parts = name.split("/")
        parent = group
        for q in parts[:-1]:
            parent = parent.require_group(q)
        if id(mat) in self.mats:
            parent[parts[-1]] = h5py.SoftLink(self.mats[id(mat)])
            return
        big = mat.bits.size > 1 << 24
        kw = {} if big else {"compression": "gzip", "compression_opts": 6, "shuffle": True}
        ds = parent.create_dataset(parts[-1], shape=mat.shape, dtype="<u2", **kw)
        for r in range(0, mat.shape[0], CHUNK):
            ds[r:r + CHUNK] = mat.bits[r:r + CHUNK]
        writer._set_attr(ds, "dtype", BF)
        self.mats[id(mat)] = ds.name

    def subset(self, group, name, sub, dt):
        """A weight by row subset: its own dataset (never linked, so that
        full_rows is never set on another weight's data), with full_rows."""
        parts = name.split("/")
        parent = group
        for q in parts[:-1]:
            parent = parent.require_group(q)
        data = writer.numerics.encode(sub.data, dt)
        ds = parent.create_dataset(parts[-1], data=data, compression="gzip",
                                   compression_opts=6, shuffle=True)
        writer._set_attr(ds, "dtype", dt)
        writer._set_attr(ds, "full_rows", int(sub.full_rows))
        if sub.live:
            writer._set_attr(ds, "live_sha256", sub.live)

    def v2case(self, cid, c, section):
        g = self.cases.create_group(cid)
        for k, val in c["attrs"].items():
            writer._set_attr(g, k, val)
        gi = g.create_group("inputs")
        for name, (val, dt) in sorted(c["inputs"].items()):
            if isinstance(val, Mat):
                self.matrix(gi, name, val)
            elif isinstance(val, Sub):
                self.subset(gi, name, val, dt)
            else:
                self.dataset(gi, name, val, dt)
        go = g.create_group(section)
        for name, (val, dt) in sorted(c["outputs"].items()):
            if isinstance(val, LogitsAt):
                val, dt = val.pending.logits[..., val.rows], val.pending.dtype
            elif isinstance(val, Pending):
                val, dt = (val.logits, val.dtype) if name.endswith("logits") else (val.token, dt)
            self.dataset(go, name, val, dt)


def write(path, cases, section, description, live=False):
    resolve_pending()
    for _, c in cases:
        if "subset" in c:
            subsets(c, c["subset"][0], np.random.default_rng(c["subset"][1]), live)
    w = V2Writer(path, description)
    try:
        for cid, c in cases:
            w.v2case(cid, c, section)
    finally:
        w.close()


def write_fixture(path):
    """fixtures/captured.h5: the passing cases as goldens (expected/)."""
    plan = [e for e in PLAN if e[5] is None and ".sub_" not in e[0]]  # subsets: dumps only
    write(path, build(plan, 64, 512, 5, 7100, True) + tp.fixture_cases(), "expected",
          "captured-block mtp_step and draft_chain goldens (FORMAT.md v2)")


def write_dumps(path, live=False):
    write(path, build(PLAN, 64, 512, 5, 7200, True), "observed",
          "captured-block dumps: controls and each glue bug, named in the case id", live)


# The real-size set is split so that no file makes a reader load the 1.85 GB
# head more than about ten times (a chain with L layers loads it L + 1 times).
REAL_FILES = (("steps.h5", lambda cid: cid.startswith("step.")),
              ("chains_l1.h5", lambda cid: ".L1." in cid),
              ("chains_l2.h5", lambda cid: ".L2." in cid))


# the subset cases judged at real size too (the others at small size only)
SUB_REAL = ("step.v3.sub_all.ok", "step.v4.deferred.sub_all.ok", "step.v3.sub_proj.PRE_NORM_RECYCLE",
            "chain.v3.L1.K3.sub_all.ok", "chain.v4.deferred.L2.K3.sub_all.ok")


def write_real(out_dir, t, only=None, live=False):
    plan = [e for e in PLAN if (not only and e[5] not in SMALL_ONLY and
                                (".sub_" not in e[0] or e[0] in SUB_REAL)) or
            (only and e[0] in only)]
    built = build(plan, 7168, 129280, t, 7300, False)
    os.makedirs(out_dir, exist_ok=True)
    for fname, pick in REAL_FILES:
        cases = [c for c in built if pick(c[0])]
        if cases:
            write(os.path.join(out_dir, fname), cases, "observed",
                  "real-size captured-block dumps (H 7168, V 129280, M 4)", live)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixture", metavar="OUT")
    ap.add_argument("--dumps", metavar="OUT")
    ap.add_argument("--real", metavar="DIR")
    ap.add_argument("--T", type=int, default=4)
    ap.add_argument("--cases", metavar="IDS", help="--real: only these case ids (comma separated)")
    ap.add_argument("--live", action="store_true",
                    help="subsets carry live_sha256 of the whole parameter")
    a = ap.parse_args(argv)
    if not (a.fixture or a.dumps or a.real):
        ap.error("nothing to write (--fixture, --dumps or --real)")
    np.seterr(all="ignore")
    if a.fixture:
        write_fixture(a.fixture)
    if a.dumps:
        write_dumps(a.dumps, a.live)
    if a.real:
        write_real(a.real, a.T, set(a.cases.split(",")) if a.cases else None, a.live)
    return 0


if __name__ == "__main__":
    sys.exit(main())
