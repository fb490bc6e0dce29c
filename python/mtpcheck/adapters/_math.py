"""Every op of mtpcheck's table written once against a small array kit, so
that the NumPy and the torch adapters share one statement of the math.

A kit `k` holds the activation dtype and gives: f(t) (a stored tensor as
float32), rnd(x) (x rounded to the activation dtype, kept float32),
rms_inv(x, eps, y=None) (1/sqrt(mean(s^2) + eps) of s = x + y over the last
axis, keepdims, safe from float32 overflow of s and of its squares), linear(x, w) (x @ w.T in float32), sum(x, axis),
amax(x, axis), exp, sigmoid, where, cat, argmax, index(t) (int64),
round_to(x, dtype) (rnd to a named dtype), clamp_max(i, v) (indices), and
for FP8 (SPEC.md §12.2) dequant(w, scale) (a float8_e4m3fn weight times its
128x128 block scales, float32 or e8m0, as a float32 [out, in] array),
e4m3(x) (float32 to the nearest e4m3 value, ties to even, saturating at
+-448, NaN kept) and groups(x, n) / ungroup(g, n) (the last axis zero-padded
to a multiple of n and split into groups of n, and back).
linear(x, w, wide=False) takes x as float32 holding activation values and w
as stored: it returns the GEMM in float32, rounded to the activation dtype
unless wide (logits) or w is float32 (mHC), so a kit may run it as one
bf16 GEMM with float32 accumulation.

Arithmetic is float32, as in the engines; a value is rounded to the
activation dtype exactly where SPEC.md stores it (a GEMM's result once, eager
RMSNorm twice, fused once, the position-0 mask is a select). Each op takes
(k, ins, a) and returns its outputs by name.

The conventions of SPEC.md §12.1 arrive as attributes (add_norm_input,
final_add, silu_mul_rounding, logits_dtype, pos0_mask) and so do proj_quant,
act_quant_eps, block ("synthetic" or "captured") and max_position; `a.get`
with the v1 default keeps the ops callable with a dict that lacks them.
"""

from __future__ import annotations

import math
from typing import Any

QB = 128  # FP8 weight blocks are QB x QB, W8A8 activation groups QB wide
E4M3_MAX = 448.0


def _e4m3_value(b):
    s, e, m = b >> 7, (b >> 3) & 15, b & 7
    if e == 15 and m == 7:
        v = float("nan")
    elif e == 0:
        v = m * 2.0 ** -9
    else:
        v = (1 + m / 8) * 2.0 ** (e - 7)
    return -v if s else v


# float8_e4m3fn by bit pattern (no Inf; S.1111.111 is NaN; 448 the largest)
E4M3 = [_e4m3_value(b) for b in range(256)]


def _f32(v):
    """v rounded to float32 (nearest, ties to even; for normal numbers, as
    the scalars here are), as a Python float, exact in every kit. Plain
    arithmetic rather than struct, which torch.compile cannot trace."""
    if v == 0 or not math.isfinite(v):
        return v
    m, e = math.frexp(v)
    return math.ldexp(round(m * 2 ** 24), e - 24)


# ---------------------------------------------------------------- norms (§2)

def _normed(k, x, r, w, rounding):
    if rounding == "eager":
        return k.rnd(k.rnd(x * r) * w)
    return k.rnd(x * r * w)


def _rmsnorm(k, x, w, eps, rounding):
    return _normed(k, x, k.rms_inv(x, eps), k.f(w), rounding)


