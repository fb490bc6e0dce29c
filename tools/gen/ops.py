"""The math of every op, one function each, in float64 (SPEC.md §2-§5, §7, §10).

Why this exists: it is the independent statement of the golden math, written
from SPEC.md alone. Inputs are float64 arrays that already hold values of
their storage dtype; every function rounds exactly where the spec writes
bf16(...) (to the case's activation dtype `dt`), and computes everything else
in float64. mHC mixes that leave a kernel (post_mix, comb_mix) are rounded to
float32, as an engine stores them, and the float32 values are what later steps
use.

Determinism: dot products go through `linear`, which sums each output with
NumPy's pairwise reduction over a contiguous row (no BLAS, whose summation
order depends on the CPU), and exp goes through the C library's exp via
math.exp (not NumPy's SIMD variants), so that a regeneration on another x86
machine gives the same bits.
"""

import math

import numpy as np

import families
import fp8
from numerics import f32, rnd

_exp_scalar = np.vectorize(math.exp, otypes=[np.float64])


def exp(z):
    z = np.asarray(z, dtype=np.float64)
    if z.size == 0:
        return z.copy()
    return _exp_scalar(z)


def sigmoid(z):
    """1 / (1 + e^-z), evaluated without overflow (exp of a non-positive number)."""
    z = np.asarray(z, dtype=np.float64)
    a = exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + a), a / (1.0 + a))


def silu(z):
    return z * sigmoid(z)


_LINEAR_BLOCK = 1 << 18  # weight elements per block of output rows (2 MiB of float64)


def linear(x, w):
    """y[..., o] = sum_c w[o, c] * x[..., c], float64 accumulation, no rounding.

    By blocks of output rows, each made float64 and contiguous once for every
    input row: the products stay in the cache and a float32 weight (exact for
    bf16 values) is never copied whole; each output is still the pairwise
    sum of one contiguous row, so the bits do not depend on the block."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w)
    lead = x.shape[:-1]
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty((rows.shape[0], w.shape[0]))
    step = max(1, _LINEAR_BLOCK // max(1, w.shape[1]))
    for o in range(0, w.shape[0], step):
        wb = np.ascontiguousarray(w[o:o + step], dtype=np.float64)
        for i in range(rows.shape[0]):
            out[i, o:o + step] = (wb * rows[i]).sum(axis=1)
    return out.reshape(lead + (w.shape[0],))


# --------------------------------------------------------------------------- norms (§2)

def rms_scale(x, eps):
    """r = 1/sqrt(mean(x^2) + eps) over the last axis, float64, keepdims."""
    v = np.sum(x * x, axis=-1, keepdims=True) / x.shape[-1]
    return 1.0 / np.sqrt(v + eps)


def rmsnorm(x, weight, eps, rounding, dt):
    """§2.1 eager: rnd(rnd(x*r) * w); §2.2 fused: rnd(x*r*w)."""
    r = rms_scale(x, eps)
    if rounding == "eager":
        return rnd(rnd(x * r, dt) * weight, dt)
    if rounding == "fused":
        return rnd(x * r * weight, dt)
    raise ValueError("rounding %r" % rounding)


def add_rmsnorm(x, residual, weight, eps, rounding, dt):
    """§2.3: variance from the unrounded sum, the stored (rounded) sum normalised."""
    s = x + residual
    r = rms_scale(s, eps)
    res_out = rnd(s, dt)
    if rounding == "eager":
        y = rnd(rnd(res_out * r, dt) * weight, dt)
    elif rounding == "fused":
        y = rnd(res_out * r * weight, dt)
    else:
        raise ValueError("rounding %r" % rounding)
    return y, res_out


def mask_pos0(embeds, positions):
    """Step V3-1: a select, so a NaN embedding at position 0 gives an exact 0."""
    return np.where((np.asarray(positions) == 0)[:, None], 0.0, embeds)


def embed(input_ids, table):
    return table[np.asarray(input_ids, dtype=np.int64)]


def fused_eh_norm(positions, embeds, prev_hidden, enorm_w, hnorm_w, eps, dt):
    """§7.1: [fused_rms(mask(E); enorm) | fused_rms(P; hnorm)] -> [T, 2H]."""
    e = rmsnorm(mask_pos0(embeds, positions), enorm_w, eps, "fused", dt)
    p = rmsnorm(prev_hidden, hnorm_w, eps, "fused", dt)
    return np.concatenate([e, p], axis=-1)


def fused_embed_eh_norm(positions, input_ids, table, prev_hidden, enorm_w, hnorm_w, eps, dt):
    """§7.2: the same with the gather folded in."""
    return fused_eh_norm(positions, embed(input_ids, table), prev_hidden, enorm_w, hnorm_w, eps, dt)


def fused_mtp_input_rmsnorm(embeds, positions, prev_hidden, enorm_w, hnorm_w, eps, dt):
    """§7.3: masked enorm [T,H] and per-stream hnorm [T,M,H], fused rounding."""
    e = rmsnorm(mask_pos0(embeds, positions), enorm_w, eps, "fused", dt)
    p = rmsnorm(prev_hidden, hnorm_w, eps, "fused", dt)
    return e, p


def mtp_shared_head_rmsnorm(x, weight, eps, dt):
    """§7.4: the shared head's fused RMSNorm."""
    return rmsnorm(x, weight, eps, "fused", dt)


