#!/usr/bin/python3
"""Dumps made under the engine conventions of SPEC.md §12.1 (FORMAT.md v2).

Why this exists: `mtpcheck verify` must accept every legitimate convention
under its declaration, fail a dump made under one value but declared under
another (naming the convention), and resolve undeclared ones. These dumps
are computed here in NumPy float64 from the spec (tools/gen/ops.py plus the
convention points below), on the inputs of bundled golden cases; no C code
is read or run.

  /usr/bin/python3 tools/gen/conv_dumps.py fixtures/dumps/conventions.h5

Case ids say what each case must give: `ok.*` pass, `mismatch.<conv>.*`
fail with CONVENTION_MISMATCH naming <conv>, `missing_mask.*` fail with
MISSING_POS0_MASK, `undeclared.*` pass with the values in the id reported.
"""

import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numerics as nx
import ops
from bug_dumps import FIX, V3, V4, attrs_of, read, write

rnd = nx.rnd

DEFAULT = {"add_norm_input": "residual", "final_add": "unfused", "silu_mul_rounding": "once",
           "logits_dtype": "float32", "pos0_mask": 1}


def add_norm(x, residual, w, eps, rounding, dt, norm_input):
    """§2.3 and §12.1: the variance from the unrounded sum; the stored
    residual (residual) or the unrounded sum itself (sum) normalised."""
    s = x + residual
    r = ops.rms_scale(s, eps)
    res_out = rnd(s, dt)
    src = s if norm_input == "sum" else res_out
    if rounding == "eager":
        return rnd(rnd(src * r, dt) * w, dt), res_out
    return rnd(src * r * w, dt), res_out


def swiglu(v, w_gate, w_up, w_down, dt, silu_rounding):
    gate = rnd(ops.linear(v, w_gate), dt)
    up = rnd(ops.linear(v, w_up), dt)
    s = ops.silu(gate)
    if silu_rounding == "twice":
        s = rnd(s, dt)
    return rnd(ops.linear(rnd(s * up, dt), w_down), dt)


def lm_head(x, w, logits_dtype):
    logits = ops.linear(x, w)
    logits = rnd(logits, "bfloat16") if logits_dtype == "bfloat16" else nx.f32(logits)
    return logits, np.argmax(logits, axis=-1).astype(np.int64)


def masked(embeds, positions, conv):
    return ops.mask_pos0(embeds, positions) if conv["pos0_mask"] == 1 else embeds


def step_v3(inp, p, dt, conv):
    """§10.1 with every convention point of §12.1."""
    w = {k: v[0] for k, v in inp.items()}
    eps, rd = p["eps"], p["rounding"]
    e = ops.rmsnorm(masked(w["embeds"], w["positions"], conv), w["enorm_weight"], eps, rd, dt)
    ph = ops.rmsnorm(w["prev_hidden"], w["hnorm_weight"], eps, rd, dt)
    x0 = ops.eh_proj(np.concatenate([e, ph], axis=-1), w["eh_proj_weight"], dt)
    xn = ops.rmsnorm(x0, w["block.w_in"], eps, rd, dt)
    a = rnd(ops.linear(xn, w["block.W_a"]), dt)
    x1, r1 = add_norm(a, x0, w["block.w_post"], eps, rd, dt, conv["add_norm_input"])
    h = swiglu(x1, w["block.W_gate"], w["block.W_up"], w["block.W_down"], dt,
               conv["silu_mul_rounding"])
    if conv["final_add"] == "fused":
        h_post, h_pre = add_norm(h, r1, w["shared_head_norm_weight"], eps, rd, dt,
                                 conv["add_norm_input"])
    else:
        h_pre = rnd(r1 + h, dt)
        h_post = ops.rmsnorm(h_pre, w["shared_head_norm_weight"], eps, rd, dt)
    logits, token = lm_head(h_post, w["head_weight"], conv["logits_dtype"])
    return {"block_out": (h, dt), "block_residual": (r1, dt), "hidden_pre": (h_pre, dt),
            "hidden_post": (h_post, dt), "recycled": (h_post, dt),
            "logits": (logits, conv["logits_dtype"]), "token": (token, "int64")}


