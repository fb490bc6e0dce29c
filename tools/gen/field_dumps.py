#!/usr/bin/python3
"""Dumps of the MTP bugs seen in the field (SPEC.md §12.2, §12.4), for `mtpcheck verify`.

Each case takes a bundled golden's inputs and writes `observed/` tensors as the
buggy engine produced them, computed with this generator's own NumPy ops (the
same ones that make the goldens, never the C code), so a diagnosis that names
the bug is checked against an independent construction:

  field.layer_reuse         draft_chain V3 FP8, L=2, pass_step_idx=1 run with layer 0 at every step
  field.head_overwrite      mtp_step V3 FP8: logits from target_head_weight, not the layer's head
  field.head_uninit_zero    mtp_step V3: the engine's head_weight is all zeros (never loaded);
                            inputs/ hold the weights as the engine held them
  field.head_uninit_garbage the same with uninitialised memory (random bf16 bit patterns)
  field.embed_uninit        draft_chain V3: embed_table never loaded (random bit patterns)
  field.scale_dropped       mtp_step V3 FP8: every block scale taken as 1
  field.scale_reciprocal    ... as 1/scale_inv
  field.scale_transposed    eh_proj_hc FP8 ([2,2] scales) with the scale matrices transposed
  field.scale_other_layer   draft_chain V3 FP8: each layer uses the other layer's scales
  field.truncating          mtp_step V3 FP8 whose every bfloat16 store truncates toward zero
  field.truncating_rmsnorm  rmsnorm bf16 T=17 H=1000 whose stores truncate
  field.ok                  control: observed = the golden

Usage: /usr/bin/python3 tools/gen/field_dumps.py fixtures/dumps/field.h5
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases
import numerics as nx
import opdefs
import ops
from bug_dumps import FIX, read, write

STEP = "mtp_step.deepseek_v3.bf16.fused.fp8_w.T4.H136"
CHAIN = "draft_chain.deepseek_v3.bf16.fused.fp8_w8a8.K3.L2.pass1.T4.H136"
HC = "eh_proj_hc.bf16.fp8_w.f32s.M4.T3.H160"
STEP_BF16 = ("steps_v3.h5", "mtp_step.deepseek_v3.bf16.fused.T17.H64")
CHAIN_BF16 = ("chains.h5", "draft_chain.deepseek_v3.bf16.fused.L2.K3.pass1.T3.H64")
NORM = ("norms.h5", "rmsnorm.bf16.fused.glm.T17.H1000")


def spec_p(case_id):
    for s in cases.SPECS:
        if s.case_id == case_id:
            return dict(s.p)
    raise KeyError(case_id)


def compute(op, inputs, p):
    vals = {k: v for k, (v, _) in inputs.items()}
    with np.errstate(all="ignore"):
        return opdefs.OPS[op].compute(vals, p)


def add(out, attrs, cid, inputs, observed):
    g = out["cases"].create_group(cid)
    for k, v in attrs.items():
        g.attrs[k] = v
    write(g.create_group("inputs"), inputs)
    write(g.create_group("observed"), observed)


def scale_names(inputs):
    return [k for k in inputs if k.endswith("scale_inv")]


def wrong_scales(inputs, how):
    inp = dict(inputs)
    for k in scale_names(inputs):
        s, _ = inputs[k]
        if how == "dropped":
            s = np.ones_like(s)
        elif how == "reciprocal":
            s = 1.0 / s
        elif how == "transposed" and s.shape[0] == s.shape[1]:
            s = s.T.copy()
        elif how == "other_layer":
            layer = int(k.split("/")[0].split(".")[1])
            s = inputs[k.replace("layer.%d/" % layer, "layer.%d/" % (1 - layer))][0]
        inp[k] = (s, "float32")
    return inp


def garbage(shape, rng):
    """bf16 values read from uninitialised memory: random bit patterns (NaN/Inf kept out)."""
    bits = rng.integers(0, 1 << 16, size=shape, dtype=np.int64).astype(np.uint16)
    vals = nx.bits_to_float(bits, "bfloat16")
    return np.where(np.isfinite(vals), vals, 0.0)


def with_truncation(fn):
    saved = ops.rnd
    ops.rnd = nx.truncate
    try:
        return fn()
    finally:
        ops.rnd = saved


def fp8_cases(out, f):
    src = f["cases"][STEP]
    attrs, inp, exp = dict(src.attrs), read(src["inputs"]), read(src["expected"])
    p = spec_p(STEP)
    add(out, attrs, "field.ok", inp, exp)
    hv = dict(inp)
    hv["head_weight"] = inp["target_head_weight"]
    del hv["head_scale_inv"]
    add(out, attrs, "field.head_overwrite", inp, compute("mtp_step", hv, p))
    for how in ("dropped", "reciprocal"):
        add(out, attrs, "field.scale_" + how, inp, compute("mtp_step", wrong_scales(inp, how), p))
    src = f["cases"][HC]          # square [2,2] scale matrices: a transpose can index them
    hattrs, hinp = dict(src.attrs), read(src["inputs"])
    add(out, hattrs, "field.scale_transposed", hinp,
        compute("eh_proj_hc", wrong_scales(hinp, "transposed"), spec_p(HC)))
    add(out, attrs, "field.truncating", inp,
        with_truncation(lambda: compute("mtp_step", inp, p)))
    src = f["cases"][CHAIN]
    attrs, inp = dict(src.attrs), read(src["inputs"])
    p = spec_p(CHAIN)
    add(out, attrs, "field.layer_reuse", inp, compute("draft_chain", inp, dict(p, pass_step_idx=0)))
    add(out, attrs, "field.scale_other_layer", inp,
        compute("draft_chain", wrong_scales(inp, "other_layer"), p))


def uninit_cases(out, rng):
    fname, cid = STEP_BF16
    with h5py.File(os.path.join(FIX, fname), "r") as f:
        src = f["cases"][cid]
        attrs, inp = dict(src.attrs), read(src["inputs"])
    p = spec_p(cid)
    for kind in ("zero", "garbage"):
        w, dt = inp["head_weight"]
        bad = dict(inp)
        bad["head_weight"] = (np.zeros_like(w) if kind == "zero" else garbage(w.shape, rng), dt)
        add(out, attrs, "field.head_uninit_" + kind, bad, compute("mtp_step", bad, p))
    fname, cid = CHAIN_BF16
    with h5py.File(os.path.join(FIX, fname), "r") as f:
        src = f["cases"][cid]
        attrs, inp = dict(src.attrs), read(src["inputs"])
    bad = dict(inp)
    bad["embed_table"] = (garbage(inp["embed_table"][0].shape, rng), inp["embed_table"][1])
    add(out, attrs, "field.embed_uninit", bad, compute("draft_chain", bad, spec_p(cid)))
    fname, cid = NORM
    with h5py.File(os.path.join(FIX, fname), "r") as f:
        src = f["cases"][cid]
        attrs, inp = dict(src.attrs), read(src["inputs"])
    add(out, attrs, "field.truncating_rmsnorm", inp,
        with_truncation(lambda: compute("rmsnorm", inp, spec_p(cid))))


def main(path):
    tmp = path + ".tmp"
    rng = np.random.default_rng(12)
    with h5py.File(tmp, "w") as out:
        out.attrs["format"] = "mtpcheck-fixture"
        out.attrs["format_version"] = np.int64(2)
        out.attrs["generator"] = "tools/gen/field_dumps.py"
        out.attrs["created"] = "2026-12-01T00:00:00Z"
        out.attrs["description"] = "observed outputs of MTP bugs seen in the field (SPEC.md §12.4)"
        out.create_group("cases")
        with h5py.File(os.path.join(FIX, "fp8.h5"), "r") as f:
            fp8_cases(out, f)
        uninit_cases(out, rng)
    os.replace(tmp, path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(FIX, "dumps", "field.h5"))
