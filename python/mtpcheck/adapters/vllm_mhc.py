"""vLLM's own mHC kernels as a `python:` adapter, so that `mtpcheck run` judges
them against the spec and `mtpcheck bench` times them beside mtpcheck's own
(issue 33): `--backend python:vllm_mhc[:MODE]`.

The adapter imports `vllm.model_executor.kernels.mhc` (vLLM 0.33 and later)
and calls the functions vLLM's CustomOps (`vllm/model_executor/layers/mhc.py`)
dispatch to. Which implementation runs, by MODE:

  auto (default)  on CUDA with TileLang: TileLang, as `forward_cuda` does; on
                  CUDA without it, or on a CPU: the torch implementations, as
                  `forward_native` does
  tilelang        TileLang only (CUDA), else the backend is unavailable
  wrapped         as tilelang, but every op through vLLM's public wrappers
                  (`mhc_pre_tilelang`, ...), outputs copied (see below)
  torch           the torch implementations, on the device of the buffers

The Triton kernels (`hc_head_triton`, hc_head's `rocm` variant, which vLLM's
ROCm path runs without TileLang, and `hc_collapse_triton`) run in every mode: on
a CPU under Triton's interpreter, whose fp32 -> bf16 casts truncate; the
adapter makes them round to nearest even, as GPUs' conversions do, and says
so in its description line. vLLM has no torch implementation of hc_head's
`cuda` variant (`HCHeadOp.forward_native` raises), so that is declined
without TileLang; `vllm._C`'s CPU ports (`mhc_pre_cpu`, ...) are not in the
PyPI wheel and not used. Every op is bf16 streams only (vLLM asserts it):
other activation dtypes are declined.

Where vLLM's native path has no fused RMSNorm (`norm_weight` given to the
torch implementations), the adapter applies it afterwards the way vLLM's
fallbacks do (`_apply_mhc_norm`, `vllm.ir.ops.rms_norm`). vLLM's wrappers
allocate their outputs, which the adapter then copies into the harness's
buffers: one copy kernel per output, a few µs per launch at decode. So that
the bench times vLLM's kernels and not those copies, the TileLang path
(modes auto and tilelang) calls the kernel objects the wrappers call
(`tilelang_kernels._MHC_PRE_BIG_FUSE_TILELANG_KERNEL`, ...) in the wrappers'
order with the harness's buffers as their outputs, for hc_pre, hc_post,
hc_fused_post_pre (whose small-T fused kernel allocates its streams: one
copy) and hc_head's cuda variant; hc_pre_delayed and hc_collapse go through
the wrappers (copies counted). Mode `wrapped` is the check on that
replication: the same kernels through vLLM's own wrappers.

Device: $MTP_TORCH_DEVICE, else cuda when torch sees one, else cpu. Where
vLLM (or its mHC kernels) cannot be imported, the backend is unavailable
(SKIPPED, one line saying why).
"""

from __future__ import annotations

import os
from typing import Any, Callable

from mtpcheck.adapters import Adapter, Unavailable

try:
    import torch
except ImportError as e:
    raise Unavailable("vLLM is not importable here: no torch (%s)" % e) from None

from mtpcheck.adapters.torch import TorchAdapter, pick_device

MODES = ("auto", "tilelang", "wrapped", "torch")
OPS = ("hc_pre", "hc_post", "hc_fused_post_pre", "hc_head", "hc_pre_delayed", "hc_collapse")


def choose_path(mode: str, cuda: bool, has_tilelang: bool) -> str:
    """The implementation the mHC ops other than the Triton ones take:
    'tilelang' or 'torch' (mode one of MODES). Raises Unavailable for a mode
    the host cannot run."""
    if mode == "torch":
        return "torch"
    if mode == "wrapped":
        mode = "tilelang"
    if cuda and has_tilelang:
        return "tilelang"
    if mode == "tilelang":
        raise Unavailable("vLLM's TileLang mHC kernels need CUDA and TileLang (%s)"
                          % ("TileLang is not importable" if cuda else "no CUDA device"))
    return "torch"


def declines(op: str, a: dict[str, Any], path: str) -> str | None:
    """Why vLLM has no kernel for this call (None: it has one)."""
    if op not in OPS:
        return "not an mHC op"
    if a["act"] != "bfloat16":
        return "vLLM's mHC kernels take bf16 streams only"
    if op == "hc_head" and a.get("variant") == "cuda" and path != "tilelang":
        return "hc_head's cuda variant is TileLang only (HCHeadOp.forward_native raises)"
    return None


