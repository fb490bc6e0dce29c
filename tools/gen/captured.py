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
"""

import argparse
import hashlib
import math
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fp8  # noqa: E402
import numerics as nx  # noqa: E402
import ops  # noqa: E402
import writer  # noqa: E402

BF = "bfloat16"
F32 = "float32"
I64 = "int64"
CHUNK = 4096  # rows of a large matrix handled at once
FIXTURE = "captured.h5"  # the committed goldens, also written by mtpgen.py


# --------------------------------------------------------------------------- matrices

class Mat:
    """A bf16 weight [rows, cols] held as bit patterns; `exact` selects the
    generator's deterministic pairwise dot (committed fixtures) or BLAS (real
    sizes, generated and judged in one run)."""

    def __init__(self, rng, rows, cols, scale, exact):
        self.bits = np.empty((rows, cols), dtype=np.uint16)
        for r in range(0, rows, CHUNK):
            n = min(CHUNK, rows - r)
            w = (rng.standard_normal((n, cols), dtype=np.float32) * np.float32(scale))
            u = w.view(np.uint32)
            self.bits[r:r + n] = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        self.exact = exact
        self.shape = (rows, cols)

    def block(self, r0, r1):
        return (self.bits[r0:r1].astype(np.uint32) << 16).view(np.float32).astype(np.float64)

    def rows(self, idx):
        return (self.bits[np.asarray(idx)].astype(np.uint32) << 16).view(np.float32).astype(np.float64)

    def linear(self, x):
        """y[..., o] = sum_c W[o, c] x[..., c] in float64, no rounding."""
        lead = x.shape[:-1]
        x2 = x.reshape(-1, x.shape[-1])
        out = np.empty((x2.shape[0], self.shape[0]))
        for r in range(0, self.shape[0], CHUNK):
            blk = self.block(r, min(r + CHUNK, self.shape[0]))
            out[:, r:r + blk.shape[0]] = ops.linear(x2, blk) if self.exact else x2 @ blk.T
        return out.reshape(lead + (self.shape[0],))


class QMat:
    """A projection stored as a float8 checkpoint holds it (SPEC.md §12.2):
    e4m3 values with 128x128 block scales (float32 or e8m0), quantized from
    a bf16 Mat by the generator's own fp8.py."""

    def __init__(self, mat, scale_dtype):
        self.wq, self.scale = fp8.quantize_weight(mat.block(0, mat.shape[0]), scale_dtype)
        self.scale_dtype = scale_dtype
        self.shape = mat.shape

    def qlinear(self, x, p):
        """Unrounded projection under the case's activation scheme."""
        return fp8.qlinear(x, self.wq, self.scale, p["proj_quant"], p.get("act_quant_eps", 1e-10))


def project(w, x, p):
    return w.qlinear(x, p) if isinstance(w, QMat) else w.linear(x)


def vec(rng, n, lo, hi):
    return nx.rnd(rng.uniform(lo, hi, n), BF)


class Pending:
    """Logits and token of one step, computed later in one pass over the head
    for every step of a file (at V = 129280 a pass is the generator's cost)."""

    def __init__(self, hn, head, dtype):
        self.hn, self.head, self.dtype = hn, head, dtype
        self.logits = self.token = None


PENDING = []


def head_logits(hn, head, dtype=F32):
    p = Pending(hn, head, dtype)
    PENDING.append(p)
    return p, p


def resolve_pending():
    """Logits in their declared precision (float32 by default, no activation
    rounding; or bfloat16, SPEC.md §12.1) and the greedy token over them, the
    first index among equal maxima (Step V3-6)."""
    heads = {}
    for p in PENDING:
        heads.setdefault(id(p.head), []).append(p)
    for group in heads.values():
        raw = group[0].head.linear(np.concatenate([p.hn for p in group], axis=0))
        r = 0
        for p in group:
            p.logits = nx.rnd(raw[r:r + p.hn.shape[0]], p.dtype)
            p.token = np.argmax(p.logits, axis=-1).astype(np.int64)
            r += p.hn.shape[0]
    PENDING.clear()


# --------------------------------------------------------------------------- the engine's glue

def tanh(z):
    return 2.0 * ops.sigmoid(2.0 * z) - 1.0


