#!/usr/bin/python3
"""Goldens of the synthetic DSpark step (SPEC.md §13.9), written at test time.

Why this exists: dspark_step composes the DSpark ops with a RoPE attention
whose in-block mask and positions are what DSpark engines got wrong; its
goldens come from here, NumPy float64 from the spec alone (sharing no code
with reference/), with every act(...) of the spec one rnd(..., dt). The
committed fixtures are at their size budget (test_gen.py), so these files
are generated into the build folder by CTest `dspark_step`
(tools/gen/check_dspark_step.py), never committed.

  --goldens OUT.h5   small cases (H = 64, M = 4, N = 4 block tokens, C = 5
                     context rows, L = 2 layers): both block masks, logit
                     scale 1 and 2, bfloat16 and float32
  --full OUT.h5      V4.1-shaped cases, H = 5120 and 7168, M = 4, N = 4 (a few
                     context rows, small V and F, as fullsize.h5 does)
  --dumps OUT.h5     dumps (observed/) of one bfloat16 case as a correct engine
                     (`dspark_step.dump.ok`) and as each buggy engine computes
                     it (`dspark_step.dump.<DIAGNOSIS>`): the block one position
                     early, the in-block mask causal, the aux layers read one
                     off, the Markov bias not added
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
from numerics import f32, rnd

I64, F32 = "int64", "float32"
EPS, HC_EPS, ITERS, POST_MULT = 1e-6, 1e-6, 20, 2.0


def rope(x, pos, dt):
    """Rotate-half over all H: pairs (i, i + H/2), angle pos * 10000^(-2i/H)."""
    h = x.shape[-1]
    half = h // 2
    theta = np.power(10000.0, -2.0 * np.arange(half) / h)
    ang = np.asarray(pos, dtype=np.float64)[:, None] * theta[None, :]
    cs, sn = np.cos(ang), np.sin(ang)
    y = x.copy()
    y[:, :half] = rnd(x[:, :half] * cs - x[:, half:2 * half] * sn, dt)
    y[:, half:2 * half] = rnd(x[:, half:2 * half] * cs + x[:, :half] * sn, dt)
    return y


def kv(x, w, pos, p, dt):
    """(K, V): V = RMSNorm(act(W_kv x); kv_norm_w), K = rope(V)."""
    v = ops.rmsnorm(rnd(ops.linear(x, w["W_kv"]), dt), w["kv_norm_w"], EPS, p["rounding"], dt)
    return rope(v, pos, dt), v


def attention(u, w, kc, vc, positions, p, dt):
    """One head over [context keys; block keys], the block's masked when causal."""
    t, h = u.shape
    q = rope(rnd(ops.linear(u, w["W_q"]), dt), positions, dt)
    kb, vb = kv(u, w, positions, p, dt)
    keys, vals = np.concatenate([kc, kb]), np.concatenate([vc, vb])
    s = (q @ keys.T) / np.sqrt(h)
    if p["block_mask"] == "causal":
        c = kc.shape[0]
        for i in range(t):
            s[i, c + i + 1:] = -np.inf
    s = np.exp(s - s.max(axis=1, keepdims=True))
    o = rnd((s / s.sum(axis=1, keepdims=True)) @ vals, dt)
    return rnd(ops.linear(o, w["block.W_a"]), dt)


