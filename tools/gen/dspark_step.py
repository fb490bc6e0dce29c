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
  --full OUT.h5      V4.1-shaped cases (H = 5120 and 7168, M = 4, N = 4; few
                     context rows, L = 2, small V and F: SPEC.md §13.9 says
                     why), then the five DSpark primitives at V4.1 sizes; made
                     one at a time: 2.4 GB at most, about a minute a size
  --dumps OUT.h5     dumps (observed/) of one bfloat16 case (L = 3 layers,
                     N = 8: the missing delay is faint with fewer) as a correct
                     engine (`dspark_step.dump.ok`) and as each buggy engine
                     computes it (`dspark_step.dump.<DIAGNOSIS>`): the block one
                     position early, the in-block mask causal, the aux layers
                     read one off, the Markov bias not added or keyed on the
                     block's own ids, a plain hc_pre in every sublayer, the
                     collapse with the last attention's pre-mix or with the
                     layer before's FFN pre-mix
"""

import argparse
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases
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
    dt, m = p["dt"], p["M"]
    _, main_x = dspark.main_proj_norm(v["aux"], {"main_proj_weight": v["main_proj_weight"]},
                                      v["main_norm_weight"], EPS, p["rounding"], dt)
    r = np.repeat(v["embed_table"][v["ids"]][:, None, :], m, axis=1)
    pre, inputs, mixes = None, [], []
    for l in range(p["L"]):
        pfx = f"layer.{l}/"
        w = {k[len(pfx):]: x for k, x in v.items() if k.startswith(pfx)}
        kc, vc = kv(main_x, w, v["ctx_positions"], p, dt)
        for which in ("attn", "ffn"):
            hc = (w[f"block.hc_{which}_fn"], w[f"block.hc_{which}_scale"],
                  w[f"block.hc_{which}_base"], EPS, HC_EPS, HC_EPS, POST_MULT, ITERS, dt)
            post, comb, u, pre_out = dspark.hc_pre_delayed(
                r, *hc, pre_in=pre, norm_weight=w[f"block.{which}_norm_w"], norm_eps=EPS)
            if p.get("plain_mhc"):  # the engine's plain hc_pre: its own pre-mix, no delay
                u = ops.hc_pre(r, *hc, norm_weight=w[f"block.{which}_norm_w"], norm_eps=EPS)[2]
            if which == "attn":
                out = attention(u, w, kc, vc, v["positions"], p, dt)
            else:
                out = ops.swiglu_ffn(u, w["block.W_gate"], w["block.W_up"], w["block.W_down"], dt)
            r = ops.hc_post(out, r, post, comb, dt)
            pre = pre_out
            inputs.append(u)
            mixes.append(pre_out)
    # hc_collapse with the last FFN's pre-mix, or the one `collapse_back` sublayers before it
    h = dspark.hc_collapse(r, mixes[-1 - p["collapse_back"]] if p.get("collapse_back") else pre, dt)
    hn = ops.rmsnorm(h, v["norm_weight"], EPS, p["rounding"], dt)
    out = {"main_x": (main_x, dt), "sublayer_inputs": (np.array(inputs), dt),
           "pre_mixes": (np.array(mixes), F32), "streams": (r, dt)}
    out.update(dspark.head(h, hn, v, dt, p["logit_scale"], markov_on_ids=p.get("markov_on_ids")))
    return out


# The weights only ops.linear reads are held as float32 as soon as drawn (exact for
# every dtype a case uses; linear makes each block of rows float64): a V4.1-sized
# step then needs half the memory, and never two float64 [H, H] weights at once.
def _lw(rng, n_out, n_in, dt):
    return V.linear_weight(rng, n_out, n_in, dt).astype(np.float32)


def _lean(w):
    return {k: x.astype(np.float32) if k.startswith("block.W_") else x for k, x in w.items()}


def inputs(rng, p):
    """Inputs of one case: a request whose block starts right after its context."""
    dt, c, t, h, vocab, r = p["dt"], p["C"], p["T"], p["H"], p["V"], p["R"]
    start = int(rng.integers(10, 4000))
    inp = {"aux": (V.hidden(rng, (c, p["P"], h), dt), dt),
           "ctx_positions": (np.arange(start, start + c, dtype=np.int64), I64),
           "ids": (np.concatenate([V.token_ids(rng, 1, vocab), np.full(t - 1, 5)]).astype(np.int64),
                   I64),
           "positions": (np.arange(start + c, start + c + t, dtype=np.int64), I64),
           "embed_table": (V.hidden(rng, (vocab, h), dt, 0.05), dt),
           "main_proj_weight": (_lw(rng, h, p["P"] * h, dt), dt),
           "main_norm_weight": (V.norm_weight(rng, h, dt), dt)}
    for l in range(p["L"]):
        w = _lean(V.v4_block(rng, p["M"], h, p["F"], dt))
        w.update({"W_q": _lw(rng, h, h, dt), "W_kv": _lw(rng, h, h, dt),
                  "kv_norm_w": V.norm_weight(rng, h, dt)})
        for k, x in w.items():
            inp[f"layer.{l}/{k}"] = (x, F32 if k.startswith("block.hc_") else dt)
    inp.update({"norm_weight": (V.norm_weight(rng, h, dt), dt),
                "lm_head_weight": (_lw(rng, vocab, h, dt), dt),
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


def _on_ids(v, p):
    p["markov_on_ids"] = True


def _plain(v, p):
    p["plain_mhc"] = True


def _collapse_attn(v, p):
    p["collapse_back"] = 1  # hc_collapse with the last attention's pre-mix


def _collapse_layer(v, p):
    p["collapse_back"] = 2  # hc_collapse with the layer before's FFN pre-mix


MISTAKES = {"DSPARK_POSITIONS_SHIFTED": _early, "DSPARK_CAUSAL_BLOCK_MASK": _causal,
            "DSPARK_AUX_LAYERS_WRONG": _aux, "DSPARK_MARKOV_BIAS_DROPPED": _dropped,
            "DSPARK_MARKOV_KEYED_ON_IDS": _on_ids, "DSPARK_PRE_MIX_NOT_DELAYED": _plain,
            "DSPARK_COLLAPSE_ATTN_PRE_MIX": _collapse_attn,
            "DSPARK_COLLAPSE_LAYER_PRE_MIX": _collapse_layer}


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
    p = dict(SMALL, dt="bfloat16", block_mask="non_causal", logit_scale=1.0, T=8, L=3)
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


# V4.1-shaped where it matters (SPEC.md §13.9): H and M; L = 2, the fewest with a
# pre-mix carried from one layer to the next; small C, V, F and R
FULL = dict(SMALL, C=3, V=256, F=128, R=16, dt="bfloat16", block_mask="non_causal",
            logit_scale=1.0, rounding="eager")


def full_cases(fname, sizes=(5120, 7168), vocab=129280):
    """The V4.1-shaped steps, then the primitives; a generator: one in memory."""
    for h in sizes:
        yield case(fname, f"dspark_step.full.bfloat16.T4.C3.H{h}.L2", h, dict(FULL, H=h))
    for s in full_op_specs(fname, sizes, vocab):
        yield cases.build(s)


def full_op_specs(fname, sizes, vocab):
    """The five DSpark primitives at V4.1 sizes: H = 5120 and 7168, M = 4, P = 3
    aux layers, DeepSeek's vocabulary V = 129280 (the Markov rank R = 64 is a
    guess: no V4.1 config was read for it)."""
    out, v4, bf = [], "deepseek_v4", "bfloat16"

    def add(cid, op, seed_key=None, **p):
        out.append(cases.Spec(fname, cid, op, v4, dict(p, dt=bf), seed_key or cid))
    for h in sizes:  # one rounding a size (both at small sizes in dspark.h5): one [H, 3H] draw
        rd = "eager" if h == max(sizes) else "fused"
        add(f"main_proj_norm.bf16.{rd}.P3.T3.H{h}", "main_proj_norm", T=3, H=h, P=3, rounding=rd)
        for carried in (False, True):
            add("hc_pre_delayed.bf16.M4.it20.%s.norm.T4.H%d" % ("carried" if carried else "layer0", h),
                "hc_pre_delayed", f"full.hc_pre_delayed.{h}", T=4, H=h, M=4, iters=20,
                carried=carried, norm=True)
        add(f"hc_collapse.bf16.M4.T4.H{h}", "hc_collapse", T=4, H=h, M=4)
        add(f"confidence.bf16.nobias.R64.T4.H{h}", "confidence", T=4, H=h, R=64, bias=False)
    add(f"markov_bias.bf16.R64.T4.V{vocab}", "markov_bias", T=4, V=vocab, R=64)
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
        writer.write_file(a.full, "dspark_step and the DSpark primitives, V4.1-shaped "
                          "(tools/gen/dspark_step.py)", full_cases(os.path.basename(a.full)),
                          compress=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