def _mix(a: dict[str, Any]) -> tuple[float, float, float, float, int]:
    """hc_pre's constants in vLLM's argument order."""
    return (a["rms_eps"], a["pre_eps"], a["sinkhorn_eps"], a.get("post_mult", 2.0),
            int(a["sinkhorn_iters"]))


def _rne_bf16(convert: Callable[..., Any]) -> Callable[..., Any]:
    """Triton interpreter's float conversion with fp32 -> bf16 rounded to
    nearest even (by torch's cast) instead of truncated; others unchanged."""
    import numpy as np
    from triton import language as tl

    def conv(data: Any, src: Any, dst: Any, rounding_mode: Any) -> Any:
        if src == tl.float32 and dst == tl.bfloat16:
            a = np.asarray(data, dtype=np.float32)  # a 0-d scalar keeps its shape
            f = torch.from_numpy(np.ascontiguousarray(a).reshape(-1))
            return f.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16).reshape(a.shape)
        return convert(data, src, dst, rounding_mode)

    conv.mtpcheck_rne = True  # type: ignore[attr-defined]
    return conv


def _import_vllm(cuda: bool) -> tuple[Any, Any]:
    """vllm and its mHC kernel module; on a CPU, Triton's interpreter (set
    before vLLM imports Triton). Unavailable when either is missing."""
    if not cuda:
        os.environ.setdefault("TRITON_INTERPRET", "1")
        # vLLM disables Triton on a host with no active GPU driver unless
        # CUDA_VISIBLE_DEVICES is empty (vllm/triton_utils/importing.py)
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
        os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    try:
        import vllm
    except Exception as e:  # noqa: BLE001 -- a half-installed vLLM raises more than ImportError
        raise Unavailable("vLLM is not importable (%s: %s); the vllm_mhc adapter runs vLLM's own "
                          "mHC kernels" % (type(e).__name__, e)) from None
    try:
        from vllm.model_executor.kernels import mhc
    except Exception as e:  # noqa: BLE001
        raise Unavailable("vLLM %s has no importable mHC kernels "
                          "(vllm.model_executor.kernels.mhc: %s)"
                          % (getattr(vllm, "__version__", "?"), e)) from None
    if os.environ.get("TRITON_INTERPRET") == "1":
        from triton.runtime import interpreter
        if not getattr(interpreter._convert_float, "mtpcheck_rne", False):
            interpreter._convert_float = _rne_bf16(interpreter._convert_float)
    return vllm, mhc


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


class Direct:
    """vLLM's TileLang kernel objects called as its wrappers call them
    (vllm/model_executor/kernels/mhc/tilelang.py), writing into the given
    outputs instead of fresh tensors."""

    def __init__(self) -> None:
        from vllm.model_executor.kernels.mhc import tilelang as wrappers
        from vllm.model_executor.kernels.mhc import tilelang_kernels as tk
        self.gemm = wrappers._hc_prenorm_gemm_outputs
        self.big_fuse = tk._MHC_PRE_BIG_FUSE_TILELANG_KERNEL
        self.post = tk._MHC_POST_TILELANG_KERNEL
        self.fused = tk._MHC_FUSED_TILELANG_KERNEL
        self.fused_config = tk.mhc_fused_post_pre_split_config
        self.head = tk._HC_HEAD_FUSED_TILELANG_KERNEL

    def pre(self, r: torch.Tensor, mul: torch.Tensor | None, sq: torch.Tensor | None,
            i: dict[str, Any], a: dict[str, Any], post: torch.Tensor, comb: torch.Tensor,
            li: torch.Tensor) -> None:
        """mhc_pre_tilelang: the mix GEMM (unless given), then the big fuse."""
        t, m, h = r.shape
        if mul is None:
            mul, sq = self.gemm(r.view(t, m * h), i["fn"], hidden_size=h, hc_mult=m)
        self.big_fuse(mul, sq, i["scale"], i["base"], r, post, comb.view(t, m * m), li,
                      *_mix(a), norm_weight=i.get("norm_weight"),
                      norm_eps=a.get("norm_eps", 1e-6))

    def fused_post_pre(self, i: dict[str, Any], o: dict[str, Any], a: dict[str, Any]) -> None:
        """mhc_fused_post_pre_tilelang: fused at small T, else post then pre."""
        res = i["residual"]
        t, m, h = res.shape
        comb, post, x = i["comb_mix"], i["post_mix"], i["x"]
        mul = sq = None
        if self.fused_config(t, h, m) is not None:
            mix = i["fn"].shape[0]
            mul, sq, r = self.fused(comb, res, post, x, i["fn"].view(mix, m, h), m, h, mix)
            o["residual_out"].copy_(r)  # the fused kernel allocates the new streams
        else:
            r = o["residual_out"]
            self.post(comb, res, post, x, r, m, h)
        self.pre(r, mul, sq, i, a, o["post_mix_out"], o["comb_mix_out"], o["layer_input"])


