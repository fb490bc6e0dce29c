"""The DSpark primitives (SPEC.md §13), float64 with the spec's rounding points.

Why this exists: the goldens of main_proj_norm, hc_collapse, markov_bias and
confidence come from here, written from SPEC.md §13 alone (never from the C
reference): every bf16(...) of the spec is one rnd(..., dt), everything else
is exact in float64.
"""

import numpy as np

import ops
from numerics import f32, rnd


def main_proj_norm(aux, w, norm_weight, eps, rounding, dt, q=None):
    """Step DS-1: P = act(W_main . concat(aux)), main_x = RMSNorm(P).

    aux is [T, A, H]: layer i of the concatenation is columns [i*H, (i+1)*H).
    w holds main_proj_weight and, when it is block-FP8 (§12.2), its
    main_proj_scale_inv; q the case's proj_quant / act_quant_eps.
    """
    flat = np.asarray(aux, dtype=np.float64).reshape(aux.shape[0], -1)
    proj = rnd(ops.qproj(flat, w, "main_proj_weight", q or {}), dt)
    return proj, ops.rmsnorm(proj, norm_weight, eps, rounding, dt)


def hc_pre_delayed(residual, fn, scale, base, rms_eps, pre_eps, sinkhorn_eps, post_mult,
                   sinkhorn_iters, dt, pre_in=None, norm_weight=None, norm_eps=None):
    """Step DS-4 -> (post f32, comb f32, layer_input, pre f32).

    The mixes are §4.4.1's, from the streams; the layer input collapses the
    streams with pre_in (the previous sublayer's pre-mix), or is stream 0
    itself when pre_in is None (layer 0), then the optional fused norm.
    """
    t, m, h = residual.shape
    flat = residual.reshape(t, m * h)
    rho = 1.0 / np.sqrt(np.sum(flat * flat, axis=-1) / (m * h) + rms_eps)
    mu = rho[:, None] * ops.linear(flat, fn)
    pre = ops.sigmoid(mu[:, :m] * scale[0] + base[:m]) + pre_eps
    post = ops.sigmoid(mu[:, m:2 * m] * scale[1] + base[m:2 * m]) * post_mult
    comb = ops.sinkhorn((mu[:, 2 * m:] * scale[2] + base[2 * m:]).reshape(t, m, m),
                        int(sinkhorn_iters), sinkhorn_eps)
    if pre_in is None:
        u = residual[:, 0, :].copy()
    else:
        u = np.zeros((t, h))
        for s in range(m):
            u = u + pre_in[:, s:s + 1] * residual[:, s, :]
    if norm_weight is None:
        li = rnd(u, dt)
    else:
        r = 1.0 / np.sqrt(np.sum(u * u, axis=-1, keepdims=True) / h + norm_eps)
        li = rnd(rnd(u, dt) * r * norm_weight, dt)
    return f32(post), f32(comb), li, f32(pre)


def hc_collapse(x, pre_mix, dt):
    """Step DS-5: y[t] = act(sum_m pre[t, m] * x[t, m]), one rounding."""
    acc = np.zeros((x.shape[0], x.shape[2]))
    for m in range(x.shape[1]):
        acc = acc + pre_mix[:, m:m + 1] * x[:, m, :]
    return rnd(acc, dt)


def markov_bias(logits_in, prev_ids, w1, w2, dt, scale=1.0):
    """Step DS-6, one position for a batch of rows: e = w1[prev], the bias
    act(scale * act(w2 . e)) (the drafter's logits processor scales it like
    its logits), the logits act(logits_in + bias), the greedy token."""
    e = np.asarray(w1, dtype=np.float64)[np.asarray(prev_ids, dtype=np.int64)]
    bias = rnd(scale * rnd(ops.linear(e, w2), dt), dt)
    logits = rnd(logits_in + bias, dt)
    return e, logits, np.argmax(logits, axis=-1).astype(np.int64)


def confidence(hidden, markov_embed, weight, bias=None):
    """Step DS-7: f32(sigmoid(w . [hidden; markov_embed] + bias))."""
    x = np.concatenate([hidden, markov_embed], axis=-1)
    z = ops.linear(x, weight)[:, 0]
    if bias is not None:
        z = z + bias[0]
    return f32(ops.sigmoid(z))


def head(h, hn, v, dt, scale, conf_bias=None, markov_on_ids=False):
    """Steps DS-5..7 of a whole block, both forms of dspark_step -> outputs.

    base = act(lm_head . hn), times the LogitsProcessor's scale (rounded
    again when it is not 1); the Markov loop keyed on the bonus token, then on
    each drawn token (on ids[k] as DSPARK_MARKOV_KEYED_ON_IDS's engine does);
    the confidence of h, the hidden the drafter returns.
    """
    base = rnd(ops.linear(hn, v["lm_head_weight"]), dt)
    if scale != 1.0:
        base = rnd(scale * base, dt)
    prev, emb, logits, tok = v["ids"][0], [], [], []
    for k in range(len(h)):
        if markov_on_ids:
            prev = v["ids"][k]  # the block's own input id: a mask token past k = 0
        e_k, z, d = markov_bias(base[k:k + 1], np.array([prev]), v["markov_w1"],
                                v["markov_w2"], dt, scale)
        emb.append(e_k[0])
        logits.append(z[0])
        tok.append(d[0])
        prev = d[0]
    emb = np.array(emb)
    return {"h": (h, dt), "base_logits": (base, dt), "markov_embed": (emb, dt),
            "logits": (np.array(logits), dt), "token": (np.array(tok, dtype=np.int64), "int64"),
            "confidence": (confidence(h, emb, v["conf_weight"], conf_bias), "float32")}