def rmsnorm(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return {"y": _rmsnorm(k, k.f(i["x"]), k.f(i["weight"]), a["eps"], a["rounding"])}


def _add_rmsnorm(k, x, res, w, eps, rounding, a=None):
    """(y, residual_out): what is normalised is the stored residual, or the
    unrounded sum under add_norm_input = sum (§12.1)."""
    res_out = k.rnd(x + res)
    src = x + res if a is not None and a.get("add_norm_input") == "sum" else res_out
    # the variance of the unrounded sum, which may overflow float32 where
    # the stored (rounded) sum is Inf: the kit sums it wide
    return _normed(k, src, k.rms_inv(x, eps, res), k.f(w), rounding), res_out


def add_rmsnorm(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    y, r = _add_rmsnorm(k, k.f(i["x"]), k.f(i["residual"]), k.f(i["weight"]),
                        a["eps"], a["rounding"], a)
    return {"y": y, "residual_out": r}


def target_handoff(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    """SPEC.md §5.5: the target's final add + norm, what draft step 0 receives
    (the rounded sum itself for a family that recycles the pre-norm sum)."""
    y, s = _add_rmsnorm(k, k.f(i["target_hidden"]), k.f(i["target_residual"]),
                        k.f(i["target_norm_weight"]), a["eps"], a["rounding"], a)
    return {"handoff": s if a.get("recycles_pre_norm") else y}


def _mask(k, e, positions, a):
    """The position-0 mask (Step V3-1), unless pos0_mask = 0 (§12.1)."""
    if a.get("pos0_mask", 1) == 0:
        return e
    shape = (positions.shape[0],) + (1,) * (len(e.shape) - 1)
    return k.where((k.index(positions) == 0).reshape(shape), 0.0, e)


def embed(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return {"out": i["embed_table"][k.index(i["input_ids"])]}


def _eh_norm(k, i, a, e):
    en = _rmsnorm(k, _mask(k, e, i["positions"], a), k.f(i["enorm_weight"]), a["eps"], "fused")
    pn = _rmsnorm(k, k.f(i["prev_hidden"]), k.f(i["hnorm_weight"]), a["eps"], "fused")
    return en, pn


def fused_eh_norm(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return {"out": k.cat(_eh_norm(k, i, a, k.f(i["embeds"])), -1)}


def fused_embed_eh_norm(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    e = k.f(i["embed_table"][k.index(i["input_ids"])])
    return {"out": k.cat(_eh_norm(k, i, a, e), -1)}


def fused_mtp_input_rmsnorm(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    en, pn = _eh_norm(k, i, a, k.f(i["embeds"]))
    return {"enorm_out": en, "hnorm_out": pn}


def mtp_shared_head_rmsnorm(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return {"y": _rmsnorm(k, k.f(i["x"]), k.f(i["weight"]), a["eps"], "fused")}


# ---------------------------------------------------------------- projections (§12.2)

def _scale_name(name):
    """FORMAT.md: "weight" -> "weight_scale_inv", "X_weight" -> "X_scale_inv"."""
    return name + "_scale_inv" if name == "weight" else name[:-len("weight")] + "scale_inv"


def _qw(i, name):
    """A projection weight as stored and its block scales (None unless the
    weight is float8)."""
    return i[name], i.get(_scale_name(name))


def _quant_act(k, x, eps):
    """W8A8's activations: per row, per group of QB inputs, the dynamic
    scale s = max(amax, eps) / 448 in float32 and e4m3(x / s) (saturating),
    carried as e4m3(x / s) * s. Correctly rounded divisions (k.precise)."""
    return k.precise(_quant_act_body, k, x, eps)


def _quant_act_body(k, x, eps):
    n = x.shape[-1]
    g = k.groups(x, QB)
    amax = k.amax(abs(g), -1)
    eps = _f32(eps)
    s = k.where(amax < eps, eps, amax) / E4M3_MAX  # a NaN amax stays NaN
    return k.ungroup(k.e4m3(g / s) * s, n)


def _qlinear(k, x, qw, a, wide=False):
    """k.linear with an optionally float8 weight: weight-only dequantizes
    it (fp8_w, also what a float8 weight without a declared scheme means),
    W8A8 also quantizes the activations; one float32 GEMM, then one
    rounding to the activation dtype unless wide."""
    w, scale = qw
    if scale is None:
        return k.linear(x, w, wide)
    if a.get("proj_quant") == "fp8_w8a8":
        x = _quant_act(k, x, a.get("act_quant_eps", 1e-10))
    y = k.linear(x, k.dequant(w, scale), wide=True)
    return y if wide else k.rnd(y)


def eh_proj(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return {"y": k.rnd(_qlinear(k, k.f(i["x"]), _qw(i, "weight"), a))}


def _eh_proj_hc(k, a, e, p, we, wh):
    hp = k.rnd(_qlinear(k, p, wh, a))
    ep = k.rnd(_qlinear(k, e, we, a))
    return k.rnd(hp + ep[:, None, :])


def eh_proj_hc(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return {"x": _eh_proj_hc(k, a, k.f(i["e"]), k.f(i["p"]), _qw(i, "e_proj_weight"),
                             _qw(i, "h_proj_weight"))}


def _chunk_sum(k, x, order, c):
    """(rounded, u) of the parts x (a list) of chunk c (SPEC.md §2.5)."""
    p = len(x)
    if order == "ring":
        s = u = x[(c + 1) % p]
        for q in range(2, p + 1):
            u = s + x[(c + q) % p]
            s = k.rnd(u)
        return s, u
    s = x[c]
    for q in range(1, p):
        s = s + x[(c + q) % p]
    return k.rnd(s), s


def _reduce(k, parts, order):
    """(rounded, u) of parts [P, ..., H] summed in the declared order, u the
    float32 value before the last rounding; "" (undeclared) and one_shot add
    in rank order."""
    p, h = parts.shape[0], parts.shape[-1]
    x = [parts[q] for q in range(p)]
    if order in ("", None, "one_shot"):
        return _chunk_sum(k, x, "one_shot", 0)
    if order == "tree":
        u = x[0]
        while len(x) > 1:
            nxt = []
            for j in range(0, len(x) - 1, 2):
                u = x[j] + x[j + 1]
                nxt.append(k.rnd(u))
            x = nxt + x[len(x) - len(x) % 2:]
        return k.rnd(x[0]), u
    outs, us = [], []
    for c in range(p):  # the columns j with j * P // H == c
        lo, hi = (c * h + p - 1) // p, ((c + 1) * h + p - 1) // p
        if hi > lo:
            o, u = _chunk_sum(k, [v[..., lo:hi] for v in x], order, c)
            outs.append(o)
            us.append(u)
    return k.cat(tuple(outs), -1), k.cat(tuple(us), -1)


def all_reduce(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return {"out": _reduce(k, k.f(i["parts"]), a.get("reduce_order"))[0]}


def _lm_head(k, x, qw, a):
    """float32 logits, or bf16 ones under logits_dtype = bfloat16 (§12.1);
    the token is the first index among the maxima of the stored logits."""
    logits = _qlinear(k, x, qw, a, wide=True)
    if a.get("logits_dtype") == "bfloat16":
        logits = k.round_to(logits, "bfloat16")
    return logits, k.argmax(logits)


def lm_head(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    logits, token = _lm_head(k, k.f(i["x"]), _qw(i, "weight"), a)
    return {"logits": logits, "token": token}


# ---------------------------------------------------------------- mHC (§4.4)

def _sinkhorn(k, logits, iters, eps):
    """39 normalisations: correctly rounded divisions (k.precise)."""
    return k.precise(_sinkhorn_body, k, logits, iters, eps)


def _sinkhorn_body(k, logits, iters, eps):
    e = k.exp(logits - k.amax(logits, -1))
    c = e / k.sum(e, -1) + eps
    c = c / (k.sum(c, -2) + eps)
    for _ in range(iters - 1):
        c = c / (k.sum(c, -1) + eps)
        c = c / (k.sum(c, -2) + eps)
    return c


def _stream_sum(weights, streams):
    u = weights[:, 0, None] * streams[:, 0, :]
    for m in range(1, streams.shape[1]):
        u = u + weights[:, m, None] * streams[:, m, :]
    return u


def _hc_pre(k, res, fn, scale, base, hc, norm_w=None):
    """res [T,M,H] float32 -> post [T,M], comb [T,M,M], layer_input [T,H]."""
    t, m, h = res.shape
    x = res.reshape(t, m * h)
    mu = k.rms_inv(x, hc["rms_eps"]) * k.linear(x, fn)
    pre = k.sigmoid(mu[:, :m] * scale[0] + base[:m]) + hc["pre_eps"]
    post = k.sigmoid(mu[:, m:2 * m] * scale[1] + base[m:2 * m]) * hc["post_mult"]
    logit = (mu[:, 2 * m:] * scale[2] + base[2 * m:]).reshape(t, m, m)
    comb = _sinkhorn(k, logit, hc["sinkhorn_iters"], hc["sinkhorn_eps"])
    u = _stream_sum(pre, res)
    if norm_w is None:
        return post, comb, k.rnd(u)
    return post, comb, k.rnd(k.rnd(u) * k.rms_inv(u, hc["norm_eps"]) * k.f(norm_w))


def _hc_post(k, x, res, post, comb):
    acc = post[:, :, None] * x[:, None, :]
    for i in range(res.shape[1]):
        acc = acc + comb[:, i, :, None] * res[:, i, None, :]
    return k.rnd(acc)


def hc_pre(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    post, comb, li = _hc_pre(k, k.f(i["residual"]), i["fn"], i["scale"], i["base"], a,
                             i.get("norm_weight"))
    return {"post_mix": post, "comb_mix": comb, "layer_input": li}


def hc_post(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return {"out": _hc_post(k, k.f(i["x"]), k.f(i["residual"]), i["post_mix"], i["comb_mix"])}


def hc_fused_post_pre(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    r = _hc_post(k, k.f(i["x"]), k.f(i["residual"]), i["post_mix"], i["comb_mix"])
    post, comb, li = _hc_pre(k, r, i["fn"], i["scale"], i["base"], a, i.get("norm_weight"))
    return {"residual_out": r, "post_mix_out": post, "comb_mix_out": comb, "layer_input": li}


def _hc_head(k, y, fn, scale, base, rms_eps, hc_eps, variant):
    t, m, h = y.shape
    x = y.reshape(t, m * h)
    rho = k.rms_inv(x, rms_eps)
    if variant == "cuda":
        pre = k.sigmoid(k.linear(x, fn) * rho * scale[0] + base) + hc_eps
    else:
        pre = k.sigmoid(k.linear(k.rnd(x * rho), fn) * scale[0] + base) + hc_eps
    return k.rnd(_stream_sum(pre, y))


def hc_head(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return {"y": _hc_head(k, k.f(i["x"]), i["fn"], i["scale"], i["base"], a["rms_eps"],
                          a["hc_eps"], a["variant"])}


# ---------------------------------------------------------------- the synthetic block (§10)

def _swiglu(k, v, wg, wu, wd, a):
    gate = k.rnd(k.linear(v, wg))
    up = k.rnd(k.linear(v, wu))
    silu = k.sigmoid(gate) * gate
    if a.get("silu_mul_rounding") == "twice":  # torch's SiluAndMul (§12.1)
        silu = k.rnd(silu)
    return k.rnd(k.linear(k.rnd(silu * up), wd))


def _block_v3(k, w, a, x, residual):
    eps, rnd = a["eps"], a["rounding"]
    if residual is None:
        r0, xn = x, _rmsnorm(k, x, w("block.w_in"), eps, rnd)
    else:
        xn, r0 = _add_rmsnorm(k, x, residual, w("block.w_in"), eps, rnd, a)
    at = k.rnd(k.linear(xn, w("block.W_a")))
    x1, r1 = _add_rmsnorm(k, at, r0, w("block.w_post"), eps, rnd, a)
    return _swiglu(k, x1, w("block.W_gate"), w("block.W_up"), w("block.W_down"), a), r1


def _hc_w(w, which):
    return (w("block.hc_%s_fn" % which), w("block.hc_%s_scale" % which),
            w("block.hc_%s_base" % which))


def _block_v4(k, w, a, r0):
    """-> f, R1, post_f, C_f (the deferred outputs)."""
    eps, rnd = a["eps"], a["rounding"]
    post_a, c_a, u_a = _hc_pre(k, r0, *_hc_w(w, "attn"), a)
    at = k.rnd(k.linear(_rmsnorm(k, u_a, w("block.attn_norm_w"), eps, rnd), w("block.W_a")))
    r1 = _hc_post(k, at, r0, post_a, c_a)
    post_f, c_f, u_f = _hc_pre(k, r1, *_hc_w(w, "ffn"), a)
    v = _rmsnorm(k, u_f, w("block.ffn_norm_w"), eps, rnd)
    return (_swiglu(k, v, w("block.W_gate"), w("block.W_up"), w("block.W_down"), a),
            r1, post_f, c_f)


def _weights(k, i, pfx=""):
    """w(name) -> the stored weight pfx+name (the kit widens it where used:
    norms take k.f(w), GEMMs pass it to k.linear as stored); w.q(name) ->
    (weight, block scales or None) of a projection."""
    def w(name):
        return i[pfx + name]
    w.q = lambda name: _qw(i, pfx + name)
    return w


def mtp_block(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    w = _weights(k, i)
    if not a["mhc"]:
        res = i.get("residual")
        h, r1 = _block_v3(k, w, a, k.f(i["x"]), None if res is None else k.f(res))
        return {"h": h, "residual_out": r1}
    x = k.f(i["x"])
    if i.get("residual") is not None:
        x = _hc_post(k, x, k.f(i["residual"]), i["post_mix"], i["res_mix"])
    f, r1, post_f, c_f = _block_v4(k, w, a, x)
    if a["block_contract"] == "internal":
        return {"x_out": _hc_post(k, f, r1, post_f, c_f)}
    return {"x_out": f, "residual_out": r1, "post_mix_out": post_f, "res_mix_out": c_f}


# ---------------------------------------------------------------- steps and the chain (§3-§5, §12.3)
#
# A step is glue (before the block) + the block + everything after it. A
# captured-block step (block = "captured") takes the block's outputs from
# the case (c(name) is the step's captured input), returns the glue's
# output as block_in (judged against the captured one) and recomputes the
# rest from the captured outputs.

def _glue_v3(k, w, a, embeds, positions, prev):
    eps, rnd = a["eps"], a["rounding"]
    e = _rmsnorm(k, _mask(k, embeds, positions, a), w("enorm_weight"), eps, rnd)
    ph = _rmsnorm(k, prev, w("hnorm_weight"), eps, rnd)
    halves = (ph, e) if a.get("hidden_first") else (e, ph)  # the family's order
    return k.rnd(_qlinear(k, k.cat(halves, -1), w.q("eh_proj_weight"), a))


def _after_v3(k, w, a, h, r1):
    """Steps V3-5..6: the final add and shared-head norm (unfused, or the
    fused add + RMSNorm under final_add = fused), recycled, the LM head."""
    eps, rnd = a["eps"], a["rounding"]
    if a.get("final_add") == "fused":
        h_post, h_pre = _add_rmsnorm(k, h, r1, w("shared_head_norm_weight"), eps, rnd, a)
    else:
        h_pre = k.rnd(r1 + h)
        h_post = _rmsnorm(k, h_pre, w("shared_head_norm_weight"), eps, rnd)
    logits, token = _lm_head(k, h_post, w.q("head_weight"), a)
    recycled = h_pre if a.get("recycles_pre_norm") else h_post  # the family's (SPEC §5.5)
    return {"hidden_pre": h_pre, "hidden_post": h_post, "recycled": recycled,
            "logits": logits, "token": token}


def _step_v3(k, w, a, embeds, positions, prev, c=None):
    x0 = _glue_v3(k, w, a, embeds, positions, prev)
    if c is not None and a.get("tp_step"):
        # Step V3-8: every rank's partial reduced as declared; the fused
        # all-reduce + norm adds the unrounded sum to the residual
        h, u = _reduce(k, k.f(c("block_out_parts")), a.get("reduce_order"))
        if a.get("reduce_at") == "final_norm":
            h, a = u, dict(a, final_add="fused")
        r = _after_v3(k, w, a, h, k.f(c("block_residual")))
        r["block_in"] = x0
        return r
    if c is not None:
        r = _after_v3(k, w, a, k.f(c("block_out")), k.f(c("block_residual")))
        r["block_in"] = x0
        return r
    h, r1 = _block_v3(k, w, a, x0, None)
    r = _after_v3(k, w, a, h, r1)
    r.update(block_out=h, block_residual=r1)
    return r


def _glue_v4(k, w, a, embeds, positions, prev):
    eps, rnd, m = a["eps"], a["rounding"], a["M"]
    t, h = embeds.shape
    e = _rmsnorm(k, _mask(k, embeds, positions, a), w("enorm_weight"), eps, rnd)
    ph = _rmsnorm(k, prev.reshape(t, m, h), w("hnorm_weight"), eps, rnd)
    return _eh_proj_hc(k, a, e, ph, w.q("e_proj_weight"), w.q("h_proj_weight"))


def _after_v4(k, w, a, streams):
    """Steps V4-7..8: the streams recycled, hc_head with the layer's own
    parameters, the shared-head norm, the LM head."""
    t, m, h = streams.shape
    hh = _hc_head(k, streams, w("hc_head_fn"), w("hc_head_scale"), w("hc_head_base"),
                  a["eps"], a["hc_eps"], a["hc_head_variant"])
    hn = _rmsnorm(k, hh, w("shared_head_norm_weight"), a["eps"], a["rounding"])
    logits, token = _lm_head(k, hn, w.q("head_weight"), a)
    return {"streams": streams, "recycled": streams.reshape(t, m * h), "head_hidden": hh,
            "logits": logits, "token": token}


def _step_v4(k, w, a, embeds, positions, prev, c=None):
    x0 = _glue_v4(k, w, a, embeds, positions, prev)
    if c is not None:
        # exactly one hc_post over the step (Step V4-6): the layer's on the
        # captured deferred outputs, or the block's own (internal)
        if a["block_contract"] == "internal":
            streams = k.f(c("block_out"))
        else:
            streams = _hc_post(k, k.f(c("block_out")), k.f(c("block_residual")),
                               c("post_mix"), c("comb_mix"))
        r = _after_v4(k, w, a, streams)
        r["block_in"] = x0
        return r
    f, r1, post_f, c_f = _block_v4(k, w, a, x0)
    r = _after_v4(k, w, a, _hc_post(k, f, r1, post_f, c_f))
    r.update(block_out=f, block_residual=r1, post_mix=post_f, comb_mix=c_f)
    return r


def _step(k, w, a, embeds, positions, prev, c=None):
    if a["mhc"]:
        return _step_v4(k, w, a, embeds, positions, prev, c)
    return _step_v3(k, w, a, embeds, positions, prev, c)


def _captured(i, a, pfx=""):
    """c(name) -> the captured block tensor pfx+name, or None for a
    synthetic step."""
    if a.get("block") != "captured":
        return None
    return lambda name: i[pfx + name]


def mtp_step(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    return _step(k, _weights(k, i), a, k.f(i["embeds"]), i["positions"], k.f(i["prev_hidden"]),
                 _captured(i, a))


def draft_chain(k: Any, i: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    """K steps; step s uses layer s % L (pass_step_idx) or layer 0, the ids
    next_tokens[s-1] when given (else its own greedy tokens), positions + s
    (clamped to max_position in a captured chain, FORMAT.md v2) and the
    previous step's recycled hidden (recomputed, also in a captured chain)."""
    table, out = i["embed_table"], {}
    ids, hidden = k.index(i["input_ids"]), k.f(i["prev_hidden"])
    positions = k.index(i["positions"])
    nt = i.get("next_tokens")
    captured = a.get("block") == "captured"
    for s in range(a["num_steps"]):
        layer = s % a["num_layers"] if a["pass_step_idx"] else 0
        w = _weights(k, i, "layer.%d/" % layer)
        pos = positions + s
        if captured:
            pos = k.clamp_max(pos, a.get("max_position", 2 ** 63 - 1))
        r = _step(k, w, a, k.f(table[ids]), pos, hidden, _captured(i, a, "step.%d/" % s))
        out.update(("step.%d/%s" % (s, n), v) for n, v in r.items())
        hidden = r["recycled"]
        if s + 1 < a["num_steps"]:
            ids = r["token"] if nt is None else k.index(nt[s])
    return out


OPS = {name: globals()[name] for name in (
    "rmsnorm", "add_rmsnorm", "embed", "fused_eh_norm", "fused_embed_eh_norm", "eh_proj",
    "fused_mtp_input_rmsnorm", "eh_proj_hc", "hc_pre", "hc_post", "hc_fused_post_pre",
    "hc_head", "mtp_shared_head_rmsnorm", "lm_head", "all_reduce", "mtp_block", "mtp_step",
    "draft_chain", "target_handoff")}