def step(v, p):
    """The outputs of §13.9 from the inputs v (a dict of float64 / int64 arrays)."""
    dt, m, t = p["dt"], p["M"], p["T"]
    _, main_x = dspark.main_proj_norm(v["aux"], {"main_proj_weight": v["main_proj_weight"]},
                                      v["main_norm_weight"], EPS, p["rounding"], dt)
    r = np.repeat(v["embed_table"][v["ids"]][:, None, :], m, axis=1)
    pre, inputs, mixes = None, [], []
    for l in range(p["L"]):
        pfx = f"layer.{l}/"
        w = {k[len(pfx):]: x for k, x in v.items() if k.startswith(pfx)}
        kc, vc = kv(main_x, w, v["ctx_positions"], p, dt)
        for which in ("attn", "ffn"):
            post, comb, u, pre_out = dspark.hc_pre_delayed(
                r, w[f"block.hc_{which}_fn"], w[f"block.hc_{which}_scale"],
                w[f"block.hc_{which}_base"], EPS, HC_EPS, HC_EPS, POST_MULT, ITERS, dt,
                pre_in=pre, norm_weight=w[f"block.{which}_norm_w"], norm_eps=EPS)
            if which == "attn":
                out = attention(u, w, kc, vc, v["positions"], p, dt)
            else:
                out = ops.swiglu_ffn(u, w["block.W_gate"], w["block.W_up"], w["block.W_down"], dt)
            r = ops.hc_post(out, r, post, comb, dt)
            pre = pre_out
            inputs.append(u)
            mixes.append(pre_out)
    h = dspark.hc_collapse(r, pre, dt)
    base = rnd(ops.linear(ops.rmsnorm(h, v["norm_weight"], EPS, p["rounding"], dt),
                          v["lm_head_weight"]), dt)
    prev, emb, logits, tok = v["ids"][0], [], [], []
    for k in range(t):
        e, z, d = dspark.markov_bias(base[k:k + 1], np.array([prev]), v["markov_w1"],
                                     v["markov_w2"], dt, p["logit_scale"])
        emb.append(e[0])
        logits.append(z[0])
        tok.append(d[0])
        prev = d[0]
    emb = np.array(emb)
    conf = dspark.confidence(h, emb, v["conf_weight"])
    return {"main_x": (main_x, dt), "sublayer_inputs": (np.array(inputs), dt),
            "pre_mixes": (np.array(mixes), F32), "streams": (r, dt), "h": (h, dt),
            "base_logits": (base, dt), "markov_embed": (emb, dt), "logits": (np.array(logits), dt),
            "token": (np.array(tok, dtype=np.int64), I64), "confidence": (conf, F32)}


def inputs(rng, p):
    """Inputs of one case: a request whose block starts right after its context."""
    dt, c, t, h, vocab, r = p["dt"], p["C"], p["T"], p["H"], p["V"], p["R"]
    start = int(rng.integers(10, 4000))
    inp = {"aux": (V.hidden(rng, (c, p["P"], h), dt), dt),
           "ctx_positions": (np.arange(start, start + c, dtype=np.int64), I64),
           "ids": (np.concatenate([V.token_ids(rng, 1, vocab), np.full(t - 1, 5)]).astype(np.int64),
                   I64),
           "positions": (np.arange(start + c, start + c + t, dtype=np.int64), I64),
           "embed_table": (V.hidden(rng, (vocab, h), dt), dt),
           "main_proj_weight": (V.linear_weight(rng, h, p["P"] * h, dt), dt),
           "main_norm_weight": (V.norm_weight(rng, h, dt), dt)}
    for l in range(p["L"]):
        w = V.v4_block(rng, p["M"], h, p["F"], dt)
        w.update({"W_q": V.linear_weight(rng, h, h, dt), "W_kv": V.linear_weight(rng, h, h, dt),
                  "kv_norm_w": V.norm_weight(rng, h, dt)})
        for k, x in w.items():
            inp[f"layer.{l}/{k}"] = (x, F32 if k.startswith("block.hc_") else dt)
    inp.update({"norm_weight": (V.norm_weight(rng, h, dt), dt),
                "lm_head_weight": (V.linear_weight(rng, vocab, h, dt), dt),
                "markov_w1": (V.hidden(rng, (vocab, r), dt), dt),
                "markov_w2": (V.linear_weight(rng, vocab, r, dt), dt),
                "conf_weight": (f32(rng.standard_normal((1, h + r)) / np.sqrt(h + r) * 2.0), F32)})
    return inp


# Each DSpark diagnosis as the engine's mistake (not as the harness's edit of
# its row): what the buggy engine computes from the correct inputs.
def _early(v, p):
    v["positions"] = v["positions"] - 1  # the block one position early


