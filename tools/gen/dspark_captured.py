#!/usr/bin/python3
"""Goldens and dumps of the captured-block DSpark step (SPEC.md §13.9.1),
written at test time.

Why this exists: with block = captured, dspark_step takes the engine's
decoder layers as a black box (their input and outputs are inputs of the
case) and judges the glue around them; its goldens come from here, NumPy
float64 from the spec alone (no code shared with reference/), every act(...)
of the spec one rnd(..., dt). Like dspark_step.py's, the files are written
into a temporary folder by CTest `dspark_captured` (check_dspark_captured.py),
never committed (the fixtures are at their size budget).

  --goldens OUT.h5   V4.1 (M = 4) and Qwen3 cases, bfloat16 and float32,
                     logit scale 1 and 2, one with the block's positions
                     clamped by max_position, Qwen3 under both add_norm_input
  --dumps OUT.h5     observed/ of one V4.1 and one Qwen3 case as a correct
                     engine (`.ok`) and as each buggy engine computes it
                     (`.<DIAGNOSIS>`): the block one position early, the aux
                     layers read one off, the Markov bias not added
"""

import argparse
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dspark
import ops
import values as V
import writer
from numerics import f32

I64, F32 = "int64", "float32"
EPS = 1e-6
BASE = {"T": 4, "C": 5, "H": 64, "M": 4, "V": 97, "R": 8, "P": 3, "rounding": "eager",
        "logit_scale": 1.0, "max_position": None, "add_norm_input": "residual"}


def final_add_norm(x, residual, weight, p, dt):
    """Qwen3's norm(h, residual) (§2.3): under add_norm_input = sum the
    unrounded sum is normalised, else the stored (rounded) one."""
    if p["add_norm_input"] == "residual":
        return ops.add_rmsnorm(x, residual, weight, EPS, p["rounding"], dt)[0]
    s = x + residual
    return ops.rmsnorm(s, weight, EPS, p["rounding"], dt)


def step(v, p):
    """The outputs of §13.9.1 from the inputs v."""
    dt, t, m, qwen3 = p["dt"], p["T"], p["M"], p["variant"] == "qwen3"
    proj, main_x = dspark.main_proj_norm(v["aux"], {"main_proj_weight": v["main_proj_weight"]},
                                         v["main_norm_weight"], EPS, p["rounding"], dt)
    last = int(v["ctx_positions"].max()) if len(v["ctx_positions"]) else -1
    pos = last + 1 + np.arange(t, dtype=np.int64)
    if p["max_position"] is not None:
        pos = np.minimum(pos, p["max_position"])
    e = v["embed_table"][v["ids"]]
    out = {"main_proj_out": (proj, dt), "main_x": (main_x, dt), "positions": (pos, I64)}
    if qwen3:
        out["block_in"] = (e, dt)
        h = final_add_norm(v["block_out"], v["block_residual"], v["norm_weight"], p, dt)
        hn = h
    else:
        out["block_in"] = (np.repeat(e[:, None, :], m, axis=1), dt)
        s = ops.hc_post(v["block_out"], v["block_residual"], v["post_mix"], v["comb_mix"], dt)
        out["streams"] = (s, dt)
        h = dspark.hc_collapse(s, v["pre_mix"], dt)
        hn = ops.rmsnorm(h, v["norm_weight"], EPS, p["rounding"], dt)
    out.update(dspark.head(h, hn, v, dt, p["logit_scale"], v.get("conf_bias")))
    return out


def inputs(rng, p):
    """One request: C context rows at consecutive target positions, a block
    of a bonus token and T-1 mask tokens, the captured layers' outputs."""
    dt, c, t, h, m, vocab, r = p["dt"], p["C"], p["T"], p["H"], p["M"], p["V"], p["R"]
    start = int(rng.integers(10, 4000))
    ids = np.concatenate([V.token_ids(rng, 1, vocab), np.full(t - 1, 5)]).astype(np.int64)
    table = V.hidden(rng, (vocab, h), dt)
    inp = {"aux": (V.hidden(rng, (c, p["P"], h), dt), dt),
           "ctx_positions": (np.arange(start, start + c, dtype=np.int64), I64),
           "ids": (ids, I64), "embed_table": (table, dt),
           "main_proj_weight": (V.linear_weight(rng, h, p["P"] * h, dt), dt),
           "main_norm_weight": (V.norm_weight(rng, h, dt), dt)}
    if p["variant"] == "qwen3":
        inp.update({"block_in": (table[ids], dt), "block_out": (V.hidden(rng, (t, h), dt), dt),
                    "block_residual": (V.hidden(rng, (t, h), dt), dt)})
    else:
        pre = f32(1.0 / (1.0 + np.exp(-rng.standard_normal((t, m)))) + 1e-6)
        inp.update({"block_in": (np.repeat(table[ids][:, None, :], m, axis=1), dt),
                    "block_out": (V.hidden(rng, (t, h), dt), dt),
                    "block_residual": (V.hidden(rng, (t, m, h), dt), dt),
                    "post_mix": (V.post_mix(rng, t, m), F32),
                    "comb_mix": (V.comb_mix(rng, t, m), F32), "pre_mix": (pre, F32)})
    inp.update({"norm_weight": (V.norm_weight(rng, h, dt), dt),
                "lm_head_weight": (V.linear_weight(rng, vocab, h, dt), dt),
                "markov_w1": (V.hidden(rng, (vocab, r), dt), dt),
                "markov_w2": (V.linear_weight(rng, vocab, r, dt), dt),
                "conf_weight": (f32(rng.standard_normal((1, h + r)) / np.sqrt(h + r) * 2.0), F32)})
    if p["variant"] == "qwen3":
        inp["conf_bias"] = (f32(rng.standard_normal(1)), F32)
    return inp