# --------------------------------------------------------------------------- projections

def qproj(x, w, name, q):
    """Unrounded projection by weight `name` of dict w: plain, or FP8 (§12.2) when
    w holds its block scale (`<p>_scale_inv`, `weight_scale_inv` for a bare `weight`).
    q: {"proj_quant": ..., "act_quant_eps": ...}."""
    sname = name + "_scale_inv" if name == "weight" else name[:-len("weight")] + "scale_inv"
    if sname not in w:
        return linear(x, w[name])
    return fp8.qlinear(x, w[name], w[sname], q["proj_quant"], q.get("act_quant_eps", 1e-10))


def eh_proj(x, weight, dt, w=None, name=None, q=None):
    """Step V3-3: one GEMM, one rounding (w/name/q: a possibly quantized weight)."""
    return rnd(linear(x, weight) if w is None else qproj(x, w, name, q), dt)


def eh_proj_hc(e, p, e_proj_w, h_proj_w, dt, w=None, q=None):
    """Step V4-3: rnd(rnd(h_proj(p)) + rnd(e_proj(e)) broadcast over the streams)."""
    if w is None:
        w = {"e_proj_weight": e_proj_w, "h_proj_weight": h_proj_w}
    hp = rnd(qproj(p, w, "h_proj_weight", q), dt)
    ep = rnd(qproj(e, w, "e_proj_weight", q), dt)
    return rnd(hp + ep[:, None, :], dt)


def all_reduce(parts, dt):
    """Sum of P partial outputs in float64, one rounding."""
    acc = np.zeros(parts.shape[1:])
    for p in range(parts.shape[0]):
        acc = acc + parts[p]
    return rnd(acc, dt)


def lm_head(x, weight, w=None, name=None, q=None, mup=None):
    """Step V3-6: float32 logits (no activation rounding), divided by mup first
    where it is given (Inkling's head); greedy token.

    np.argmax returns the first index among equal maxima, and the first NaN
    when a row holds one (NaN counts as the maximum).
    """
    z = linear(x, weight) if w is None else qproj(x, w, name, q)
    logits = f32(z / mup if mup else z)
    token = np.argmax(logits, axis=-1).astype(np.int64)
    return logits, token


# --------------------------------------------------------------------------- mHC (§4.4)

def sinkhorn(logits, iters, eps):
    """Row softmax + eps, column normalise, then (iters-1) x (row, column) normalise."""
    m = np.max(logits, axis=-1, keepdims=True)
    e = exp(logits - m)
    c = e / np.sum(e, axis=-1, keepdims=True) + eps
    c = c / (np.sum(c, axis=-2, keepdims=True) + eps)
    for _ in range(iters - 1):
        c = c / (np.sum(c, axis=-1, keepdims=True) + eps)
        c = c / (np.sum(c, axis=-2, keepdims=True) + eps)
    return c


def _flat_rms(streams, eps):
    """rho = rsqrt(sum_k x_k^2 / (M*H) + eps) over a token's flattened streams."""
    t = streams.shape[0]
    x = streams.reshape(t, -1)
    q = np.sum(x * x, axis=-1)
    return x, 1.0 / np.sqrt(q / x.shape[1] + eps)


def _weighted_stream_sum(weights, streams):
    """u[t,h] = sum_m weights[t,m] * R[t,m,h], m in order."""
    u = np.zeros((streams.shape[0], streams.shape[2]))
    for m in range(streams.shape[1]):
        u = u + weights[:, m, None] * streams[:, m, :]
    return u


def hc_pre(residual, fn, scale, base, rms_eps, pre_eps, sinkhorn_eps, post_mult,
           sinkhorn_iters, dt, norm_weight=None, norm_eps=None):
    """§4.4.1 -> (post_mix f32 [T,M], comb_mix f32 [T,M,M], layer_input [T,H])."""
    t, m, h = residual.shape
    x, rho = _flat_rms(residual, rms_eps)
    mu = rho[:, None] * linear(x, fn)
    pre = sigmoid(mu[:, :m] * scale[0] + base[:m]) + pre_eps
    post = sigmoid(mu[:, m:2 * m] * scale[1] + base[m:2 * m]) * post_mult
    logit = (mu[:, 2 * m:] * scale[2] + base[2 * m:]).reshape(t, m, m)
    comb = sinkhorn(logit, int(sinkhorn_iters), sinkhorn_eps)
    u = _weighted_stream_sum(pre, residual)
    if norm_weight is None:
        layer_input = rnd(u, dt)
    else:
        ss = np.sum(u * u, axis=-1, keepdims=True)
        rho_n = 1.0 / np.sqrt(ss / h + norm_eps)
        layer_input = rnd(rnd(u, dt) * rho_n * norm_weight, dt)
    return f32(post), f32(comb), layer_input


