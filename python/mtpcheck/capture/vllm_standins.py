"""Stand-ins of vLLM pieces that a tiny CPU build of a draft model needs
(tiny_vllm.py): the compiled predictors made hookable again, the MoE classes
some decoders build whatever their config says, the EPLB bookkeeping that
counts MoE layers a dense stand-in leaves none of, the GPU-only modules some
families import at load time, Triton's interpreter rounding as a GPU does,
and the CUDA streams some layers create at construction (Kimi K3).

Why this exists: tiny_vllm.py builds every family's model; these are the
patches of the zero-centred families (Qwen3-Next, Qwen3.5), kept apart so
that each file stays one subject.
"""

from __future__ import annotations

import contextlib
import inspect
import types
from collections.abc import Iterator
from typing import Any


def models_module(name: str) -> types.ModuleType:
    """A vLLM model module by its name under vllm.model_executor.models, or by
    its full name (one under vllm.models, such as HY V4's nvidia module)."""
    import importlib

    return importlib.import_module(name if name.startswith("vllm.") else
                                   "vllm.model_executor.models." + name)


def qwen_next_bookkeeping() -> None:
    """Qwen3-Next's MoE bookkeeping skipped without an MoE layer."""
    import importlib

    tolerant_moe_bookkeeping(importlib.import_module(
        "vllm.model_executor.models.qwen3_next").QwenNextMixtureOfExperts)


def tolerant_moe_bookkeeping(cls: type) -> None:
    """cls.set_moe_parameters (EPLB bookkeeping of the MoE layers' experts),
    which raises when the dense stand-in leaves no MoE layer (no layer found,
    or a stand-in without `experts`): then there are none to count."""
    if cls.__dict__.get("_mtpcheck_dense", False):
        return
    orig = cls.set_moe_parameters

    def set_moe_parameters(self):
        try:
            orig(self)
        except (RuntimeError, AttributeError):
            self.moe_layers, self.num_moe_layers = [], 0

    cls.set_moe_parameters = set_moe_parameters
    cls._mtpcheck_dense = True


def dense_moe(mod_name: str, cls_name: str, bookkeeper: str = "Qwen3_5_MoeMixtureOfExperts") -> None:
    """MOE_STANDIN: the MoE class of `mod_name` -> vLLM's Qwen2-MoE dense MLP
    (what Qwen3-Next calls Qwen3NextMLP), built from the same config; the
    module's class `bookkeeper` counts no MoE layer then."""
    import importlib

    from vllm.config import get_current_vllm_config
    from vllm.model_executor.models.qwen2_moe import Qwen2MoeMLP

    class DenseStandIn(Qwen2MoeMLP):
        def __init__(self, vllm_config=None, prefix="", **unused):
            cfg = (vllm_config or get_current_vllm_config()).model_config.hf_text_config
            super().__init__(hidden_size=cfg.hidden_size, intermediate_size=cfg.intermediate_size,
                             hidden_act=cfg.hidden_act, prefix=prefix)

        def forward(self, hidden_states, **unused):
            return super().forward(hidden_states)

    mod = importlib.import_module("vllm.model_executor.models." + mod_name)
    setattr(mod, cls_name, DenseStandIn)
    tolerant_moe_bookkeeping(getattr(mod, bookkeeper))


def flash_attn_stub() -> None:
    """vllm.vllm_flash_attn for modules that import its kernels at load time
    (Dots3Note's attention backends): where the CUDA extensions cannot load
    (a CPU), a module of the same names whose kernels raise when called, and
    the names vLLM's fa_utils gives other platforms. The attention that would
    call them is stood in (tiny_vllm.LinearAttention)."""
    import sys
    import types

    try:
        import vllm.vllm_flash_attn  # noqa: F401
        return
    except ImportError:
        pass

    def unavailable(*args, **kwargs):
        raise RuntimeError("vllm_flash_attn: no CUDA extensions here (mtpcheck stand-in)")

    pkg = types.ModuleType("vllm.vllm_flash_attn")
    iface = types.ModuleType("vllm.vllm_flash_attn.flash_attn_interface")
    for mod in (pkg, iface):
        mod.flash_attn_varlen_func = unavailable
        mod.is_fa_version_supported = lambda *a, **k: False
        mod.get_scheduler_metadata = unavailable
    pkg.flash_attn_interface = iface
    pkg.__path__ = []
    sys.modules.setdefault("vllm.vllm_flash_attn", pkg)
    sys.modules.setdefault("vllm.vllm_flash_attn.flash_attn_interface", iface)
    # fa_utils defines its flash-attention names on CUDA, XPU and ROCm only
    # (the XPU and ROCm branches with no compile-from-specs API: None)
    from vllm.v1.attention.backends import fa_utils

    for name, value in (("compile_flash_attn_varlen_func_from_specs", None),
                        ("flash_attn_varlen_func", unavailable),
                        ("get_scheduler_metadata", unavailable),
                        ("reshape_and_cache_flash", unavailable)):
        if not hasattr(fa_utils, name):
            setattr(fa_utils, name, value)