def glue_v3(E, pos, P, lw, p, mask=True):
    """Steps V3-1..3: block input = eh_proj(cat(enorm(mask(E)), hnorm(P)))."""
    e = ops.rmsnorm(ops.mask_pos0(E, pos) if mask else E, lw["enorm_weight"], p["eps"],
                    p["rounding"], BF)
    h = ops.rmsnorm(P, lw["hnorm_weight"], p["eps"], p["rounding"], BF)
    return nx.rnd(project(lw["eh_proj_weight"], np.concatenate([e, h], axis=-1), p), BF)


def glue_v4(E, pos, P, lw, p, mask=True):
    """Steps V4-1..3: block input [T,M,H] = rnd(h_proj(hnorm(P)) + e_proj(enorm(mask(E))))."""
    t, m = E.shape[0], p["hc_mult"]
    e = ops.rmsnorm(ops.mask_pos0(E, pos) if mask else E, lw["enorm_weight"], p["eps"],
                    p["rounding"], BF)
    h = ops.rmsnorm(P.reshape(t, m, -1), lw["hnorm_weight"], p["eps"], p["rounding"], BF)
    hp = nx.rnd(project(lw["h_proj_weight"], h, p), BF)
    ep = nx.rnd(project(lw["e_proj_weight"], e, p), BF)
    return nx.rnd(hp + ep[:, None, :], BF)


# --------------------------------------------------------------------------- the foreign block

def running_mean(x):
    """Causal mean over tokens (axis 0), summed in token order."""
    acc = np.zeros_like(x[0])
    out = np.empty_like(x)
    for t in range(x.shape[0]):
        acc = acc + x[t]
        out[t] = acc / (t + 1)
    return out


def block_v3(x0, bw):
    """(h, r1) of a block the harness does not know."""
    cm = running_mean(x0)
    r1 = nx.rnd(x0 + 0.5 * tanh(cm * bw["g"]), BF)
    h = nx.rnd(0.25 * tanh(r1 * bw["u"]) + 0.1 * cm, BF)
    return h, r1


def block_v4(x0, bw):
    """(f, R1, post_mix, comb_mix) of a block the harness does not know."""
    t, m, _ = x0.shape
    cm = running_mean(x0.sum(axis=1) / m)
    r = np.zeros_like(x0)
    for j in range(m):
        for i in range(m):
            r[:, j, :] = r[:, j, :] + bw["q"][i, j] * x0[:, i, :]
    r1 = nx.rnd(r + 0.1 * tanh(cm * bw["g"])[:, None, :], BF)
    f = nx.rnd(0.5 * tanh((r1.sum(axis=1) / m) * bw["u"]), BF)
    z = np.sqrt(np.mean(r1 * r1, axis=2))  # [T,M]
    post = nx.f32(2.0 * ops.sigmoid(z - 1.0))
    logit = z[:, :, None] * bw["c"][None, :, :]
    ex = ops.exp(logit - logit.max(axis=2, keepdims=True))
    comb = nx.f32(ex / ex.sum(axis=2, keepdims=True))
    return f, r1, post, comb


# --------------------------------------------------------------------------- weights

def layer_weights(rng, h, v4, p, head, exact):
    lw = {"enorm_weight": vec(rng, h, 0.5, 1.5), "hnorm_weight": vec(rng, h, 0.5, 1.5),
          # a spread like GLM-5.2's shared-head norm weight (SPEC.md §8.1)
          "shared_head_norm_weight": vec(rng, h, 0.05, 1.8), "head_weight": head}
    if v4:
        m = p["hc_mult"]
        lw["e_proj_weight"] = Mat(rng, h, h, 1.0 / math.sqrt(h), exact)
        lw["h_proj_weight"] = Mat(rng, h, h, 1.0 / math.sqrt(h), exact)
        lw["hc_head_fn"] = nx.f32(rng.standard_normal((m, m * h)) / math.sqrt(m * h))
        lw["hc_head_scale"] = nx.f32(rng.uniform(0.5, 2.0, 1))
        lw["hc_head_base"] = nx.f32(rng.uniform(-1, 1, m))
    else:
        lw["eh_proj_weight"] = Mat(rng, h, 2 * h, 1.0 / math.sqrt(2 * h), exact)
    bw = {"g": vec(rng, h, 0.5, 2.0), "u": vec(rng, h, 0.5, 3.0)}
    if v4:
        m = p["hc_mult"]
        bw["q"] = rng.dirichlet(np.ones(m), size=m)
        bw["c"] = rng.standard_normal((m, m))
    return lw, bw