def hc_post(x, residual, post_mix, comb_mix, dt):
    """§4.4.2: out[t,j,h] = rnd(post[t,j]*x[t,h] + sum_i C[t,i,j]*R[t,i,h])."""
    acc = post_mix[:, :, None] * x[:, None, :]
    for i in range(residual.shape[1]):
        acc = acc + comb_mix[:, i, :, None] * residual[:, i, None, :]
    return rnd(acc, dt)


def hc_fused_post_pre(x, residual, post_mix, comb_mix, fn, scale, base, rms_eps, pre_eps,
                      sinkhorn_eps, post_mult, sinkhorn_iters, dt, norm_weight=None, norm_eps=None):
    """§4.4.3: hc_post, then hc_pre on the ROUNDED new streams."""
    r = hc_post(x, residual, post_mix, comb_mix, dt)
    post, comb, li = hc_pre(r, fn, scale, base, rms_eps, pre_eps, sinkhorn_eps, post_mult,
                            sinkhorn_iters, dt, norm_weight, norm_eps)
    return r, post, comb, li


def hc_head(y, fn, scale, base, rms_eps, hc_eps, variant, dt):
    """§4.4.4, variant 'cuda' (tilelang) or 'rocm' (triton, rounded normalised input)."""
    x, rho = _flat_rms(y, rms_eps)
    if variant == "cuda":
        mu = linear(x, fn)
        pre = sigmoid(mu * rho[:, None] * scale[0] + base) + hc_eps
    elif variant == "rocm":
        xh = rnd(x * rho[:, None], dt)
        mu = linear(xh, fn)
        pre = sigmoid(mu * scale[0] + base) + hc_eps
    else:
        raise ValueError("hc_head variant %r" % variant)
    return rnd(_weighted_stream_sum(pre, y), dt)


# --------------------------------------------------------------------------- synthetic block (§10)

def swiglu_ffn(v, w_gate, w_up, w_down, dt):
    """g = rnd(silu(rnd(W_gate v)) * rnd(W_up v)); out = rnd(W_down g)."""
    gate = rnd(linear(v, w_gate), dt)
    up = rnd(linear(v, w_up), dt)
    g = rnd(silu(gate) * up, dt)
    return rnd(linear(g, w_down), dt)


def mtp_block_v3(x, w, eps, rounding, dt, residual=None):
    """§10.1: returns (h, r1). `w` maps 'block.*' names to arrays."""
    if residual is None:
        r0 = x
        xn = rmsnorm(x, w["block.w_in"], eps, rounding, dt)
    else:
        xn, r0 = add_rmsnorm(x, residual, w["block.w_in"], eps, rounding, dt)
    a = rnd(linear(xn, w["block.W_a"]), dt)
    x1, r1 = add_rmsnorm(a, r0, w["block.w_post"], eps, rounding, dt)
    h = swiglu_ffn(x1, w["block.W_gate"], w["block.W_up"], w["block.W_down"], dt)
    return h, r1


def _hc_args(w, which, p):
    return {"fn": w["block.hc_%s_fn" % which], "scale": w["block.hc_%s_scale" % which],
            "base": w["block.hc_%s_base" % which], "rms_eps": p["eps"], "pre_eps": p["hc_eps"],
            "sinkhorn_eps": p["hc_eps"], "post_mult": p["post_mult"],
            "sinkhorn_iters": p["sinkhorn_iters"]}


def mtp_block_v4(x, w, p, dt, state=None):
    """§10.2 with the deferred outputs: returns (f, R1, post_f, C_f).

    p: eps, rounding, hc_eps, post_mult, sinkhorn_iters. state: None (x is
    [T,M,H]) or (post_mix, res_mix, residual), then R0 = hc_post(x, ...).
    """
    if state is None:
        r0 = x
    else:
        post_mix, res_mix, residual = state
        r0 = hc_post(x, residual, post_mix, res_mix, dt)
    post_a, c_a, u_a = hc_pre(r0, dt=dt, **_hc_args(w, "attn", p))
    a = rnd(linear(rmsnorm(u_a, w["block.attn_norm_w"], p["eps"], p["rounding"], dt),
                   w["block.W_a"]), dt)
    r1 = hc_post(a, r0, post_a, c_a, dt)
    post_f, c_f, u_f = hc_pre(r1, dt=dt, **_hc_args(w, "ffn", p))
    v = rmsnorm(u_f, w["block.ffn_norm_w"], p["eps"], p["rounding"], dt)
    f = swiglu_ffn(v, w["block.W_gate"], w["block.W_up"], w["block.W_down"], dt)
    return f, r1, post_f, c_f


