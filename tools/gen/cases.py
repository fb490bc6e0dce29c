"""The bundled case list: which op, shapes, dtypes and parameters go into which file.

Why this exists: the suite's coverage is data. Each entry names a file, a
case id, an op, a family and parameters; the seed is derived from a seed key
(the case id unless stated), so cases meant to share inputs (eager/fused,
deferred/internal, cuda/rocm, with/without a fused norm) share a key, draw the
same inputs, and the writer stores those inputs once (soft links).

To add a case: append a `spec(...)` line in the right section (see README.md).
"""

import hashlib

import numpy as np

import families
import opdefs
from families import FAMILIES
from numerics import SHORT, rnd
from writer import Case

HC_EPS = 1e-6
POST_MULT = 2.0

FILES = {
    "norms.h5": "RMSNorm family: rmsnorm, add_rmsnorm, fused_eh_norm, fused_embed_eh_norm, "
                "fused_mtp_input_rmsnorm (SPEC.md §2, §7.1-§7.3)",
    "proj.h5": "embed, eh_proj, eh_proj_hc, all_reduce (SPEC.md Steps V3-0, V3-3, V4-3, §2.4)",
    "mhc.h5": "mHC primitives: hc_pre (with and without fused norm), hc_post, hc_fused_post_pre, "
              "hc_head cuda/rocm (SPEC.md §4.4)",
    "heads.h5": "lm_head and mtp_shared_head_rmsnorm (SPEC.md Step V3-6, §7.4)",
    "blocks.h5": "mtp_block: the synthetic decoder block, V3/GLM and V4 deferred/internal (SPEC.md §10)",
    "steps_v3.h5": "mtp_step, families deepseek_v3 and glm (SPEC.md §3, §10.1)",
    "steps_v4.h5": "mtp_step, family deepseek_v4, both block contracts, both hc_head variants "
                   "(SPEC.md §4, §10.2)",
    "chains.h5": "draft_chain: K=3 steps, L=2 layers, pass_step_idx 0 and 1 (SPEC.md §5)",
    "families.h5": "the families added through the family table (docs/ARCHITECTURE.md, 'Adding a "
                   "family'): mtp_block, mtp_step and draft_chain of glm4_moe_lite (GLM-4.7-Flash)",
    "family_rows.h5": "generated at test time (TEST_TIME): mtp_step and draft_chain of the rows "
                      "that change one choice, mimo (MiMo-7B, hidden first) and kimi_k3 (the "
                      "pre-norm sum recycled), and step3p5 (that and zero-centred norms)",
    "edge.h5": "edge cases: position 0 (whole batch), zero rows, rows near the format limits, "
               "tiny values, NaN/Inf propagation, overflow to Inf, argmax ties",
    "fp8.h5": "FP8 block-quantized projections (SPEC.md §12.2, FORMAT.md version 2): eh_proj, "
              "eh_proj_hc, lm_head, main_proj_norm (DSpark, §13), mtp_step under fp8_w and "
              "fp8_w8a8, float32 and e8m0 scales, zero rows (the act_quant_eps clamp)",
    "dspark.h5": "the DSpark primitives (SPEC.md §13): main_proj_norm (eager, fused), "
                 "hc_pre_delayed (layer 0, carried pre-mix), hc_collapse, markov_bias, confidence "
                 "(with and without its bias)",
    "fullsize.h5": "ops without an [H,H] weight at the real hidden sizes of SPEC.md §1 "
                   "(7168, 6144, 5120, 4096)",
}


class Spec:
    def __init__(self, file, case_id, op, family, p, seed_key=None, edits=()):
        self.file, self.case_id, self.op, self.family = file, case_id, op, family
        self.p = dict(p, family=family)
        self.p.setdefault("eps", FAMILIES[family].eps)
        self.p.setdefault("hc_eps", HC_EPS)
        self.p.setdefault("post_mult", POST_MULT)
        self.seed_key = seed_key or case_id
        self.edits = edits


SPECS = []


def spec(file, case_id, op, family, seed_key=None, edits=(), **p):
    SPECS.append(Spec(file, case_id, op, family, p, seed_key, edits))


def seed_of(key):
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little") & ((1 << 63) - 1)


def _attr_value(name, p):
    hc = opdefs.hc_attr_values(p) if "iters" in p else {"rms_eps": p["eps"]}
    table = {"eps": p["eps"], "rounding": p.get("rounding"), "hc_mult": p.get("M"),
             "hc_eps": p["hc_eps"], "sinkhorn_iters": p.get("iters"), "post_mult": p["post_mult"],
             "block_contract": p.get("block_contract"), "hc_head_variant": p.get("hc_head_variant"),
             "variant": p.get("variant"), "num_steps": p.get("K"), "num_layers": p.get("L"),
             "pass_step_idx": p.get("pass_step_idx"), "proj_quant": p.get("proj_quant"),
             "act_quant_eps": p.get("act_quant_eps"), "logit_scale": p.get("logit_scale")}
    table.update(hc)
    v = table[name] if name in table else p.get(name)  # else the case's own (logits_mup)
    if v is None:
        raise KeyError("case parameter for attribute %s missing" % name)
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        return float(v)
    return v


