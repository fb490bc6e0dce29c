"""The DSpark primitives (SPEC.md §13), float64 with the spec's rounding points.

Why this exists: the goldens of main_proj_norm, hc_collapse, markov_bias and
confidence come from here, written from SPEC.md §13 alone (never from the C
reference): every bf16(...) of the spec is one rnd(..., dt), everything else
is exact in float64.
"""

import numpy as np

import ops
from numerics import f32, rnd


def main_proj_norm(aux, weight, norm_weight, eps, rounding, dt):
    """Step DS-1: P = act(W_main . concat(aux)), main_x = RMSNorm(P).

    aux is [T, A, H]: layer i of the concatenation is columns [i*H, (i+1)*H).
    """
    flat = np.asarray(aux, dtype=np.float64).reshape(aux.shape[0], -1)
    proj = rnd(ops.linear(flat, weight), dt)
    return proj, ops.rmsnorm(proj, norm_weight, eps, rounding, dt)


def hc_collapse(x, pre_mix, dt):
    """Step DS-5: y[t] = act(sum_m pre[t, m] * x[t, m]), one rounding."""
    acc = np.zeros((x.shape[0], x.shape[2]))
    for m in range(x.shape[1]):
        acc = acc + pre_mix[:, m:m + 1] * x[:, m, :]
    return rnd(acc, dt)


def markov_bias(logits_in, prev_ids, w1, w2, dt):
    """Step DS-6, one position for a batch of rows: e = w1[prev], the bias
    act(w2 . e), the logits act(logits_in + bias), the greedy token."""
    e = np.asarray(w1, dtype=np.float64)[np.asarray(prev_ids, dtype=np.int64)]
    bias = rnd(ops.linear(e, w2), dt)
    logits = rnd(logits_in + bias, dt)
    return e, logits, np.argmax(logits, axis=-1).astype(np.int64)


def confidence(hidden, markov_embed, weight, bias=None):
    """Step DS-7: f32(sigmoid(w . [hidden; markov_embed] + bias))."""
    x = np.concatenate([hidden, markov_embed], axis=-1)
    z = ops.linear(x, weight)[:, 0]
    if bias is not None:
        z = z + bias[0]
    return f32(ops.sigmoid(z))
