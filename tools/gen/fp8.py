"""FP8 formats and block-quantized projections (SPEC.md §12.2, FORMAT.md version 2).

Why this exists: FP8 fixtures need their own conversions, written from the
format definitions alone (not from the C code). Conversions here work by value
against the table of every representable number, so they share no method with
a bit-twiddling implementation:

* float8_e4m3fn: sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0
  is subnormal (m/8 * 2^-6); S.1111.111 is NaN; no infinity; max 448.
  Rounding is to the nearest table value, a tie going to the even code;
  beyond 448 a value saturates (the engines' quantizers) or, in a plain cast,
  becomes NaN once it rounds past 448 (above 464).
* float8_e8m0fnu: a biased exponent e, value 2^(e-127); 255 is NaN.
"""

import numpy as np

E4M3_MAX = 448.0
BLOCK = 128
E4M3, E8M0 = "float8_e4m3fn", "float8_e8m0fnu"
DTYPES = (E4M3, E8M0)


def _e4m3_table():
    vals = np.empty(256)
    for code in range(256):
        s, e, m = code >> 7, (code >> 3) & 15, code & 7
        if e == 15 and m == 7:
            vals[code] = np.nan
            continue
        mag = (m / 8.0) * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)
        vals[code] = -mag if s else mag
    return vals


E4M3_VALUES = _e4m3_table()
# the non-negative finite codes 0x00..0x7e in increasing value order
_POS_CODES = np.arange(0x7F)
_POS_VALUES = E4M3_VALUES[:0x7F]