def build(s):
    """Spec -> writer.Case with inputs drawn from default_rng(seed) and expected computed."""
    seed = seed_of(s.seed_key)
    rng = np.random.default_rng(seed)
    od = opdefs.OPS[s.op]
    inputs = od.gen(rng, s.p)
    for edit in s.edits:
        edit(rng, inputs, s.p)
    vals = {k: v for k, (v, _) in inputs.items()}
    with np.errstate(all="ignore"):
        expected = od.compute(families.norm_weights(s.family, s.op, vals), s.p)
    attrs = {"op": s.op, "family": s.family, "seed": seed}
    for name in od.attrs(s.p):
        attrs[name] = _attr_value(name, s.p)
    return Case(s.file, s.case_id, attrs, inputs, expected)


# --------------------------------------------------------------------------- edge-case edits

LIMITS = {"bfloat16": (1e38, 1e-30), "float32": (1e38, 1e-30), "float16": (2e4, 1e-6)}


def rows(name, kinds, big=None, tiny=None):
    """Edit rows (first axis) of input `name`: kinds maps row -> zero|huge|tiny|
    nan1|nanrow|inf1|hugetiny|const."""
    def edit(rng, inp, p):
        x, dt = inp[name]
        x = x.copy()
        b, t = LIMITS[dt]
        b, t = big or b, tiny or t
        for r, kind in sorted(kinds.items()):
            shape = x[r].shape
            flat = x[r].reshape(-1)
            n = flat.size
            if kind == "zero":
                flat[:] = 0.0
            elif kind == "huge":
                flat[:] = np.clip(rng.standard_normal(n), -3, 3) * b
            elif kind == "tiny":
                flat[:] = rng.standard_normal(n) * t
            elif kind == "nan1":
                flat[rng.integers(n)] = np.nan
            elif kind == "nanrow":
                flat[:] = np.nan
            elif kind == "inf1":
                flat[rng.integers(n)] = np.inf
            elif kind == "hugetiny":
                flat[:] = rng.standard_normal(n) * t
                flat[rng.integers(n)] = b
            elif kind == "const":
                flat[:] = 3.0
            else:
                raise ValueError(kind)
            x[r] = flat.reshape(shape)
        inp[name] = (rnd(x, dt), dt)
    return edit


def set_positions(values):
    def edit(rng, inp, p):
        inp["positions"] = (np.asarray(values, dtype=np.int64), "int64")
    return edit


def set_element(name, index, value):
    def edit(rng, inp, p):
        x, dt = inp[name]
        x = x.copy()
        x[index] = value
        inp[name] = (rnd(x, dt), dt)
    return edit


def add_overflow(rng, inp, p):
    """add_rmsnorm rows: cancellation to 0, a sum past the format max, NaN, tiny."""
    x, dt = inp["x"]
    r, _ = inp["residual"]
    x, r = x.copy(), r.copy()
    h = x.shape[1]
    sign = np.where(rng.standard_normal(h) < 0, -1.0, 1.0)
    x[1] = -r[1]
    x[2] = sign * rng.uniform(1.0, 2.2, h) * 1e38
    r[2] = sign * rng.uniform(0.5, 1.5, h) * 1e38
    r[3, 7] = np.nan
    x[4] = rng.standard_normal(h) * 1e-30
    r[4] = rng.standard_normal(h) * 1e-30
    x[5], r[5] = 0.0, 0.0
    inp["x"], inp["residual"] = (rnd(x, dt), dt), (rnd(r, dt), dt)


def lm_ties(rng, inp, p):
    """Two identical weight rows aligned with each token's x: an exact tie, first index wins."""
    x, _ = inp["x"]
    w, dt = inp["weight"]
    w = w.copy()
    for t in range(x.shape[0]):
        a, b = 3 + 11 * t, 40 + 13 * t
        w[a] = w[b] = rnd(x[t] / np.sqrt(np.sum(x[t] ** 2)), dt)
    inp["weight"] = (w, dt)


def all_reduce_edge(rng, inp, p):
    parts, dt = inp["parts"]
    parts = parts.copy()
    h = parts.shape[2]
    parts[1, 1] = -parts[0, 1]
    parts[:, 2] = np.abs(rng.standard_normal((parts.shape[0], h))) * 1.8e38
    parts[1, 3, 4] = np.nan
    parts[:, 4] = rng.standard_normal((parts.shape[0], h)) * 1e-39      # bf16 subnormals
    inp["parts"] = (rnd(parts, dt), dt)


def embeds_table_nan(rng, inp, p):
    """NaN rows of the embedding table picked by tokens at position 0."""
    table, dt = inp["embed_table"]
    table = table.copy()
    ids, _ = inp["input_ids"]
    table[ids[0]] = np.nan
    table[ids[1], 3] = np.inf
    inp["embed_table"] = (table, dt)


# --------------------------------------------------------------------------- the suite

