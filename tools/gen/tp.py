#!/usr/bin/python3
"""Tensor-parallel goldens and per-rank dumps (SPEC.md §2.5, Step V3-8, §8.8;
FORMAT.md "Tensor-parallel steps").

Why this exists: a sum of P partials whose value depends on the order of its
additions is judged under the engine's declared order, and the all-reduce
bugs exist only with several ranks. This file writes both from the spec
alone (NumPy float64, sharing no code with reference/): the four declared
orders, the tensor-parallel captured V3 step of every rank, and each
all-reduce bug as a buggy engine would run it. The partials mix large
values of both signs (+B, -B) with small terms, so that the orders give
other sums (P >= 3; with P = 2 every order is one fp32 add, rounded once).

These files are generated at test time into the build folder (CTest `tp`,
tools/gen/check_tp.py), never committed: the committed fixtures are at their
size budget (test_gen.py).

  --goldens OUT.h5  all_reduce under each order, P = 2, 4, 8, and the TP step
                    (every rank of one step per case group) under each
                    reduce_at, as goldens (expected/)
  --dumps OUT.h5    per-rank dumps (observed/) of one P = 4 step: all ranks
                    right, rank 1's MoE reduction removed, and each bug on
                    every rank; the case id names what verify must say

Case ids: all_reduce.<order>.P<P>.rank<p>;
tp.<order>.<reduce_at>.P<P>.<what>.rank<p> where <what> is `ok` or the
diagnosis, `ALLREDUCE_MISSING_rank1` for the dump where only rank 1 lacks it.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numerics as nx
import ops
import writer

BF, F32, I64 = "bfloat16", "float32", "int64"
ORDERS = ("one_shot", "two_shot", "ring", "tree")
PARTIAL = ("parts", "block_out_parts")  # every other tensor is replicated
EPS = 1e-6
# past fp32's 24 bits from the small terms: every order loses other ones
BIG = 2.0 ** 25


# --------------------------------------------------------------------------- the declared orders (§2.5)

def _sum_one(x, order, chunk, dt):
    """(rounded, u) of one element's parts x[0..P-1]; chunk = the owner."""
    p = len(x)
    if order == "one_shot" or order == "two_shot":
        start = 0 if order == "one_shot" else chunk
        s = x[start]
        for k in range(1, p):
            s = nx.f32(s + x[(start + k) % p])
        return nx.rnd(s, dt), s
    if order == "ring":
        s = u = x[(chunk + 1) % p]
        for k in range(2, p + 1):
            u = nx.f32(s + x[(chunk + k) % p])
            s = nx.rnd(u, dt)
        return nx.rnd(s, dt), u
    if order == "tree":
        v, u = list(x), x[0]
        while len(v) > 1:
            nxt = []
            for i in range(0, len(v) - 1, 2):
                u = nx.f32(v[i] + v[i + 1])
                nxt.append(nx.rnd(u, dt))
            if len(v) % 2:
                nxt.append(v[-1])
            v = nxt
        return nx.rnd(v[0], dt), u
    raise ValueError(order)


def all_reduce(parts, order, dt=BF):
    """(out, u) of parts [P, ..., H] in the declared order; None: the exact sum."""
    if order is None:
        s = np.sum(parts, axis=0)
        return nx.rnd(s, dt), s
    p, h = parts.shape[0], parts.shape[-1]
    flat = parts.reshape(p, -1)
    out, u = np.zeros(flat.shape[1]), np.zeros(flat.shape[1])
    for i in range(flat.shape[1]):
        chunk = (i % h) * p // h
        out[i], u[i] = _sum_one([float(v) for v in flat[:, i]], order, chunk, dt)
    return out.reshape(parts.shape[1:]), u.reshape(parts.shape[1:])


def mixed_parts(rng, p, shape, big):
    """Partials whose sum is small terms only: at every element one rank holds
    +B and another -B (P >= 3), the others small terms, at random ranks, so
    that each order drops other small terms into the large ones."""
    x = nx.rnd(rng.uniform(-1, 1, (p,) + shape), BF)
    if p < 3:
        return x
    flat = x.reshape(p, -1)
    for i in range(flat.shape[1]):
        a, b = rng.choice(p, 2, replace=False)
        flat[a, i], flat[b, i] = big, -big
    return flat.reshape(x.shape)


# --------------------------------------------------------------------------- the TP step (Step V3-8)