# Each diagnosis as the engine's mistake: what the buggy engine's glue
# computes from the correct inputs (the layers are captured either way).
def _early(out, v, p):
    pos, dt = out["positions"]
    out["positions"] = (pos - 1, dt)  # the block one position early


def _aux(out, v, p):
    w = step(dict(v, aux=np.roll(v["aux"], -1, axis=1)), p)  # target layers one off
    out["main_proj_out"], out["main_x"] = w["main_proj_out"], w["main_x"]


def _dropped(out, v, p):
    out.update(step(dict(v, markov_w2=np.zeros_like(v["markov_w2"])), p))  # no bias added


MISTAKES = {"DSPARK_POSITIONS_SHIFTED": _early, "DSPARK_AUX_LAYERS_WRONG": _aux,
            "DSPARK_MARKOV_BIAS_DROPPED": _dropped}


def case(fname, cid, seed, p, mistake=None):
    rng = np.random.default_rng(seed)
    inp = inputs(rng, p)
    v = {k: x for k, (x, _) in inp.items()}
    exp = step(v, p)
    if mistake:
        MISTAKES[mistake](exp, v, p)
    del exp["block_in"]  # judged from the captured input (FORMAT.md v2 rule 10)
    attrs = {"op": "dspark_step", "family": "deepseek_v4", "seed": seed, "eps": EPS,
             "rounding": p["rounding"], "hc_mult": p["M"], "hc_eps": 1e-6, "sinkhorn_iters": 20,
             "num_layers": 1, "block": "captured", "dspark_variant": p["variant"]}
    if p["logit_scale"] != 1.0:
        attrs["logit_scale"] = p["logit_scale"]
    if p["max_position"] is not None:
        attrs["max_position"] = p["max_position"]
    if p["variant"] == "qwen3":
        attrs["add_norm_input"] = p["add_norm_input"]
    return writer.Case(fname, cid, attrs, inp, exp)


def golden_cases(fname):
    out, seed = [], 131
    for variant in ("v4.1", "qwen3"):
        for dt in ("bfloat16", "float32"):
            for scale in (1.0, 2.0):
                p = dict(BASE, variant=variant, dt=dt, logit_scale=scale)
                out.append(case(fname, f"dspark_captured.{variant}.{dt}.s{scale:g}", seed, p))
                seed += 1
    p = dict(BASE, variant="v4.1", dt="bfloat16", rounding="fused", max_position=2000)
    out.append(case(fname, "dspark_captured.v4.1.bfloat16.clamped", 7, p))  # start >= 10
    p = dict(BASE, variant="qwen3", dt="bfloat16", add_norm_input="sum")
    out.append(case(fname, "dspark_captured.qwen3.bfloat16.sum", 8, p))
    return out


def v2_file(path, description, cases, observed=False):
    """Writes the cases as a FORMAT.md version 2 file (block = captured);
    observed: their outputs as observed/ (a dump) instead of expected/."""
    writer.write_file(path, description, cases)
    with h5py.File(path, "r+") as f:
        f.attrs["format_version"] = np.int64(2)
        if not observed:
            return
        got = {cid: {k: (d[()], dict(d.attrs)) for k, d in f["cases"][cid]["expected"].items()}
               for cid in f["cases"]}  # the writer links equal datasets: read all first
        for cid, outs in got.items():
            del f["cases"][cid]["expected"]
            g = f["cases"][cid].create_group("observed")
            for k, (data, attrs) in outs.items():
                g.create_dataset(k, data=data).attrs.update(attrs)


def dump_cases(fname):
    out = []
    for variant in ("v4.1", "qwen3"):
        p = dict(BASE, variant=variant, dt="bfloat16")
        for m in (None, *MISTAKES):
            out.append(case(fname, f"dspark_captured.{variant}.dump.{m or 'ok'}", 77, p, m))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goldens")
    ap.add_argument("--dumps")
    a = ap.parse_args()
    if a.goldens:
        v2_file(a.goldens, "captured dspark_step goldens (tools/gen/dspark_captured.py)",
                golden_cases(os.path.basename(a.goldens)))
    if a.dumps:
        v2_file(a.dumps, "captured dspark_step dumps of known DSpark bugs "
                "(tools/gen/dspark_captured.py)", dump_cases(os.path.basename(a.dumps)), True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
