"""The NumPy adapter's bfloat16 and float16 rounding against bit patterns
derived by hand: nearest, ties to even, overflow to Inf, NaN kept quiet with
its sign, signed zero, subnormals. Then the float8_e4m3fn rounding of the
W8A8 quantizer (SPEC.md §12.2: nearest, ties to even, subnormals, saturating
at +-448, NaN kept) against hand-derived values and against a brute-force
nearest-value search over the e4m3 table, for the NumPy kit and, when torch
imports, the torch kit (torch's float8 cast after the clamp).
Run: python3 test_rounding.py (exit 0)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../python"))
from mtpcheck.adapters import _math  # noqa: E402
from mtpcheck.adapters.numpy import Kit, bf16_to_f32, f32_to_bf16  # noqa: E402

BF16 = [  # float32 bits -> bfloat16 bits
    (0x3F800000, 0x3F80),  # 1.0
    (0x3F808000, 0x3F80),  # 1 + 2^-8: a tie, to the even 1.0
    (0x3F818000, 0x3F82),  # 1 + 3*2^-8: a tie, to the even 0x3F82
    (0x3F808001, 0x3F81),  # just above the tie: up
    (0x7F7FFFFF, 0x7F80),  # float32 max: beyond bf16's max, Inf
    (0x7F7F7FFF, 0x7F7F),  # just below the tie at bf16's max: stays finite
    (0xFF800000, 0xFF80),  # -Inf
    (0x7FC00001, 0x7FC0),  # quiet NaN
    (0x7F800001, 0x7FC0),  # signalling NaN: quiet, not Inf
    (0xFF800001, 0xFFC0),  # negative NaN keeps its sign
    (0x80000000, 0x8000),  # -0
    (0x00008000, 0x0000),  # subnormal tie: to even 0
    (0x00018000, 0x0002),  # subnormal tie: to even 2
]

E4M3 = [  # float32 value -> e4m3 value, by hand
    (1.0, 1.0),
    (1.0625, 1.0),            # tie between 1 (mantissa 000) and 1.125: even
    (1.1875, 1.25),           # tie between 1.125 (001) and 1.25 (010): even
    (1.0625 + 2**-20, 1.125),  # just above the tie: up
    (448.0, 448.0),
    (464.0, 448.0),           # tie between 448 (110) and 480 (NaN's code): even
    (465.0, 448.0),           # past it: saturates
    (1e30, 448.0),
    (float("inf"), 448.0),
    (-float("inf"), -448.0),
    (2.0**-9, 2.0**-9),       # smallest subnormal
    (2.0**-10, 0.0),          # tie with 0: even
    (3 * 2.0**-10, 2.0**-8),  # tie between 1 and 2 quanta: even
    (2.0**-6 * 1.0625, 2.0**-6),  # the smallest binade's tie
    (-0.0, -0.0),
    (-3.3, -3.25),
    (0.0137, 0.013671875),    # subnormal 7 * 2^-9
]


def e4m3_brute(vals):
    """The nearest finite e4m3 value to each of vals, ties to the even code,
    saturating at +-448; NaN stays NaN."""
    codes = np.array([b for b in range(256) if not np.isnan(_math.E4M3[b])])
    table = np.array([_math.E4M3[b] for b in codes])
    v = np.clip(vals.astype(np.float64), -448.0, 448.0)
    d = np.abs(table[None, :] - v[:, None])
    near = d == d.min(axis=1, keepdims=True)
    out = table[np.argmin(np.where(near, codes & 1, 2), axis=1)]
    return np.where(np.isnan(v), np.nan, out)


def e4m3_checks(kit_e4m3, name):
    bad = []
    src = np.array([v for v, _ in E4M3], dtype=np.float32)
    got = kit_e4m3(src)
    for (v, want), g in zip(E4M3, got):
        if not (g == want and np.signbit(g) == np.signbit(want)):
            bad.append((name, v, want, float(g)))
    rng = np.random.default_rng(7)
    # every quantum and its midpoints, and random values across all binades
    mids = np.array(sorted({v for b in range(127) for v in (
        _math.E4M3[b], (_math.E4M3[b] + _math.E4M3[b + 1]) / 2)}), dtype=np.float32)
    rand = (rng.standard_normal(4000) * np.exp2(rng.integers(-12, 10, 4000))).astype(np.float32)
    vals = np.concatenate((mids, -mids, np.nextafter(mids, np.float32(0)),
                           np.nextafter(mids, np.float32(1000)), rand, [np.nan]))
    got = kit_e4m3(vals)
    for v, g, w in zip(vals, got, e4m3_brute(vals)):
        if not (g == w or (np.isnan(g) and np.isnan(w))):
            bad.append((name, float(v), w, float(g)))
            if len(bad) > 10:
                break
    return bad, len(E4M3) + len(vals)


def torch_e4m3():
    try:
        import torch
        from mtpcheck.adapters.torch import Kit as TorchKit
    except ImportError:
        return None
    k = TorchKit("bfloat16", "cpu")
    return lambda x: k.e4m3(torch.from_numpy(np.asarray(x, dtype=np.float32))).numpy()


def main():
    src = np.array([b for b, _ in BF16], dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        got = f32_to_bf16(src)
    bad = [(hex(b), hex(w), hex(int(g))) for (b, w), g in zip(BF16, got) if g != w]
    back = bf16_to_f32(np.array([0x3F81, 0xC2F7], dtype=np.uint16))
    if list(back) != [1.0078125, -123.5]:
        bad.append(("decode", list(back)))
    with np.errstate(all="ignore"):
        f16 = Kit("float16").rnd(np.array([1 + 2**-11, 1 + 3 * 2**-11, 65520.0, 1e-8],
                                          dtype=np.float32))
    if list(f16) != [1.0, 1 + 2**-9, np.inf, np.float32(np.float16(1e-8))]:
        bad.append(("float16", list(f16)))
    n = len(BF16) + 2
    with np.errstate(all="ignore"):
        kits = [(Kit("bfloat16").e4m3, "numpy e4m3")]
        t = torch_e4m3()
        if t is not None:
            kits.append((t, "torch e4m3"))
        for fn, name in kits:
            b, m = e4m3_checks(fn, name)
            bad += b
            n += m
    for b in bad:
        print("MISMATCH", b)
    print("rounding: %d of %d checks passed (%s)" % (
        n - len(bad), n, ", ".join(name for _, name in kits)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
