#!/usr/bin/python3
"""Dumps whose judged outputs hold nothing to compare, for `mtpcheck verify`.

Each file holds one case, so that its verdict alone makes the exit code
(tests/cli/empty.sh). Inputs come from the bundled goldens; the observed
outputs are computed with this generator's NumPy ops (never with the C code).

  t0_norm          rmsnorm with no row: x [0,H], observed y [0,H]
  t0_rows          the same inputs, and observed y of 3 rows: an engine
                   that writes rows for no token (FAILED on its shape)
  t0_chain         draft_chain V4 with T = 0: every T-sized input and
                   observed output cut to no token
  tokens_unjudged  lm_head, observed `token` only; each token row has two
                   head rows whose logits differ by a few 1e-6, inside the
                   logit error bound, and the engine picked the lower one:
                   no token can be judged right or wrong
  v0_chain         draft_chain V4 with V = 0: empty logits rows (an empty
                   vocabulary, which the format refuses)
  rows0_chain      a captured-block chain dump whose head is a row subset,
                   each step's logits_rows listing no row, so its logits
                   are [T, 0] while T = 5 (refused: INVALID)
  t0_fixtures      not a dump: every case of captured.h5 (the captured-block
                   form) and fp8.h5 (FP8 weights, W8A8 activations) with
                   T = 0, goldens included, for `mtpcheck run` on a backend

Usage: /usr/bin/python3 tools/gen/empty_dumps.py KIND OUT.h5
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numerics as nx
import ops
from bug_dumps import CHAIN, FIX, read, write

NORM = "rmsnorm.bf16.eager.T3.H256"
LM_TIES = "lm_head.bf16.edge_ties.T3.H64.V97"
# the chain's inputs with a token dim, and which dim it is (FORMAT.md)
CHAIN_T = {"input_ids": 0, "positions": 0, "prev_hidden": 0, "next_tokens": 1}
# every op's inputs with a token dim (FORMAT.md): the chain's, the single
# ops', the captured block's (a tensor-parallel one's partials: [P,T,H]); every
# output has it first
TOKEN_INPUTS = dict(CHAIN_T, x=0, e=0, p=0, embeds=0, residual=0, post_mix=0,
                    comb_mix=0, res_mix=0, block_in=0, block_out=0,
                    block_residual=0, aux=0, block_out_parts=1)


def cut(vals, axis):
    """The first 0 entries of vals along axis: an empty batch."""
    return np.take(vals, np.arange(0), axis=axis)


def open_out(path, src):
    out = h5py.File(path, "w")
    for k, v in src.file.attrs.items():
        out.attrs[k] = v
    out.attrs["generator"] = "tools/gen/empty_dumps.py"
    out.create_group("cases")
    return out


def add_case(out, src, cid, inputs, observed):
    g = out["cases"].create_group(cid)
    for k, v in src.attrs.items():
        g.attrs[k] = v
    write(g.create_group("inputs"), inputs)
    write(g.create_group("observed"), observed)


def t0_norm(out, f):
    src = f["cases"][NORM]
    inp, exp = read(src["inputs"]), read(src["expected"])
    inp["x"] = (cut(inp["x"][0], 0), inp["x"][1])
    add_case(out, src, "t0.rmsnorm", inp, {"y": (cut(exp["y"][0], 0), exp["y"][1])})


def t0_rows(out, f):
    src = f["cases"][NORM]
    inp, exp = read(src["inputs"]), read(src["expected"])
    inp["x"] = (cut(inp["x"][0], 0), inp["x"][1])
    add_case(out, src, "t0_rows.rmsnorm", inp, {"y": exp["y"]})


def t0_chain(out, f):
    src = f["cases"][CHAIN]
    inp, exp = read(src["inputs"]), read(src["expected"])
    for name, axis in CHAIN_T.items():
        if name in inp:
            inp[name] = (cut(inp[name][0], axis), inp[name][1])
    obs = {k: (cut(v, 0), dt) for k, (v, dt) in exp.items()}
    add_case(out, src, "t0.draft_chain", inp, obs)


def v0_chain(out, f):
    src = f["cases"][CHAIN]
    inp, exp = read(src["inputs"]), read(src["expected"])
    v = exp["step.0/logits"][0].shape[1]
    for d in (inp, exp):
        for k, (vals, dt) in d.items():
            if vals.ndim == 2 and k.endswith(("head_weight", "logits", "embed_table")):
                axis = 1 if k.endswith("logits") else 0
                assert vals.shape[axis] == v, k
                d[k] = (cut(vals, axis), dt)
    add_case(out, src, "v0.draft_chain", inp, exp)


def tokens_unjudged(out, f):
    """Per token t, head rows a and b are x[t] normalised, except that b is
    one bf16 ulp lower where x[t] is 2^-4: logit b trails logit a by a few
    1e-6, some float32 ulps of the logit and below the logit error bound
    (2 (atol + rtol max|logit|), about 4e-5 here)."""
    src = f["cases"][LM_TIES]
    inp = read(src["inputs"])
    (x, xdt), (w, wdt) = inp["x"], inp["weight"]
    x, w = x.copy(), w.copy()
    token = np.zeros(x.shape[0], dtype=np.int64)
    for t in range(x.shape[0]):
        a, b = 3 + 11 * t, 40 + 13 * t
        x[t, 0] = 2.0 ** -4
        w[a] = w[b] = nx.rnd(x[t] / np.sqrt(np.sum(x[t] ** 2)), wdt)
        bits = nx.encode(w[b, 0:1], wdt)
        w[b, 0] = nx.decode(bits - 1, wdt)[0]  # positive: one ulp lower
        token[t] = b
    logits, ref = ops.lm_head(x, w)
    for t in range(x.shape[0]):
        gap = logits[t, ref[t]] - logits[t, token[t]]
        assert ref[t] != token[t] and 1e-6 < gap < 2e-5, (t, ref[t], gap)
    inp["x"], inp["weight"] = (x, xdt), (w, wdt)
    add_case(out, src, "tokens_unjudged.lm_head", inp, {"token": (token, "int64")})


def rows0_chain(out, f):
    """Copied whole (its weights carry full_rows), then cut."""
    cid = "chain.v3.L1.K3.sub_all.ok"
    f.copy(f["cases"][cid], out["cases"], name=cid, expand_soft=True)
    c = out["cases"][cid]
    for s in range(3):
        p = f"observed/step.{s}/"
        logits, dt = c[p + "logits"][()], c[p + "logits"].attrs["dtype"]
        for name, vals, t in ((p + "logits", logits[:, :0], dt),
                              (p + "logits_rows", np.zeros(0, np.int64), "int64")):
            del c[name]
            c.create_dataset(name, data=vals).attrs["dtype"] = t


def t0_case(s, cid, g):
    """Case cid of file s, every token dim cut to 0, into group g."""
    src = s["cases"][cid]
    d = g.create_group(cid)
    for k, v in src.attrs.items():
        d.attrs[k] = v
    for part in ("inputs", "expected"):
        tensors = read(src[part])
        for k, (vals, dt) in tensors.items():
            base = k.rsplit("/", 1)[-1]
            if part == "expected" or base in TOKEN_INPUTS:
                tensors[k] = (cut(vals, TOKEN_INPUTS.get(base, 0)), dt)
        write(d.create_group(part), tensors)


def t0_fixtures(out, f):
    for name in ("captured.h5", "fp8.h5"):
        with h5py.File(os.path.join(FIX, name), "r") as s:
            for cid in sorted(s["cases"]):
                t0_case(s, cid, out["cases"])


KINDS = {
    "t0_norm": ("norms.h5", t0_norm),
    "t0_rows": ("norms.h5", t0_rows),
    "t0_chain": ("chains.h5", t0_chain),
    "v0_chain": ("chains.h5", v0_chain),
    "tokens_unjudged": ("edge.h5", tokens_unjudged),
    "t0_fixtures": ("captured.h5", t0_fixtures),
    "rows0_chain": (os.path.join("dumps", "captured_bugs.h5"), rows0_chain),
}


def main(kind: str, path: str) -> None:
    src_file, fn = KINDS[kind]
    with h5py.File(os.path.join(FIX, src_file), "r") as f:
        out = open_out(path, f)
        out.attrs["description"] = "nothing to compare: " + kind
        fn(out, f)
        out.close()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in KINDS:
        sys.exit(f"usage: empty_dumps.py {{{','.join(KINDS)}}} OUT.h5")
    main(sys.argv[1], sys.argv[2])
