#!/usr/bin/python3
"""Tests of the golden generator itself.

Why this exists: a wrong golden would condemn a right reference, so the
generator's own building blocks (the rounding above all) are checked against
hand-derived bit patterns and independent formulations, and the properties the
spec states (Sinkhorn column sums, position-0 rows, identical results under
both block contracts, recycling rules) are asserted on the generated cases.

Run:  /usr/bin/python3 tools/gen/test_gen.py      (no extra package needed)
  or  /usr/bin/python3 -m pytest tools/gen/test_gen.py
"""

import os
import re
import shutil
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h5py
import numpy as np

import cases
import dspark
import numerics as N
import ops
import writer
from test_bulk import *  # the V4.1-sized paths: sliced rounding, blocked linear, streamed writer
from test_fp8 import *  # FP8 conversions, run by main below

np.seterr(all="ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "..", "fixtures"))


def _bits(fn, x):
    return [int(b) for b in fn(np.array(x, dtype=np.float64))]


# --------------------------------------------------------------------------- rounding

# (value, expected bf16 bits), derived by hand: bf16 = 1 sign, 8 exponent (bias 127), 7 mantissa bits
BF16_CASES = [
    (1.0, 0x3F80),
    (-2.0, 0xC000),
    (1 + 2 ** -8, 0x3F80),                 # tie between 1.0 (even) and 1+2^-7 (odd): to even
    (1 + 3 * 2 ** -8, 0x3F82),             # tie between 0x3F81 (odd) and 0x3F82 (even)
    (1 + 2 ** -8 + 2 ** -40, 0x3F81),      # just above the tie
    (1 + 2 ** -8 + 2 ** -30, 0x3F81),      # via float32 this would become a tie and go to 0x3F80
    (np.pi, 0x4049),
    ((2 - 2 ** -7) * 2.0 ** 127, 0x7F7F),  # max finite
    ((2 - 2 ** -8) * 2.0 ** 127 - 2.0 ** 100, 0x7F7F),  # just below the overflow tie
    ((2 - 2 ** -8) * 2.0 ** 127, 0x7F80),  # tie between max (odd) and 2^128: to even = Inf
    (1e39, 0x7F80),
    (-1e39, 0xFF80),
    (2.0 ** -126, 0x0080),                 # min normal
    (2.0 ** -126 - 2.0 ** -134, 0x0080),   # tie between 0x007F (odd) and 0x0080: to even
    (127 * 2.0 ** -133, 0x007F),           # max subnormal
    (2.0 ** -133, 0x0001),                 # min subnormal
    (2.0 ** -134, 0x0000),                 # tie between 0 and min subnormal: to even (0)
    (2.0 ** -134 + 2.0 ** -160, 0x0001),
    (3 * 2.0 ** -134, 0x0002),             # tie between 0x0001 and 0x0002: to even
    (-(2.0 ** -133), 0x8001),
    (1e-50, 0x0000),
    (5e-324, 0x0000),                      # float64 subnormal
    (0.0, 0x0000),
    (-0.0, 0x8000),
    (np.inf, 0x7F80),
    (-np.inf, 0xFF80),
]

# fp16 = 1 sign, 5 exponent (bias 15), 10 mantissa bits
FP16_CASES = [
    (1.0, 0x3C00),
    (1 + 2 ** -11, 0x3C00),                # tie to even
    (1 + 3 * 2 ** -11, 0x3C02),
    (1 + 2 ** -11 + 2 ** -30, 0x3C01),     # double rounding through float32 would give 0x3C00
    (65504.0, 0x7BFF),                     # max finite
    (65519.99, 0x7BFF),
    (65520.0, 0x7C00),                     # tie between max (odd) and 2^16: Inf
    (1e6, 0x7C00),
    (-1e6, 0xFC00),
    (2.0 ** -14, 0x0400),                  # min normal
    (2.0 ** -24, 0x0001),                  # min subnormal
    (2.0 ** -25, 0x0000),                  # tie to even (0)
    (2.0 ** -25 + 2.0 ** -40, 0x0001),
    (3 * 2.0 ** -25, 0x0002),
    (1023 * 2.0 ** -24, 0x03FF),           # max subnormal
    (-0.0, 0x8000),
    (np.inf, 0x7C00),
    (-np.inf, 0xFC00),
]


def test_bf16_hand_derived():
    vals = [v for v, _ in BF16_CASES]
    got = _bits(N.bf16_bits, vals)
    for (v, want), g in zip(BF16_CASES, got):
        assert g == want, "bf16(%r) = 0x%04X, want 0x%04X" % (v, g, want)


def test_fp16_hand_derived():
    vals = [v for v, _ in FP16_CASES]
    got = _bits(N.fp16_bits, vals)
    for (v, want), g in zip(FP16_CASES, got):
        assert g == want, "fp16(%r) = 0x%04X, want 0x%04X" % (v, g, want)


def test_nan_stays_nan():
    neg_nan = -np.abs(np.float64("nan"))
    assert np.signbit(neg_nan)
    for fn, qnan in ((N.bf16_bits, 0x7FC0), (N.fp16_bits, 0x7E00)):
        assert _bits(fn, [np.nan, neg_nan]) == [qnan, qnan]      # canonical positive quiet NaN
    assert N.encode(np.array([neg_nan]), "float32").view("<u4")[0] == 0x7FC00000
    for dt in ("bfloat16", "float16", "float32"):
        assert np.isnan(N.rnd(np.array([np.nan]), dt))[0]


def _random_values(rng, n):
    mag = 10.0 ** rng.uniform(-45, 40, n)
    return np.concatenate([rng.standard_normal(n) * mag, rng.standard_normal(n),
                           rng.standard_normal(n) * 1e-39, rng.standard_normal(n) * 1e-6])


def test_fp16_matches_numpy_direct_cast():
    # NumPy converts float64 -> float16 directly (npy_doublebits_to_halfbits), RNE
    x = _random_values(np.random.default_rng(1), 20000)
    x = np.concatenate([x, np.array([np.inf, -np.inf, 0.0, -0.0])])
    with np.errstate(all="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    assert np.array_equal(N.fp16_bits(x), want)


def _bf16_by_quantum(x):
    """Independent formulation: round to the spacing of the binade, then saturate."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    nz = (x != 0) & np.isfinite(x)
    _, e = np.frexp(x[nz])
    q = np.ldexp(1.0, np.maximum(e - 1, -126) - 7)
    out[nz] = np.rint(x[nz] / q) * q
    maxf = (2 - 2 ** -7) * 2.0 ** 127
    out = np.where(np.abs(out) > maxf, np.copysign(np.inf, x), out)
    return np.where(np.isfinite(x), out, x)


def test_bf16_matches_independent_formulation():
    x = _random_values(np.random.default_rng(2), 20000)
    got = N.rnd(x, "bfloat16")
    assert np.array_equal(got, _bf16_by_quantum(x))


def test_bf16_of_float32_values_matches_classic_bit_trick():
    # for values exactly representable in float32 the classic u32 RNE trick is exact
    rng = np.random.default_rng(3)
    x32 = (rng.standard_normal(20000) * 10.0 ** rng.uniform(-40, 38, 20000)).astype(np.float32)
    x32 = x32[np.isfinite(x32)]
    u = x32.view(np.uint32).astype(np.uint64)
    want = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    assert np.array_equal(N.bf16_bits(x32.astype(np.float64)), want)


def test_roundtrip_and_encode():
    for dt in ("bfloat16", "float16"):
        bits = np.arange(65536, dtype=np.uint16)
        vals = N.bits_to_float(bits, dt)
        fin = np.isfinite(vals)
        assert np.array_equal(N.encode(vals[fin], dt), bits[fin]), dt
    x = np.array([1.0 + 2 ** -30, 3.4e38, 1e-46])
    assert np.array_equal(N.rnd(x, "float32"), x.astype(np.float32).astype(np.float64))


# --------------------------------------------------------------------------- math properties

def test_sinkhorn_column_sums():
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((50, 4, 4)) * 3
    for iters in (1, 2, 20):
        c = ops.sinkhorn(logits, iters, 0.0)
        assert np.allclose(c.sum(axis=-2), 1.0, rtol=0, atol=1e-14), iters
        # with eps the last column step gives S/(S+eps): just below 1
        col = ops.sinkhorn(logits, iters, 1e-6).sum(axis=-2)
        assert np.all(col < 1.0) and (iters == 1 or np.allclose(col, 1.0, rtol=0, atol=1e-5))
    c = ops.sinkhorn(logits / 3, 20, 1e-6)                 # mixes of the fixtures' magnitude
    assert np.allclose(c.sum(axis=-1), 1.0, atol=1e-4)     # rows near 1 after 20 iterations


def test_hc_pre_comb_mix_columns_in_fixture():
    s = _spec("hc_pre.bf16.M4.it20.plain.T17.H256")
    c = cases.build(s)
    comb = c.expected["comb_mix"][0]
    assert np.allclose(comb.sum(axis=1), 1.0, atol=1e-5)
    post = c.expected["post_mix"][0]
    assert np.all((post > 0) & (post < 2))


def test_hc_post_identity():
    rng = np.random.default_rng(5)
    r = N.rnd(rng.standard_normal((3, 4, 16)), "bfloat16")
    x = N.rnd(rng.standard_normal((3, 16)), "bfloat16")
    out = ops.hc_post(x, r, np.zeros((3, 4)), np.broadcast_to(np.eye(4), (3, 4, 4)), "bfloat16")
    assert np.array_equal(out, r)
    # C[i, j]: row i = source stream, column j = destination
    perm = np.zeros((4, 4))
    perm[0, 1] = perm[1, 2] = perm[2, 3] = perm[3, 0] = 1.0
    out = ops.hc_post(x, r, np.zeros((3, 4)), np.broadcast_to(perm, (3, 4, 4)), "bfloat16")
    assert np.array_equal(out[:, 1], r[:, 0]) and np.array_equal(out[:, 0], r[:, 3])


def test_rmsnorm_rounding_points():
    rng = np.random.default_rng(6)
    x = N.rnd(rng.standard_normal((64, 256)), "bfloat16")
    w = N.rnd(rng.uniform(-0.1, 1.8, 256), "bfloat16")
    r = 1.0 / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-6)
    fused = ops.rmsnorm(x, w, 1e-6, "fused", "bfloat16")
    eager = ops.rmsnorm(x, w, 1e-6, "eager", "bfloat16")
    assert np.array_equal(fused, N.rnd(x * r * w, "bfloat16"))
    assert np.array_equal(eager, N.rnd(N.rnd(x * r, "bfloat16") * w, "bfloat16"))
    assert not np.array_equal(fused, eager)          # the double rounding is visible
    ulp = np.ldexp(1.0, np.frexp(np.abs(fused))[1] - 8)
    assert np.all(np.abs(fused - eager) <= 2 * ulp)


def test_add_rmsnorm_variance_from_unrounded_sum():
    x = np.array([[1.0, 2.0 ** -9, 3.0, -2.0]])
    res = np.array([[1.0, 1.0, 0.5, 0.25]])
    w = np.ones(4)
    y, r = ops.add_rmsnorm(x, res, w, 0.0, "fused", "bfloat16")
    s = x + res
    assert np.array_equal(r, N.rnd(s, "bfloat16")) and r[0, 1] == 1.0   # 1 + 2^-9 rounds to 1
    want = N.rnd(r * (1.0 / np.sqrt(np.mean(s * s))), "bfloat16")
    assert np.array_equal(y, want)


def test_position0_rows_are_exact_zero():
    rng = np.random.default_rng(7)
    e = N.rnd(rng.standard_normal((4, 32)), "bfloat16")
    e[0, :] = np.nan
    e[2, 3] = np.inf
    p = N.rnd(rng.standard_normal((4, 32)), "bfloat16")
    w = N.rnd(rng.uniform(-0.1, 1.8, 32), "bfloat16")
    pos = np.array([0, 5, 0, 9])
    out = ops.fused_eh_norm(pos, e, p, w, w, 1e-6, "bfloat16")
    assert np.all(out[[0, 2], :32] == 0) and np.all(np.isfinite(out[[1, 3]]))
    assert np.array_equal(out[:, 32:], ops.rmsnorm(p, w, 1e-6, "fused", "bfloat16"))
    c = cases.build(_spec("fused_eh_norm.bf16.edge_allpos0.T4.H64"))
    assert np.all(c.expected["out"][0][:, :64] == 0)
    c = cases.build(_spec("fused_mtp_input_rmsnorm.bf16.edge_allpos0.M4.T3.H64"))
    assert np.all(c.expected["enorm_out"][0] == 0)
    hn = c.expected["hnorm_out"][0]
    assert np.all(np.isnan(hn[2, 1])) and np.all(np.isfinite(np.delete(hn.reshape(12, 64), 9, 0)))


def test_lm_head_ties_and_nan():
    c = cases.build(_spec("lm_head.bf16.edge_ties.T3.H64.V97"))
    tok = c.expected["token"][0]
    assert list(tok) == [3, 14, 25], tok              # first of the two tied rows
    lg = c.expected["logits"][0]
    assert lg[0, 3] == lg[0, 40] and lg[1, 14] == lg[1, 53]
    c = cases.build(_spec("lm_head.bf16.edge_nan.T3.H64.V97"))
    assert list(c.expected["token"][0]) == [10, 0, 10]


def test_nan_row_stays_in_its_row():
    c = cases.build(_spec("mtp_step.deepseek_v4.bf16.eager.edge_nanrow.T3.H64"))
    for name in ("recycled", "logits", "head_hidden"):
        v = c.expected[name][0]
        assert np.all(np.isnan(v[1])) and np.all(np.isfinite(v[[0, 2]])), name
    c = cases.build(_spec("mtp_step.deepseek_v3.bf16.fused.edge_allpos0.T3.H64"))
    assert all(np.all(np.isfinite(v)) for v, _ in c.expected.values())


def test_contracts_give_identical_steps():
    a = cases.build(_spec("mtp_step.deepseek_v4.bf16.fused.deferred.cuda.M4.it20.T3.H64"))
    b = cases.build(_spec("mtp_step.deepseek_v4.bf16.fused.internal.cuda.M4.it20.T3.H64"))
    assert set(a.expected) == set(b.expected)
    for k in a.expected:
        assert np.array_equal(a.expected[k][0], b.expected[k][0]), k
    assert a.attrs["block_contract"] == "deferred" and b.attrs["block_contract"] == "internal"
    e = a.expected
    assert np.array_equal(e["recycled"][0], e["streams"][0].reshape(3, -1))


def test_mtp_block_internal_is_deferred_plus_hc_post():
    d = cases.build(_spec("mtp_block.deepseek_v4.bf16.eager.deferred.state.M4.it20.T17.H64"))
    i = cases.build(_spec("mtp_block.deepseek_v4.bf16.eager.internal.state.M4.it20.T17.H64"))
    e = {k: v for k, (v, _) in d.expected.items()}
    r2 = ops.hc_post(e["x_out"], e["residual_out"], e["post_mix_out"], e["res_mix_out"], "bfloat16")
    assert np.array_equal(i.expected["x_out"][0], r2)


def test_v3_recycles_post_norm():
    c = cases.build(_spec("mtp_step.deepseek_v3.bf16.eager.T17.H64"))
    e = c.expected
    assert np.array_equal(e["recycled"][0], e["hidden_post"][0])
    assert not np.array_equal(e["hidden_pre"][0], e["hidden_post"][0])


def test_inkling_two_embedding_norms_and_mup_head():
    """SPEC Step V3-9: the inkling case carries embed_pre_norm_weight and logits_mup;
    its block input differs from the embedding normed once (mimo's glue), and its
    logits are the undivided ones over logits_mup, the tokens unmoved."""
    c = cases.build(_spec("mtp_step.inkling.bf16.fused.T5.H32"))
    assert c.attrs["logits_mup"] == 4.0 and "embed_pre_norm_weight" in c.inputs
    v = {k: x for k, (x, _) in c.inputs.items()}
    p = cases.opdefs.step_params(_spec(c.case_id).p)
    once = ops.mtp_step("mimo", v["embeds"], v["positions"], v["prev_hidden"], v, p, "bfloat16")
    assert not np.array_equal(once["block_out"], c.expected["block_out"][0])
    plain = ops.mtp_step("inkling", v["embeds"], v["positions"], v["prev_hidden"], v,
                         dict(p, logits_mup=None), "bfloat16")
    got = c.expected["logits"][0]
    assert np.array_equal(got, np.float32(ops.linear(c.expected["hidden_post"][0],
                                                     v["head_weight"]) / 4.0))
    assert not np.array_equal(got, plain["logits"])
    assert np.array_equal(c.expected["token"][0], plain["token"])


def test_draft_chain_layers_and_recycling():
    for psi in (0, 1):
        c = cases.build(_spec("draft_chain.deepseek_v4.bf16.fused.deferred.cuda.M4.it20.L2.K3.pass%d.T3.H64"
                              % psi))
        v = {k: x for k, (x, _) in c.inputs.items()}
        p = cases.opdefs.step_params(_spec(c.case_id).p)
        layer = "layer.%d/" % (1 if psi else 0)
        w = {k[len(layer):]: x for k, x in v.items() if k.startswith(layer)}
        s0 = {k[len("step.0/"):]: x for k, (x, _) in c.expected.items() if k.startswith("step.0/")}
        out = ops.mtp_step("deepseek_v4", v["embed_table"][v["next_tokens"][0]], v["positions"] + 1,
                           s0["recycled"], w, p, "bfloat16")
        for k, x in out.items():
            assert np.array_equal(x, c.expected["step.1/" + k][0]), (psi, k)
        assert np.array_equal(v["next_tokens"][0], s0["token"])


def test_determinism_and_seeds():
    s = _spec("mtp_step.glm.bf16.fused.T3.H64")
    a, b = cases.build(s), cases.build(s)
    for sect in ("inputs", "expected"):
        for k, (x, dt) in getattr(a, sect).items():
            y, dt2 = getattr(b, sect)[k]
            assert dt == dt2 and np.array_equal(N.encode(x, dt), N.encode(y, dt)), k
    assert cases.seed_of("x") == cases.seed_of("x") and 0 <= cases.seed_of("x") < 2 ** 63
    # first 8 bytes of sha256("abc") little-endian, top bit cleared: pinned so seeds never drift
    assert cases.seed_of("abc") == 0x6ACF018FBF1678BA


def test_case_list_well_formed():
    ids = set()
    for s in cases.SPECS:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+", s.case_id), s.case_id
        key = (s.file, s.case_id)
        assert key not in ids, key
        ids.add(key)
        assert s.file in cases.FILES


def test_inputs_exercise_the_ops():
    for s in cases.SPECS:
        if s.file == "edge.h5" or s.file == "fullsize.h5":
            continue
        c = cases.build(s)
        for name, (x, dt) in c.inputs.items():
            if x.size < 4 or name in ("input_ids",) or dt == "int64":
                continue
            assert np.any(x != 0) and np.unique(x).size > 1, (s.case_id, name)
        if "positions" in c.inputs and c.inputs["positions"][0].size >= 3:
            pos = c.inputs["positions"][0]
            assert np.any(pos == 0) and np.any(pos != 0), s.case_id
        for name, (x, dt) in c.expected.items():
            assert np.all(np.isfinite(x)), (s.case_id, name)


def test_write_and_compare_roundtrip():
    tmp = tempfile.mkdtemp(prefix="mtpgen-test-")
    try:
        specs = [s for s in cases.SPECS if s.file == "blocks.h5"]
        for d in ("a", "b"):
            writer.write_file(os.path.join(tmp, d + ".h5"), "test", [cases.build(s) for s in specs])
        assert writer.compare(os.path.join(tmp, "a.h5"), os.path.join(tmp, "b.h5"), "a.h5") == []
        with h5py.File(os.path.join(tmp, "b.h5"), "r+") as f:
            cid = specs[0].case_id
            ds = f["cases/%s/expected/h" % cid]
            data = ds[()]
            data[0, 0] ^= 1
            ds[...] = data
            assert f.attrs["format"] == "mtpcheck-fixture" and int(f.attrs["format_version"]) == 1
            assert ds.attrs["dtype"] == "bfloat16" and ds.dtype == np.dtype("<u2")
        msgs = writer.compare(os.path.join(tmp, "a.h5"), os.path.join(tmp, "b.h5"), "a.h5")
        assert len(msgs) == 1 and cid in msgs[0] and "expected/h" in msgs[0], msgs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_compare_empty_datasets():
    # a dataset with no element (confidence without the Markov embedding: [T, 0])
    tmp = tempfile.mkdtemp(prefix="mtpgen-test-")
    try:
        built = [cases.build(_spec("confidence.bf16.bias.R0.T6.H48"))]
        for d in ("a", "b"):
            writer.write_file(os.path.join(tmp, d + ".h5"), "test", built)
        assert writer.compare(os.path.join(tmp, "a.h5"), os.path.join(tmp, "b.h5"), "a.h5") == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_committed_fixtures_format_and_size():
    if not os.path.isdir(FIXTURES):
        return
    files = [f for f in os.listdir(FIXTURES) if f.endswith(".h5")]
    total = sum(os.path.getsize(os.path.join(FIXTURES, f)) for f in files)
    assert total <= 21 * 1000 * 1000, total  # README: under 21 MB
    for fname in files:
        with h5py.File(os.path.join(FIXTURES, fname), "r") as f:
            assert f.attrs["format"] == "mtpcheck-fixture"
            # version 2 where its names (float8, proj_quant, captured) appear
            assert f.attrs["format_version"] == (2 if fname in ("fp8.h5", "captured.h5") else 1)
            for cid, g in f["cases"].items():
                for a in ("op", "family", "seed"):
                    assert a in g.attrs, (fname, cid, a)

                def visit(name, obj, cid=cid, fname=fname):
                    if isinstance(obj, h5py.Dataset):
                        assert obj.attrs["dtype"] in N.DTYPES, (fname, cid, name)
                g.visititems(visit)


# --------------------------------------------------------------------------- DSpark (SPEC.md §13)

def test_dspark_markov_bias_rounds_the_bias_and_the_sum():
    # e = [1, 2^-9]; bias 1 + 2^-9 -> bf16 1; 256 + 1 is a tie -> 256 (even)
    e, logits, tok = dspark.markov_bias(np.array([[256.0]]), np.array([0]),
                                        np.array([[1.0, 2.0 ** -9]]), np.array([[1.0, 1.0]]),
                                        "bfloat16")
    assert e.tolist() == [[1.0, 2.0 ** -9]] and logits.tolist() == [[256.0]] and tok.tolist() == [0]


def test_dspark_markov_bias_rounds_the_scaled_bias():
    # logit_scale 1.5: 1.5 * (1 + 2^-7) is a tie -> 1.515625; 127/256 + that -> 2.015625
    # (added unrounded, 2.0078125 would be a tie -> 2)
    _, logits, _ = dspark.markov_bias(np.array([[127 / 256]]), np.array([0]), np.array([[1.0]]),
                                      np.array([[1 + 2.0 ** -7]]), "bfloat16", 1.5)
    assert logits.tolist() == [[2.015625]]


def test_dspark_markov_bias_uses_the_previous_token():
    w1 = np.array([[1.0, 0], [0, 1], [1, 1]])
    w2 = np.array([[1.0, 0], [0, 2], [-1, -1]])
    _, logits, tok = dspark.markov_bias(np.array([[0.5, -1, 3]]), np.array([2]), w1, w2,
                                        "bfloat16")
    assert logits.tolist() == [[1.5, 1.0, 1.0]] and tok.tolist() == [0]


def test_dspark_hc_collapse_and_main_proj_norm():
    y = dspark.hc_collapse(np.array([[[1.0], [1.0]]]), np.array([[1.0, 2.0 ** -9]]), "bfloat16")
    assert y.tolist() == [[1.0]]
    aux = np.array([[[1.0, 2.0 ** -9], [-1.0, 0.0]]])          # T=1, A=2, H=2
    w = np.array([[1.0, 1, 0, 0], [0, 0, 1, 0]])
    proj, x = dspark.main_proj_norm(aux, {"main_proj_weight": w}, np.array([1.5, 0.25]), 0.0,
                                    "eager", "bfloat16")
    assert proj.tolist() == [[1.0, -1.0]] and x.tolist() == [[1.5, -0.25]]


def test_dspark_hc_pre_delayed_layer0_is_stream_0():
    rng = np.random.default_rng(1)
    r = N.rnd(rng.standard_normal((2, 4, 8)), "bfloat16")
    fn = rng.standard_normal((24, 32)) * 0.1
    args = (r, fn, np.ones(3), np.zeros(24), 1e-6, 1e-6, 1e-6, 2.0, 20, "bfloat16")
    post, comb, li, _pre = dspark.hc_pre_delayed(*args)
    assert np.array_equal(li, r[:, 0, :])
    p2, c2, _li2 = ops.hc_pre(*args[:9], dt="bfloat16")
    assert np.array_equal(post, p2) and np.array_equal(comb, c2)
    _, _, li3, _ = dspark.hc_pre_delayed(*args, pre_in=N.f32(ops.sigmoid(np.zeros((2, 4)))))
    assert np.array_equal(li3, N.rnd(0.5 * r.sum(axis=1), "bfloat16"))


def test_dspark_confidence():
    c = dspark.confidence(np.array([[3.0, 1.0]]), np.array([[0.5]]), np.array([[1.0, -1, 2]]),
                          np.array([-3.0]))
    assert c.tolist() == [0.5]


# --------------------------------------------------------------------------- runner

_SPECS = {s.case_id: s for s in cases.SPECS}


def _spec(case_id):
    return _SPECS[case_id]


def test_zero_centred_norm_weights():
    """SPEC.md §2.6: a zero-centred row's norm weights multiply as f32(1 + w);
    every other input, a plain row's weights and eh_proj's `weight` stay."""
    import families
    w = np.array([0.5, -0.25, 2.0 ** -30])
    vals = {"enorm_weight": w, "layer.1/block.w_in": w, "target_norm_weight": w,
            "weight": w, "embeds": w}
    z = families.norm_weights("qwen3_next", "mtp_step", vals)
    one_plus = [1.5, 0.75, 1.0]  # 1 + 2^-30 rounds to 1 in float32
    for k in ("enorm_weight", "layer.1/block.w_in", "target_norm_weight"):
        assert z[k].tolist() == one_plus, k
    assert z["weight"] is w and z["embeds"] is w  # not a norm's weight in mtp_step
    assert families.norm_weights("qwen3_next", "rmsnorm", vals)["weight"].tolist() == one_plus
    assert families.norm_weights("deepseek_v3", "rmsnorm", vals) is vals


def test_dspark_step_rope_and_in_block_mask():
    import dspark_step as ds
    # H = 2: [1, 0] at position 1 turns by one radian; position 0 leaves it
    y = ds.rope(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1, 0]), "float32")
    assert y.tolist() == [[float(np.float32(np.cos(1.0))), float(np.float32(np.sin(1.0)))],
                          [1.0, 0.0]]
    # two context rows of values 2 and 4 and two block rows of value 0, equal scores
    # (W_q = W_kv = 0, W_a = 1): causal row 0 does not see block row 1
    w = {"W_q": np.zeros((1, 1)), "W_kv": np.zeros((1, 1)), "kv_norm_w": np.ones(1),
         "block.W_a": np.ones((1, 1))}
    p = {"rounding": "fused", "block_mask": "non_causal"}
    # the block's own values come from kv(u), zero here: the values 2 and 4 are the context's
    out = ds.attention(np.zeros((2, 1)), w, np.zeros((2, 1)), np.array([[2.0], [4.0]]),
                       np.array([0, 1]), p, "float32")
    assert out.tolist() == [[1.5], [1.5]]  # (2 + 4 + 0 + 0) / 4
    p["block_mask"] = "causal"
    out = ds.attention(np.zeros((2, 1)), w, np.zeros((2, 1)), np.array([[2.0], [4.0]]),
                       np.array([0, 1]), p, "float32")
    assert out.tolist() == [[2.0], [1.5]]  # row 0: (2 + 4 + 0) / 3; row 1: all four


def main():
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    failed = 0
    for name, fn in tests:
        try:
            fn()
            print("ok    " + name)
        except Exception:  # noqa: BLE001 -- any failure is this test's FAIL; the rest still run
            failed += 1
            print("FAIL  " + name)
            traceback.print_exc()
    print("%d passed, %d failed" % (len(tests) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