def _norms():
    f = "norms.h5"
    for dt in ("bfloat16",):
        for t, h in ((1, 64), (3, 256), (17, 1000), (64, 256)):
            fam = "glm" if h == 1000 else "deepseek_v3"
            for rd in ("eager", "fused"):
                spec(f, "rmsnorm.%s.%s.%sT%d.H%d" % (SHORT[dt], rd, "glm." if fam == "glm" else "", t, h),
                     "rmsnorm", fam, seed_key="rmsnorm.%s.T%d.H%d" % (dt, t, h),
                     T=t, H=h, dt=dt, rounding=rd)
    for dt in ("float32", "float16"):
        for rd in ("eager", "fused"):
            spec(f, "rmsnorm.%s.%s.T17.H256" % (SHORT[dt], rd), "rmsnorm", "deepseek_v3",
                 seed_key="rmsnorm.%s.T17.H256" % dt, T=17, H=256, dt=dt, rounding=rd)
    for t, h in ((1, 64), (17, 1000), (64, 256)):
        for rd in ("eager", "fused"):
            spec(f, "add_rmsnorm.bf16.%s.T%d.H%d" % (rd, t, h), "add_rmsnorm", "deepseek_v3",
                 seed_key="add_rmsnorm.T%d.H%d" % (t, h), T=t, H=h, dt="bfloat16", rounding=rd)
    for dt in ("float32", "float16"):
        for rd in ("eager", "fused"):
            spec(f, "add_rmsnorm.%s.%s.T17.H256" % (SHORT[dt], rd), "add_rmsnorm", "glm",
                 seed_key="add_rmsnorm.%s.T17.H256" % dt, T=17, H=256, dt=dt, rounding=rd)
    for t, h, fam in ((1, 64, "deepseek_v3"), (3, 64, "deepseek_v3"), (17, 1000, "glm"),
                      (64, 256, "deepseek_v3")):
        spec(f, "fused_eh_norm.bf16.%sT%d.H%d" % ("glm." if fam == "glm" else "", t, h),
             "fused_eh_norm", fam, T=t, H=h, dt="bfloat16")
    for dt in ("float32", "float16"):
        spec(f, "fused_eh_norm.%s.T17.H256" % SHORT[dt], "fused_eh_norm", "deepseek_v3",
             T=17, H=256, dt=dt)
    spec(f, "fused_embed_eh_norm.bf16.T3.H64.V97", "fused_embed_eh_norm", "deepseek_v3",
         T=3, H=64, V=97, dt="bfloat16")
    spec(f, "fused_embed_eh_norm.bf16.glm.T17.H256.V200", "fused_embed_eh_norm", "glm",
         T=17, H=256, V=200, dt="bfloat16")
    spec(f, "fused_embed_eh_norm.fp16.T17.H64.V97", "fused_embed_eh_norm", "deepseek_v3",
         T=17, H=64, V=97, dt="float16")
    for t, h, m in ((3, 64, 4), (17, 256, 4), (17, 1000, 2), (64, 128, 4)):
        spec(f, "fused_mtp_input_rmsnorm.bf16.M%d.T%d.H%d" % (m, t, h), "fused_mtp_input_rmsnorm",
             "deepseek_v4", T=t, H=h, M=m, dt="bfloat16")
    spec(f, "fused_mtp_input_rmsnorm.fp32.M4.T17.H64", "fused_mtp_input_rmsnorm", "deepseek_v4",
         T=17, H=64, M=4, dt="float32")


def _proj():
    f = "proj.h5"
    spec(f, "embed.bf16.T17.H64.V97", "embed", "deepseek_v3", T=17, H=64, V=97, dt="bfloat16")
    spec(f, "embed.fp32.T3.H256.V97", "embed", "deepseek_v3", T=3, H=256, V=97, dt="float32")
    for t, h in ((1, 64), (3, 64), (17, 256), (64, 64), (5, 200)):
        spec(f, "eh_proj.bf16.T%d.H%d" % (t, h), "eh_proj", "deepseek_v3", T=t, H=h, dt="bfloat16")
    for dt in ("float32", "float16"):
        spec(f, "eh_proj.%s.T17.H64" % SHORT[dt], "eh_proj", "deepseek_v3", T=17, H=64, dt=dt)
    for t, h, m in ((3, 64, 4), (17, 128, 4), (17, 64, 2)):
        spec(f, "eh_proj_hc.bf16.M%d.T%d.H%d" % (m, t, h), "eh_proj_hc", "deepseek_v4",
             T=t, H=h, M=m, dt="bfloat16")
    spec(f, "eh_proj_hc.fp32.M4.T3.H64", "eh_proj_hc", "deepseek_v4", T=3, H=64, M=4, dt="float32")
    for n, t, h in ((2, 17, 256), (4, 3, 1000), (8, 64, 64)):
        spec(f, "all_reduce.bf16.P%d.T%d.H%d" % (n, t, h), "all_reduce", "deepseek_v3",
             P=n, T=t, H=h, dt="bfloat16")
    for dt in ("float32", "float16"):
        spec(f, "all_reduce.%s.P4.T17.H256" % SHORT[dt], "all_reduce", "deepseek_v3",
             P=4, T=17, H=256, dt=dt)