class VllmMhcAdapter(TorchAdapter):
    """The harness's buffers as torch tensors (TorchAdapter's memory, timers
    and graphs); the mHC ops as vLLM's functions."""

    fp8 = False
    captured_block = False
    conventions = False
    tensor_parallel = False

    def __init__(self, mode: str, device: str, vllm: Any, kernels: Any, path: str):
        self.mode = mode
        self.use_device(device)
        self.vllm = vllm
        self.k = kernels
        self.path = path
        self.direct = Direct() if path == "tilelang" and mode != "wrapped" else None
        self.name = "vllm_mhc-" + (mode if mode == "wrapped" else path)
        self.norm = self._norm_fn()
        self.ops = {op: getattr(self, "_" + op) for op in OPS}
        torch.set_grad_enabled(False)
        torch.backends.cuda.matmul.allow_tf32 = False

    def describe(self) -> str:
        where = torch.cuda.get_device_name(self.device) if self.cuda else "host CPU"
        triton = "Triton %s" % _version("triton")
        if not self.cuda:
            triton += " under the CPU interpreter (fp32->bf16 casts rounded to nearest even)"
        if self.path == "tilelang":
            from vllm.utils.deep_gemm import is_deep_gemm_supported
            gemm = "DeepGEMM tf32" if is_deep_gemm_supported() else "TileLang fallback"
            main = "TileLang %s (mix GEMM: %s; %s)" % (
                _version("tilelang"), gemm,
                "vLLM's wrappers, outputs copied" if self.direct is None
                else "kernels into the harness's buffers")
        else:
            main = "torch %s (mhc_*_torch; hc_head cuda declined)" % torch.__version__
        return "vLLM %s mHC kernels: %s; %s for hc_head rocm and hc_collapse; on %s" % (
            self.vllm.__version__, main, triton, where)

    def supports(self, op: str, a: dict[str, Any], tensors: dict[str, tuple[str, str]]) -> bool:
        return super().supports(op, a, tensors) and declines(op, a, self.path) is None

    def assign(self, dst: torch.Tensor, value: torch.Tensor) -> None:
        dst.copy_(value.reshape(dst.shape))

    # ---- vLLM's functions, by path ----
    def _norm_fn(self) -> Callable[..., Any]:
        """vLLM's unfused norm of a layer input (its fallbacks' own helper)."""
        try:
            from vllm.model_executor.layers.mhc import _apply_mhc_norm
            return _apply_mhc_norm
        except Exception:  # noqa: BLE001 -- a private helper: the same call spelt out
            from vllm import ir
            return lambda x, w, eps: x if w is None else ir.ops.rms_norm(x, w, eps)

    def _pre(self, r: torch.Tensor, i: dict[str, Any], a: dict[str, Any]) -> tuple:
        w, eps = i.get("norm_weight"), a.get("norm_eps", 1e-6)
        if self.path == "tilelang":
            return torch.ops.vllm.mhc_pre_tilelang(r, i["fn"], i["scale"], i["base"], *_mix(a),
                                                   1, w, eps)
        post, comb, li = self.k.mhc_pre_torch(r, i["fn"], i["scale"], i["base"], *_mix(a))
        return post, comb, self.norm(li, w, eps)

    def _post(self, x: torch.Tensor, r: torch.Tensor, post: torch.Tensor,
              comb: torch.Tensor) -> torch.Tensor:
        if self.path == "tilelang":
            return torch.ops.vllm.mhc_post_tilelang(x, r, post.unsqueeze(-1), comb)
        return self.k.mhc_post_torch(x, r, post.unsqueeze(-1), comb)

    # ---- the ops: fn(ins, outs, a), outputs returned in the table's order ----
    def _hc_pre(self, i: dict[str, Any], o: dict[str, Any], a: dict[str, Any]) -> tuple | None:
        if self.direct:
            self.direct.pre(i["residual"], None, None, i, a, o["post_mix"], o["comb_mix"],
                            o["layer_input"])
            return None
        post, comb, li = self._pre(i["residual"], i, a)
        return post.squeeze(-1), comb, li

    def _hc_post(self, i: dict[str, Any], o: dict[str, Any], a: dict[str, Any]) -> tuple | None:
        if self.direct:
            m, h = i["residual"].shape[1:]
            self.direct.post(i["comb_mix"], i["residual"], i["post_mix"], i["x"], o["out"], m, h)
            return None
        return (self._post(i["x"], i["residual"], i["post_mix"], i["comb_mix"]),)

    def _hc_fused_post_pre(self, i: dict[str, Any], o: dict[str, Any],
                           a: dict[str, Any]) -> tuple | None:
        if self.direct:
            self.direct.fused_post_pre(i, o, a)
            return None
        if self.path == "tilelang":
            r, post, comb, li = torch.ops.vllm.mhc_fused_post_pre_tilelang(
                i["x"], i["residual"], i["post_mix"].unsqueeze(-1), i["comb_mix"], i["fn"],
                i["scale"], i["base"], *_mix(a), 1, 1, i.get("norm_weight"),
                a.get("norm_eps", 1e-6))
        else:  # forward_native's composition (post, then pre on the bf16 streams)
            r = self._post(i["x"], i["residual"], i["post_mix"], i["comb_mix"])
            post, comb, li = self._pre(r, i, a)
        return r, post.squeeze(-1), comb, li

    def _hc_pre_delayed(self, i: dict[str, Any], o: dict[str, Any], a: dict[str, Any]) -> tuple:
        w, eps = i.get("norm_weight"), a.get("norm_eps", 1e-6)
        args = (i["residual"], i["fn"], i["scale"], i["base"], *_mix(a))
        if self.path == "tilelang":
            post, comb, li, pre = torch.ops.vllm.mhc_pre_delayed_tilelang(
                *args, i.get("pre_mix_in"), None, w, eps)
        else:
            post, comb, li, pre = self.k.mhc_pre_delayed_torch(*args, pre_mix=i.get("pre_mix_in"))
            li = self.norm(li, w, eps)
        return post.squeeze(-1), comb, li, pre

    def _hc_head(self, i: dict[str, Any], o: dict[str, Any], a: dict[str, Any]) -> tuple | None:
        x = i["x"]
        m, h = x.shape[1:]
        if a["variant"] == "cuda" and self.direct:
            self.direct.head(x, i["fn"], i["scale"], i["base"], o["y"], h, a["rms_eps"],
                             a["hc_eps"], m)
            return None
        if a["variant"] == "cuda":  # declined unless TileLang (supports)
            return (torch.ops.vllm.hc_head_fused_kernel_tilelang(
                x, i["fn"], i["scale"], i["base"], a["rms_eps"], a["hc_eps"]),)
        torch.ops.vllm.hc_head_triton(x, i["fn"], i["scale"], i["base"], o["y"], h,
                                      a["rms_eps"], a["hc_eps"], m)
        return None

    def _hc_collapse(self, i: dict[str, Any], o: dict[str, Any], a: dict[str, Any]) -> tuple:
        return (torch.ops.vllm.hc_collapse_triton(i["x"], i["pre_mix"]),)


def adapter(mode: str | None = None) -> Adapter:
    mode = mode or "auto"
    if mode not in MODES:
        raise ValueError("the vllm_mhc adapter's modes are %s, not '%s'" % (", ".join(MODES), mode))
    device = pick_device()
    cuda = device.startswith("cuda")
    vllm, kernels = _import_vllm(cuda)
    has_tilelang = False
    if cuda:
        from vllm.utils.import_utils import has_tilelang as _has
        has_tilelang = bool(_has())
    return VllmMhcAdapter(mode, device, vllm, kernels, choose_path(mode, cuda, has_tilelang))
