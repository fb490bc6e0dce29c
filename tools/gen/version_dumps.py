#!/usr/bin/python3
"""Files that are valid under the format version they declare, and their
twins under the other version (FORMAT.md: each rule says which versions it
applies to). Built from the bundled goldens with this generator's NumPy ops,
never with the C code.

  /usr/bin/python3 tools/gen/version_dumps.py OUTDIR

Writes, in OUTDIR:
  v1_link_target.h5  v1 dump: step1's prev_hidden is a soft link to step0's
                     observed/recycled (the v1 text allows a soft link to a
                     dataset of another case): both PASSED
  v1_link_source.h5  v1 dump: the observed/ datasets of `donor` are soft
                     links to those of step0: both PASSED
  v2_link_target.h5, v2_link_source.h5   the same as version 2: refused
                     (v2 rule 12: observed/ is never a link nor a link target)
  v1_partial.h5      v1 goldens holding some outputs only: judged on those,
                     partial (partial.step, partial.add_rmsnorm PASSED,
                     partial.wrong FAILED on its hidden_post)
  v2_partial.h5      partial.step as version 2: refused (a golden holds every
                     output)
  v1_ref.h5          a v1 dump with weights by reference: refused
  v1_subset.h5       a v1 dump with a head weight by row subset: refused
"""

import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ops
import subset_dumps
import weights_dumps
from bug_dumps import FIX, V3, attrs_of, read, write

NORM = "add_rmsnorm.bf16.eager.T17.H1000"


def new_file(path, version):
    out = h5py.File(path, "w")
    out.attrs["format"] = "mtpcheck-fixture"
    out.attrs["format_version"] = np.int64(version)
    out.attrs["generator"] = "tools/gen/version_dumps.py"
    out.attrs["created"] = "2026-12-04T00:00:00Z"
    out.create_group("cases")
    return out


def new_case(out, src, cid):
    g = out["cases"].create_group(cid)
    for k, v in attrs_of(src).items():
        g.attrs[k] = v
    return g


def next_step(src, prev_hidden):
    """The V3 step's outputs for another prev_hidden (tools/gen ops)."""
    inp, p = read(src["inputs"]), attrs_of(src)
    exp = read(src["expected"])
    w = {k: v for k, (v, _) in inp.items()}
    dt = exp["hidden_post"][1]
    out = ops.mtp_step_v3(w["embeds"], w["positions"], prev_hidden, w, p, dt)
    return {k: (v, exp[k][1]) for k, v in out.items()}


def links(path, version, source):
    """step0: the golden as a dump; then `step1`, whose prev_hidden links to
    step0's observed/recycled, or (source) `donor`, whose observed/
    datasets link to step0's."""
    with h5py.File(os.path.join(FIX, "steps_v3.h5"), "r") as f, new_file(path, version) as out:
        src = f["cases"][V3]
        exp = read(src["expected"])
        g = new_case(out, src, "step0")
        write(g.create_group("inputs"), read(src["inputs"]))
        write(g.create_group("observed"), exp)
        if source:
            g = new_case(out, src, "donor")
            write(g.create_group("inputs"), read(src["inputs"]))
            go = g.create_group("observed")
            for k in exp:
                go[k] = h5py.SoftLink("/cases/step0/observed/" + k)
            return
        g = new_case(out, src, "step1")
        inp = read(src["inputs"])
        del inp["prev_hidden"]
        gi = g.create_group("inputs")
        write(gi, inp)
        gi["prev_hidden"] = h5py.SoftLink("/cases/step0/observed/recycled")
        write(g.create_group("observed"), next_step(src, exp["recycled"][0]))


def golden(out, src, cid, keep, mutate=None):
    exp = {k: v for k, v in read(src["expected"]).items() if k in keep}
    if mutate:
        vals, dt = exp[mutate]
        exp[mutate] = (-vals, dt)
    g = new_case(out, src, cid)
    write(g.create_group("inputs"), read(src["inputs"]))
    write(g.create_group("expected"), exp)


def partial(path, version):
    keep = ("hidden_post", "logits", "token")
    with h5py.File(os.path.join(FIX, "steps_v3.h5"), "r") as f, new_file(path, version) as out:
        golden(out, f["cases"][V3], "partial.step", keep)
        if version == 1:
            golden(out, f["cases"][V3], "partial.wrong", keep, mutate="hidden_post")
            with h5py.File(os.path.join(FIX, "norms.h5"), "r") as n:
                golden(out, n["cases"][NORM], "partial.add_rmsnorm", ("y",))


def v2_only(outdir):
    with h5py.File(os.path.join(FIX, "steps_v3.h5"), "r") as f:
        src = f["cases"][V3]
        with new_file(os.path.join(outdir, "v1_ref.h5"), 1) as out:
            weights_dumps.add_case(out, src, "ref.v1", {k: "0" * 64 for k in weights_dumps.NAMES})
        with new_file(os.path.join(outdir, "v1_subset.h5"), 1) as out:
            subset_dumps.subset_case(out, src, "subset.v1")


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    for v in (1, 2):
        links(os.path.join(outdir, "v%d_link_target.h5" % v), v, source=False)
        links(os.path.join(outdir, "v%d_link_source.h5" % v), v, source=True)
        partial(os.path.join(outdir, "v%d_partial.h5" % v), v)
    v2_only(outdir)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: version_dumps.py OUTDIR")
    main(sys.argv[1])