def _mhc():
    f = "mhc.h5"
    v4 = "deepseek_v4"
    for t, h, m, it in ((1, 64, 4, 20), (3, 64, 4, 20), (17, 256, 4, 20), (64, 256, 4, 20),
                        (3, 1000, 2, 20), (17, 64, 2, 20), (17, 64, 4, 1), (3, 256, 2, 1)):
        key = "hc_pre.M%d.it%d.T%d.H%d" % (m, it, t, h)
        for norm in (False, True):
            if norm and (t, h) in ((1, 64), (64, 256)):
                continue
            spec(f, "hc_pre.bf16.M%d.it%d.%s.T%d.H%d" % (m, it, "norm" if norm else "plain", t, h),
                 "hc_pre", v4, seed_key=key, T=t, H=h, M=m, iters=it, norm=norm, dt="bfloat16")
    spec(f, "hc_pre.fp32.M4.it20.plain.T17.H64", "hc_pre", v4, T=17, H=64, M=4, iters=20,
         dt="float32")
    for t, h, m, dt in ((1, 64, 4, "bfloat16"), (17, 256, 4, "bfloat16"), (64, 256, 4, "bfloat16"),
                        (3, 1000, 4, "bfloat16"), (17, 64, 2, "bfloat16"), (17, 256, 4, "float32"),
                        (17, 256, 4, "float16")):
        spec(f, "hc_post.%s.M%d.T%d.H%d" % (SHORT[dt], m, t, h), "hc_post", v4, T=t, H=h, M=m, dt=dt)
    for t, h, m, it, norm in ((3, 64, 4, 20, False), (17, 256, 4, 20, True), (17, 64, 2, 1, True),
                              (20, 64, 4, 20, True)):
        spec(f, "hc_fused_post_pre.bf16.M%d.it%d.%s.T%d.H%d" % (m, it, "norm" if norm else "plain", t, h),
             "hc_fused_post_pre", v4, T=t, H=h, M=m, iters=it, norm=norm, dt="bfloat16")
    for t, h, m, dt in ((1, 64, 4, "bfloat16"), (17, 256, 4, "bfloat16"), (64, 256, 4, "bfloat16"),
                        (3, 1000, 4, "bfloat16"), (17, 64, 2, "bfloat16"), (17, 64, 4, "float32")):
        for var in ("cuda", "rocm"):
            spec(f, "hc_head.%s.%s.M%d.T%d.H%d" % (SHORT[dt], var, m, t, h), "hc_head", v4,
                 seed_key="hc_head.%s.M%d.T%d.H%d" % (dt, m, t, h), T=t, H=h, M=m, variant=var, dt=dt)


def _heads():
    f = "heads.h5"
    for t, h, v in ((1, 64, 97), (17, 256, 500), (64, 64, 97)):
        spec(f, "lm_head.bf16.T%d.H%d.V%d" % (t, h, v), "lm_head", "deepseek_v3", T=t, H=h, V=v,
             dt="bfloat16")
    for dt in ("float32", "float16"):
        spec(f, "lm_head.%s.T17.H64.V97" % SHORT[dt], "lm_head", "deepseek_v3", T=17, H=64, V=97, dt=dt)
    for t, h, fam in ((1, 64, "deepseek_v4"), (17, 1000, "glm"), (64, 256, "deepseek_v4")):
        spec(f, "mtp_shared_head_rmsnorm.bf16.%sT%d.H%d" % ("glm." if fam == "glm" else "", t, h),
             "mtp_shared_head_rmsnorm", fam, T=t, H=h, dt="bfloat16")
    spec(f, "mtp_shared_head_rmsnorm.fp32.T17.H256", "mtp_shared_head_rmsnorm", "deepseek_v4",
         T=17, H=256, dt="float32")


def _blocks():
    f = "blocks.h5"
    for fam, t, h, state in (("deepseek_v3", 3, 64, False), ("deepseek_v3", 17, 64, True),
                             ("glm", 17, 128, False)):
        for rd in ("eager", "fused"):
            spec(f, "mtp_block.%s.bf16.%s.%s.T%d.H%d" % (fam, rd, "residual" if state else "first",
                                                         t, h),
                 "mtp_block", fam, seed_key="mtp_block.%s.%s.T%d.H%d" % (fam, state, t, h),
                 T=t, H=h, F=96, state=state, rounding=rd, dt="bfloat16")
    for t, h, m, it, state, rd in ((3, 64, 4, 20, False, "fused"), (17, 64, 4, 20, True, "eager"),
                                   (3, 64, 2, 1, False, "eager")):
        for bc in ("deferred", "internal"):
            spec(f, "mtp_block.deepseek_v4.bf16.%s.%s.%s.M%d.it%d.T%d.H%d"
                 % (rd, bc, "state" if state else "first", m, it, t, h), "mtp_block", "deepseek_v4",
                 seed_key="mtp_block.v4.%s.M%d.it%d.T%d.H%d" % (state, m, it, t, h),
                 T=t, H=h, F=96, M=m, iters=it, state=state, rounding=rd, block_contract=bc,
                 dt="bfloat16")


