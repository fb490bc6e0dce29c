#!/usr/bin/python3
"""The engine that captured.py plays: its glue, written from the spec, and the
foreign block that only this generator knows.

Why this exists: the captured-block dumps (captured.py) need an engine whose
MTP block the harness cannot recompute. This module is that engine: the glue
of SPEC.md Steps V3-1..7 and V4-1..9 in NumPy float64 (sharing no code with
reference/), a small attention-free block (a causal running mean over tokens,
sigmoid gates, a fixed mixing of the hc streams), bf16 weights held as bit
patterns, and one engine step with any glue bug of SPEC.md §8 injected.
"""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fp8
import numerics as nx
import ops

BF = "bfloat16"
F32 = "float32"
I64 = "int64"
CHUNK = 4096  # rows of a large matrix handled at once


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
    _t, m, _ = x0.shape
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
    t, _m = cap["block_in"].shape[:2]
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
