#!/usr/bin/python3
"""Hand-built dumps of known MTP bugs, for `mtpcheck verify` and its tests.

Each case copies a bundled golden's inputs and writes `observed/` tensors as
the buggy engine would have produced them, computed with this generator's own
NumPy ops (never with the C code), so a diagnosis that names the bug is
checked against an independent construction:

  v3.pre_norm_recycle   mtp_step V3: recycled = hidden_pre (SPEC.md §8.1)
  v4.missing_hc_post    mtp_step V4: streams = R1 (block_residual), recycled
                        its flattening, head_hidden/logits from them (§8.2)
  v4.missing_hc_post_f  mtp_step V4: recycled = f, [T,H] instead of [T,M*H]
  v4.hc_post_twice      mtp_step V4: hc_post applied again on the streams (§8.3a)
  v4.chain_hc_head_owner draft_chain V4, L=2: step 1's head_hidden/logits use
                        layer 0's hc_head parameters (§8.3c)
  v3.other_rounding     mtp_step V3 eager case whose observed outputs are the
                        fused-rounding golden of the same inputs: legitimate,
                        passes, explained as NORM_ROUNDING (information)
  v3.ok, v4.ok          controls: observed = the golden

Usage: /usr/bin/python3 tools/gen/bug_dumps.py fixtures/dumps/bugs.h5
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numerics as nx
import ops

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "..", "fixtures")
V3 = "mtp_step.deepseek_v3.bf16.fused.T17.H64"
V3_EAGER = "mtp_step.deepseek_v3.bf16.eager.T17.H64"  # same inputs as V3
V4 = "mtp_step.deepseek_v4.bf16.fused.deferred.cuda.M4.it20.T3.H64"
CHAIN = "draft_chain.deepseek_v4.bf16.fused.deferred.cuda.M4.it20.L2.K3.pass1.T3.H64"


def read(group):
    """{name: (float64 values, dtype)} of a group, one level of subgroups."""
    out = {}
    for name, obj in group.items():
        if isinstance(obj, h5py.Group):
            for sub, v in read(obj).items():
                out[name + "/" + sub] = v
        else:
            dt = obj.attrs["dtype"]
            dt = dt.decode() if isinstance(dt, bytes) else dt
            out[name] = (nx.decode(obj[()], dt), dt)
    return out


def write(g, tensors):
    for name, (vals, dt) in sorted(tensors.items()):
        data = nx.encode(vals, dt)
        big = data.size >= 4096
        d = g.create_dataset(name, data=data, compression="gzip" if big else None)
        d.attrs["dtype"] = dt


def v4_head(streams, w, p, dt, head=None):
    """hc_head with `head`'s params (default w's), then w's shared head."""
    head = head or w
    hh = ops.hc_head(streams, head["hc_head_fn"][0], head["hc_head_scale"][0],
                     head["hc_head_base"][0], p["eps"], p["hc_eps"], p["hc_head_variant"], dt)
    hn = ops.rmsnorm(hh, w["shared_head_norm_weight"][0], p["eps"], p["rounding"], dt)
    logits, token = ops.lm_head(hn, w["head_weight"][0])
    return hh, logits, token


def attrs_of(src):
    return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in src.attrs.items()}


def add_case(out, src, cid, observed):
    g = out["cases"].create_group(cid)
    for k, v in src.attrs.items():
        g.attrs[k] = v
    write(g.create_group("inputs"), read(src["inputs"]))
    write(g.create_group("observed"), observed)


def v3_cases(out, src):
    exp = read(src["expected"])
    add_case(out, src, "v3.ok", exp)
    bug = dict(exp)
    bug["recycled"] = exp["hidden_pre"]
    add_case(out, src, "v3.pre_norm_recycle", bug)


def v4_cases(out, src):
    exp, inp, p = read(src["expected"]), read(src["inputs"]), attrs_of(src)
    dt = exp["streams"][1]
    t = exp["streams"][0].shape[0]
    add_case(out, src, "v4.ok", exp)

    def with_streams(streams):
        obs = {k: exp[k] for k in ("block_out", "block_residual", "post_mix", "comb_mix")}
        hh, logits, token = v4_head(streams, inp, p, dt)
        obs["streams"] = (streams, dt)
        obs["recycled"] = (streams.reshape(t, -1), dt)
        obs["head_hidden"] = (hh, dt)
        obs["logits"] = (logits, "float32")
        obs["token"] = (token, "int64")
        return obs

    add_case(out, src, "v4.missing_hc_post", with_streams(exp["block_residual"][0]))
    add_case(out, src, "v4.missing_hc_post_f", {"recycled": exp["block_out"]})
    twice = ops.hc_post(exp["block_out"][0], exp["streams"][0], exp["post_mix"][0],
                        exp["comb_mix"][0], dt)
    add_case(out, src, "v4.hc_post_twice", with_streams(twice))


def chain_case(out, src):
    exp, inp, p = read(src["expected"]), read(src["inputs"]), attrs_of(src)
    dt = exp["step.1/streams"][1]
    layer = {i: {k.split("/", 1)[1]: v for k, v in inp.items() if k.startswith("layer.%d/" % i)}
             for i in (0, 1)}
    obs = dict(exp)
    hh, logits, token = v4_head(exp["step.1/streams"][0], layer[1], p, dt, head=layer[0])
    obs["step.1/head_hidden"] = (hh, dt)
    obs["step.1/logits"] = (logits, "float32")
    obs["step.1/token"] = (token, "int64")
    add_case(out, src, "v4.chain_hc_head_owner", obs)


def main(path):
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as out:
        out.attrs["format"] = "mtpcheck-fixture"
        out.attrs["format_version"] = np.int64(1)
        out.attrs["generator"] = "tools/gen/bug_dumps.py"
        out.attrs["created"] = "2026-11-29T00:00:00Z"
        out.attrs["description"] = "observed outputs of known MTP bugs, for mtpcheck verify"
        out.create_group("cases")
        with h5py.File(os.path.join(FIX, "steps_v3.h5"), "r") as f:
            v3_cases(out, f["cases"][V3])
            add_case(out, f["cases"][V3_EAGER], "v3.other_rounding",
                     read(f["cases"][V3]["expected"]))
        with h5py.File(os.path.join(FIX, "steps_v4.h5"), "r") as f:
            v4_cases(out, f["cases"][V4])
        with h5py.File(os.path.join(FIX, "chains.h5"), "r") as f:
            chain_case(out, f["cases"][CHAIN])
    os.replace(tmp, path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(FIX, "dumps", "bugs.h5"))