def _steps_v3():
    f = "steps_v3.h5"
    for fam, t, h in (("deepseek_v3", 1, 64), ("deepseek_v3", 3, 64), ("deepseek_v3", 17, 64),
                      ("glm", 3, 64)):
        for rd in ("eager", "fused"):
            spec(f, "mtp_step.%s.bf16.%s.T%d.H%d" % (fam, rd, t, h), "mtp_step", fam,
                 seed_key="mtp_step.%s.T%d.H%d" % (fam, t, h), T=t, H=h, F=96, V=97, rounding=rd,
                 dt="bfloat16")
    spec(f, "mtp_step.deepseek_v3.bf16.fused.T64.H64", "mtp_step", "deepseek_v3",
         T=64, H=64, F=96, V=97, rounding="fused", dt="bfloat16")
    spec(f, "mtp_step.glm.bf16.fused.T17.H256", "mtp_step", "glm",
         T=17, H=256, F=96, V=97, rounding="fused", dt="bfloat16")
    for dt in ("float32", "float16"):
        spec(f, "mtp_step.deepseek_v3.%s.eager.T3.H64" % SHORT[dt], "mtp_step", "deepseek_v3",
             T=3, H=64, F=96, V=97, rounding="eager", dt=dt)


def _steps_v4():
    f = "steps_v4.h5"
    v4 = "deepseek_v4"
    for rd in ("eager", "fused"):
        for bc in ("deferred", "internal"):
            for var in ("cuda", "rocm"):
                spec(f, "mtp_step.deepseek_v4.bf16.%s.%s.%s.M4.it20.T3.H64" % (rd, bc, var),
                     "mtp_step", v4, seed_key="mtp_step.v4.M4.it20.T3.H64", T=3, H=64, F=96, V=97,
                     M=4, iters=20, rounding=rd, block_contract=bc, hc_head_variant=var,
                     dt="bfloat16")
    for t, h, m, it, rd, bc, var in ((1, 64, 4, 20, "fused", "deferred", "cuda"),
                                     (17, 64, 2, 1, "fused", "deferred", "cuda"),
                                     (17, 128, 4, 20, "eager", "internal", "rocm"),
                                     (64, 64, 4, 20, "fused", "deferred", "cuda")):
        spec(f, "mtp_step.deepseek_v4.bf16.%s.%s.%s.M%d.it%d.T%d.H%d" % (rd, bc, var, m, it, t, h),
             "mtp_step", v4, T=t, H=h, F=96, V=97, M=m, iters=it, rounding=rd, block_contract=bc,
             hc_head_variant=var, dt="bfloat16")
    spec(f, "mtp_step.deepseek_v4.fp32.fused.deferred.cuda.M4.it20.T3.H64", "mtp_step", v4,
         T=3, H=64, F=96, V=97, M=4, iters=20, rounding="fused", block_contract="deferred",
         hc_head_variant="cuda", dt="float32")


def _chains():
    f = "chains.h5"
    for fam, rd in (("deepseek_v3", "fused"), ("glm", "eager")):
        for psi in (0, 1):
            spec(f, "draft_chain.%s.bf16.%s.L2.K3.pass%d.T3.H64" % (fam, rd, psi), "draft_chain", fam,
                 seed_key="draft_chain.%s.T3.H64" % fam, T=3, H=64, F=96, V=97, L=2, K=3,
                 pass_step_idx=psi, rounding=rd, dt="bfloat16")
    for rd, bc, var in (("fused", "deferred", "cuda"), ("eager", "internal", "rocm")):
        for psi in (0, 1):
            spec(f, "draft_chain.deepseek_v4.bf16.%s.%s.%s.M4.it20.L2.K3.pass%d.T3.H64"
                 % (rd, bc, var, psi), "draft_chain", "deepseek_v4",
                 seed_key="draft_chain.deepseek_v4.T3.H64", T=3, H=64, F=96, V=97, M=4, iters=20,
                 L=2, K=3, pass_step_idx=psi, rounding=rd, block_contract=bc, hc_head_variant=var,
                 dt="bfloat16")


def _families():
    """Each family added through the recipe: its steps under both roundings and a chain of
    two layers, at its own eps (small; the rows added since: family_rows.h5, TEST_TIME)."""
    for fam in ("mimo", "kimi_k3", "step3p5", "inkling"):
        mup = {"logits_mup": 4.0} if families.logits_mup(fam) else {}  # Inkling's head divisor
        for rd in ("eager", "fused"):
            spec("family_rows.h5", "mtp_step.%s.bf16.%s.T5.H32" % (fam, rd), "mtp_step", fam,
                 seed_key="mtp_step.%s.T5.H32" % fam, T=5, H=32, F=48, V=61, rounding=rd,
                 dt="bfloat16", **mup)
        spec("family_rows.h5", "draft_chain.%s.bf16.fused.L2.K3.pass1.T3.H32" % fam,
             "draft_chain", fam, T=3, H=32, F=48, V=61, L=2, K=3, pass_step_idx=1,
             rounding="fused", dt="bfloat16", **mup)
    f = "families.h5"
    for fam in ("glm4_moe_lite",):
        for rd in ("eager", "fused"):
            spec(f, "mtp_block.%s.bf16.%s.residual.T5.H32" % (fam, rd), "mtp_block", fam,
                 seed_key="mtp_block.%s.T5.H32" % fam, T=5, H=32, F=48, state=True, rounding=rd,
                 dt="bfloat16")
            spec(f, "mtp_step.%s.bf16.%s.T5.H32" % (fam, rd), "mtp_step", fam,
                 seed_key="mtp_step.%s.T5.H32" % fam, T=5, H=32, F=48, V=61, rounding=rd,
                 dt="bfloat16")
        spec(f, "draft_chain.%s.bf16.fused.L2.K3.pass1.T3.H32" % fam, "draft_chain", fam,
             T=3, H=32, F=48, V=61, L=2, K=3, pass_step_idx=1, rounding="fused", dt="bfloat16")


