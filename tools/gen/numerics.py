"""Rounding of float64 values to the narrow formats the fixtures use.

Why this exists: the golden values must be rounded exactly where SPEC.md says
bf16(...) and nowhere else, and the rounding itself must be right to the bit.
bfloat16 and float16 are rounded here on the float64 bit pattern, directly to
the narrow format, round-to-nearest-even (no double rounding through float32),
with NaN kept NaN (stored as the positive quiet NaN), +-Inf kept, overflow to +-Inf and correct
subnormals. float32 uses NumPy's float64 -> float32 cast, which is RNE.

Every array the generator computes with is a float64 array holding values that
are exactly representable in the format they were rounded to.
"""

import numpy as np

import fp8

# (exponent bits, mantissa bits) of the 16-bit formats
_FORMATS = {"bfloat16": (8, 7), "float16": (5, 10)}

FLOAT_DTYPES = ("float64", "float32", "float16", "bfloat16")
INT_DTYPES = ("int64", "int32")
DTYPES = FLOAT_DTYPES + INT_DTYPES + fp8.DTYPES

# short names used in case ids
SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float64": "fp64"}


def _narrow_bits(x, ebits, mbits):
    """float64 array -> uint16 bit patterns of a 1-ebits-mbits format (RNE)."""
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    u = x.view(np.uint64).astype(np.uint64)
    sign = ((u >> np.uint64(63)) & np.uint64(1)).astype(np.int64) << (ebits + mbits)
    e64 = ((u >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    m64 = (u & np.uint64((1 << 52) - 1)).astype(np.int64)
    bias = (1 << (ebits - 1)) - 1
    inf_mag = ((1 << ebits) - 1) << mbits
    nan_mag = inf_mag | (1 << (mbits - 1))     # canonical quiet NaN

    e = e64 - 1023                       # unbiased exponent of a float64 normal
    sig = m64 | (1 << 52)                # 53-bit significand, value = sig * 2^(e-52)
    normal = e >= 1 - bias               # lands in the narrow format's normal range
    # exponent of the narrow result's last bit: e - mbits (normal) or fixed (subnormal)
    q_exp = np.maximum(e, 1 - bias) - mbits
    shift = np.minimum(q_exp - (e - 52), 62)   # bits to drop, always >= 52 - mbits > 0
    q = sig >> shift
    rem = sig & ((np.int64(1) << shift) - 1)
    half = np.int64(1) << (shift - 1)
    up = (rem > half) | ((rem == half) & ((q & 1) == 1))
    q = q + up.astype(np.int64)
    # normal: q holds the implicit bit, so adding it to (biased exponent - 1) << mbits
    # gives the encoding, and a carry out of the mantissa bumps the exponent for free
    big = np.minimum(e + bias - 1, 1 << 12)    # clamp: anything this large is Inf anyway
    mag = np.where(normal, (big << mbits) + q, q)
    mag = np.where(mag >= inf_mag, inf_mag, mag)
    mag = np.where(e64 == 0, 0, mag)                       # float64 zero/subnormal -> 0
    mag = np.where(e64 == 0x7FF, np.where(m64 == 0, inf_mag, nan_mag), mag)
    # a NaN's sign is not deterministic (x86 propagates the first NaN operand, and NumPy's
    # SIMD loops may swap operands), so every NaN is stored as the positive quiet NaN
    sign = np.where(np.isnan(x), 0, sign)
    return (sign | mag).astype(np.uint16)


def _narrow_value(bits, ebits, mbits):
    """uint16 bit patterns -> float64 values."""
    b = np.asarray(bits).astype(np.int64)
    bias = (1 << (ebits - 1)) - 1
    emask = (1 << ebits) - 1
    neg = ((b >> (ebits + mbits)) & 1) == 1
    ef = (b >> mbits) & emask
    mf = b & ((1 << mbits) - 1)
    sub = np.ldexp(mf.astype(np.float64), 1 - bias - mbits)
    nor = np.ldexp((mf + (1 << mbits)).astype(np.float64), np.where(ef == 0, 0, ef - bias - mbits))
    val = np.where(ef == 0, sub, nor)
    val = np.where(ef == emask, np.where(mf == 0, np.inf, np.nan), val)
    return np.where(neg, -val, val)


def bf16_bits(x):
    return _narrow_bits(x, 8, 7)


def fp16_bits(x):
    return _narrow_bits(x, 5, 10)


def bits_to_float(bits, dtype):
    ebits, mbits = _FORMATS[dtype]
    return _narrow_value(bits, ebits, mbits)


# elements per slice of the sliced loops below: their temporaries stay in the cache and a
# weight of a V4.1-sized step (10^8 elements) never has a whole-array integer copy
_SLICE = 1 << 16


def _rnd16_slice(x, ebits, mbits, out):
    """RNE of a flat float64 slice to a 16-bit format, as float64, into out.

    Where the result is a normal number of the format (or a zero), it is the
    float64 pattern with its low 52 - mbits bits rounded off in place: adding
    half an ulp less one, plus the last kept bit, carries exactly when
    round-to-nearest-even rounds up (into the exponent too). Every other
    element (the format's subnormals, overflow, Inf, NaN) goes through the
    exact path above."""
    bias = (1 << (ebits - 1)) - 1
    drop = 52 - mbits
    u = x.view(np.uint64)
    a = u & np.uint64((1 << 63) - 1)
    lo = np.uint64((1023 + 1 - bias) << 52)     # 2^(1-bias), the smallest normal
    hi = np.uint64((1023 + bias) << 52)         # 2^bias: everything below rounds to a finite
    slow = ((a < lo) & (a != 0)) | (a >= hi)
    exact = _narrow_value(_narrow_bits(x[slow], ebits, mbits), ebits, mbits) if slow.any() else None
    up = np.uint64((1 << (drop - 1)) - 1) + ((u >> np.uint64(drop)) & np.uint64(1))
    out.view(np.uint64)[:] = (u + up) & np.uint64(((1 << 64) - 1) ^ ((1 << drop) - 1))
    if exact is not None:  # after the store: out may be x itself
        out[slow] = exact


def rnd(x, dtype, out=None):
    """Round float64 values to `dtype`; return float64 holding the rounded values
    (into `out` when given, which may be x itself)."""
    x = np.asarray(x, dtype=np.float64)
    if dtype in _FORMATS:
        ebits, mbits = _FORMATS[dtype]
        res = np.empty(x.shape) if out is None else out
        if res.shape != x.shape or not res.flags.c_contiguous:
            raise ValueError("rnd: out must be C-contiguous and shaped as x")
        flat_in, flat_out = np.ascontiguousarray(x).reshape(-1), res.reshape(-1)
        for i in range(0, x.size, _SLICE):
            _rnd16_slice(flat_in[i:i + _SLICE], ebits, mbits, flat_out[i:i + _SLICE])
        return res
    if dtype == "float32":
        with np.errstate(over="ignore", invalid="ignore"):
            res = x.astype(np.float32).astype(np.float64)
    elif dtype == "float64":
        res = x.copy()
    else:
        raise ValueError("cannot round to %r" % dtype)
    if out is not None:
        out[...] = res
        return out
    return res


_RNE = rnd  # the round-to-nearest-even above, whatever a caller rebinds rnd to


def truncate(x, dtype):
    """bfloat16 rounded toward zero (a truncating store, SPEC.md §12.4); other
    dtypes to nearest even."""
    x = np.asarray(x, dtype=np.float64)
    if dtype != "bfloat16":
        return _RNE(x, dtype)
    m, e = np.frexp(np.abs(x))
    with np.errstate(all="ignore"):
        t = np.ldexp(np.floor(np.ldexp(m, 8)), e - 8)
    t = np.where(np.isfinite(x), np.copysign(t, x), x)
    return _RNE(t, dtype)  # exact: t already has 8 significant bits


def f32(x):
    return rnd(x, "float32")


def _bf16_encode(values):
    """bf16_bits by slices: a bfloat16 value is a float32 with 16 zero low bits,
    so the bits of rnd(x) are its float32 pattern's high half (NaN: 0x7FC0)."""
    v = np.asarray(values)
    out = np.empty(v.shape, dtype="<u2")
    flat_in, flat_out = v.reshape(-1), out.reshape(-1)
    for i in range(0, v.size, _SLICE):
        r = rnd(flat_in[i:i + _SLICE], "bfloat16")
        bits = (r.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype("<u2")
        flat_out[i:i + _SLICE] = np.where(np.isnan(r), 0x7FC0, bits)
    return out


def encode(values, dtype):
    """Array to store in HDF5 for `dtype` (values must already be representable)."""
    if dtype in fp8.DTYPES:
        return fp8.encode(values, dtype)
    if dtype == "bfloat16":
        return _bf16_encode(values)
    if dtype in _FORMATS:
        ebits, mbits = _FORMATS[dtype]
        return _narrow_bits(values, ebits, mbits).astype("<u2")
    if dtype in ("float32", "float64"):
        v = np.asarray(values, dtype=np.float64)
        v = np.where(np.isnan(v), np.nan, v)       # canonical positive quiet NaN
        with np.errstate(over="ignore", invalid="ignore"):
            return v.astype("<f4" if dtype == "float32" else "<f8")
    if dtype == "int64":
        return np.asarray(values).astype("<i8")
    if dtype == "int32":
        return np.asarray(values).astype("<i4")
    raise ValueError("unknown dtype %r" % dtype)


def decode(stored, dtype):
    """Stored HDF5 array -> float64 values (floats) or int64 (ints)."""
    if dtype in fp8.DTYPES:
        return fp8.decode(stored, dtype)
    if dtype in _FORMATS:
        return bits_to_float(np.asarray(stored, dtype=np.uint16), dtype)
    if dtype in ("float32", "float64"):
        return np.asarray(stored, dtype=np.float64)
    return np.asarray(stored, dtype=np.int64)


def representable(values, dtype):
    """True when every value is exactly representable in dtype (NaN allowed)."""
    if dtype in fp8.DTYPES:
        return fp8.representable(values, dtype)
    flat = np.asarray(values).reshape(-1)
    for i in range(0, flat.size, _SLICE):  # by slices: no whole-array float64 copy
        v = flat[i:i + _SLICE].astype(np.float64)
        r = rnd(v, dtype)
        if not np.all((r == v) | (np.isnan(r) & np.isnan(v))):
            return False
    return True