# --------------------------------------------------------------------------- one engine step

def final_add_v3(h, r1, w, p):
    """(hidden_pre, hidden_post): r1 + h, then the shared-head norm, unfused
    (the sum rounded, then normed) or fused (§2.3), the fused norm taking the
    stored sum or the unrounded one (add_norm_input, §12.1)."""
    if p.get("final_add", "unfused") != "fused":
        pre = nx.rnd(r1 + h, BF)
        return pre, ops.rmsnorm(pre, w, p["eps"], p["rounding"], BF)
    s = r1 + h
    r = ops.rms_scale(s, p["eps"])
    pre = nx.rnd(s, BF)
    src = s if p.get("add_norm_input", "residual") == "sum" else pre
    if p["rounding"] == "eager":
        return pre, nx.rnd(nx.rnd(src * r, BF) * w, BF)
    return pre, nx.rnd(src * r * w, BF)


def after_v3(h, r1, lw, p, bug):
    pre, post = final_add_v3(h, r1, lw["shared_head_norm_weight"], p)
    hn = post
    if bug == "DOUBLE_FINAL_NORM":
        hn = ops.rmsnorm(post, lw["shared_head_norm_weight"], p["eps"], p["rounding"], BF)
    logits, token = head_logits(hn, lw["head_weight"], p.get("logits_dtype", F32))
    out = {"hidden_pre": pre, "recycled": pre if bug == "PRE_NORM_RECYCLE" else post,
           "logits": logits, "token": token}
    if bug != "DOUBLE_FINAL_NORM":
        out["hidden_post"] = post  # the tensor fed to the head GEMM (rule 9)
    return out


def after_v4(cap, lw, head_lw, p, bug):
    t, m = cap["block_in"].shape[:2]
    if p["block_contract"] == "internal":
        streams = cap["block_out"]
    elif bug == "MISSING_HC_POST":
        streams = cap["block_residual"]
    else:
        streams = ops.hc_post(cap["block_out"], cap["block_residual"], cap["post_mix"],
                              cap["comb_mix"], BF)
        if bug == "HC_POST_TWICE":
            streams = ops.hc_post(cap["block_out"], streams, cap["post_mix"], cap["comb_mix"], BF)
    hh = ops.hc_head(streams, head_lw["hc_head_fn"], head_lw["hc_head_scale"],
                     head_lw["hc_head_base"], p["eps"], p["hc_eps"], p["hc_head_variant"], BF)
    hn = ops.rmsnorm(hh, lw["shared_head_norm_weight"], p["eps"], p["rounding"], BF)
    logits, token = head_logits(hn, lw["head_weight"], p.get("logits_dtype", F32))
    return {"streams": streams, "recycled": streams.reshape(t, -1), "head_hidden": hh,
            "logits": logits, "token": token}


def engine_step(E, pos, P, lw, bw, head_lw, p, bug):
    """(captured block tensors, outputs) of one step of an engine with `bug`."""
    v4 = p["family"] == "deepseek_v4"
    glue = glue_v4 if v4 else glue_v3
    x0 = glue(E, pos, P, lw, p, mask=bug != "MISSING_POS0_MASK")
    if not v4:
        h, r1 = block_v3(x0, bw)
        return {"block_in": x0, "block_out": h, "block_residual": r1}, after_v3(h, r1, lw, p, bug)
    f, r1, post, comb = block_v4(x0, bw)
    if p["block_contract"] == "internal":  # the block applied its own hc_post
        cap = {"block_in": x0, "block_out": ops.hc_post(f, r1, post, comb, BF)}
    else:
        cap = {"block_in": x0, "block_out": f, "block_residual": r1, "post_mix": post,
               "comb_mix": comb}
    return cap, after_v4(cap, lw, head_lw, p, bug)


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
    v4 = p["family"] == "deepseek_v4"
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
    rng = lambda: np.random.default_rng(seed)  # noqa: E731  the same draws twice
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
            sdt = SCALE_DT[[x for x in cid.split(".") if x in SCALE_DT][0]]
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


