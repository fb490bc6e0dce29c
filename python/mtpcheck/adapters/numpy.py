"""The NumPy adapter: every op on the CPU in float32 NumPy, rounding to
bfloat16 (on the float32 bit pattern, nearest-even) and float16 (NumPy's
cast) exactly where SPEC.md stores; the bridge's end-to-end test in CI.

Buffers are NumPy byte arrays that the harness fills through the buffer
protocol; a tensor is a view of one (bfloat16 as its uint16 bit patterns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from mtpcheck.adapters import Adapter, _math

_NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
       "bfloat16": np.uint16, "int64": np.int64, "int32": np.int32,
       # FP8 weights and e8m0 scales as their bytes (NumPy has no float8)
       "float8_e4m3fn": np.uint8, "float8_e8m0fnu": np.uint8}

_E4M3 = np.array(_math.E4M3, dtype=np.float32)
# float8_e8m0fnu: 2^(e-127), 0xFF NaN (2^-127 is a float32 subnormal)
_E8M0 = np.array([2.0 ** (e - 127) for e in range(255)] + [np.nan], dtype=np.float32)


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round to nearest even on the bit pattern; NaN stays a quiet NaN."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rne = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = ((u >> 16) | 0x40).astype(np.uint16)
    return np.where((u & 0x7FFFFFFF) > 0x7F800000, nan, rne)


class Kit:
    """The array kit of _math for one activation dtype."""

    def __init__(self, act):
        self.act = act

    def f(self, t: np.ndarray) -> np.ndarray:
        if t.dtype == np.uint16:
            return bf16_to_f32(t)
        return t.astype(np.float32, copy=False)

    def precise(self, fn: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
        """fn(*args): NumPy's division is correctly rounded already."""
        return fn(*args)

    def rnd(self, x: np.ndarray) -> np.ndarray:
        return self.round_to(x, self.act)

    def round_to(self, x: np.ndarray, dtype: str) -> np.ndarray:
        if dtype == "bfloat16":
            return bf16_to_f32(f32_to_bf16(x))
        if dtype == "float16":
            return x.astype(np.float16).astype(np.float32)
        return x

    def rms_inv(self, x: np.ndarray, eps: float, y: np.ndarray | None=None) -> np.ndarray:
        # float64 sum of squares: a float32 one overflows on rows near 1e38
        s = x.astype(np.float64) if y is None else x.astype(np.float64) + y
        ss = np.sum(s * s, axis=-1, keepdims=True)
        return (1.0 / np.sqrt(ss / x.shape[-1] + eps)).astype(np.float32)

    def linear(self, x: np.ndarray, w: np.ndarray, wide: bool=False) -> np.ndarray:
        y = np.matmul(x, self.f(w).T, dtype=np.float32)
        return y if wide or w.dtype == np.float32 else self.rnd(y)

    def sum(self, x: np.ndarray, axis: int) -> np.ndarray:
        return np.sum(x, axis=axis, keepdims=True)

    def amax(self, x: np.ndarray, axis: int) -> np.ndarray:
        return np.max(x, axis=axis, keepdims=True)

    def exp(self, x: np.ndarray) -> np.ndarray:
        return np.exp(x)

    def sigmoid(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return (1.0 / (1.0 + np.exp(-x))).astype(np.float32)

    def where(self, c: np.ndarray, a: float, b: np.ndarray) -> np.ndarray:
        return np.where(c, np.float32(a), b)

    def cat(self, xs: Sequence[np.ndarray], axis: int) -> np.ndarray:
        return np.concatenate(xs, axis=axis)

    def argmax(self, x: np.ndarray) -> np.ndarray:
        return np.argmax(x, axis=-1).astype(np.int64)

    def index(self, t: np.ndarray) -> np.ndarray:
        return np.asarray(t).astype(np.int64, copy=False)

    def clamp_max(self, i: np.ndarray, v: int) -> np.ndarray:
        return np.minimum(i, np.int64(v))

    # ---- FP8 (SPEC.md §12.2)
    def dequant(self, w: np.ndarray, scale: np.ndarray) -> np.ndarray:
        s = _E8M0[scale] if scale.dtype == np.uint8 else scale.astype(np.float32, copy=False)
        out, inp = w.shape
        s = np.repeat(np.repeat(s, _math.QB, axis=0)[:out], _math.QB, axis=1)[:, :inp]
        return _E4M3[w] * s

    def e4m3(self, x: np.ndarray) -> np.ndarray:
        # |x| clamped to 448 (saturation), then rounded to its binade's
        # 3-bit quantum 2^(e-3), e >= -6 (subnormals), half to even; exact
        # in float64
        a = np.minimum(np.abs(x.astype(np.float64)), _math.E4M3_MAX)
        _, ex = np.frexp(a)
        quantum = np.exp2(np.maximum(ex - 4, -9).astype(np.float64))
        return np.copysign(np.round(a / quantum) * quantum, x).astype(np.float32)

    def groups(self, x: np.ndarray, n: int) -> np.ndarray:
        pad = -x.shape[-1] % n
        if pad:
            x = np.concatenate((x, np.zeros(x.shape[:-1] + (pad,), np.float32)), -1)
        # the group count spelt out: -1 is ambiguous in an empty batch
        return x.reshape(x.shape[:-1] + (x.shape[-1] // n, n))

    def ungroup(self, g: np.ndarray, n: int) -> np.ndarray:
        return g.reshape(g.shape[:-2] + (g.shape[-2] * g.shape[-1],))[..., :n]


class NumpyAdapter(Adapter):
    name = "numpy"
    fp8 = True
    captured_block = True
    conventions = True
    tensor_parallel = True

    def __init__(self):
        self.ops = {n: self._wrap(fn) for n, fn in _math.OPS.items()}
        self.kits = {}

    def _wrap(self, fn):
        def op(ins, outs, a):
            kit = self.kits.get(a["act"])
            if kit is None:
                kit = self.kits[a["act"]] = Kit(a["act"])
            with np.errstate(all="ignore"):
                return fn(kit, ins, a)
        return op

    def describe(self) -> str:
        return "NumPy %s on the host CPU (float32 arithmetic)" % np.__version__

    def alloc(self, nbytes: int) -> np.ndarray:
        # all-ones bytes (NaN, -1): an op that leaves an output unwritten
        # must not pass on what an earlier case left in reused memory
        return np.full(nbytes, 0xFF, dtype=np.uint8)

    def view(self, buf: np.ndarray | None, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
        if buf is None:
            return np.empty(shape, dtype=_NP[dtype])
        n = 1
        for d in shape:
            n *= d
        return buf[:n * np.dtype(_NP[dtype]).itemsize].view(_NP[dtype]).reshape(shape)

    def assign(self, dst: np.ndarray, value: Any) -> None:
        value = np.asarray(value)
        if dst.dtype == np.uint16 and value.dtype != np.uint16:
            value = f32_to_bf16(value)
        np.copyto(dst, value.reshape(dst.shape), casting="unsafe")

    def copy(self, dst: np.ndarray, src: np.ndarray, nbytes: int) -> None:
        np.copyto(dst[:nbytes], src[:nbytes])


def adapter(mode: str | None=None) -> Adapter:
    if mode not in (None, "", "default"):
        raise ValueError("the numpy adapter has no mode '%s'" % mode)
    return NumpyAdapter()
