"""Tests of the generator's FP8 conversions and quantized projections (fp8.py).

Why this exists: the FP8 goldens are only as right as these conversions; each
edge (ties, subnormals, saturation, NaN, the zero-group clamp) is checked
against values derived by hand from the format definition. test_gen.py
imports these, so its runner runs them.
"""

import numpy as np

import fp8


def test_fp8_e4m3_hand_values():
    cases = [(0.0, 0x00), (-0.0, 0x80), (1.0, 0x38), (-2.0, 0xC0), (448.0, 0x7E),
             (2.0 ** -9, 0x01), (2.0 ** -6, 0x08), (7 * 2.0 ** -9, 0x07),
             (1.0625, 0x38),            # tie between 0x38 and 0x39: even 0x38
             (1.1875, 0x3A),            # tie between 0x39 and 0x3a: even 0x3a
             (1.0625 + 1e-9, 0x39),
             (0.5 * 2.0 ** -9, 0x00),   # tie with zero: zero
             (1.5 * 2.0 ** -9, 0x02), (2.5 * 2.0 ** -9, 0x02),
             (7.5 * 2.0 ** -9, 0x08),   # largest subnormal rounds into the first normal
             (464.0, 0x7E), (1e-300, 0x00)]
    for v, code in cases:
        got = int(fp8.e4m3_codes(np.array([v]))[0])
        assert got == code, (v, hex(got), hex(code))


def test_fp8_e4m3_saturation_and_nan():
    assert int(fp8.e4m3_codes(np.array([464.01]), saturate=True)[0]) == 0x7E
    assert int(fp8.e4m3_codes(np.array([464.01]), saturate=False)[0]) == 0x7F
    assert int(fp8.e4m3_codes(np.array([-1e6]), saturate=True)[0]) == 0xFE
    assert int(fp8.e4m3_codes(np.array([-1e6]), saturate=False)[0]) == 0xFF
    assert int(fp8.e4m3_codes(np.array([np.nan]))[0]) == 0x7F
    assert np.isnan(fp8.E4M3_VALUES[0x7F]) and np.isnan(fp8.E4M3_VALUES[0xFF])
    assert np.sum(np.isnan(fp8.E4M3_VALUES)) == 2


def test_fp8_e4m3_round_trip_every_code():
    finite = [c for c in range(256) if (c & 0x7F) != 0x7F]
    vals = fp8.E4M3_VALUES[finite]
    assert list(fp8.e4m3_codes(vals, saturate=False)) == finite
    assert fp8.E4M3_VALUES[0x7E] == 448.0 and fp8.E4M3_VALUES[0x01] == 2.0 ** -9


def test_fp8_e8m0():
    assert fp8.e8m0_value(127) == 1.0 and fp8.e8m0_value(0) == 2.0 ** -127
    assert np.isnan(fp8.e8m0_value(255))
    assert list(fp8.e8m0_codes(np.array([1.0, 0.25, 2.0 ** 127]))) == [127, 125, 254]
    try:
        fp8.e8m0_codes(np.array([3.0]))
    except ValueError:
        pass
    else:
        raise AssertionError("3 is not a power of two")


def test_fp8_zero_group_needs_the_eps_clamp():
    x = np.zeros((2, 130))
    x[1] = np.linspace(-1, 1, 130)
    q, s = fp8.quantize_activations(x, 1e-10)
    assert np.all(q[0] == 0) and np.all(np.isfinite(s))
    with np.errstate(all="ignore"):
        q0, _s0 = fp8.quantize_activations(x, 0.0)
    assert np.all(np.isnan(q0[0]))           # 0/0 without the clamp
    assert np.max(np.abs(q[1])) == 448.0     # the group's amax lands on 448


def test_fp8_weight_only_is_the_dequantized_gemm():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((150, 200)) * 0.05
    wq, sc = fp8.quantize_weight(w, "float32")
    assert sc.shape == (2, 2)
    x = rng.standard_normal((3, 200))
    dense = x @ (wq * fp8.expand_scale(sc, 150, 200)).T
    assert np.allclose(fp8.qlinear(x, wq, sc, "fp8_w", 1e-10), dense, rtol=1e-12, atol=1e-12)
    y8 = fp8.qlinear(x, wq, sc, "fp8_w8a8", 1e-10)
    rel = np.linalg.norm(y8 - dense) / np.linalg.norm(dense)
    assert 1e-4 < rel < 0.1, rel             # activation quantization shows, but mildly
    _wq2, sc2 = fp8.quantize_weight(w, "float8_e8m0fnu")
    m, _ = np.frexp(sc2)
    assert np.all(m == 0.5)                  # powers of two