# --------------------------------------------------------------------------- weights by subset

class Sub:
    """Rows `rows` of a weight [full_rows, in] as a dump stores them
    (FORMAT.md v2 rules 1, 2): the dataset holds those rows only and carries
    the attribute full_rows."""

    def __init__(self, data, full_rows, live=None):
        self.data, self.full_rows, self.live = data, full_rows, live


class LogitsAt:
    """A step's logits stored at `rows` only (rule 3), resolved at writing."""

    def __init__(self, pending, rows):
        self.pending, self.rows = pending, rows


def rows_name(weight):
    return weight[: -len("_weight")] + "_rows" if weight.endswith("_weight") else weight + "_rows"


def subset_rows(rng, n, keep, extra=()):
    """Sorted unique rows: a random `keep` of n, plus `extra`."""
    pick = rng.choice(n, size=keep, replace=False)
    return np.unique(np.concatenate([pick, np.asarray(extra, dtype=np.int64)])).astype(np.int64)


def whole_sha256(val, dt):
    """SHA-256 of the whole parameter in its storage encoding (rule 14)."""
    stored = val.bits.astype("<u2", copy=False) if isinstance(val, Mat) else nx.encode(val, dt)
    return hashlib.sha256(np.ascontiguousarray(stored).tobytes()).hexdigest()


def subset_weight(ins, name, rows, live=False):
    """inputs[name] (a Mat or stored float8 codes) at `rows`, with its rows;
    with `live`, the hash of the whole parameter."""
    val, dt = ins[name]
    full = val.shape[0]
    data = val.rows(rows) if isinstance(val, Mat) else val[rows]
    ins[name] = (Sub(data, full, whole_sha256(val, dt) if live else None), dt)
    ins[rows_name(name)] = (rows, I64)


def subsets(c, what, rng, live=False):
    """The dump of case c as it would be written with weights by subset:
    `proj` the projections (a quarter of the rows, the same for a V4 layer's
    e_proj and h_proj; float8 block scales kept whole, rule 11); `head` the
    head rows (a third, plus every token the engine emitted) and each step's
    logits at half of those (plus the tokens); `embed` only the rows of the
    ids the chain embeds (rule 4)."""
    ins, outs = c["inputs"], c["outputs"]
    layers = sorted({n.rsplit("/", 1)[0] + "/" if "/" in n else "" for n in ins
                     if n.endswith("enorm_weight")})
    if what in ("proj", "all"):
        for pfx in layers:
            names = [pfx + n for n in ("eh_proj_weight", "e_proj_weight", "h_proj_weight")
                     if pfx + n in ins]
            h = ins[names[0]][0].shape[0]
            rows = subset_rows(rng, h, h // 4)
            for n in names:
                subset_weight(ins, n, rows, live)
    if what in ("head", "all"):
        tokens = np.concatenate([o[0].token.ravel() if isinstance(o[0], Pending) else o[0].ravel()
                                 for n, o in outs.items() if n.endswith("token")])
        v = ins[layers[0] + "head_weight"][0].shape[0]
        rows = subset_rows(rng, v, min(v // 3, 4096), tokens)
        for pfx in layers:
            subset_weight(ins, pfx + "head_weight", rows, live)
        for n in [n for n in outs if n.endswith("logits")]:
            tok = outs[n[: -len("logits")] + "token"][0]
            tok = tok.token if isinstance(tok, Pending) else tok
            lr = np.unique(np.concatenate([rows[::2], tok.ravel()])).astype(np.int64)
            outs[n] = (LogitsAt(outs[n][0], lr), outs[n][1])
            outs[n + "_rows"] = (lr, I64)
    if what in ("embed", "all") and "embed_table" in ins:
        ids = np.concatenate([ins["input_ids"][0].ravel()] +
                             ([ins["next_tokens"][0].ravel()] if "next_tokens" in ins else []))
        subset_weight(ins, "embed_table", np.unique(ids).astype(np.int64), live)
    return c


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
        kw = {} if big else dict(compression="gzip", compression_opts=6, shuffle=True)
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
    write(path, build(plan, 64, 512, 5, 7100, True), "expected",
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
