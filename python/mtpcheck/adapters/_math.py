"""Every op of mtpcheck's table written once against a small array kit, so
that the NumPy and the torch adapters share one statement of the math.

A kit `k` holds the activation dtype and gives: f(t) (a stored tensor as
float32), rnd(x) (x rounded to the activation dtype, kept float32),
rms_inv(x, eps, y=None) (1/sqrt(mean(s^2) + eps) of s = x + y over the last
axis, keepdims, safe from float32 overflow of s and of its squares), linear(x, w) (x @ w.T in float32), sum(x, axis),
amax(x, axis), exp, sigmoid, where, cat, argmax, index(t) (int64).
linear(x, w, wide=False) takes x as float32 holding activation values and w
as stored: it returns the GEMM in float32, rounded to the activation dtype
unless wide (logits) or w is float32 (mHC), so a kit may run it as one
bf16 GEMM with float32 accumulation.

Arithmetic is float32, as in the engines; a value is rounded to the
activation dtype exactly where SPEC.md stores it (a GEMM's result once, eager
RMSNorm twice, fused once, the position-0 mask is a select). Each op takes
(k, ins, a) and returns its outputs by name.
"""


# ---------------------------------------------------------------- norms (§2)

def _normed(k, x, r, w, rounding):
    if rounding == "eager":
        return k.rnd(k.rnd(x * r) * w)
    return k.rnd(x * r * w)


def _rmsnorm(k, x, w, eps, rounding):
    return _normed(k, x, k.rms_inv(x, eps), k.f(w), rounding)


def rmsnorm(k, i, a):
    return {"y": _rmsnorm(k, k.f(i["x"]), k.f(i["weight"]), a["eps"], a["rounding"])}


def _add_rmsnorm(k, x, res, w, eps, rounding):
    res_out = k.rnd(x + res)
    # the variance of the unrounded sum, which may overflow float32 where
    # the stored (rounded) sum is Inf: the kit sums it wide
    return _normed(k, res_out, k.rms_inv(x, eps, res), k.f(w), rounding), res_out


def add_rmsnorm(k, i, a):
    y, r = _add_rmsnorm(k, k.f(i["x"]), k.f(i["residual"]), k.f(i["weight"]),
                        a["eps"], a["rounding"])
    return {"y": y, "residual_out": r}


def _mask(k, e, positions):
    shape = (positions.shape[0],) + (1,) * (len(e.shape) - 1)
    return k.where((k.index(positions) == 0).reshape(shape), 0.0, e)


def embed(k, i, a):
    return {"out": i["embed_table"][k.index(i["input_ids"])]}


def _eh_norm(k, i, a, e):
    en = _rmsnorm(k, _mask(k, e, i["positions"]), k.f(i["enorm_weight"]), a["eps"], "fused")
    pn = _rmsnorm(k, k.f(i["prev_hidden"]), k.f(i["hnorm_weight"]), a["eps"], "fused")
    return en, pn


def fused_eh_norm(k, i, a):
    return {"out": k.cat(_eh_norm(k, i, a, k.f(i["embeds"])), -1)}


def fused_embed_eh_norm(k, i, a):
    e = k.f(i["embed_table"][k.index(i["input_ids"])])
    return {"out": k.cat(_eh_norm(k, i, a, e), -1)}


def fused_mtp_input_rmsnorm(k, i, a):
    en, pn = _eh_norm(k, i, a, k.f(i["embeds"]))
    return {"enorm_out": en, "hnorm_out": pn}


def mtp_shared_head_rmsnorm(k, i, a):
    return {"y": _rmsnorm(k, k.f(i["x"]), k.f(i["weight"]), a["eps"], "fused")}


# ---------------------------------------------------------------- projections

def eh_proj(k, i, a):
    return {"y": k.rnd(k.linear(k.f(i["x"]), i["weight"]))}


def _eh_proj_hc(k, e, p, we, wh):
    hp = k.rnd(k.linear(p, wh))
    ep = k.rnd(k.linear(e, we))
    return k.rnd(hp + ep[:, None, :])


def eh_proj_hc(k, i, a):
    return {"x": _eh_proj_hc(k, k.f(i["e"]), k.f(i["p"]), i["e_proj_weight"],
                             i["h_proj_weight"])}


def all_reduce(k, i, a):
    parts = k.f(i["parts"])
    acc = parts[0]
    for p in range(1, parts.shape[0]):
        acc = acc + parts[p]
    return {"out": k.rnd(acc)}


def _lm_head(k, x, w):
    logits = k.linear(x, w, wide=True)
    return logits, k.argmax(logits)


def lm_head(k, i, a):
    logits, token = _lm_head(k, k.f(i["x"]), i["weight"])
    return {"logits": logits, "token": token}


# ---------------------------------------------------------------- mHC (§4.4)

def _sinkhorn(k, logits, iters, eps):
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


def hc_pre(k, i, a):
    post, comb, li = _hc_pre(k, k.f(i["residual"]), i["fn"], i["scale"], i["base"], a,
                             i.get("norm_weight"))
    return {"post_mix": post, "comb_mix": comb, "layer_input": li}


def hc_post(k, i, a):
    return {"out": _hc_post(k, k.f(i["x"]), k.f(i["residual"]), i["post_mix"], i["comb_mix"])}


def hc_fused_post_pre(k, i, a):
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


def hc_head(k, i, a):
    return {"y": _hc_head(k, k.f(i["x"]), i["fn"], i["scale"], i["base"], a["rms_eps"],
                          a["hc_eps"], a["variant"])}