def weights(rng, h, v):
    def vec(n):
        return nx.rnd(rng.uniform(0.5, 1.5, n), BF)

    def mat(r, c):
        return nx.rnd(rng.standard_normal((r, c)) / np.sqrt(c), BF)
    return {"enorm_weight": vec(h), "hnorm_weight": vec(h), "eh_proj_weight": mat(h, 2 * h),
            "shared_head_norm_weight": vec(h), "head_weight": mat(v, h)}


def glue(E, pos, prev, w, rounding):
    """Steps V3-1..3: the block's input."""
    e = ops.rmsnorm(ops.mask_pos0(E, pos), w["enorm_weight"], EPS, rounding, BF)
    hh = ops.rmsnorm(prev, w["hnorm_weight"], EPS, rounding, BF)
    return nx.rnd(ops.linear(np.concatenate([e, hh], axis=-1), w["eh_proj_weight"]), BF)


def tail(h, u, r1, w, a):
    """(hidden_pre, hidden_post) after the reduction: h rounded, u the fp32 sum."""
    nw = w["shared_head_norm_weight"]
    if a["reduce_at"] == "final_norm":
        post, pre = ops.add_rmsnorm(u, r1, nw, EPS, a["rounding"], BF)
        return pre, post
    pre = nx.rnd(r1 + h, BF)
    return pre, ops.rmsnorm(pre, nw, EPS, a["rounding"], BF)


def rank_outputs(x, rank, r1, w, a, bug):
    """Rank `rank`'s outputs under `bug` (None: right), x the partials."""
    p, order = x.shape[0], a.get("reduce_order")
    if bug == "ALLREDUCE_AFTER_NORM":
        norms = np.stack([tail(x[q], x[q], r1, w, a)[1] for q in range(p)])
        z, _ = all_reduce(norms, order)
        pre = tail(x[rank], x[rank], r1, w, a)[0]
        return pre, z
    if bug == "ALLREDUCE_MISSING":
        h = u = x[rank]
    elif bug == "ALLREDUCE_SCALED":
        h = u = nx.rnd(p * x[rank], BF)
    else:
        h, u = all_reduce(x, order)
        if bug == "ALLREDUCE_TWICE":
            h, u = all_reduce(np.stack([h] * p), order)
    return tail(h, u, r1, w, a)


def step_group(rng, p, order, at, t, h, v, seed, bugs_of_rank, section, small=False):
    """The P cases (one per rank) of one TP step; `small`: partials far below
    the residual (where AFTER_NORM keeps every token, only scaling logits)."""
    w = weights(rng, h, v)
    E = nx.rnd(rng.standard_normal((t, h)), BF)
    pos = np.concatenate([[0], rng.integers(1, 4000, t - 1)]).astype(np.int64)
    prev = nx.rnd(rng.standard_normal((t, h)), BF)
    r1 = nx.rnd(rng.standard_normal((t, h)), BF)
    x = mixed_parts(rng, p, (t, h), BIG if order else 256.0)
    if small:
        x = nx.rnd(rng.uniform(-0.02, 0.02, x.shape), BF)
    a = {"op": "mtp_step", "family": "deepseek_v3", "seed": seed, "eps": EPS,
         "rounding": "fused", "block": "captured", "pos0_mask": 1, "reduce_at": at}
    if order:
        a["reduce_order"] = order
    block_in = glue(E, pos, prev, w, a["rounding"])
    ins = {"embeds": (E, BF), "positions": (pos, I64), "prev_hidden": (prev, BF),
           "block_in": (block_in, BF), "block_out_parts": (x, BF), "block_residual": (r1, BF)}
    ins.update({n: (val, BF) for n, val in w.items()})
    cases = []
    right = ops.lm_head(rank_outputs(x, 0, r1, w, a, None)[1], w["head_weight"])[1]
    for rank in range(p):
        bug = bugs_of_rank(rank)
        pre, post = rank_outputs(x, rank, r1, w, a, bug)
        logits, token = ops.lm_head(post, w["head_weight"])
        # the case whose tokens alone look right (SPEC.md Step V3-8)
        assert not small or np.array_equal(token, right), (token, right)
        outs = {"hidden_pre": (pre, BF), "hidden_post": (post, BF),
                "recycled": (post, BF), "logits": (logits, F32), "token": (token, I64)}
        cases.append((rank, dict(a, tp_rank=rank), ins, outs, section))
    return cases


def reduce_group(rng, p, order, seed):
    # the exact sum: values whose fp32 sum is exact in every order
    x = mixed_parts(rng, p, (2, 128), BIG if order else 256.0)
    out, _ = all_reduce(x, order)
    a = {"op": "all_reduce", "family": "deepseek_v3", "seed": seed, "tp_rank": p - 1}
    if order:
        a["reduce_order"] = order
    return x, out, a


