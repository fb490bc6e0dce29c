#!/usr/bin/python3
"""The captured-block cases: which steps and chains are generated, each with
its family, contract, chain shape and injected bug (PLAN), and how a case's
inputs and outputs are built from the engine of captured_engine.py,
including the field bugs of SPEC.md §12.4 (another head, truncating stores,
dropped FP8 scales) and the engine conventions of §12.1.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fp8
import numerics as nx
import ops
from captured_engine import BF, F32, I64, Mat, QMat, engine_step, layer_weights

# --------------------------------------------------------------------------- cases

CAP_DT = {"block_in": BF, "block_out": BF, "block_residual": BF, "post_mix": F32, "comb_mix": F32}
OUT_DT = {"hidden_pre": BF, "hidden_post": BF, "recycled": BF, "streams": BF,
          "head_hidden": BF, "logits": F32, "token": I64}


def attrs_of(family, contract, seed, k=None, l=None, variant="cuda", rounding="fused"):
    a = {"op": "mtp_step" if k is None else "draft_chain", "family": family, "seed": seed,
         "eps": 1e-6, "rounding": rounding, "block": "captured", "pos0_mask": 1}
    if family == "deepseek_v4":
        a.update({"hc_mult": 4, "hc_eps": 1e-6, "sinkhorn_iters": 20, "post_mult": 2.0,
                  "block_contract": contract, "hc_head_variant": variant})
    if k is not None:
        a.update({"num_steps": k, "num_layers": l, "pass_step_idx": 1})
    return a


def weight_inputs(prefix, lw):
    """A layer's weights as inputs; a QMat becomes X_weight (e4m3) and
    X_scale_inv (its block scales)."""
    ins = {}
    for n, w in lw.items():
        if isinstance(w, QMat):
            ins[prefix + n] = (w.wq, fp8.E4M3)
            ins[prefix + n.replace("_weight", "_scale_inv")] = (w.scale, w.scale_dtype)
        else:
            ins[prefix + n] = (w, F32 if n.startswith("hc_head") else BF)
    return ins


def make_case(cid, attrs, shared, t, bug, rng):
    """One case as {attrs, inputs, outputs}; inputs may hold Mat objects."""
    p = dict(attrs)
    h, m = shared["h"], p.get("hc_mult", 1)
    chain = p["op"] == "draft_chain"
    layers = shared["layers"][: p.get("num_layers", 1)]
    pos = np.concatenate([[0], rng.integers(1, 4000, t - 1)]).astype(np.int64)
    prev = nx.rnd(rng.standard_normal((t, m * h)) * 0.8, BF)
    ins = {"positions": (pos, I64), "prev_hidden": (prev, BF)}
    outs = {}
    if not chain:
        ids = rng.integers(0, shared["v"], t)
        E = shared["embed"].rows(ids)
        lw, bw = layers[0]
        ins["embeds"] = (E, BF)
        ins.update(weight_inputs("", lw))
        cap, out = engine_step(E, pos, prev, lw, bw, lw, p, bug)
        ins.update({n: (v, CAP_DT[n]) for n, v in cap.items()})
        outs.update({n: (v, OUT_DT[n]) for n, v in out.items()})
        return {"attrs": attrs, "inputs": ins, "outputs": outs}
    k, nl = p["num_steps"], p["num_layers"]
    ids = rng.integers(0, shared["v"], (k, t))
    maxpos = p.get("max_position", 1 << 62)
    ins.update({"embed_table": (shared["embed"], BF), "input_ids": (ids[0], I64),
                "next_tokens": (ids[1:], I64)})
    for li, (lw, _) in enumerate(layers):
        ins.update(weight_inputs("layer.%d/" % li, lw))
    P = prev
    for s in range(k):
        li = 0 if bug == "SPEC_STEP_LAYER_REUSE" else s % nl  # the engine's pick
        lw, bw = layers[li]
        head_lw = layers[0][0] if bug == "HC_HEAD_OWNER" else lw
        E = shared["embed"].rows(ids[s])
        cap, out = engine_step(E, np.minimum(pos + s, maxpos), P, lw, bw, head_lw, p, bug)
        ins.update({"step.%d/%s" % (s, n): (v, CAP_DT[n]) for n, v in cap.items()})
        outs.update({"step.%d/%s" % (s, n): (v, OUT_DT[n]) for n, v in out.items()})
        P = out["recycled"]
    return {"attrs": attrs, "inputs": ins, "outputs": outs}


def shared_weights(seed, h, head, l, family, exact):
    rng = np.random.default_rng(seed)
    p = {"hc_mult": 4}
    v = head.shape[0]
    layers = [layer_weights(rng, h, family == "deepseek_v4", p, head, exact) for _ in range(l)]
    return {"h": h, "v": v, "embed": head, "layers": layers}  # embedding tied to the head


# (case id, family, contract, K, L, bug); contract None for V3
PLAN = [
    ("step.v3.ok", "deepseek_v3", None, None, None, None),
    ("step.v3.PRE_NORM_RECYCLE", "deepseek_v3", None, None, None, "PRE_NORM_RECYCLE"),
    ("step.v3.DOUBLE_FINAL_NORM", "deepseek_v3", None, None, None, "DOUBLE_FINAL_NORM"),
    ("step.v3.MISSING_POS0_MASK", "deepseek_v3", None, None, None, "MISSING_POS0_MASK"),
    ("step.v4.deferred.ok", "deepseek_v4", "deferred", None, None, None),
    ("step.v4.deferred.MISSING_HC_POST", "deepseek_v4", "deferred", None, None, "MISSING_HC_POST"),
    ("step.v4.deferred.HC_POST_TWICE", "deepseek_v4", "deferred", None, None, "HC_POST_TWICE"),
    ("step.v4.deferred.MISSING_POS0_MASK", "deepseek_v4", "deferred", None, None,
     "MISSING_POS0_MASK"),
    ("step.v4.internal.ok", "deepseek_v4", "internal", None, None, None),
    # V4 checkpoints ship e_proj/h_proj in FP8 (SPEC.md §12.2): both schemes
    ("step.v4.deferred.fp8_w.e8m0s.ok", "deepseek_v4", "deferred", None, None, None),
    ("step.v4.deferred.fp8_w8a8.f32s.ok", "deepseek_v4", "deferred", None, None, None),
    ("step.v4.deferred.fp8_w.f32s.QUANT_SCALE_DROPPED", "deepseek_v4", "deferred", None, None,
     "QUANT_SCALE_DROPPED"),
    ("chain.v3.L1.K3.ok", "deepseek_v3", None, 3, 1, None),
    ("chain.v3.L1.K3.PRE_NORM_RECYCLE", "deepseek_v3", None, 3, 1, "PRE_NORM_RECYCLE"),
    # recycled and hidden_pre left out: only step 1's captured block input shows it
    ("chain.v3.L1.K3.norecycled.PRE_NORM_RECYCLE", "deepseek_v3", None, 3, 1,
     "PRE_NORM_RECYCLE"),
    ("chain.v3.L2.K3.ok", "deepseek_v3", None, 3, 2, None),
    ("chain.v4.deferred.L1.K3.MISSING_HC_POST", "deepseek_v4", "deferred", 3, 1,
     "MISSING_HC_POST"),
    ("chain.v4.deferred.L2.K3.ok", "deepseek_v4", "deferred", 3, 2, None),
    ("chain.v4.deferred.L2.K3.HC_HEAD_OWNER", "deepseek_v4", "deferred", 3, 2, "HC_HEAD_OWNER"),
    ("chain.v4.internal.L2.K3.ok", "deepseek_v4", "internal", 3, 2, None),
    # every other glue bug in a chain too, L = 1 and L = 2
    ("chain.v3.L2.K3.DOUBLE_FINAL_NORM", "deepseek_v3", None, 3, 2, "DOUBLE_FINAL_NORM"),
    ("chain.v3.L1.K3.MISSING_POS0_MASK", "deepseek_v3", None, 3, 1, "MISSING_POS0_MASK"),
    ("chain.v3.L2.K3.PRE_NORM_RECYCLE", "deepseek_v3", None, 3, 2, "PRE_NORM_RECYCLE"),
    ("chain.v4.deferred.L1.K3.HC_POST_TWICE", "deepseek_v4", "deferred", 3, 1, "HC_POST_TWICE"),
    ("chain.v4.deferred.L2.K3.MISSING_HC_POST", "deepseek_v4", "deferred", 3, 2,
     "MISSING_HC_POST"),
    ("chain.v4.deferred.L2.K3.MISSING_POS0_MASK", "deepseek_v4", "deferred", 3, 2,
     "MISSING_POS0_MASK"),
    # the bug classes seen in the field (SPEC.md §12.4), on captured blocks
    ("chain.v3.L2.K3.SPEC_STEP_LAYER_REUSE", "deepseek_v3", None, 3, 2, "SPEC_STEP_LAYER_REUSE"),
    ("chain.v4.deferred.L2.K3.SPEC_STEP_LAYER_REUSE", "deepseek_v4", "deferred", 3, 2,
     "SPEC_STEP_LAYER_REUSE"),
    ("step.v3.SHARED_HEAD_OVERWRITE", "deepseek_v3", None, None, None, "SHARED_HEAD_OVERWRITE"),
    ("step.v4.deferred.SHARED_HEAD_UNINIT", "deepseek_v4", "deferred", None, None,
     "SHARED_HEAD_UNINIT"),
    ("step.v3.ROUNDING_BIAS", "deepseek_v3", None, None, None, "ROUNDING_BIAS"),
    # engine conventions (SPEC.md §12.1) around a captured block: declared and
    # made alike pass; made under one, declared under another fails as such
    ("step.v3.conv.fused_sum.ok", "deepseek_v3", None, None, None, None),
    ("step.v3.conv.fused_sum_declared_residual.CONVENTION_MISMATCH", "deepseek_v3", None, None,
     None, "CONVENTION_MISMATCH"),
    ("chain.v3.L1.K3.conv.bf16_logits.ok", "deepseek_v3", None, 3, 1, None),
    ("step.v4.deferred.conv.bf16_logits.ok", "deepseek_v4", "deferred", None, None, None),
    # weights by row subset (FORMAT.md v2 rules 1-6): projections (bf16 and
    # float8), the head with logits_rows, the embedding table, chains with all
    # three; each glue bug still named on a subset dump
    ("step.v3.sub_proj.ok", "deepseek_v3", None, None, None, None),
    ("step.v3.sub_all.ok", "deepseek_v3", None, None, None, None),
    ("step.v3.sub_proj.PRE_NORM_RECYCLE", "deepseek_v3", None, None, None, "PRE_NORM_RECYCLE"),
    ("step.v3.sub_proj.MISSING_POS0_MASK", "deepseek_v3", None, None, None, "MISSING_POS0_MASK"),
    ("step.v3.sub_proj.DOUBLE_FINAL_NORM", "deepseek_v3", None, None, None, "DOUBLE_FINAL_NORM"),
    ("step.v4.deferred.sub_all.ok", "deepseek_v4", "deferred", None, None, None),
    ("step.v4.internal.sub_proj.ok", "deepseek_v4", "internal", None, None, None),
    ("step.v4.deferred.sub_proj.fp8_w.e8m0s.ok", "deepseek_v4", "deferred", None, None, None),
    ("step.v4.deferred.sub_proj.fp8_w8a8.f32s.ok", "deepseek_v4", "deferred", None, None, None),
    ("step.v4.deferred.sub_all.MISSING_HC_POST", "deepseek_v4", "deferred", None, None,
     "MISSING_HC_POST"),
    ("step.v4.deferred.sub_proj.MISSING_POS0_MASK", "deepseek_v4", "deferred", None, None,
     "MISSING_POS0_MASK"),
    ("chain.v3.L1.K3.sub_all.ok", "deepseek_v3", None, 3, 1, None),
    ("chain.v3.L1.K3.sub_embed.ok", "deepseek_v3", None, 3, 1, None),
    ("chain.v3.L2.K3.sub_all.ok", "deepseek_v3", None, 3, 2, None),
    ("chain.v3.L1.K3.sub_all.PRE_NORM_RECYCLE", "deepseek_v3", None, 3, 1, "PRE_NORM_RECYCLE"),
    ("chain.v3.L2.K3.sub_proj.norecycled.PRE_NORM_RECYCLE", "deepseek_v3", None, 3, 2,
     "PRE_NORM_RECYCLE"),
    ("chain.v4.deferred.L1.K3.sub_all.ok", "deepseek_v4", "deferred", 3, 1, None),
    ("chain.v4.deferred.L2.K3.sub_all.ok", "deepseek_v4", "deferred", 3, 2, None),
    ("chain.v4.deferred.L2.K3.sub_all.MISSING_HC_POST", "deepseek_v4", "deferred", 3, 2,
     "MISSING_HC_POST"),
    ("chain.v4.deferred.L2.K3.sub_all.HC_HEAD_OWNER", "deepseek_v4", "deferred", 3, 2,
     "HC_HEAD_OWNER"),
]

# conventions made by the engine (the case declares them too unless the id
# says "declared_<other>")
CONV = {"fused_sum": {"final_add": "fused", "add_norm_input": "sum"},
        "fused_sum_declared_residual": {"final_add": "fused", "add_norm_input": "sum"},
        "bf16_logits": {"logits_dtype": "bfloat16"}}

# bugs judged at small size only (each needs another head, or another
# real-size reference run for its hypothesis)
SMALL_ONLY = ("QUANT_SCALE_DROPPED", "SHARED_HEAD_OVERWRITE", "SHARED_HEAD_UNINIT",
              "SPEC_STEP_LAYER_REUSE", "ROUNDING_BIAS")


QUANT = {"fp8_w": "fp8_w", "fp8_w8a8": "fp8_w8a8"}
SCALE_DT = {"e8m0s": fp8.E8M0, "f32s": F32}


def quantized(shared, scale_dtype):
    """The same layers with e_proj/h_proj (V4) or eh_proj (V3) in FP8."""
    layers = []
    for lw, bw in shared["layers"]:
        lw = dict(lw)
        for n in ("e_proj_weight", "h_proj_weight", "eh_proj_weight"):
            if n in lw:
                lw[n] = QMat(lw[n], scale_dtype)
        layers.append((lw, bw))
    return dict(shared, layers=layers)


def dropped_scale(shared):
    """What an engine that loses the block scales computes with: the raw e4m3
    values as the weight (scale 1)."""
    layers = []
    for lw, bw in shared["layers"]:
        lw = dict(lw)
        for n, w in lw.items():
            if isinstance(w, QMat):
                raw = QMat.__new__(QMat)
                raw.wq, raw.scale, raw.scale_dtype, raw.shape = \
                    w.wq, np.ones_like(w.scale), w.scale_dtype, w.shape
                lw[n] = raw
        layers.append((lw, bw))
    return dict(shared, layers=layers)


def zero_mat(shape, exact):
    m = Mat.__new__(Mat)
    m.bits, m.exact, m.shape = np.zeros(shape, dtype=np.uint16), exact, shape
    return m


def with_head(shared, head):
    """The same layers, each with `head` as its own head_weight."""
    return dict(shared, layers=[(dict(lw, head_weight=head), bw) for lw, bw in shared["layers"]])


def truncating(fn):
    """fn() as an engine whose every bfloat16 store truncates toward zero."""
    saved = nx.rnd, ops.rnd
    nx.rnd = ops.rnd = nx.truncate
    try:
        return fn()
    finally:
        nx.rnd, ops.rnd = saved


def field_case(cid, a, sh, t, bug, seed, exact):
    """The head bugs and truncating stores (SPEC.md §12.4): the dump holds
    what the checkpoint and the engine held, the outputs what it computed."""
    rng = lambda: np.random.default_rng(seed)  # the same draws twice
    if bug == "ROUNDING_BIAS":
        return truncating(lambda: make_case(cid, a, sh, t, None, rng()))
    head = sh["layers"][0][0]["head_weight"]
    if bug == "SHARED_HEAD_UNINIT":  # never loaded: zeros in the dump and in the engine
        return make_case(cid, a, with_head(sh, zero_mat(head.shape, exact)), t, None, rng())
    # the target model's lm_head, carried beside the layer's own, used instead
    target = Mat(np.random.default_rng(seed + 5000), head.shape[0], head.shape[1], 1.0, exact)
    c = make_case(cid, a, sh, t, None, rng())
    bad = make_case(cid, a, with_head(sh, target), t, None, rng())
    c["outputs"] = bad["outputs"]
    c["inputs"]["target_head_weight"] = (target, BF)
    return c


def build(plan, h, v, t, seed, exact):
    head = Mat(np.random.default_rng(seed), v, h, 1.0, exact)  # shared by every layer
    shared = {f: shared_weights(seed + 1 + i, h, head, 2, f, exact)
              for i, f in enumerate(("deepseek_v3", "deepseek_v4"))}
    out = []
    for i, (cid, fam, contract, k, l, bug) in enumerate(plan):
        a = attrs_of(fam, contract, seed * 100 + i, k, l)
        if cid == "chain.v3.L2.K3.ok":
            a["max_position"] = 3000  # rule 15: positions + s clamp
        sh = shared[fam]
        made = [CONV[x] for x in cid.split(".") if x in CONV]
        if made:
            a.update(made[0])
        q = [x for x in cid.split(".") if x in QUANT]
        if q:
            sdt = SCALE_DT[next(x for x in cid.split(".") if x in SCALE_DT)]
            key = (fam, sdt)
            if key not in shared:
                shared[key] = quantized(sh, sdt)
            sh = shared[key]
            a["proj_quant"] = QUANT[q[0]]
        if bug in ("SHARED_HEAD_OVERWRITE", "SHARED_HEAD_UNINIT", "ROUNDING_BIAS"):
            c = field_case(cid, a, sh, t, bug, seed + i, exact)
        else:
            c = make_case(cid, a, sh, t, bug, np.random.default_rng(seed + i))
        if bug == "QUANT_SCALE_DROPPED":  # the engine ran without the scales
            bad = make_case(cid, a, dropped_scale(sh), t, None, np.random.default_rng(seed + i))
            c["outputs"] = bad["outputs"]
            c["inputs"].update({n: x for n, x in bad["inputs"].items() if n.startswith("step.")
                                or n in CAP_DT})
        if "_declared_residual" in cid:  # made under sum, declared otherwise
            c["attrs"] = dict(a, add_norm_input="residual")
        what = [x[4:] for x in cid.split(".") if x.startswith("sub_")]
        if what:  # applied once the tokens are known (write)
            c["subset"] = (what[0], seed + 50 + i)
        if ".norecycled." in cid:
            c["outputs"] = {n: x for n, x in c["outputs"].items()
                            if not n.endswith(("/recycled", "/hidden_pre"))}
        out.append((cid, c))
    return out