# ---------------------------------------------------------------- the synthetic block (§10)

def _swiglu(k, v, wg, wu, wd):
    gate = k.rnd(k.linear(v, wg))
    up = k.rnd(k.linear(v, wu))
    return k.rnd(k.linear(k.rnd(k.sigmoid(gate) * gate * up), wd))


def _block_v3(k, w, a, x, residual):
    eps, rnd = a["eps"], a["rounding"]
    if residual is None:
        r0, xn = x, _rmsnorm(k, x, w("block.w_in"), eps, rnd)
    else:
        xn, r0 = _add_rmsnorm(k, x, residual, w("block.w_in"), eps, rnd)
    at = k.rnd(k.linear(xn, w("block.W_a")))
    x1, r1 = _add_rmsnorm(k, at, r0, w("block.w_post"), eps, rnd)
    return _swiglu(k, x1, w("block.W_gate"), w("block.W_up"), w("block.W_down")), r1


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
    return _swiglu(k, v, w("block.W_gate"), w("block.W_up"), w("block.W_down")), r1, post_f, c_f


def _weights(k, i, pfx=""):
    """w(name) -> the stored weight pfx+name (the kit widens it where used:
    norms take k.f(w), GEMMs pass it to k.linear as stored)."""
    return lambda name: i[pfx + name]


def mtp_block(k, i, a):
    w = _weights(k, i)
    if a["family"] != "deepseek_v4":
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


# ---------------------------------------------------------------- steps and the chain (§3-§5)

def _step_v3(k, w, a, embeds, positions, prev):
    eps, rnd = a["eps"], a["rounding"]
    e = _rmsnorm(k, _mask(k, embeds, positions), w("enorm_weight"), eps, rnd)
    ph = _rmsnorm(k, prev, w("hnorm_weight"), eps, rnd)
    x0 = k.rnd(k.linear(k.cat((e, ph), -1), w("eh_proj_weight")))
    h, r1 = _block_v3(k, w, a, x0, None)
    h_pre = k.rnd(r1 + h)
    h_post = _rmsnorm(k, h_pre, w("shared_head_norm_weight"), eps, rnd)
    logits, token = _lm_head(k, h_post, w("head_weight"))
    return {"block_out": h, "block_residual": r1, "hidden_pre": h_pre, "hidden_post": h_post,
            "recycled": h_post, "logits": logits, "token": token}


def _step_v4(k, w, a, embeds, positions, prev):
    eps, rnd, m = a["eps"], a["rounding"], a["M"]
    t, h = embeds.shape
    e = _rmsnorm(k, _mask(k, embeds, positions), w("enorm_weight"), eps, rnd)
    ph = _rmsnorm(k, prev.reshape(t, m, h), w("hnorm_weight"), eps, rnd)
    x0 = _eh_proj_hc(k, e, ph, w("e_proj_weight"), w("h_proj_weight"))
    f, r1, post_f, c_f = _block_v4(k, w, a, x0)
    streams = _hc_post(k, f, r1, post_f, c_f)
    hh = _hc_head(k, streams, w("hc_head_fn"), w("hc_head_scale"), w("hc_head_base"),
                  eps, a["hc_eps"], a["hc_head_variant"])
    hn = _rmsnorm(k, hh, w("shared_head_norm_weight"), eps, rnd)
    logits, token = _lm_head(k, hn, w("head_weight"))
    return {"block_out": f, "block_residual": r1, "post_mix": post_f, "comb_mix": c_f,
            "streams": streams, "recycled": streams.reshape(t, m * h), "head_hidden": hh,
            "logits": logits, "token": token}


def _step(k, w, a, embeds, positions, prev):
    if a["family"] == "deepseek_v4":
        return _step_v4(k, w, a, embeds, positions, prev)
    return _step_v3(k, w, a, embeds, positions, prev)


def mtp_step(k, i, a):
    return _step(k, _weights(k, i), a, k.f(i["embeds"]), i["positions"], k.f(i["prev_hidden"]))


def draft_chain(k, i, a):
    """K steps; step s uses layer s % L (pass_step_idx) or layer 0, the ids
    next_tokens[s-1] when given (else its own greedy tokens), positions + s,
    and the previous step's recycled hidden."""
    table, out = i["embed_table"], {}
    ids, hidden = k.index(i["input_ids"]), k.f(i["prev_hidden"])
    positions = k.index(i["positions"])
    nt = i.get("next_tokens")
    for s in range(a["num_steps"]):
        layer = s % a["num_layers"] if a["pass_step_idx"] else 0
        w = _weights(k, i, "layer.%d/" % layer)
        r = _step(k, w, a, k.f(table[ids]), positions + s, hidden)
        out.update(("step.%d/%s" % (s, n), v) for n, v in r.items())
        hidden = r["recycled"]
        if s + 1 < a["num_steps"]:
            ids = r["token"] if nt is None else k.index(nt[s])
    return out


OPS = {name: globals()[name] for name in (
    "rmsnorm", "add_rmsnorm", "embed", "fused_eh_norm", "fused_embed_eh_norm", "eh_proj",
    "fused_mtp_input_rmsnorm", "eh_proj_hc", "hc_pre", "hc_post", "hc_fused_post_pre",
    "hc_head", "mtp_shared_head_rmsnorm", "lm_head", "all_reduce", "mtp_block", "mtp_step",
    "draft_chain")}