def distinct(p, rng):
    """Assert that the orders give other sums on these values (P >= 3)."""
    x = mixed_parts(rng, p, (2, 128), BIG)
    outs = {o: all_reduce(x, o)[0] for o in ORDERS}
    for i, a in enumerate(ORDERS):
        for b in ORDERS[i + 1:]:
            assert not np.array_equal(outs[a], outs[b]), (p, a, b)


# --------------------------------------------------------------------------- files

def write(path, description, cases):
    w = writer._FileWriter(path, description, 2)
    try:
        for cid, attrs, ins, outs, section in cases:
            g = w.cases.create_group(cid)
            for k, val in attrs.items():
                writer._set_attr(g, k, val)
            gi = g.create_group("inputs")
            for name, (val, dt) in ins.items():
                w.dataset(gi, name, val, dt)
            go = g.create_group(section)
            for name, (val, dt) in outs.items():
                w.dataset(go, name, val, dt)
            for grp in (gi, go):  # FORMAT.md: the role of each tensor
                for name in grp:
                    writer._set_attr(grp[name], "tp", "partial" if name in PARTIAL
                                     else "replicated")
    finally:
        w.close()


STEPS = ((2, "one_shot", "moe"), (4, "ring", "after_block"), (4, "two_shot", "final_norm"),
         (8, "tree", "moe"), (8, "one_shot", "final_norm"), (4, None, "moe"))


def goldens(path):
    rng = np.random.default_rng(8800)
    cases = []
    for p in (2, 4, 8):
        for order in ORDERS + (None,):
            x, out, a = reduce_group(rng, p, order, 8800)
            cases.append(("all_reduce.%s.P%d.rank%d" % (order or "exact", p, p - 1), a,
                          {"parts": (x, BF)}, {"out": (out, BF)}, "expected"))
    for p, order, at in STEPS:
        for rank, a, ins, outs, sect in step_group(rng, p, order, at, 4, 64, 64, 8801,
                                                   lambda r: None, "expected"):
            cases.append(("tp.%s.%s.P%d.ok.rank%d" % (order or "exact", at, p, rank), a, ins,
                          outs, sect))
    write(path, "tensor-parallel goldens: all_reduce orders and the TP step", cases)


DUMPS = (("ok", lambda r: None), ("ALLREDUCE_MISSING_rank1",
                                  lambda r: "ALLREDUCE_MISSING" if r == 1 else None),
         ("ALLREDUCE_MISSING", lambda r: "ALLREDUCE_MISSING"),
         ("ALLREDUCE_TWICE", lambda r: "ALLREDUCE_TWICE"),
         ("ALLREDUCE_SCALED", lambda r: "ALLREDUCE_SCALED"),
         ("ALLREDUCE_AFTER_NORM", lambda r: "ALLREDUCE_AFTER_NORM"))


def dumps(path):
    rng = np.random.default_rng(8900)
    cases = []
    for order, at in (("ring", "moe"), ("one_shot", "final_norm")):
        for what, bugs in DUMPS + (("ALLREDUCE_AFTER_NORM_tokens_right", DUMPS[-1][1]),):
            for rank, a, ins, outs, sect in step_group(rng, 4, order, at, 4, 64, 64, 8901, bugs,
                                                       "observed", what.endswith("right")):
                cases.append(("tp.%s.%s.P4.%s.rank%d" % (order, at, what, rank), a, ins, outs,
                              sect))
    write(path, "tensor-parallel per-rank dumps: controls and each all-reduce bug", cases)


def fixture_cases():
    """The one tensor-parallel step bundled in fixtures/captured.h5 (rank 1 of
    a P = 4 ring step, tiny: the fixtures are at their size budget), so that
    the default self-test has a case for ALLREDUCE_AFTER_NORM."""
    rng = np.random.default_rng(9000)
    group = step_group(rng, 4, "ring", "moe", 2, 16, 32, 9000, lambda r: None, "expected")
    _, a, ins, outs, _ = group[1]
    return [("tp.v3.ring.P4.rank1.ok", {"attrs": a, "inputs": ins, "outputs": outs})]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goldens")
    ap.add_argument("--dumps")
    args = ap.parse_args(argv)
    for p in (4, 8):
        distinct(p, np.random.default_rng(p))
    if args.goldens:
        goldens(args.goldens)
    if args.dumps:
        dumps(args.dumps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