ROW_KINDS = {1: "zero", 2: "huge", 3: "tiny", 4: "nan1", 5: "hugetiny", 6: "inf1", 7: "const"}


def _edge():
    f = "edge.h5"
    for dt in ("bfloat16", "float16", "float32"):
        for rd in ("eager", "fused"):
            spec(f, "rmsnorm.%s.%s.edge_rows.T8.H64" % (SHORT[dt], rd), "rmsnorm", "deepseek_v3",
                 seed_key="edge.rmsnorm.%s" % dt, edits=(rows("x", ROW_KINDS),),
                 T=8, H=64, dt=dt, rounding=rd)
    for rd in ("eager", "fused"):
        spec(f, "add_rmsnorm.bf16.%s.edge_overflow.T6.H64" % rd, "add_rmsnorm", "deepseek_v3",
             seed_key="edge.add_rmsnorm", edits=(add_overflow,), T=6, H=64, dt="bfloat16",
             rounding=rd)
    spec(f, "mtp_shared_head_rmsnorm.bf16.edge_rows.T8.H64", "mtp_shared_head_rmsnorm",
         "deepseek_v4", edits=(rows("x", ROW_KINDS),), T=8, H=64, dt="bfloat16")
    spec(f, "fused_eh_norm.bf16.edge_allpos0.T4.H64", "fused_eh_norm", "deepseek_v3",
         edits=(set_positions([0, 0, 0, 0]), rows("embeds", {1: "nanrow", 2: "inf1", 3: "nan1"})),
         T=4, H=64, dt="bfloat16")
    spec(f, "fused_eh_norm.bf16.edge_pos0.T1.H64", "fused_eh_norm", "glm",
         edits=(set_positions([0]),), T=1, H=64, dt="bfloat16")
    spec(f, "fused_eh_norm.bf16.edge_nan.T5.H64", "fused_eh_norm", "deepseek_v3",
         edits=(set_positions([0, 7, 0, 12, 3]), rows("embeds", {0: "nanrow", 1: "nan1"}),
                rows("prev_hidden", {3: "nan1", 4: "zero", 2: "huge"})),
         T=5, H=64, dt="bfloat16")
    spec(f, "fused_embed_eh_norm.bf16.edge_allpos0.T3.H64.V97", "fused_embed_eh_norm", "deepseek_v3",
         edits=(set_positions([0, 0, 0]), embeds_table_nan), T=3, H=64, V=97, dt="bfloat16")
    spec(f, "fused_mtp_input_rmsnorm.bf16.edge_allpos0.M4.T3.H64", "fused_mtp_input_rmsnorm",
         "deepseek_v4", edits=(set_positions([0, 0, 0]), rows("embeds", {0: "nanrow"}),
                               set_element("prev_hidden", (2, 1, 5), np.nan)),
         T=3, H=64, M=4, dt="bfloat16")
    hc_rows = {1: "zero", 2: "nan1", 3: "huge", 4: "tiny", 5: "const"}
    for norm in (False, True):
        spec(f, "hc_pre.bf16.M4.it20.%s.edge_rows.T6.H64" % ("norm" if norm else "plain"), "hc_pre",
             "deepseek_v4", seed_key="edge.hc_pre", edits=(rows("residual", hc_rows, big=1e37),),
             T=6, H=64, M=4, iters=20, norm=norm, dt="bfloat16")
    spec(f, "hc_post.bf16.M4.edge_rows.T6.H64", "hc_post", "deepseek_v4",
         edits=(rows("x", {1: "zero", 2: "nan1", 4: "huge"}, big=1e37),
                rows("residual", {1: "zero", 3: "nan1", 4: "huge"}, big=1e37)),
         T=6, H=64, M=4, dt="bfloat16")
    for var in ("cuda", "rocm"):
        spec(f, "hc_head.bf16.%s.M4.edge_rows.T6.H64" % var, "hc_head", "deepseek_v4",
             seed_key="edge.hc_head", edits=(rows("x", hc_rows, big=1e37),), T=6, H=64, M=4,
             variant=var, dt="bfloat16")
    spec(f, "lm_head.bf16.edge_ties.T3.H64.V97", "lm_head", "deepseek_v3", edits=(lm_ties,),
         T=3, H=64, V=97, dt="bfloat16")
    spec(f, "lm_head.bf16.edge_nan.T3.H64.V97", "lm_head", "deepseek_v3",
         edits=(rows("x", {1: "nan1"}), set_element("weight", (10, 5), np.nan)),
         T=3, H=64, V=97, dt="bfloat16")
    spec(f, "all_reduce.bf16.edge_limits.P2.T5.H64", "all_reduce", "deepseek_v3",
         edits=(all_reduce_edge,), P=2, T=5, H=64, dt="bfloat16")
    for fam in ("deepseek_v3", "deepseek_v4"):
        extra = {"M": 4, "iters": 20, "block_contract": "deferred", "hc_head_variant": "cuda"} \
            if fam == "deepseek_v4" else {}
        spec(f, "mtp_step.%s.bf16.fused.edge_allpos0.T3.H64" % fam, "mtp_step", fam,
             edits=(set_positions([0, 0, 0]), rows("embeds", {1: "nanrow", 2: "inf1"})),
             T=3, H=64, F=96, V=97, rounding="fused", dt="bfloat16", **extra)
        spec(f, "mtp_step.%s.bf16.eager.edge_nanrow.T3.H64" % fam, "mtp_step", fam,
             edits=(rows("prev_hidden", {1: "nan1"}),),
             T=3, H=64, F=96, V=97, rounding="eager", dt="bfloat16", **extra)