def register_in_process(module: str, archs: dict[str, str]) -> None:
    """The registry's entries `archs` (architecture -> class of `module`) as
    classes loaded in this process: vLLM inspects a lazily registered model
    in a fresh subprocess, where the stand-ins above are not in place; and a
    package that picks its classes by platform (V3.2's) gives a CPU another
    class than a GPU runs."""
    import importlib

    from vllm.model_executor.models.registry import ModelRegistry

    mod = importlib.import_module(module)
    for arch, cls_name in archs.items():
        ModelRegistry.register_model(arch, getattr(mod, cls_name))


def triton_interpreter_rounding() -> None:
    """Triton kernels (Dots3Note's input norms) run on a CPU only under
    Triton's interpreter (TRITON_INTERPRET=1, set before vLLM imports Triton,
    with CUDA_VISIBLE_DEVICES empty), whose fp32 -> bf16 stores truncate: they
    are rounded to nearest even, as a GPU's are (the vllm_mhc adapter's patch)."""
    import os

    if os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("its Triton kernels run on a CPU only under Triton's interpreter: "
                           "set TRITON_INTERPRET=1 and CUDA_VISIBLE_DEVICES= before vLLM loads")
    from triton.runtime import interpreter

    from ..adapters.vllm_mhc import _rne_bf16

    if not getattr(interpreter._convert_float, "mtpcheck_rne", False):
        interpreter._convert_float = _rne_bf16(interpreter._convert_float)


