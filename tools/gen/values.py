"""Input value distributions (SPEC.md §1 magnitudes, chosen to exercise the ops).

Why this exists: golden values are only useful if the inputs make every term
of the math matter: activations with a per-channel spread, norm weights that
are far from constant (like GLM-5.2's shared-head norm, about [-0.07, 1.81]),
linear weights ~ N(0, 1/sqrt(fan_in)), mHC parameters in the ranges that give
mixes that vary per token. Every function draws from the case's own
numpy.random.Generator and returns float64 values already rounded to dtype.
"""

import numpy as np

import ops
from numerics import f32, rnd


def hidden(rng, shape, dt, scale=1.0):
    """N(0,1) activations with a log-normal spread per channel (last axis)."""
    spread = np.exp(rng.normal(0.0, 0.5, shape[-1]))
    return rnd(rng.standard_normal(shape) * spread * scale, dt)


def norm_weight(rng, h, dt):
    return rnd(rng.uniform(-0.1, 1.8, h), dt)


def linear_weight(rng, n_out, n_in, dt):
    w = rng.standard_normal((n_out, n_in))
    w /= np.sqrt(n_in)  # in place: one float64 copy of a V4.1-sized weight, not three
    return rnd(w, dt, out=w)


def positions(rng, t, zeros=None):
    """Mostly nonzero positions; about one in six set to 0 (at least one when T >= 3)."""
    pos = rng.integers(1, 8192, t).astype(np.int64)
    if zeros is None:
        zeros = t // 6 + (1 if t >= 3 else 0)
    if zeros:
        pos[rng.choice(t, size=min(zeros, t), replace=False)] = 0
    return pos


def token_ids(rng, t, vocab):
    return rng.integers(0, vocab, t).astype(np.int64)


def hc_fn(rng, rows, m, h, gain=0.5):
    """mHC projection, f32 [rows, M*H] ~ N(0, 1/sqrt(M*H)) * gain."""
    return f32(rng.standard_normal((rows, m * h)) / np.sqrt(m * h) * gain)


def hc_scale(rng, n):
    return f32(0.5 + rng.normal(0.0, 0.05, n))


def hc_base(rng, n):
    return f32(rng.standard_normal(n))


def post_mix(rng, t, m):
    """Values like hc_pre's post_mix: 2*sigmoid(N(0,1)), f32."""
    return f32(2.0 * ops.sigmoid(rng.standard_normal((t, m))))


def comb_mix(rng, t, m, iters=20, eps=1e-6):
    """A Sinkhorn-normalised [T,M,M] f32 matrix, like hc_pre's comb_mix."""
    return f32(ops.sinkhorn(rng.standard_normal((t, m, m)), iters, eps))


def hc_params(rng, m, h):
    """(fn, scale, base) of one mHC sublayer, shapes as SPEC.md §4.4.1."""
    n = 2 * m + m * m
    return hc_fn(rng, n, m, h), hc_scale(rng, 3), hc_base(rng, n)


def v3_block(rng, h, f, dt):
    """The §10.1 synthetic block's weights."""
    return {
        "block.w_in": norm_weight(rng, h, dt),
        "block.W_a": linear_weight(rng, h, h, dt),
        "block.w_post": norm_weight(rng, h, dt),
        "block.W_gate": linear_weight(rng, f, h, dt),
        "block.W_up": linear_weight(rng, f, h, dt),
        "block.W_down": linear_weight(rng, h, f, dt),
    }


def v3_layer(rng, h, f, v, dt):
    """Every weight one V3/GLM mtp_step takes, under the FORMAT.md names."""
    w = {
        "enorm_weight": norm_weight(rng, h, dt),
        "hnorm_weight": norm_weight(rng, h, dt),
        "eh_proj_weight": linear_weight(rng, h, 2 * h, dt),
    }
    w.update(v3_block(rng, h, f, dt))
    w["shared_head_norm_weight"] = norm_weight(rng, h, dt)
    w["head_weight"] = linear_weight(rng, v, h, dt)
    return w


def v4_block(rng, m, h, f, dt):
    w = {}
    for which in ("attn", "ffn"):
        fn, scale, base = hc_params(rng, m, h)
        w["block.hc_%s_fn" % which] = fn
        w["block.hc_%s_scale" % which] = scale
        w["block.hc_%s_base" % which] = base
    w["block.attn_norm_w"] = norm_weight(rng, h, dt)
    w["block.ffn_norm_w"] = norm_weight(rng, h, dt)
    w["block.W_a"] = linear_weight(rng, h, h, dt)
    w["block.W_gate"] = linear_weight(rng, f, h, dt)
    w["block.W_up"] = linear_weight(rng, f, h, dt)
    w["block.W_down"] = linear_weight(rng, h, f, dt)
    return w


def v4_layer(rng, m, h, f, v, dt):
    """Every weight one V4 mtp_step takes, under the FORMAT.md names."""
    w = {
        "enorm_weight": norm_weight(rng, h, dt),
        "hnorm_weight": norm_weight(rng, h, dt),
        "e_proj_weight": linear_weight(rng, h, h, dt),
        "h_proj_weight": linear_weight(rng, h, h, dt),
    }
    w.update(v4_block(rng, m, h, f, dt))
    w["hc_head_fn"] = hc_fn(rng, m, m, h)
    w["hc_head_scale"] = hc_scale(rng, 1)
    w["hc_head_base"] = hc_base(rng, m)
    w["shared_head_norm_weight"] = norm_weight(rng, h, dt)
    w["head_weight"] = linear_weight(rng, v, h, dt)
    return w


# dtype of each weight: mHC parameters are float32, everything else the activation dtype
def weight_dtype(name, dt):
    base = name.split("/")[-1]
    if "hc_" in base and any(base.endswith(s) for s in ("_fn", "_scale", "_base")):
        return "float32"
    return dt