def step_v4(inp, p, dt, conv):
    """§10.2 (deferred) with the SwiGLU, logits and mask conventions."""
    w = {k: v[0] for k, v in inp.items()}
    eps, rd, m = p["eps"], p["rounding"], int(p["hc_mult"])
    t, hd = w["embeds"].shape
    e = ops.rmsnorm(masked(w["embeds"], w["positions"], conv), w["enorm_weight"], eps, rd, dt)
    ph = ops.rmsnorm(w["prev_hidden"].reshape(t, m, hd), w["hnorm_weight"], eps, rd, dt)
    x0 = ops.eh_proj_hc(e, ph, w["e_proj_weight"], w["h_proj_weight"], dt)
    post_a, c_a, u_a = ops.hc_pre(x0, dt=dt, **ops._hc_args(w, "attn", p))
    a = rnd(ops.linear(ops.rmsnorm(u_a, w["block.attn_norm_w"], eps, rd, dt), w["block.W_a"]), dt)
    r1 = ops.hc_post(a, x0, post_a, c_a, dt)
    post_f, c_f, u_f = ops.hc_pre(r1, dt=dt, **ops._hc_args(w, "ffn", p))
    v = ops.rmsnorm(u_f, w["block.ffn_norm_w"], eps, rd, dt)
    f = swiglu(v, w["block.W_gate"], w["block.W_up"], w["block.W_down"], dt,
               conv["silu_mul_rounding"])
    streams = ops.hc_post(f, r1, post_f, c_f, dt)
    hh = ops.hc_head(streams, w["hc_head_fn"], w["hc_head_scale"], w["hc_head_base"], eps,
                     p["hc_eps"], p["hc_head_variant"], dt)
    hn = ops.rmsnorm(hh, w["shared_head_norm_weight"], eps, rd, dt)
    logits, token = lm_head(hn, w["head_weight"], conv["logits_dtype"])
    return {"block_out": (f, dt), "block_residual": (r1, dt), "post_mix": (post_f, "float32"),
            "comb_mix": (c_f, "float32"), "streams": (streams, dt),
            "recycled": (streams.reshape(t, m * hd), dt), "head_hidden": (hh, dt),
            "logits": (logits, conv["logits_dtype"]), "token": (token, "int64")}


def add_case(out, attrs, cid, inputs, observed, declared):
    g = out["cases"].create_group(cid)
    for k, v in attrs.items():
        g.attrs[k] = v
    for k, v in declared.items():
        g.attrs[k] = np.int64(v) if k == "pos0_mask" else v
    write(g.create_group("inputs"), inputs)
    write(g.create_group("observed"), observed)


def step_cases(out, src, prefix, step, convs):
    inp, p = read(src["inputs"]), attrs_of(src)
    dt = inp["embeds"][1]

    def made(**kw):
        return step(inp, p, dt, dict(DEFAULT, **kw))

    for name, vals in convs:
        for v in vals:  # declared and made under the same value: passes
            add_case(out, p, "%s.ok.%s.%s" % (prefix, name, v), inp, made(**{name: v}),
                     {name: v})
        if name == "logits_dtype":  # bf16-valued logits stored as float32
            obs = made(logits_dtype="bfloat16")
            obs["logits"] = (obs["logits"][0], "float32")
            add_case(out, p, prefix + ".mismatch.logits_dtype", inp, obs,
                     {"logits_dtype": "float32"})
        elif name == "pos0_mask":
            add_case(out, p, prefix + ".mismatch.pos0_mask", inp, made(pos0_mask=1),
                     {"pos0_mask": 0})
            add_case(out, p, prefix + ".missing_mask", inp, made(pos0_mask=0), {"pos0_mask": 1})
        else:
            add_case(out, p, "%s.mismatch.%s" % (prefix, name), inp, made(**{name: vals[1]}),
                     {name: vals[0]})
    return inp, p, made


def v3_cases(out, src):
    inp, p, made = step_cases(out, src, "v3", step_v3, [
        ("add_norm_input", ("residual", "sum")), ("final_add", ("unfused", "fused")),
        ("silu_mul_rounding", ("once", "twice")), ("logits_dtype", ("float32", "bfloat16")),
        ("pos0_mask", (1, 0))])
    add_case(out, p, "v3.undeclared.sum.fused.twice.pos0_mask_0", inp,
             made(add_norm_input="sum", final_add="fused", silu_mul_rounding="twice",
                  pos0_mask=0), {})
    add_case(out, p, "v3.undeclared.bf16_logits", inp, made(logits_dtype="bfloat16"), {})
    # two declared wrong at once: neither flipped alone explains the outputs
    add_case(out, p, "v3.mismatch.final_add-pos0_mask", inp, made(final_add="fused", pos0_mask=1),
             {"final_add": "unfused", "pos0_mask": 0})