def _fullsize():
    f = "fullsize.h5"
    t = 3
    for fam, h, rds in (("deepseek_v3", 7168, ("eager", "fused")), ("glm", 5120, ("eager",)),
                        ("glm", 6144, ("fused",)), ("deepseek_v4", 7168, ("fused",)),
                        ("deepseek_v4", 4096, ("eager",))):
        for rd in rds:
            spec(f, "rmsnorm.%s.bf16.%s.T%d.H%d" % (fam, rd, t, h), "rmsnorm", fam,
                 seed_key="full.rmsnorm.%s.%d" % (fam, h), T=t, H=h, rounding=rd, dt="bfloat16")
    spec(f, "add_rmsnorm.deepseek_v3.bf16.fused.T3.H7168", "add_rmsnorm", "deepseek_v3",
         T=t, H=7168, rounding="fused", dt="bfloat16")
    for fam, h in (("deepseek_v3", 7168), ("glm", 5120), ("glm", 6144)):
        spec(f, "fused_eh_norm.%s.bf16.T%d.H%d" % (fam, t, h), "fused_eh_norm", fam, T=t, H=h,
             dt="bfloat16")
    for h, name in ((7168, "pro"), (4096, "flash")):
        fam = "deepseek_v4"
        spec(f, "fused_mtp_input_rmsnorm.v4%s.bf16.M4.T%d.H%d" % (name, t, h),
             "fused_mtp_input_rmsnorm", fam, T=t, H=h, M=4, dt="bfloat16")
        for norm in (False, True):
            spec(f, "hc_pre.v4%s.bf16.M4.it20.%s.T%d.H%d" % (name, "norm" if norm else "plain", t, h),
                 "hc_pre", fam, seed_key="full.hc_pre.%d" % h, T=t, H=h, M=4, iters=20, norm=norm,
                 dt="bfloat16")
        spec(f, "hc_post.v4%s.bf16.M4.T%d.H%d" % (name, t, h), "hc_post", fam, T=t, H=h, M=4,
             dt="bfloat16")
        for var in ("cuda", "rocm"):
            spec(f, "hc_head.v4%s.bf16.%s.M4.T%d.H%d" % (name, var, t, h), "hc_head", fam,
                 seed_key="full.hc_head.%d" % h, T=t, H=h, M=4, variant=var, dt="bfloat16")
        spec(f, "mtp_shared_head_rmsnorm.v4%s.bf16.T%d.H%d" % (name, t, h), "mtp_shared_head_rmsnorm",
             fam, T=t, H=h, dt="bfloat16")


def _fp8():
    f = "fp8.h5"
    sd = {"float32": "f32s", "float8_e8m0fnu": "e8m0s"}
    for q in ("fp8_w", "fp8_w8a8"):
        for sdt in ("float32", "float8_e8m0fnu"):
            tag = "%s.%s" % (q, sd[sdt])
            spec(f, "eh_proj.bf16.%s.T5.H160" % tag, "eh_proj", "deepseek_v3",
                 seed_key="fp8.eh_proj.T5.H160", T=5, H=160, dt="bfloat16", proj_quant=q,
                 scale_dt=sdt, zero_row0=True)
            spec(f, "eh_proj_hc.bf16.%s.M4.T3.H160" % tag, "eh_proj_hc", "deepseek_v4",
                 seed_key="fp8.eh_proj_hc.M4.T3.H160", T=3, H=160, M=4, dt="bfloat16",
                 proj_quant=q, scale_dt=sdt, zero_row0=True)
            spec(f, "lm_head.bf16.%s.T3.H136.V260" % tag, "lm_head", "deepseek_v3",
                 seed_key="fp8.lm_head.T3.H136.V260", T=3, H=136, V=260, dt="bfloat16",
                 proj_quant=q, scale_dt=sdt)
        spec(f, "mtp_step.deepseek_v3.bf16.fused.%s.T4.H136" % q, "mtp_step", "deepseek_v3",
             seed_key="fp8.mtp_step.v3.T4.H136", edits=(set_positions([0, 7, 8, 0]),),
             T=4, H=136, F=64, V=100, rounding="fused", dt="bfloat16", proj_quant=q,
             target_head=True)
        spec(f, "mtp_step.deepseek_v4.bf16.fused.deferred.cuda.%s.e8m0s.M4.T3.H136" % q,
             "mtp_step", "deepseek_v4", seed_key="fp8.mtp_step.v4.T3.H136",
             edits=(set_positions([0, 4, 5]),), T=3, H=136, F=64, V=100, M=4, iters=20,
             rounding="fused", block_contract="deferred", hc_head_variant="cuda", dt="bfloat16",
             proj_quant=q, scale_dt="float8_e8m0fnu", qnames=["e_proj_weight", "h_proj_weight"])
    # chains: two layers with their own scales, the target's head beside the layers' own
    spec(f, "draft_chain.deepseek_v3.bf16.fused.fp8_w8a8.K3.L2.pass1.T4.H136", "draft_chain",
         "deepseek_v3", T=4, H=136, F=64, V=100, K=3, L=2, pass_step_idx=1, rounding="fused",
         dt="bfloat16", proj_quant="fp8_w8a8", target_head=True)
    spec(f, "draft_chain.deepseek_v4.bf16.fused.deferred.cuda.fp8_w.e8m0s.K2.L2.pass1.M2.T3.H136",
         "draft_chain", "deepseek_v4", T=3, H=136, F=64, V=100, K=2, L=2, pass_step_idx=1,
         M=2, iters=20, rounding="fused", block_contract="deferred", hc_head_variant="cuda",
         dt="bfloat16", proj_quant="fp8_w", scale_dt="float8_e8m0fnu",
         qnames=["e_proj_weight", "h_proj_weight"], target_head=True)
    # the eps clamp on its own: a zero group with a declared act_quant_eps
    spec(f, "eh_proj.bf16.fp8_w8a8.f32s.eps1e-6.T5.H160", "eh_proj", "deepseek_v3",
         seed_key="fp8.eh_proj.T5.H160", T=5, H=160, dt="bfloat16", proj_quant="fp8_w8a8",
         scale_dt="float32", zero_row0=True, act_quant_eps=1e-6)


