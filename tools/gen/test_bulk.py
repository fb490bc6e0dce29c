"""Tests of the generator's paths for V4.1-sized goldens (dspark_step.py --full).

Why this exists: those goldens are written at test time from weights of 10^8
elements, so numerics.rnd rounds by slices with a bit trick, ops.linear works by
blocks of rows from float32-held weights and the writer streams cases into an
uncompressed file; each must give the bits of the plain path. Run by
test_gen.py (star import) or pytest.
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h5py
import numpy as np

import cases
import numerics as N
import ops
import writer


def test_rnd_fast_path_matches_exact_path():
    # rnd's bit trick (where the result is a normal of the format) against the exact
    # path on random bit patterns, the formats' edges and subnormals, over more than
    # one slice; in place too (out = x: the exact elements must be read before the store)
    rng = np.random.default_rng(9)
    edges = np.concatenate([np.ldexp(1 + np.arange(256) / 256.0, e) for e in
                            (-150, -134, -126, -125, -25, -24, -15, -14, 14, 15, 16, 126, 127, 128)])
    bits = rng.integers(0, 2 ** 64, N._SLICE + 999, dtype=np.uint64)
    wide = rng.standard_normal(5000) * 10.0 ** rng.uniform(-45, 40, 5000)
    x = np.concatenate([bits.view(np.float64), wide, edges, -edges,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324]])
    for dt in ("bfloat16", "float16"):
        e, m = N._FORMATS[dt]
        want = N._narrow_value(N._narrow_bits(x, e, m), e, m).view(np.uint64)
        inplace = x.copy()
        assert N.rnd(inplace, dt, out=inplace) is inplace
        for got in (N.rnd(x, dt), inplace):
            bad = np.flatnonzero(got.view(np.uint64) != want)
            assert bad.size == 0, (dt, bad.size, x[bad[:3]])
        assert np.array_equal(N.encode(x, dt), N._narrow_bits(x, e, m)), dt
        assert N.representable(got[np.isfinite(got)].astype(np.float32), dt)
        assert N.rnd(1.0 + 2 ** -12, dt).shape == ()  # a scalar stays one (tp.py's sums)


def test_linear_by_blocks_is_the_whole_row_sum():
    # ops.linear by blocks of output rows, from float64 or float32 weights, gives the
    # bits of one pairwise sum over each whole row
    rng = np.random.default_rng(10)
    w = N.rnd(rng.standard_normal((3 * ops._LINEAR_BLOCK // 1000 + 7, 1000)), "bfloat16")
    x = rng.standard_normal((3, 1000))
    want = np.stack([(w * r).sum(axis=1) for r in x])
    assert np.array_equal(ops.linear(x, w), want)
    assert np.array_equal(ops.linear(x, w.astype(np.float32)), want)


def test_write_file_streams_and_full_cases():
    # the V4.1-shaped set (dspark_step.py --full) at a toy size: a streamed, uncompressed
    # file holding what a listed, compressed one holds; a version 2 case refused there
    import dspark_step as ds
    tmp = tempfile.mkdtemp()
    try:
        built = list(ds.full_cases("x.h5", sizes=(16,), vocab=97))
        assert [c.attrs["op"] for c in built] == ["dspark_step"] + [
            "main_proj_norm", "hc_pre_delayed", "hc_pre_delayed", "hc_collapse", "confidence",
            "markov_bias"]
        a, b = os.path.join(tmp, "a.h5"), os.path.join(tmp, "b.h5")
        writer.write_file(a, "t", built)
        writer.write_file(b, "t", iter(built), compress=False)
        assert writer.compare(a, b, "a.h5") == []
        with h5py.File(b, "r") as f:
            assert all(d.compression is None for d in _datasets(f))
        v2 = cases.build(next(s for s in cases.SPECS
                          if s.case_id == "main_proj_norm.bf16.fused.fp8_w.e8m0s.P3.T3.H48"))
        try:
            writer.write_file(b, "t", iter([v2]))
            raise AssertionError("a version 2 case written in a streamed file")
        except ValueError as e:
            assert "version 2" in str(e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _datasets(f):
    out = []
    f.visititems(lambda _, o: out.append(o) if isinstance(o, h5py.Dataset) else None)
    return out