# --------------------------------------------------------------------------- whole steps (§3, §4, §10)

def mtp_step_v3(embeds, positions, prev_hidden, w, p, dt, family="deepseek_v3"):
    """One V3/GLM draft step; returns the FORMAT.md outputs. The fused input's
    halves and what is recycled are the family's (families.py)."""
    eps, rounding = p["eps"], p["rounding"]
    e = mask_pos0(embeds, positions)
    if families.embed_pre_norm(family):  # the target's embed_norm first, rounded
        e = rmsnorm(e, w["embed_pre_norm_weight"], eps, rounding, dt)
    e = rmsnorm(e, w["enorm_weight"], eps, rounding, dt)
    ph = rmsnorm(prev_hidden, w["hnorm_weight"], eps, rounding, dt)
    halves = [ph, e] if families.hidden_first(family) else [e, ph]
    x0 = eh_proj(np.concatenate(halves, axis=-1), w["eh_proj_weight"], dt, w, "eh_proj_weight", p)
    h, r1 = mtp_block_v3(x0, w, eps, rounding, dt)
    h_pre = rnd(r1 + h, dt)
    h_post = rmsnorm(h_pre, w["shared_head_norm_weight"], eps, rounding, dt)
    logits, token = lm_head(h_post, w["head_weight"], w, "head_weight", p, p.get("logits_mup"))
    recycled = h_pre if families.recycles_pre_norm(family) else h_post
    return {"block_out": h, "block_residual": r1, "hidden_pre": h_pre, "hidden_post": h_post,
            "recycled": recycled, "logits": logits, "token": token}


def mtp_step_v4(embeds, positions, prev_hidden, w, p, dt):
    """One V4 draft step (identical under both block contracts)."""
    eps, rounding, m = p["eps"], p["rounding"], p["hc_mult"]
    t, h = embeds.shape
    prev = prev_hidden.reshape(t, m, h)
    e = rmsnorm(mask_pos0(embeds, positions), w["enorm_weight"], eps, rounding, dt)
    ph = rmsnorm(prev, w["hnorm_weight"], eps, rounding, dt)
    x0 = eh_proj_hc(e, ph, w["e_proj_weight"], w["h_proj_weight"], dt, w, p)
    f, r1, post_f, c_f = mtp_block_v4(x0, w, p, dt)
    streams = hc_post(f, r1, post_f, c_f, dt)
    head_hidden = hc_head(streams, w["hc_head_fn"], w["hc_head_scale"], w["hc_head_base"],
                          eps, p["hc_eps"], p["hc_head_variant"], dt)
    hn = rmsnorm(head_hidden, w["shared_head_norm_weight"], eps, rounding, dt)
    logits, token = lm_head(hn, w["head_weight"], w, "head_weight", p)
    return {"block_out": f, "block_residual": r1, "post_mix": post_f, "comb_mix": c_f,
            "streams": streams, "recycled": streams.reshape(t, m * h), "head_hidden": head_hidden,
            "logits": logits, "token": token}


def mtp_step(family, embeds, positions, prev_hidden, w, p, dt):
    if families.mhc(family):
        return mtp_step_v4(embeds, positions, prev_hidden, w, p, dt)
    return mtp_step_v3(embeds, positions, prev_hidden, w, p, dt, family)


def draft_chain(family, embed_table, input_ids, positions, prev_hidden, layers, p, dt,
                num_steps, pass_step_idx, next_tokens=None):
    """§5: K teacher-forced steps. Step s uses layer s % L when pass_step_idx is 1,
    else layer 0; ids_s = next_tokens[s-1]; positions + s; previous hidden =
    step s-1's recycled. With next_tokens None the chain feeds each step's own
    greedy token (what a live engine does) and returns the tokens it fed.
    Returns (list of per-step output dicts, next_tokens [K-1, T])."""
    steps, fed = [], []
    ids, hidden = np.asarray(input_ids), prev_hidden
    for s in range(num_steps):
        layer = layers[s % len(layers)] if pass_step_idx else layers[0]
        out = mtp_step(family, embed(ids, embed_table), positions + s, hidden, layer, p, dt)
        steps.append(out)
        hidden = out["recycled"]
        if s + 1 < num_steps:
            ids = out["token"] if next_tokens is None else np.asarray(next_tokens[s])
            fed.append(ids)
    nt = np.stack(fed) if fed else np.zeros((0, len(input_ids)), dtype=np.int64)
    return steps, nt.astype(np.int64)