def v4_cases(out, src):
    inp, p, made = step_cases(out, src, "v4", step_v4, [
        ("silu_mul_rounding", ("once", "twice")), ("logits_dtype", ("float32", "bfloat16"))])
    add_case(out, p, "v4.undeclared.twice.bf16_logits.pos0_mask_0", inp,
             made(silu_mul_rounding="twice", logits_dtype="bfloat16", pos0_mask=0), {})


def op_cases(out):
    """add_rmsnorm and lm_head as single ops, under the same declarations."""
    rng = np.random.default_rng(1201)
    dt, r, h, v = "bfloat16", 6, 256, 300
    x, res = rnd(rng.normal(0, 1, (r, h)), dt), rnd(rng.normal(0, 4, (r, h)), dt)
    w = rnd(rng.normal(1, 0.1, h), dt)
    base = {"op": "add_rmsnorm", "family": "deepseek_v3", "seed": np.uint64(1201),
            "eps": 1e-6, "rounding": "fused"}
    inp = {"x": (x, dt), "residual": (res, dt), "weight": (w, dt)}
    for ni in ("residual", "sum"):
        y, ro = add_norm(x, res, w, 1e-6, "fused", dt, ni)
        obs = {"y": (y, dt), "residual_out": (ro, dt)}
        add_case(out, base, "op.add_rmsnorm.ok." + ni, inp, obs, {"add_norm_input": ni})
        if ni == "sum":
            add_case(out, base, "op.add_rmsnorm.mismatch.add_norm_input", inp, obs,
                     {"add_norm_input": "residual"})
            add_case(out, base, "op.add_rmsnorm.undeclared.sum", inp, obs, {})
    hx = rnd(rng.normal(0, 1, (r, h)), dt)
    hw = rnd(rng.normal(0, 0.05, (v, h)), dt)
    logits, token = lm_head(hx, hw, "bfloat16")
    hw[v - 1] = hw[token[0]]  # a tie at the top of row 0, at the highest index
    logits, token = lm_head(hx, hw, "bfloat16")
    lbase = {"op": "lm_head", "family": "deepseek_v3", "seed": np.uint64(1202)}
    linp = {"x": (hx, dt), "weight": (hw, dt)}
    obs = {"logits": (logits, "bfloat16"), "token": (token, "int64")}
    add_case(out, lbase, "op.lm_head.ok.bfloat16", linp, obs, {"logits_dtype": "bfloat16"})
    add_case(out, lbase, "op.lm_head.undeclared.bf16_stored", linp, obs, {})
    add_case(out, lbase, "op.lm_head.ok.not_exercised", linp, obs,
             {"logits_dtype": "bfloat16", "silu_mul_rounding": "twice"})
    tied = token.copy()
    tied[0] = v - 1
    add_case(out, lbase, "op.lm_head.ok.token_tied_at_max", linp,
             {"logits": obs["logits"], "token": (tied, "int64")}, {"logits_dtype": "bfloat16"})
    wrong = token.copy()
    wrong[1] = int(np.argmin(logits[1]))
    add_case(out, lbase, "op.lm_head.bad_token", linp,
             {"logits": obs["logits"], "token": (wrong, "int64")}, {"logits_dtype": "bfloat16"})


def main(path):
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as out:
        out.attrs["format"] = "mtpcheck-fixture"
        out.attrs["format_version"] = np.int64(2)
        out.attrs["generator"] = "tools/gen/conv_dumps.py"
        out.attrs["created"] = "2026-12-01T00:00:00Z"
        out.attrs["description"] = "dumps under each engine convention (SPEC.md 12.1)"
        out.create_group("cases")
        with h5py.File(os.path.join(FIX, "steps_v3.h5"), "r") as f:
            v3_cases(out, f["cases"][V3])
        with h5py.File(os.path.join(FIX, "steps_v4.h5"), "r") as f:
            v4_cases(out, f["cases"][V4])
        op_cases(out)
    os.replace(tmp, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: conv_dumps.py OUT.h5")
    main(sys.argv[1])