class NoStream:
    """A CUDA stream stand-in for a CPU build: one execution order, so every
    wait and record is already satisfied (the methods vLLM's multi-stream
    helpers call are no-ops). Kimi K3's layers only hand theirs to the MLA
    attention, which is stood in (tiny_vllm.LinearAttention)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def wait_stream(self, stream: Any) -> None:
        pass

    def wait_event(self, event: Any) -> None:
        pass

    def record_event(self, event: Any = None) -> Any:
        return event

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True


@contextlib.contextmanager
def cuda_stream_standin() -> Iterator[None]:
    """`torch.cuda.Stream` is NoStream inside the block (a model whose layers
    create streams at construction: Kimi K3's `KimiK3MultiTokenPredictorLayer`
    and `KimiLinearModel` call `torch.cuda.Stream()`, which raises without a
    CUDA driver); the real class outside it."""
    import torch

    orig = torch.cuda.Stream
    torch.cuda.Stream = NoStream
    try:
        yield
    finally:
        torch.cuda.Stream = orig


def _fi_gemma_rmsnorm(input: Any, weight: Any, eps: float = 1e-6, out: Any = None,
                      enable_pdl: Any = None) -> Any:
    """FlashInfer's `gemma_rmsnorm` as its CUDA kernel computes it
    (`RMSNormKernel`, include/flashinfer/norm.cuh, `weight_bias` 1): in fp32,
    x * rsqrt(sum(x^2) / d + eps) * (1 + w), one rounding at the store."""
    import torch

    x = input.float()
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight.float())
    if out is None:
        out = torch.empty_like(input)
    out.copy_(y)
    return out


def _fi_gemma_fused_add_rmsnorm(input: Any, residual: Any, weight: Any, eps: float = 1e-6,
                                enable_pdl: Any = None) -> None:
    """FlashInfer's `gemma_fused_add_rmsnorm` as its CUDA kernel computes it
    (`FusedAddRMSNormKernel`, `weight_bias` 1), in place: the fp32 sum
    input + residual stored (rounded) into `residual`, and the same unrounded
    fp32 sum normalised, times (1 + w), stored (rounded) into `input`."""
    import torch

    s = input.float() + residual.float()
    residual.copy_(s)
    input.copy_(s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight.float()))


_fi_gemma_rmsnorm.mtpcheck_standin = True  # the dump's notes say so (capture.vllm)
_fi_gemma_fused_add_rmsnorm.mtpcheck_standin = True


@contextlib.contextmanager
def flashinfer_gemma_norms() -> Iterator[None]:
    """`flashinfer.norm.gemma_rmsnorm` and `gemma_fused_add_rmsnorm` are the
    torch stand-ins above inside the block (MiniMax M3's nvidia
    `MiniMAXGemmaRMSNorm.forward` imports them at each call and has no native
    path: FlashInfer's CUDA kernels do not run on a CPU); FlashInfer's own
    outside it. Everything else the layer does is vLLM's code; the norms'
    rounding is the stand-in's (one rounding of the fp32 product, as the
    kernel stores it)."""
    import flashinfer.norm as fi

    orig = fi.gemma_rmsnorm, fi.gemma_fused_add_rmsnorm
    fi.gemma_rmsnorm, fi.gemma_fused_add_rmsnorm = _fi_gemma_rmsnorm, _fi_gemma_fused_add_rmsnorm
    try:
        yield
    finally:
        fi.gemma_rmsnorm, fi.gemma_fused_add_rmsnorm = orig


def own_dense_mlp(module: str, moe_name: str, mlp_name: str) -> None:
    """The MoE class `moe_name` of `module` -> the module's own dense MLP class
    `mlp_name` of the config's expert width (MiniMax M3: its MTP block is
    built with `force_moe=True`, and the fused MoE does not run here)."""
    import importlib

    mod = importlib.import_module(module)
    mlp = getattr(mod, mlp_name)
    if getattr(getattr(mod, moe_name), "_mtpcheck_dense", False):
        return

    class DenseStandIn(mlp):
        _mtpcheck_dense = True

        def __init__(self, config: Any, layer_id: int = 0, quant_config: Any = None,
                     reduce_results: bool = True, prefix: str = "") -> None:
            kw = {} if "reduce_results" not in inspect.signature(mlp.__init__).parameters \
                else {"reduce_results": reduce_results}
            super().__init__(config=config, intermediate_size=config.intermediate_size,
                             quant_config=quant_config, prefix=prefix, **kw)

    setattr(mod, moe_name, DenseStandIn)


def inkling_residual_tap(module: str = "vllm.models.inkling.nvidia.model") -> None:
    """Inkling's decoder layer ends in `_sconv_add_norm(mlp_out, hidden, mlp_sconv,
    None, positions)`, a function that adds the short-convolved MLP output to the
    residual `hidden`: no module receives that residual. The function is wrapped to
    keep it on the sconv module (`_mtpcheck_residual`, read as the block's residual
    by specs_inkling.VLLM_INKLING), then call the engine's own. It changes nothing."""
    import importlib

    mod = importlib.import_module(module)
    orig = mod._sconv_add_norm
    if getattr(orig, "mtpcheck_tap", False):
        return

    def tapped(delta, hidden, sconv, norm, positions):
        if norm is None:
            sconv._mtpcheck_residual = hidden
        return orig(delta, hidden, sconv, norm, positions)

    tapped.mtpcheck_tap = True
    mod._sconv_add_norm = tapped



@contextlib.contextmanager
def gpu_properties(sms: int = 1) -> Iterator[None]:
    """torch.cuda.get_device_properties (which raises without a driver) answering
    one SM while a family runs: Inkling's Triton rmsnorm and silu_and_mul size
    their persistent grids from the SM count. A grid only splits the rows among
    programs, every row computed the same way whatever its size; the smallest
    keeps the interpreter's work small (an H100's 132 SMs make the rmsnorm grid
    1024 programs, most of them idle, and the family three times slower here)."""
    import torch

    orig = torch.cuda.get_device_properties
    torch.cuda.get_device_properties = lambda device=None: types.SimpleNamespace(
        multi_processor_count=sms, name="mtpcheck stand-in (%d SM)" % sms)
    try:
        yield
    finally:
        torch.cuda.get_device_properties = orig
