"""Per-op fixture definitions: case attributes, input generation, expected outputs.

Why this exists: it binds the math in ops.py to the FORMAT.md names. For
each op, `attrs(p)` lists the case attributes, `gen(rng, p)` draws the inputs
(dict name -> (values, dtype), in a fixed order so that cases with the same seed
share their common inputs), and `compute(v, p)` returns the expected tensors
from the input values (after any edge-case edits). `p` holds the case
parameters: T, H, dt and the op's own (eps, rounding, M, iters, ...).
"""

import numpy as np

import dspark
import families
import fp8
import ops
import values as V
from numerics import f32

F32, I64 = "float32", "int64"


class OpDef:
    def __init__(self, attrs, gen, compute):
        self.attrs, self.gen, self.compute = attrs, gen, compute


OPS = {}


def opdef(name, attrs):
    """Register gen_<op>/compute_<op> pairs; `attrs` is a list or a function of p."""
    def deco(gen):
        OPS[name] = OpDef(attrs if callable(attrs) else (lambda p, a=tuple(attrs): a), gen, None)
        return gen
    return deco


def computes(name):
    def deco(fn):
        OPS[name].compute = fn
        return fn
    return deco


def _hc_attr_names(p):
    names = ["rms_eps", "pre_eps", "sinkhorn_eps", "post_mult", "sinkhorn_iters"]
    return names + (["norm_eps"] if p.get("norm") else [])


def hc_attr_values(p):
    """The hc_pre attribute values of a case: rms_eps = eps, pre_eps = sinkhorn_eps = hc_eps."""
    return {"rms_eps": p["eps"], "pre_eps": p["hc_eps"], "sinkhorn_eps": p["hc_eps"],
            "post_mult": p["post_mult"], "sinkhorn_iters": p["iters"], "norm_eps": p["eps"]}


def _hc_kwargs(v, p):
    a = hc_attr_values(p)
    kw = {"rms_eps": a["rms_eps"], "pre_eps": a["pre_eps"], "sinkhorn_eps": a["sinkhorn_eps"],
          "post_mult": a["post_mult"], "sinkhorn_iters": a["sinkhorn_iters"], "dt": p["dt"]}
    if p.get("norm"):
        kw.update(norm_weight=v["norm_weight"], norm_eps=a["norm_eps"])
    return kw


def _quant_attrs(p):
    """proj_quant (and act_quant_eps when a case sets it) of an FP8 case (§12.2)."""
    if not p.get("proj_quant"):
        return []
    return ["proj_quant"] + (["act_quant_eps"] if "act_quant_eps" in p else [])


def _with_quant(base):
    return lambda p: list(base(p) if callable(base) else base) + _quant_attrs(p)