def e4m3_codes(x, saturate=True):
    """float64 values -> uint8 codes, round to nearest, ties to the even code."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x).reshape(-1)
    hi = np.searchsorted(_POS_VALUES, a, side="left").clip(0, len(_POS_VALUES) - 1)
    lo = (hi - 1).clip(0)
    dlo, dhi = a - _POS_VALUES[lo], _POS_VALUES[hi] - a
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (_POS_CODES[hi] % 2 == 0))
    code = np.where(pick_hi, _POS_CODES[hi], _POS_CODES[lo])
    code = np.where(a <= _POS_VALUES[0], 0, code)
    over = a > E4M3_MAX
    # between 448 and 464 the nearest representable is 448 (464 itself is the tie
    # with the non-existent 480, whose code would be odd): only > 464 overflows
    code = np.where(over & (a <= 464.0), 0x7E, code)
    code = np.where(over & (a > 464.0), 0x7E if saturate else 0x7F, code)
    code = np.where(np.isnan(a), 0x7F, code)
    sign = np.signbit(x.reshape(-1)) & ~np.isnan(x.reshape(-1))
    code = code | np.where(sign, 0x80, 0)
    return code.astype(np.uint8).reshape(x.shape)


def e4m3(x, saturate=True):
    """Round to float8_e4m3fn; float64 holding the rounded values."""
    return E4M3_VALUES[e4m3_codes(x, saturate)]


def e8m0_value(codes):
    c = np.asarray(codes).astype(np.int64)
    return np.where(c == 255, np.nan, np.power(2.0, (c - 127).astype(np.float64)))


def e8m0_codes(values):
    """Exact powers of two in [2^-127, 2^127] -> codes (anything else: ValueError)."""
    v = np.asarray(values, dtype=np.float64)
    m, e = np.frexp(v)
    if not np.all((m == 0.5) & (e - 1 >= -127) & (e - 1 <= 127)):
        raise ValueError("e8m0: not a power of two in range")
    return (e - 1 + 127).astype(np.uint8)


def encode(values, dtype):
    if dtype == E4M3:
        return e4m3_codes(values, saturate=False).astype("u1")
    return e8m0_codes(values).astype("u1")


def decode(stored, dtype):
    if dtype == E4M3:
        return E4M3_VALUES[np.asarray(stored, dtype=np.uint8)]
    return e8m0_value(stored)


def representable(values, dtype):
    v = np.asarray(values, dtype=np.float64)
    if dtype == E4M3:
        r = e4m3(v, saturate=False)
        return bool(np.all((r == v) | (np.isnan(r) & np.isnan(v))))
    try:
        e8m0_codes(v)
    except ValueError:
        return False
    return True


def _blocks(n):
    return -(-n // BLOCK)


def quantize_weight(w, scale_dtype):
    """Real weight [out, in] -> (e4m3 values, scale_inv [ceil(out/128), ceil(in/128)]).

    A block's scale is amax/448 (float32), or the power of two at or above it
    (e8m0), so that w / scale fits the e4m3 range; an all-zero block gets 1."""
    out, inn = w.shape
    scale = np.ones((_blocks(out), _blocks(inn)))
    for bo in range(scale.shape[0]):
        for bi in range(scale.shape[1]):
            blk = w[bo * BLOCK:(bo + 1) * BLOCK, bi * BLOCK:(bi + 1) * BLOCK]
            amax = float(np.max(np.abs(blk)))
            if amax == 0:
                continue
            s = np.float32(amax / E4M3_MAX)
            if scale_dtype == E8M0:
                s = 2.0 ** np.ceil(np.log2(amax / E4M3_MAX))
            scale[bo, bi] = float(s)
    full = np.repeat(np.repeat(scale, BLOCK, axis=0), BLOCK, axis=1)[:out, :inn]
    return e4m3(w / full, saturate=True), scale


def expand_scale(scale, out, inn):
    return np.repeat(np.repeat(scale, BLOCK, axis=0), BLOCK, axis=1)[:out, :inn]


def quantize_activations(x, eps):
    """Per token, per group of 128 consecutive inputs: s = f32(max(amax, f32(eps)) / 448),
    q = e4m3(f32(x / s)) with saturation. Returns (q, s [rows, groups])."""
    x = np.asarray(x, dtype=np.float64)
    rows, inn = x.shape
    g = _blocks(inn)
    q = np.empty_like(x)
    s = np.empty((rows, g))
    eps32 = float(np.float32(eps))
    for j in range(g):
        part = x[:, j * BLOCK:(j + 1) * BLOCK]
        with np.errstate(invalid="ignore"):
            amax = np.max(np.abs(part), axis=1)
        sc = (np.maximum(amax, eps32) / E4M3_MAX).astype(np.float32).astype(np.float64)
        sc = np.where(np.isnan(amax), np.nan, sc)
        with np.errstate(all="ignore"):
            ratio = (part / sc[:, None]).astype(np.float32).astype(np.float64)
        q[:, j * BLOCK:(j + 1) * BLOCK] = e4m3(ratio, saturate=True)
        s[:, j] = sc
    return q, s


def qlinear(x, wq, scale, scheme, eps):
    """Unrounded y[..., o] of a projection with an e4m3 weight and its block scales.

    fp8_w: sum_c x_c * (wq[o,c] * scale[o/128, c/128]).
    fp8_w8a8: sum_g s_g * scale[o/128, g] * sum_{c in g} q_c * wq[o,c]."""
    x = np.asarray(x, dtype=np.float64)
    lead = x.shape[:-1]
    rows = x.reshape(-1, x.shape[-1])
    out, inn = wq.shape
    if scheme == "fp8_w":
        w = wq * expand_scale(scale, out, inn)
        y = np.stack([(w * r).sum(axis=1) for r in rows]) if len(rows) else np.zeros((0, out))
        return y.reshape(lead + (out,))
    if scheme != "fp8_w8a8":
        raise ValueError("proj_quant %r with a float8 weight" % scheme)
    q, s = quantize_activations(rows, eps)
    y = np.zeros((rows.shape[0], out))
    for j in range(_blocks(inn)):
        cols = slice(j * BLOCK, (j + 1) * BLOCK)
        part = np.stack([(wq[:, cols] * r).sum(axis=1) for r in q[:, cols]]) \
            if len(rows) else np.zeros((0, out))
        wsc = np.repeat(scale[:, j], BLOCK)[:out]
        y = y + part * s[:, j][:, None] * wsc[None, :]
    return y.reshape(lead + (out,))
