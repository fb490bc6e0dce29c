#!/usr/bin/python3
"""Dumps of issue 30's head-norm, concatenation-order and hand-off bugs, for `mtpcheck verify`.

Written at test time (harness/tests/order_dumps.sh), not committed: the
fixture budget (test_gen.py) has no room for them. Each case copies a
bundled golden's inputs and writes `observed/` tensors as the buggy engine
produced them, computed with this generator's own NumPy ops (never the C
code), and by the engine's own mistake, not by the judge's construction
(which swaps eh_proj's column halves):

  head_norm.v3      mtp_step V3: logits/token = lm_head(hidden_pre), the shared
                    head's norm skipped (SPEC.md §12.4 HEAD_NORM_MISSING); its
                    hidden_post, the head's input (FORMAT.md v2 rule 9), is then
                    hidden_pre
  head_norm.v4      mtp_step V4: logits/token = lm_head(head_hidden), the norm
                    after hc_head skipped
  concat.v3         mtp_step V3 whose eh_proj input is cat(hnorm(P), enorm(E))
                    instead of cat(enorm(E), hnorm(P)) (CONCAT_ORDER_SWAPPED,
                    mlx-lm #1469)
  concat.chain      draft_chain V3, L=2, K=3, the same at every step
  ok                control: observed = the V3 golden
  handoff.pre_norm  target_handoff: the target hands step 0 its pre-norm sum
                    (HANDOFF_MISMATCH, LightLLM #1402); inputs drawn here
  handoff.ok        control: the target's final add + norm (SPEC.md §5.5)
  handoff.other     the norm with another weight (all ones): FAILED, and no
                    diagnosis, since no bug class explains it
  final_norm.v3     mtp_step V3 with no final norm at all: logits, hidden_post
                    and recycled from hidden_pre (FINAL_NORM_MISSING: ERNIE 4.5)
  concat.mimo       mtp_step mimo (input_proj over [hidden, embedding] by the
                    row) computed with [embedding, hidden]: CONCAT_ORDER_SWAPPED
  recycle.kimi_k3   draft_chain kimi_k3 (the pre-norm sum recycled by the row)
                    fed the post-norm hidden: POST_NORM_RECYCLE
  kimi_k3.ok        control: the kimi_k3 chain's golden
  handoff.kimi_k3.post_norm  target_handoff kimi_k3 handing over the normed
                    hidden: HANDOFF_MISMATCH (its steps get the pre-norm sum)
  handoff.kimi_k3.ok  control: the kimi_k3 target hands over the sum

Usage: /usr/bin/python3 tools/gen/order_dumps.py OUT.h5
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import families
import ops
from bug_dumps import FIX, add_case, read, write
from field_dumps import compute, spec_p

V3 = ("steps_v3.h5", "mtp_step.deepseek_v3.bf16.fused.T17.H64")
V4 = ("steps_v4.h5", "mtp_step.deepseek_v4.bf16.fused.deferred.cuda.M2.it1.T17.H64")
CHAIN = ("chains.h5", "draft_chain.deepseek_v3.bf16.fused.L2.K3.pass1.T3.H64")
# goldens of family_rows.h5, which mtpgen writes at test time (main() makes it)
MIMO = ("family_rows.h5", "mtp_step.mimo.bf16.fused.T5.H32")
KIMI = ("family_rows.h5", "draft_chain.kimi_k3.bf16.fused.L2.K3.pass1.T3.H32")
ROWS = {}  # file name -> the folder it was written to


def post_norm_recycled(fn):
    """Runs fn with every V3 step recycling its post-norm hidden (the engine's
    mistake on a family whose contract recycles the pre-norm sum)."""
    saved = ops.mtp_step_v3

    def step(*args, **kw):
        out = saved(*args, **kw)
        return dict(out, recycled=out["hidden_post"])

    ops.mtp_step_v3 = step
    try:
        return fn()
    finally:
        ops.mtp_step_v3 = saved


def head_without_norm(exp: dict, inp: dict, hidden: str) -> dict:
    """The golden's outputs but the logits and token of the head applied to `hidden` as is
    (and a V3 step's hidden_post, the tensor the head is fed, that hidden)."""
    obs = dict(exp)
    logits, token = ops.lm_head(exp[hidden][0], inp["head_weight"][0])
    obs["logits"] = (logits, exp["logits"][1])
    obs["token"] = (token, "int64")
    if "hidden_post" in obs:
        obs["hidden_post"] = exp[hidden]
    return obs


def swapped_concat(fn):
    """Runs fn with eh_proj fed cat(P, E): the two halves of its input exchanged."""
    saved = ops.eh_proj

    def eh_proj(x, *args, **kw):
        h = x.shape[-1] // 2
        return saved(np.concatenate([x[..., h:], x[..., :h]], axis=-1), *args, **kw)

    ops.eh_proj = eh_proj
    try:
        return fn()
    finally:
        ops.eh_proj = saved


def handoff_case(out: h5py.File, cid: str, kind: str, family: str = "deepseek_v3") -> None:
    """A target_handoff case from seeded inputs: the engine's hand-off is the
    final add + norm ("ok", "post_norm"), the rounded sum before it ("pre_norm",
    and "ok" of a family that recycles the pre-norm sum), or the norm with the
    weight ignored ("other")."""
    bf = "bfloat16"
    rng = np.random.default_rng(3005)
    t, h, eps = 5, 64, 1e-6
    hidden = ops.rnd(rng.normal(size=(t, h)), bf)
    residual = ops.rnd(4.0 * rng.normal(size=(t, h)), bf)
    weight = ops.rnd(0.3 + 1.4 * rng.random(h), bf)
    y, pre = ops.add_rmsnorm(hidden, residual, weight, eps, "eager", bf)
    other, _ = ops.add_rmsnorm(hidden, residual, np.ones(h), eps, "eager", bf)
    g = out["cases"].create_group(cid)
    for k, v in {"op": "target_handoff", "family": family, "eps": eps,
                 "rounding": "eager", "seed": np.uint64(3005)}.items():
        g.attrs[k] = v
    write(g.create_group("inputs"), {"target_hidden": (hidden, bf),
                                     "target_residual": (residual, bf),
                                     "target_norm_weight": (weight, bf)})
    ok = pre if families.recycles_pre_norm(family) else y
    write(g.create_group("observed"), {"handoff": ({"ok": ok, "pre_norm": pre, "post_norm": y,
                                                    "other": other}[kind], bf)})


def case(out: h5py.File, where: tuple, cid: str, make) -> None:
    fname, src_id = where
    with h5py.File(os.path.join(ROWS.get(fname, FIX), fname), "r") as f:
        src = f["cases"][src_id]
        exp, inp = read(src["expected"]), read(src["inputs"])
        add_case(out, src, cid, make(exp, inp, spec_p(src_id)))


def main(path: str) -> None:
    import tempfile

    import mtpgen

    with tempfile.TemporaryDirectory() as rows:
        mtpgen.generate(rows, {"family_rows.h5"})
        ROWS["family_rows.h5"] = rows
        write_all(path)


def write_all(path: str) -> None:
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as out:
        out.attrs["format"] = "mtpcheck-fixture"
        out.attrs["format_version"] = np.int64(2)
        out.attrs["generator"] = "tools/gen/order_dumps.py"
        out.attrs["created"] = "2026-12-05T00:00:00Z"
        out.attrs["description"] = ("observed outputs of HEAD_NORM_MISSING, CONCAT_ORDER_SWAPPED "
                                     "and HANDOFF_MISMATCH")
        out.create_group("cases")
        case(out, V3, "ok", lambda exp, inp, p: exp)
        case(out, V3, "head_norm.v3", lambda exp, inp, p: head_without_norm(exp, inp, "hidden_pre"))
        case(out, V4, "head_norm.v4", lambda exp, inp, p: head_without_norm(exp, inp, "head_hidden"))
        case(out, V3, "concat.v3",
             lambda exp, inp, p: swapped_concat(lambda: compute("mtp_step", inp, p)))
        case(out, CHAIN, "concat.chain",
             lambda exp, inp, p: swapped_concat(lambda: compute("draft_chain", inp, p)))
        for kind in ("pre_norm", "ok", "other"):
            handoff_case(out, "handoff." + kind, kind)
        case(out, V3, "final_norm.v3", lambda exp, inp, p: dict(
            head_without_norm(exp, inp, "hidden_pre"), hidden_post=exp["hidden_pre"],
            recycled=exp["hidden_pre"]))
        case(out, MIMO, "concat.mimo",
             lambda exp, inp, p: swapped_concat(lambda: compute("mtp_step", inp, p)))
        case(out, KIMI, "kimi_k3.ok", lambda exp, inp, p: exp)
        case(out, KIMI, "recycle.kimi_k3",
             lambda exp, inp, p: post_norm_recycled(lambda: compute("draft_chain", inp, p)))
        for kind in ("post_norm", "ok"):
            handoff_case(out, "handoff.kimi_k3." + kind, kind, "kimi_k3")
    os.replace(tmp, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