def quantize_inputs(inp, names, p, prefix=""):
    """Replace each weight in `names` by its e4m3 values + block scale (p["scale_dt"])."""
    for name in names:
        full = prefix + name
        if full not in inp:
            continue
        w = inp[full][0]
        # blocks of unequal magnitude, so that scales differ block to block (a scale
        # matrix used transposed, or another layer's, must show)
        bo, bi = np.indices(((w.shape[0] + 127) // 128, (w.shape[1] + 127) // 128))
        w = w * fp8.expand_scale(2.0 ** ((bo * 3 + bi * 5) % 4 - 1.5), *w.shape)
        wq, sc = fp8.quantize_weight(w, p.get("scale_dt", "float32"))
        sname = full + "_scale_inv" if name == "weight" else full[:-len("weight")] + "scale_inv"
        inp[full] = (wq, fp8.E4M3)
        inp[sname] = (sc, p.get("scale_dt", "float32"))
    return inp


# --------------------------------------------------------------------------- norms

@opdef("rmsnorm", ["eps", "rounding"])
def gen_rmsnorm(rng, p):
    t, h, dt = p["T"], p["H"], p["dt"]
    return {"x": (V.hidden(rng, (t, h), dt), dt), "weight": (V.norm_weight(rng, h, dt), dt)}


@computes("rmsnorm")
def compute_rmsnorm(v, p):
    return {"y": (ops.rmsnorm(v["x"], v["weight"], p["eps"], p["rounding"], p["dt"]), p["dt"])}


@opdef("add_rmsnorm", ["eps", "rounding"])
def gen_add_rmsnorm(rng, p):
    t, h, dt = p["T"], p["H"], p["dt"]
    return {"x": (V.hidden(rng, (t, h), dt), dt), "residual": (V.hidden(rng, (t, h), dt, 2.0), dt),
            "weight": (V.norm_weight(rng, h, dt), dt)}


@computes("add_rmsnorm")
def compute_add_rmsnorm(v, p):
    y, r = ops.add_rmsnorm(v["x"], v["residual"], v["weight"], p["eps"], p["rounding"], p["dt"])
    return {"y": (y, p["dt"]), "residual_out": (r, p["dt"])}


@opdef("fused_eh_norm", ["eps"])
def gen_fused_eh_norm(rng, p):
    t, h, dt = p["T"], p["H"], p["dt"]
    return {"positions": (V.positions(rng, t), I64), "embeds": (V.hidden(rng, (t, h), dt, 0.05), dt),
            "prev_hidden": (V.hidden(rng, (t, h), dt), dt),
            "enorm_weight": (V.norm_weight(rng, h, dt), dt),
            "hnorm_weight": (V.norm_weight(rng, h, dt), dt)}


@computes("fused_eh_norm")
def compute_fused_eh_norm(v, p):
    out = ops.fused_eh_norm(v["positions"], v["embeds"], v["prev_hidden"], v["enorm_weight"],
                            v["hnorm_weight"], p["eps"], p["dt"])
    return {"out": (out, p["dt"])}


@opdef("fused_embed_eh_norm", ["eps"])
def gen_fused_embed_eh_norm(rng, p):
    t, h, dt, vocab = p["T"], p["H"], p["dt"], p["V"]
    return {"positions": (V.positions(rng, t), I64), "input_ids": (V.token_ids(rng, t, vocab), I64),
            "embed_table": (V.hidden(rng, (vocab, h), dt, 0.05), dt),
            "prev_hidden": (V.hidden(rng, (t, h), dt), dt),
            "enorm_weight": (V.norm_weight(rng, h, dt), dt),
            "hnorm_weight": (V.norm_weight(rng, h, dt), dt)}


@computes("fused_embed_eh_norm")
def compute_fused_embed_eh_norm(v, p):
    out = ops.fused_embed_eh_norm(v["positions"], v["input_ids"], v["embed_table"], v["prev_hidden"],
                                  v["enorm_weight"], v["hnorm_weight"], p["eps"], p["dt"])
    return {"out": (out, p["dt"])}


@opdef("fused_mtp_input_rmsnorm", ["eps"])
def gen_fused_mtp_input_rmsnorm(rng, p):
    t, h, m, dt = p["T"], p["H"], p["M"], p["dt"]
    return {"embeds": (V.hidden(rng, (t, h), dt, 0.05), dt), "positions": (V.positions(rng, t), I64),
            "prev_hidden": (V.hidden(rng, (t, m, h), dt), dt),
            "enorm_weight": (V.norm_weight(rng, h, dt), dt),
            "hnorm_weight": (V.norm_weight(rng, h, dt), dt)}


@computes("fused_mtp_input_rmsnorm")
def compute_fused_mtp_input_rmsnorm(v, p):
    e, ph = ops.fused_mtp_input_rmsnorm(v["embeds"], v["positions"], v["prev_hidden"],
                                        v["enorm_weight"], v["hnorm_weight"], p["eps"], p["dt"])
    return {"enorm_out": (e, p["dt"]), "hnorm_out": (ph, p["dt"])}


@opdef("mtp_shared_head_rmsnorm", ["eps"])
def gen_mtp_shared_head_rmsnorm(rng, p):
    t, h, dt = p["T"], p["H"], p["dt"]
    return {"x": (V.hidden(rng, (t, h), dt), dt), "weight": (V.norm_weight(rng, h, dt), dt)}


@computes("mtp_shared_head_rmsnorm")
def compute_mtp_shared_head_rmsnorm(v, p):
    return {"y": (ops.mtp_shared_head_rmsnorm(v["x"], v["weight"], p["eps"], p["dt"]), p["dt"])}


# --------------------------------------------------------------------------- projections, gather, reduce

@opdef("embed", [])
def gen_embed(rng, p):
    t, h, dt, vocab = p["T"], p["H"], p["dt"], p["V"]
    ids = V.token_ids(rng, t, vocab)
    if t >= 3:
        ids[-1] = ids[0]                       # a repeated id
    return {"input_ids": (ids, I64), "embed_table": (V.hidden(rng, (vocab, h), dt, 0.05), dt)}


@computes("embed")
def compute_embed(v, p):
    return {"out": (ops.embed(v["input_ids"], v["embed_table"]), p["dt"])}


@opdef("eh_proj", _with_quant([]))
def gen_eh_proj(rng, p):
    t, h, dt = p["T"], p["H"], p["dt"]
    x = np.concatenate([V.hidden(rng, (t, h), dt), V.hidden(rng, (t, h), dt)], axis=-1)
    if p.get("zero_row0"):          # a masked position-0 row: the W8A8 eps clamp
        x[0] = 0.0
    inp = {"x": (x, dt), "weight": (V.linear_weight(rng, h, 2 * h, dt), dt)}
    return quantize_inputs(inp, ["weight"], p) if p.get("proj_quant") else inp


@computes("eh_proj")
def compute_eh_proj(v, p):
    return {"y": (ops.eh_proj(v["x"], v["weight"], p["dt"], v, "weight", p), p["dt"])}


@opdef("eh_proj_hc", _with_quant([]))
def gen_eh_proj_hc(rng, p):
    t, h, m, dt = p["T"], p["H"], p["M"], p["dt"]
    inp = {"e": (V.hidden(rng, (t, h), dt), dt), "p": (V.hidden(rng, (t, m, h), dt), dt),
           "e_proj_weight": (V.linear_weight(rng, h, h, dt), dt),
           "h_proj_weight": (V.linear_weight(rng, h, h, dt), dt)}
    if p.get("zero_row0"):
        inp["e"][0][0] = 0.0
    if p.get("proj_quant"):
        quantize_inputs(inp, p.get("qnames", ["e_proj_weight", "h_proj_weight"]), p)
    return inp


@computes("eh_proj_hc")
def compute_eh_proj_hc(v, p):
    x = ops.eh_proj_hc(v["e"], v["p"], v["e_proj_weight"], v["h_proj_weight"], p["dt"], v, p)
    return {"x": (x, p["dt"])}


@opdef("all_reduce", [])
def gen_all_reduce(rng, p):
    dt = p["dt"]
    return {"parts": (V.hidden(rng, (p["P"], p["T"], p["H"]), dt), dt)}


@computes("all_reduce")
def compute_all_reduce(v, p):
    return {"out": (ops.all_reduce(v["parts"], p["dt"]), p["dt"])}


@opdef("lm_head", _with_quant([]))
def gen_lm_head(rng, p):
    t, h, dt, vocab = p["T"], p["H"], p["dt"], p["V"]
    inp = {"x": (V.hidden(rng, (t, h), dt), dt), "weight": (V.linear_weight(rng, vocab, h, dt), dt)}
    return quantize_inputs(inp, ["weight"], p) if p.get("proj_quant") else inp


@computes("lm_head")
def compute_lm_head(v, p):
    logits, token = ops.lm_head(v["x"], v["weight"], v, "weight", p)
    return {"logits": (logits, F32), "token": (token, I64)}


# --------------------------------------------------------------------------- mHC

@opdef("hc_pre", _hc_attr_names)
def gen_hc_pre(rng, p):
    t, h, m, dt = p["T"], p["H"], p["M"], p["dt"]
    fn, scale, base = V.hc_params(rng, m, h)
    inp = {"residual": (V.hidden(rng, (t, m, h), dt), dt), "fn": (fn, F32), "scale": (scale, F32),
           "base": (base, F32)}
    if p.get("norm"):
        inp["norm_weight"] = (V.norm_weight(rng, h, dt), dt)
    return inp


@computes("hc_pre")
def compute_hc_pre(v, p):
    post, comb, li = ops.hc_pre(v["residual"], v["fn"], v["scale"], v["base"], **_hc_kwargs(v, p))
    return {"post_mix": (post, F32), "comb_mix": (comb, F32), "layer_input": (li, p["dt"])}


@opdef("hc_post", [])
def gen_hc_post(rng, p):
    t, h, m, dt = p["T"], p["H"], p["M"], p["dt"]
    return {"x": (V.hidden(rng, (t, h), dt), dt), "residual": (V.hidden(rng, (t, m, h), dt), dt),
            "post_mix": (V.post_mix(rng, t, m), F32), "comb_mix": (V.comb_mix(rng, t, m), F32)}


@computes("hc_post")
def compute_hc_post(v, p):
    out = ops.hc_post(v["x"], v["residual"], v["post_mix"], v["comb_mix"], p["dt"])
    return {"out": (out, p["dt"])}


@opdef("hc_fused_post_pre", _hc_attr_names)
def gen_hc_fused_post_pre(rng, p):
    t, h, m, dt = p["T"], p["H"], p["M"], p["dt"]
    inp = {"x": (V.hidden(rng, (t, h), dt), dt), "residual": (V.hidden(rng, (t, m, h), dt), dt),
           "post_mix": (V.post_mix(rng, t, m), F32), "comb_mix": (V.comb_mix(rng, t, m), F32)}
    fn, scale, base = V.hc_params(rng, m, h)
    inp.update(fn=(fn, F32), scale=(scale, F32), base=(base, F32))
    if p.get("norm"):
        inp["norm_weight"] = (V.norm_weight(rng, h, dt), dt)
    return inp


@computes("hc_fused_post_pre")
def compute_hc_fused_post_pre(v, p):
    r, post, comb, li = ops.hc_fused_post_pre(v["x"], v["residual"], v["post_mix"], v["comb_mix"],
                                              v["fn"], v["scale"], v["base"], **_hc_kwargs(v, p))
    return {"residual_out": (r, p["dt"]), "post_mix_out": (post, F32), "comb_mix_out": (comb, F32),
            "layer_input": (li, p["dt"])}


@opdef("hc_head", ["rms_eps", "hc_eps", "variant"])
def gen_hc_head(rng, p):
    t, h, m, dt = p["T"], p["H"], p["M"], p["dt"]
    return {"x": (V.hidden(rng, (t, m, h), dt), dt), "fn": (V.hc_fn(rng, m, m, h), F32),
            "scale": (V.hc_scale(rng, 1), F32), "base": (V.hc_base(rng, m), F32)}


@computes("hc_head")
def compute_hc_head(v, p):
    y = ops.hc_head(v["x"], v["fn"], v["scale"], v["base"], p["eps"], p["hc_eps"], p["variant"],
                    p["dt"])
    return {"y": (y, p["dt"])}


# --------------------------------------------------------------------------- synthetic block, steps, chains

def _weights(w, dt):
    return {n: (val, V.weight_dtype(n, dt)) for n, val in w.items()}


def _block_attrs(p):
    if families.mhc(p["family"]):
        return ["eps", "rounding", "hc_mult", "hc_eps", "sinkhorn_iters", "post_mult", "block_contract"]
    return ["eps", "rounding"]


@opdef("mtp_block", _block_attrs)
def gen_mtp_block(rng, p):
    t, h, f, dt = p["T"], p["H"], p["F"], p["dt"]
    if not families.mhc(p["family"]):
        inp = {"x": (V.hidden(rng, (t, h), dt), dt)}
        if p.get("state"):
            inp["residual"] = (V.hidden(rng, (t, h), dt, 2.0), dt)
        inp.update(_weights(V.v3_block(rng, h, f, dt), dt))
        return inp
    m = p["M"]
    if p.get("state"):
        inp = {"x": (V.hidden(rng, (t, h), dt), dt), "post_mix": (V.post_mix(rng, t, m), F32),
               "res_mix": (V.comb_mix(rng, t, m), F32),
               "residual": (V.hidden(rng, (t, m, h), dt), dt)}
    else:
        inp = {"x": (V.hidden(rng, (t, m, h), dt), dt)}
    inp.update(_weights(V.v4_block(rng, m, h, f, dt), dt))
    return inp


def step_params(p):
    """The parameter dict ops.mtp_step/mtp_block_v4 take."""
    q = {"eps": p["eps"], "rounding": p["rounding"]}
    if families.mhc(p["family"]):
        q.update(hc_mult=p["M"], hc_eps=p["hc_eps"], sinkhorn_iters=p["iters"],
                 post_mult=p["post_mult"], hc_head_variant=p.get("hc_head_variant"))
    if p.get("proj_quant"):
        q.update(proj_quant=p["proj_quant"], act_quant_eps=p.get("act_quant_eps", 1e-10))
    if p.get("logits_mup"):
        q.update(logits_mup=p["logits_mup"])
    return q


@computes("mtp_block")
def compute_mtp_block(v, p):
    dt = p["dt"]
    if not families.mhc(p["family"]):
        h, r = ops.mtp_block_v3(v["x"], v, p["eps"], p["rounding"], dt, v.get("residual"))
        return {"h": (h, dt), "residual_out": (r, dt)}
    state = (v["post_mix"], v["res_mix"], v["residual"]) if p.get("state") else None
    f, r1, post_f, c_f = ops.mtp_block_v4(v["x"], v, step_params(p), dt, state)
    if p["block_contract"] == "deferred":
        return {"x_out": (f, dt), "residual_out": (r1, dt), "post_mix_out": (post_f, F32),
                "res_mix_out": (c_f, F32)}
    return {"x_out": (ops.hc_post(f, r1, post_f, c_f, dt), dt)}


def _step_attrs(p):
    a = ["eps", "rounding"]
    if families.mhc(p["family"]):
        a += ["hc_mult", "hc_eps", "sinkhorn_iters", "post_mult", "block_contract", "hc_head_variant"]
    if families.logits_mup(p["family"]) and p.get("logits_mup"):
        a.append("logits_mup")
    return a + _quant_attrs(p)


def step_qnames(p):
    """The projections an FP8 step case quantizes (default: all of the family's)."""
    if families.mhc(p["family"]):
        return p.get("qnames", ["e_proj_weight", "h_proj_weight", "head_weight"])
    return p.get("qnames", ["eh_proj_weight", "head_weight"])


def _layer(rng, p):
    if families.mhc(p["family"]):
        return V.v4_layer(rng, p["M"], p["H"], p["F"], p["V"], p["dt"])
    w = V.v3_layer(rng, p["H"], p["F"], p["V"], p["dt"])
    if families.embed_pre_norm(p["family"]):  # drawn last: the other weights keep their draws
        w["embed_pre_norm_weight"] = V.norm_weight(rng, p["H"], p["dt"])
    return w


def _prev_width(p):
    return p["M"] * p["H"] if families.mhc(p["family"]) else p["H"]


@opdef("mtp_step", _step_attrs)
def gen_mtp_step(rng, p):
    t, h, dt = p["T"], p["H"], p["dt"]
    inp = {"embeds": (V.hidden(rng, (t, h), dt, 0.05), dt), "positions": (V.positions(rng, t), I64),
           "prev_hidden": (V.hidden(rng, (t, _prev_width(p)), dt), dt)}
    inp.update(_weights(_layer(rng, p), dt))
    if p.get("proj_quant"):
        quantize_inputs(inp, step_qnames(p), p)
    return _target_head(rng, inp, p)


def _target_head(rng, inp, p):
    """The target model's lm_head beside the layer's own (SHARED_HEAD_OVERWRITE, §12.4),
    drawn last so that the other inputs keep their seeds."""
    if p.get("target_head"):
        inp["target_head_weight"] = (V.linear_weight(rng, p["V"], p["H"], p["dt"]), p["dt"])
    return inp


def _layers_of(v, p):
    layers = []
    for l in range(p["L"]):
        pre = "layer.%d/" % l
        layers.append({k[len(pre):]: val for k, val in v.items() if k.startswith(pre)})
    return layers


_STEP_OUT = {"post_mix": F32, "comb_mix": F32, "logits": F32, "token": I64}


def _step_outputs(out, dt, prefix=""):
    return {prefix + k: (val, _STEP_OUT.get(k, dt)) for k, val in out.items()}


@computes("mtp_step")
def compute_mtp_step(v, p):
    out = ops.mtp_step(p["family"], v["embeds"], v["positions"], v["prev_hidden"], v,
                       step_params(p), p["dt"])
    return _step_outputs(out, p["dt"])


@opdef("draft_chain", lambda p: _step_attrs(p) + ["num_steps", "num_layers", "pass_step_idx"])
def gen_draft_chain(rng, p):
    t, h, dt = p["T"], p["H"], p["dt"]
    inp = {"embed_table": (V.hidden(rng, (p["V"], h), dt, 0.05), dt),
           "input_ids": (V.token_ids(rng, t, p["V"]), I64), "positions": (V.positions(rng, t), I64),
           "prev_hidden": (V.hidden(rng, (t, _prev_width(p)), dt), dt)}
    lw = {}
    for l in range(p["L"]):
        for name, val in _weights(_layer(rng, p), dt).items():
            lw["layer.%d/%s" % (l, name)] = val
        if p.get("proj_quant"):
            quantize_inputs(lw, step_qnames(p), p, "layer.%d/" % l)
    layers = _layers_of({k: val for k, (val, _) in lw.items()}, p)
    # next_tokens: the tokens a live engine feeds, i.e. each step's own greedy draft
    _, nt = ops.draft_chain(p["family"], inp["embed_table"][0], inp["input_ids"][0],
                            inp["positions"][0], inp["prev_hidden"][0], layers, step_params(p), dt,
                            p["K"], p["pass_step_idx"])
    inp["next_tokens"] = (nt, I64)
    inp.update(lw)
    return _target_head(rng, inp, p)


@computes("draft_chain")
def compute_draft_chain(v, p):
    layers = _layers_of(v, p)
    steps, _ = ops.draft_chain(p["family"], v["embed_table"], v["input_ids"], v["positions"],
                               v["prev_hidden"], layers, step_params(p), p["dt"], p["K"],
                               p["pass_step_idx"], v["next_tokens"])
    out = {}
    for s, o in enumerate(steps):
        out.update(_step_outputs(o, p["dt"], "step.%d/" % s))
    return out


# --------------------------------------------------------------------------- DSpark (§13)

@opdef("main_proj_norm", _with_quant(["eps", "rounding"]))
def gen_main_proj_norm(rng, p):
    t, h, a, dt = p["T"], p["H"], p["P"], p["dt"]
    inp = {"aux": (V.hidden(rng, (t, a, h), dt), dt),
           "main_proj_weight": (V.linear_weight(rng, h, a * h, dt), dt),
           "main_norm_weight": (V.norm_weight(rng, h, dt), dt)}
    return quantize_inputs(inp, ["main_proj_weight"], p) if p.get("proj_quant") else inp


@computes("main_proj_norm")
def compute_main_proj_norm(v, p):
    proj, x = dspark.main_proj_norm(v["aux"], v, v["main_norm_weight"], p["eps"], p["rounding"],
                                    p["dt"], q=p)
    return {"main_proj_out": (proj, p["dt"]), "main_x": (x, p["dt"])}


@opdef("hc_collapse", [])
def gen_hc_collapse(rng, p):
    t, h, m, dt = p["T"], p["H"], p["M"], p["dt"]
    pre = f32(ops.sigmoid(rng.standard_normal((t, m))) + p["hc_eps"])  # like a pre-mix
    return {"x": (V.hidden(rng, (t, m, h), dt), dt), "pre_mix": (pre, F32)}


@computes("hc_collapse")
def compute_hc_collapse(v, p):
    return {"y": (dspark.hc_collapse(v["x"], v["pre_mix"], p["dt"]), p["dt"])}


@opdef("markov_bias", lambda p: ["logit_scale"] if "logit_scale" in p else [])
def gen_markov_bias(rng, p):
    t, vocab, r, dt = p["T"], p["V"], p["R"], p["dt"]
    return {"logits_in": (V.hidden(rng, (t, vocab), dt, 3.0), dt),
            "prev_ids": (V.token_ids(rng, t, vocab), I64),
            "markov_w1": (V.hidden(rng, (vocab, r), dt), dt),
            "markov_w2": (V.linear_weight(rng, vocab, r, dt), dt)}


@computes("markov_bias")
def compute_markov_bias(v, p):
    e, logits, token = dspark.markov_bias(v["logits_in"], v["prev_ids"], v["markov_w1"],
                                          v["markov_w2"], p["dt"], p.get("logit_scale", 1.0))
    return {"markov_embed": (e, p["dt"]), "logits": (logits, p["dt"]), "token": (token, I64)}


@opdef("confidence", [])
def gen_confidence(rng, p):
    t, h, r, dt = p["T"], p["H"], p["R"], p["dt"]
    inp = {"hidden": (V.hidden(rng, (t, h), dt), dt),
           "markov_embed": (V.hidden(rng, (t, r), dt), dt),
           "weight": (f32(rng.standard_normal((1, h + r)) / np.sqrt(h + r) * 2.0), F32)}
    if p.get("bias"):
        inp["bias"] = (f32(rng.standard_normal(1)), F32)
    return inp


@computes("confidence")
def compute_confidence(v, p):
    return {"confidence": (dspark.confidence(v["hidden"], v["markov_embed"], v["weight"],
                                             v.get("bias")), F32)}


@opdef("hc_pre_delayed", _hc_attr_names)
def gen_hc_pre_delayed(rng, p):
    inp = gen_hc_pre(rng, p)
    if p.get("carried"):  # drawn last, so that every case of a seed shares the rest
        pre = ops.sigmoid(rng.standard_normal((p["T"], p["M"]))) + p["hc_eps"]
        inp["pre_mix_in"] = (f32(pre), F32)
    return inp


@computes("hc_pre_delayed")
def compute_hc_pre_delayed(v, p):
    post, comb, li, pre = dspark.hc_pre_delayed(v["residual"], v["fn"], v["scale"], v["base"],
                                                pre_in=v.get("pre_mix_in"), **_hc_kwargs(v, p))
    return {"post_mix": (post, F32), "comb_mix": (comb, F32), "layer_input": (li, p["dt"]),
            "pre_mix": (pre, F32)}
