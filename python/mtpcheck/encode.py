"""Storage encodings of the dump format (FORMAT.md v2): what each `dtype` tag
is stored as, and the conversions from NumPy values or torch tensors.

bfloat16 / float16 are 16-bit bit patterns (<u2), float8_e4m3fn and
float8_e8m0fnu are 8-bit bit patterns (<u1); the rest are native
little-endian.  Values given as floats are rounded to nearest even (and to the
saturating e4m3 grid); values given as bit patterns (uint16 / uint8 arrays, or
torch tensors of that dtype) are stored unchanged, so what an engine held is
written bit for bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # annotations only: neither is imported at run time
    import torch
    from numpy.typing import ArrayLike

NATIVE = {"float64": "<f8", "float32": "<f4", "int64": "<i8", "int32": "<i4"}
BITS16 = ("bfloat16", "float16")
BITS8 = ("float8_e4m3fn", "float8_e8m0fnu")
DTYPES = tuple(NATIVE) + BITS16 + BITS8
V2_DTYPES = BITS8

# torch dtype name -> (our tag, the integer view that carries its bits)
_TORCH = {
    "torch.bfloat16": ("bfloat16", "int16"),
    "torch.float16": ("float16", "int16"),
    "torch.float8_e4m3fn": ("float8_e4m3fn", "uint8"),
    "torch.float8_e8m0fnu": ("float8_e8m0fnu", "uint8"),
    "torch.float32": ("float32", None),
    "torch.float64": ("float64", None),
    "torch.int64": ("int64", None),
    "torch.int32": ("int32", None),
}


def torch_tag(t: torch.Tensor) -> str | None:
    """The dtype tag of a torch tensor, or None when the format has no such type."""
    entry = _TORCH.get(str(t.dtype))
    return entry[0] if entry else None


def from_torch(t: torch.Tensor) -> tuple[np.ndarray, str]:
    """(array, tag): a torch tensor as NumPy, reduced floats as their bit patterns."""
    import torch  # lazily: the writer itself needs no torch

    entry = _TORCH.get(str(t.dtype))
    if entry is None:
        raise TypeError(f"tensor of dtype {t.dtype} has no dump encoding")
    tag, view = entry
    t = t.detach().to("cpu").contiguous()
    if view is not None:
        arr = t.view(getattr(torch, view)).numpy()
        arr = arr.view(np.uint16) if view == "int16" else arr
        return arr.copy(), tag
    return t.numpy().copy(), tag


def bf16_bits(values: ArrayLike) -> np.ndarray:
    """float values -> bfloat16 bit patterns (round to nearest even, NaN kept)."""
    f = np.asarray(values, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    quiet = (u >> 16) | 0x40
    return np.where(np.isnan(f), quiet, rounded).astype("<u2")


def bf16_values(bits: ArrayLike) -> np.ndarray:
    """bfloat16 bit patterns -> float32 values."""
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


def _e4m3_table() -> np.ndarray:
    """The finite non-negative e4m3fn values, index = bit pattern 0..126."""
    codes = np.arange(127)
    exp = codes >> 3
    man = codes & 7
    normal = (1.0 + man / 8.0) * np.exp2(exp - 7.0)
    sub = man / 8.0 * 2.0**-6
    return np.where(exp == 0, sub, normal)


_E4M3 = _e4m3_table()


def e4m3_bits(values: ArrayLike) -> np.ndarray:
    """float values -> float8_e4m3fn bit patterns: nearest, ties to even
    mantissa, saturating at +-448 (as the engines' quantizers), NaN -> 0x7F."""
    f = np.asarray(values, dtype=np.float64)
    mag = np.minimum(np.abs(np.nan_to_num(f, nan=0.0)), 448.0)
    hi = np.clip(np.searchsorted(_E4M3, mag), 0, 126)
    lo = np.maximum(hi - 1, 0)
    d_hi = _E4M3[hi] - mag
    d_lo = mag - _E4M3[lo]
    pick_lo = (d_lo < d_hi) | ((d_lo == d_hi) & (lo % 2 == 0))
    code = np.where(pick_lo, lo, hi).astype(np.uint8)
    code = code | np.where(np.signbit(f), 0x80, 0).astype(np.uint8)
    return np.where(np.isnan(f), np.uint8(0x7F), code).astype("<u1")


def e4m3_values(bits: ArrayLike) -> np.ndarray:
    """float8_e4m3fn bit patterns -> float64 values (0x7F, 0xFF: NaN)."""
    b = np.asarray(bits, dtype=np.uint8)
    mag = np.append(_E4M3, np.nan)[b & 0x7F]
    return np.where(b & 0x80, -mag, mag)


def e8m0_bits(values: ArrayLike) -> np.ndarray:
    """power-of-two float values -> float8_e8m0fnu biased exponents."""
    f = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.log2(f)
    ok = np.isfinite(e) & (e == np.round(e)) & (e >= -127) & (e <= 127)
    if not np.all(ok | np.isnan(f)):
        raise ValueError("float8_e8m0fnu holds powers of two 2^-127..2^127 only")
    return np.where(np.isnan(f), 255, np.nan_to_num(e) + 127).astype("<u1")


def encode(values: Any, tag: str) -> np.ndarray:
    """The array to store for `values` under dtype tag `tag`."""
    if tag not in DTYPES:
        raise ValueError("unknown dtype {!r} (one of {})".format(tag, ", ".join(DTYPES)))
    a = np.asarray(values)
    if tag in BITS16:
        if a.dtype == np.uint16:
            return a.astype("<u2")
        if tag == "float16":
            return a.astype(np.float16).view(np.uint16).astype("<u2")
        return bf16_bits(a)
    if tag in BITS8:
        if a.dtype == np.uint8:
            return a.astype("<u1")
        return e4m3_bits(a) if tag == "float8_e4m3fn" else e8m0_bits(a)
    if tag.startswith("int") and a.dtype.kind == "f" and not np.all(np.round(a) == a):
        raise ValueError(f"non-integer values for dtype {tag}")
    return a.astype(NATIVE[tag])


def decode(stored: ArrayLike, tag: str) -> np.ndarray:
    """Stored array -> float64 (or int64) values, the inverse of encode."""
    if tag == "bfloat16":
        return bf16_values(stored).astype(np.float64)
    if tag == "float16":
        return np.asarray(stored, dtype=np.uint16).view(np.float16).astype(np.float64)
    if tag == "float8_e4m3fn":
        return e4m3_values(stored)
    if tag == "float8_e8m0fnu":
        b = np.asarray(stored, dtype=np.float64)
        return np.where(b == 255, np.nan, np.exp2(b - 127))
    return np.asarray(stored)
