"""The torch adapter: every op as torch code (the shared math of _math.py
over torch tensors), the baseline an engine author would write instead of a
kernel. Modes: `eager` (default) and `compile` (each op under torch.compile,
its outputs written inside the compiled graph).

Device: $MTP_TORCH_DEVICE (cpu, cuda, cuda:1, ...), else cuda when torch
sees one, else cpu. Buffers are uint8 tensors on that device that the
harness fills through upload/download; a tensor is a view of one. On CUDA,
bench times with CUDA events on the current stream and `--graph` replays a
captured CUDA graph of the bound call.

GEMMs whose weights are activations run as one bf16/fp16 GEMM with float32
accumulation (F.linear), rounded once, as the spec writes them; logits and
the mHC mixes are float32 GEMMs (TF32 off).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Callable

import torch

from mtpcheck.adapters import Adapter, Unavailable, _math


def _eager(fn):
    """fn, never compiled (a graph break under torch.compile)."""
    return torch.compiler.disable(fn)

_DT = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
       "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
       # FP8 weights as torch's float8 where it has one, else their bytes;
       # e8m0 scales as their bytes (decoded below)
       "float8_e4m3fn": getattr(torch, "float8_e4m3fn", torch.uint8),
       "float8_e8m0fnu": torch.uint8}
_HAS_F8 = hasattr(torch, "float8_e4m3fn")


class Kit:
    """The array kit of _math over torch tensors, for one activation dtype."""

    def __init__(self, act, device):
        self.act = act
        self.adt = _DT[act]
        self.e4m3_lut = torch.tensor(_math.E4M3, dtype=torch.float32, device=device)

    def f(self, t: torch.Tensor) -> torch.Tensor:
        return t.float() if t.is_floating_point() else t

    def rnd(self, x: torch.Tensor) -> torch.Tensor:
        return x if self.adt == torch.float32 else x.to(self.adt).float()

    def round_to(self, x: torch.Tensor, dtype: str) -> torch.Tensor:
        dt = _DT[dtype]
        return x if dt == torch.float32 else x.to(dt).float()

    def rms_inv(self, x: torch.Tensor, eps: float, y: torch.Tensor | None=None) -> torch.Tensor:
        # float32 throughout, as an engine sums, but scaled per row by a
        # power of two, 2^-e with e = max(0, floor(log2 max|.|)), so that rows
        # near the float32 maximum (or an x + y beyond it) do not overflow;
        # the scaling is exact, so every other row gets the plain float32 sum
        m = torch.linalg.vector_norm(x, float("inf"), dim=-1, keepdim=True)
        if y is not None:
            m = torch.maximum(m, torch.linalg.vector_norm(y, float("inf"), dim=-1, keepdim=True))
        # at most 2^-126: a subnormal scale is flushed to zero by GPU
        # kernels (torch.compile's Triton code), which made the rows near
        # the float32 maximum NaN on the H200
        e = torch.clamp(torch.floor(torch.log2(m)), min=0.0, max=126.0)
        scale = torch.exp2(-torch.where(torch.isfinite(e), e, 0.0))
        s = x * scale if y is None else x * scale + y * scale
        ss = (s * s).sum(-1, keepdim=True)
        return torch.rsqrt(ss / s.shape[-1] + eps * scale * scale) * scale

    def precise(self, fn: Callable[..., torch.Tensor], *args: Any) -> torch.Tensor:
        """fn(*args) outside any compiled graph: Triton's float32 division
        is not correctly rounded, which moved the Sinkhorn and the W8A8
        group scales past their budgets under torch.compile on the H200."""
        return _eager(fn)(*args)

    def linear(self, x: torch.Tensor, w: torch.Tensor, wide: bool=False) -> torch.Tensor:
        if wide or w.dtype == torch.float32:
            return torch.matmul(x, w.float().t())
        return torch.nn.functional.linear(x.to(w.dtype), w).float()

    def sum(self, x: torch.Tensor, axis: int) -> torch.Tensor:
        return x.sum(dim=axis, keepdim=True)

    def amax(self, x: torch.Tensor, axis: int) -> torch.Tensor:
        return x.amax(dim=axis, keepdim=True)

    def exp(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x)

    def sigmoid(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)

    def where(self, c: torch.Tensor, a: float, b: torch.Tensor) -> torch.Tensor:
        return torch.where(c, a, b)

    def cat(self, xs: Sequence[torch.Tensor], axis: int) -> torch.Tensor:
        return torch.cat(tuple(xs), dim=axis)

    def argmax(self, x: torch.Tensor) -> torch.Tensor:
        return x.argmax(dim=-1)

    def index(self, t: torch.Tensor) -> torch.Tensor:
        return t.long()

    def clamp_max(self, i: torch.Tensor, v: int) -> torch.Tensor:
        return i if v >= 2 ** 62 else torch.clamp(i, max=v)

    # ---- FP8 (SPEC.md §12.2): dequantize, then a float32 GEMM
    def dequant(self, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        wf = self.e4m3_lut[w.long()] if w.dtype == torch.uint8 else w.float()
        if scale.dtype == torch.uint8:  # e8m0: 2^(e-127), 0xFF NaN
            s = torch.where(scale == 255, float("nan"), torch.exp2(scale.float() - 127.0))
        else:
            s = scale.float()
        qb = _math.QB
        s = s.repeat_interleave(qb, dim=0)[:w.shape[0]].repeat_interleave(qb, dim=1)
        return wf * s[:, :w.shape[1]]

    def e4m3(self, x: torch.Tensor) -> torch.Tensor:
        # saturate, then torch's cast (nearest, ties to even, subnormals):
        # tests/test_rounding.py checks it against the spec's rounding
        x = torch.clamp(x, -_math.E4M3_MAX, _math.E4M3_MAX)
        if _HAS_F8:
            return x.to(torch.float8_e4m3fn).float()
        _m, ex = torch.frexp(x.abs())
        quantum = torch.exp2(torch.clamp(ex - 4, min=-9).float())
        return torch.copysign(torch.round(x.abs() / quantum) * quantum, x)

    def groups(self, x: torch.Tensor, n: int) -> torch.Tensor:
        pad = -x.shape[-1] % n
        if pad:
            x = torch.nn.functional.pad(x, (0, pad))
        # the group count spelt out: -1 is ambiguous in an empty batch
        return x.reshape(x.shape[:-1] + (x.shape[-1] // n, n))

    def ungroup(self, g: torch.Tensor, n: int) -> torch.Tensor:
        return g.reshape(g.shape[:-2] + (g.shape[-2] * g.shape[-1],))[..., :n]


def _eager_division():
    """Asks inductor for correctly rounded float32 division (Triton's `/`
    is div.full.f32, within 2 ulp, unlike eager torch): the option's name
    in the torch at hand (2.10: emulate_divison_rounding; later:
    eager_numerics.division_rounding), or None when it has neither. It is
    what an engine sets to compare compiled code with eager; the 4 cases
    that failed under compile on the H200 (docs/PYTHON.md) had division and
    transcendentals on their path."""
    from torch._inductor import config
    if hasattr(config, "eager_numerics") and hasattr(config.eager_numerics, "division_rounding"):
        config.eager_numerics.division_rounding = True
        return "eager_numerics.division_rounding"
    if hasattr(config, "emulate_divison_rounding"):
        config.emulate_divison_rounding = True
        return "emulate_divison_rounding"
    return None


def _runner(fn, kits, compiled):
    """An op of _math as an adapter op: the kit of the call's activation
    dtype, the outputs written into the harness's buffers (inside the
    compiled graph under compile), one torch.compile per op."""
    def run(ins, outs, a):
        for name, value in fn(kits[a["act"]], ins, a).items():
            outs[name].copy_(value)
    # dynamic shapes from the start, as engines compile the token dimension:
    # one graph per op and attribute set serves every T (sizes 0 and 1 are
    # still specialised)
    return torch.compile(run, dynamic=True) if compiled else run


class TorchAdapter(Adapter):
    fp8 = True
    captured_block = True
    conventions = True
    tensor_parallel = True  # _math's ordered all_reduce and TP step, on torch tensors

    def __init__(self, mode, device):
        self.mode = mode
        self.use_device(device)
        self.name = "torch-" + mode
        kits = {act: Kit(act, self.device) for act in ("bfloat16", "float16", "float32")}
        self.ops = {op: _runner(fn, kits, mode == "compile") for op, fn in _math.OPS.items()}
        torch.set_grad_enabled(False)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        if mode == "compile":
            from torch import _dynamo
            # one compiled graph per op, attribute set and (after the first
            # recompile, dynamic) shape: the suite has many
            _dynamo.config.cache_size_limit = 256
            if hasattr(_dynamo.config, "accumulated_cache_size_limit"):
                _dynamo.config.accumulated_cache_size_limit = 4096
            self.division = _eager_division()

    def use_device(self, device: str) -> None:
        """Buffers on device; on CUDA, event timers and graph replay (the
        vllm_mhc adapter shares these)."""
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        if self.cuda and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        if self.cuda:
            torch.cuda.set_device(self.device)
            self.ev = (torch.cuda.Event(enable_timing=True),
                       torch.cuda.Event(enable_timing=True))
            self.timer_begin = self._timer_begin
            self.timer_end = self._timer_end
            self.graph = self._graph

    def describe(self) -> str:
        where = torch.cuda.get_device_name(self.device) if self.cuda else "host CPU"
        mode = self.mode
        if self.mode == "compile":
            mode += " (%s)" % ("inductor " + self.division if self.division
                               else "Triton's approximate division")
        return "torch %s %s on %s" % (torch.__version__, mode, where)

    # ---- memory ----
    def alloc(self, nbytes: int) -> torch.Tensor:
        # all-ones bytes (NaN, -1): an output left unwritten never passes on
        # what the caching allocator's reused block held
        return torch.full((nbytes,), 0xFF, dtype=torch.uint8, device=self.device)

    def upload(self, dst: torch.Tensor, src: memoryview) -> None:
        dst.copy_(torch.frombuffer(bytearray(src) if src.readonly else src, dtype=torch.uint8))

    def download(self, dst: memoryview, src: torch.Tensor) -> None:
        torch.frombuffer(dst, dtype=torch.uint8).copy_(src)

    def view(self, buf: torch.Tensor | None, dtype: str, shape: tuple[int, ...]) -> torch.Tensor:
        dt = _DT[dtype]
        if buf is None:
            return torch.empty(shape, dtype=dt, device=self.device)
        n = 1
        for d in shape:
            n *= d
        return buf[:n * dt.itemsize].view(dt).view(shape)

    def copy(self, dst: torch.Tensor, src: torch.Tensor, nbytes: int) -> None:
        dst[:nbytes].copy_(src[:nbytes])

    def synchronize(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)

    # ---- CUDA timers and graphs ----
    def _timer_begin(self):
        self.ev[0].record()

    def _timer_end(self):
        self.ev[1].record()
        self.ev[1].synchronize()
        return self.ev[0].elapsed_time(self.ev[1]) / 1e3

    def _graph(self, run):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):  # warm up (and compile) off the capture
                run()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            run()
        return g


def adapter(mode: str | None=None) -> Adapter:
    mode = mode or "eager"
    if mode not in ("eager", "compile"):
        raise ValueError("the torch adapter's modes are eager and compile, not '%s'" % mode)
    return TorchAdapter(mode, pick_device())


def pick_device() -> str:
    """$MTP_TORCH_DEVICE, else cuda when torch sees one, else cpu."""
    device = os.environ.get("MTP_TORCH_DEVICE") or (
        "cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise Unavailable("MTP_TORCH_DEVICE=%s but torch %s sees no CUDA device"
                          % (device, torch.__version__))
    return device