def _dspark():
    f, v4 = "dspark.h5", "deepseek_v4"
    for rd in ("eager", "fused"):
        spec(f, "main_proj_norm.bf16.%s.P3.T5.H32" % rd, "main_proj_norm", v4,
             seed_key="main_proj_norm.P3.T5.H32", T=5, H=32, P=3, rounding=rd, dt="bfloat16")
    spec(f, "main_proj_norm.fp32.fused.P2.T3.H24", "main_proj_norm", v4, T=3, H=24, P=2,
         rounding="fused", dt="float32")
    for t, h, m, dt in ((5, 48, 4, "bfloat16"), (3, 40, 2, "float16")):
        spec(f, "hc_collapse.%s.M%d.T%d.H%d" % (SHORT[dt], m, t, h), "hc_collapse", v4, T=t, H=h,
             M=m, dt=dt)
    spec(f, "markov_bias.bf16.R16.T4.V97", "markov_bias", v4, T=4, V=97, R=16, dt="bfloat16")
    # Qwen3 / K3 scale the bias with logit_scale (§13 Step DS-6); the inputs are the unscaled case's
    spec(f, "markov_bias.fp32.s2.R8.T3.V70", "markov_bias", v4, seed_key="markov_bias.fp32.R8.T3.V70",
         T=3, V=70, R=8, logit_scale=2.0, dt="float32")
    # layer 0 (no carried pre-mix) with its attn_norm; a later sublayer with and without a norm
    for carried, norm in ((False, True), (True, True), (True, False)):
        spec(f, "hc_pre_delayed.bf16.M4.it20.%s.%s.T3.H16" % ("carried" if carried else "layer0",
                                                              "norm" if norm else "plain"),
             "hc_pre_delayed", v4, seed_key="hc_pre_delayed.M4.T3.H16", T=3, H=16, M=4,
             iters=20, carried=carried, norm=norm, dt="bfloat16")
    for bias in (False, True):
        spec(f, "confidence.bf16.%s.R16.T6.H48" % ("bias" if bias else "nobias"), "confidence",
             v4, seed_key="confidence.R16.T6.H48", T=6, H=48, R=16, bias=bias, dt="bfloat16")
    # V4.1's main_proj as a block-FP8 linear (§12.2): in fp8.h5, the format-version-2 file
    for q in ("fp8_w", "fp8_w8a8"):
        spec("fp8.h5", "main_proj_norm.bf16.fused.%s.e8m0s.P3.T3.H48" % q, "main_proj_norm", v4,
             seed_key="fp8.main_proj_norm.P3.T3.H48", T=3, H=48, P=3, rounding="fused",
             dt="bfloat16", proj_quant=q, scale_dt="float8_e8m0fnu")
    # Qwen3's default (confidence_head_with_markov false): the hidden alone, R = 0
    spec(f, "confidence.bf16.bias.R0.T6.H48", "confidence", v4, T=6, H=48, R=0, bias=True,
         dt="bfloat16")


for _section in (_norms, _proj, _mhc, _heads, _blocks, _steps_v3, _steps_v4, _chains, _families,
                 _edge, _fullsize, _fp8, _dspark):
    _section()


# written only when named (--only), at test time: the fixtures' budget is spent
TEST_TIME = {"family_rows.h5"}


def specs_by_file():
    out = {name: [] for name in FILES}
    for s in SPECS:
        out[s.file].append(s)
    return out