def _causal(v, p):
    p["block_mask"] = "causal"


def _aux(v, p):
    v["aux"] = np.roll(v["aux"], -1, axis=1)  # the target layers read one off, cyclically


def _dropped(v, p):
    v["markov_w2"] = np.zeros_like(v["markov_w2"])  # no bias added


MISTAKES = {"DSPARK_POSITIONS_SHIFTED": _early, "DSPARK_CAUSAL_BLOCK_MASK": _causal,
            "DSPARK_AUX_LAYERS_WRONG": _aux, "DSPARK_MARKOV_BIAS_DROPPED": _dropped}


def case(fname, cid, seed, p, mistake=None):
    rng = np.random.default_rng(seed)
    inp = inputs(rng, p)
    v, pe = {k: x for k, (x, _) in inp.items()}, dict(p)
    if mistake:
        MISTAKES[mistake](v, pe)
    exp = step(v, pe)
    attrs = {"op": "dspark_step", "family": "deepseek_v4", "seed": seed, "eps": EPS,
             "rounding": p["rounding"], "hc_mult": p["M"], "hc_eps": HC_EPS,
             "sinkhorn_iters": ITERS, "num_layers": p["L"], "block_mask": p["block_mask"]}
    if p["logit_scale"] != 1.0:
        attrs["logit_scale"] = p["logit_scale"]
    return writer.Case(fname, cid, attrs, inp, exp)


SMALL = {"T": 4, "C": 5, "H": 64, "M": 4, "V": 97, "F": 96, "R": 8, "P": 3, "L": 2, "rounding": "fused"}


def small_cases(fname):
    out, seed = [], 31
    for dt in ("bfloat16", "float32"):
        for mask in ("non_causal", "causal"):
            for scale in (1.0, 2.0):
                p = dict(SMALL, dt=dt, block_mask=mask, logit_scale=scale)
                cid = f"dspark_step.{dt}.{mask}.s{scale:g}.T4.C5.H64.L2"
                out.append(case(fname, cid, seed, p))
                seed += 1
    return out


def dump_cases(fname):
    """One correct case (`ok`) and one per mistake, from the same inputs."""
    p = dict(SMALL, dt="bfloat16", block_mask="non_causal", logit_scale=1.0)
    return [case(fname, "dspark_step.dump." + (m or "ok"), 77, p, m)
            for m in (None, *MISTAKES)]


def write_dumps(path):
    """dump_cases with their outputs as observed/ (what the engine produced)."""
    writer.write_file(path, "dspark_step dumps of known DSpark bugs (tools/gen/dspark_step.py)",
                      dump_cases(os.path.basename(path)))
    with h5py.File(path, "r+") as f:  # the writer links equal datasets: read all first
        got = {cid: {k: (d[()], dict(d.attrs)) for k, d in f["cases"][cid]["expected"].items()}
               for cid in f["cases"]}
        for cid, outs in got.items():
            del f["cases"][cid]["expected"]
            g = f["cases"][cid].create_group("observed")
            for k, (data, attrs) in outs.items():
                g.create_dataset(k, data=data).attrs.update(attrs)


def full_cases(fname):
    out = []
    for h in (5120, 7168):
        p = dict(SMALL, H=h, C=3, V=256, F=128, R=16, dt="bfloat16", block_mask="non_causal",
                 logit_scale=1.0, rounding="eager")
        out.append(case(fname, f"dspark_step.full.bfloat16.T4.C3.H{h}.L2", h, p))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goldens")
    ap.add_argument("--full")
    ap.add_argument("--dumps")
    a = ap.parse_args()
    if a.dumps:
        write_dumps(a.dumps)
    if a.goldens:
        writer.write_file(a.goldens, "dspark_step goldens (tools/gen/dspark_step.py)",
                          small_cases(os.path.basename(a.goldens)))
    if a.full:
        writer.write_file(a.full, "dspark_step V4.1-shaped goldens (tools/gen/dspark_step.py)",
                          full_cases(os.path.basename(a.full)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
