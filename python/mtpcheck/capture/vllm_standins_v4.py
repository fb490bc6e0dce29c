"""DeepSeek V4's MTP layer from vLLM's own amd module, built on a CPU.

Why: vLLM picks V4's MTP module by platform (`vllm/models/deepseek_v4/
__init__.py`): the cpu one raises NotImplementedError, the nvidia one runs
TileLang. The amd module (`models/deepseek_v4/amd/mtp.py`) runs here as it
would on a ROCm GPU whose mHC takes vLLM's fallbacks (vLLM 0.33 turns
TileLang's mHC off on gfx942, `layers/mhc.py` `_has_tilelang_mhc`; no AITER
here): its Triton fused input norm and shared-head norm under Triton's
interpreter, e_proj / h_proj, the decoder layer's unfused mHC (mhc_pre_torch /
mhc_post_torch through the CustomOps' forward_hip), hc_head_triton in
compute_logits. What is stood in, and only while the family is built:

* the ROCm platform module's GPU query at import (`vllm/platforms/rocm.py`
  `_get_gcn_arch`, which asks amdsmi, then torch.cuda): answered gfx942;
* the decoder block's sparse MLA attention (tiny_vllm.LinearAttention, through
  tiny_vllm's ATTENTION table) and its MoE (V4's own dense DeepseekV4MLP here):
  inside the captured block, which the dump takes as a black box;
* the three aux CUDA streams DeepSeekV4MultiTokenPredictor makes on any
  platform but ROCm (`torch.cuda.Stream()`): placeholders, since the attention
  that would use them is stood in;
* the CustomOps' dispatch: vLLM dispatches on the platform (CPU: forward_cpu,
  whose `vllm._C` ports the PyPI wheel lacks); the mHC ops of the family
  dispatch to forward_hip as on ROCm, every other op as on the CPU.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator

ROCM_ARCH = "gfx942"  # the arch whose mHC vLLM 0.33 keeps on its torch / Triton fallbacks
AMD = "vllm.models.deepseek_v4.amd"
# the mHC CustomOps (vllm/model_executor/layers/mhc.py) dispatched as on ROCm
MHC_OPS = ("MHCPreOp", "MHCPostOp", "MHCFusedPostPreOp", "HCHeadOp", "MHCPreDelayedOp")


def rocm_platform_module() -> types.ModuleType:
    """vllm.platforms.rocm, imported with its GPU query answered ROCM_ARCH
    (its `_GCN_ARCH` is read once at import: amdsmi, then torch.cuda)."""
    import importlib
    import sys

    import torch

    if "vllm.platforms.rocm" in sys.modules:
        return sys.modules["vllm.platforms.rocm"]
    orig = torch.cuda.get_device_properties
    torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(gcnArchName=ROCM_ARCH)
    try:
        return importlib.import_module("vllm.platforms.rocm")
    finally:
        torch.cuda.get_device_properties = orig


def prepare() -> None:
    """Before tiny_vllm replaces the attention (ATTENTION names the amd
    module) and before vLLM's configs ask the registry: the ROCm platform
    module, and the registry's V4 MTP architecture as the amd class."""
    from . import vllm_standins

    rocm_platform_module()
    vllm_standins.register_in_process(AMD + ".mtp", {"DeepSeekV4MTPModel": "DeepSeekV4MTP"})


def _dense_moe(model: types.ModuleType) -> type:
    """V4's MoE replaced by the amd module's own dense DeepseekV4MLP of the
    routed experts' width, called as the decoder calls the MoE (V4.1's amd
    decoder too: its MoE subclasses V4's and is called alike)."""
    import torch

    class DenseMoEStandIn(torch.nn.Module):
        use_mega_moe = False

        def __init__(self, vllm_config, prefix="", **unused):
            super().__init__()
            cfg = vllm_config.model_config.hf_config
            self.mlp = model.DeepseekV4MLP(cfg.hidden_size, cfg.moe_intermediate_size,
                                           cfg.hidden_act, prefix=prefix + ".mlp")

        def forward(self, hidden_states, input_ids=None):
            return self.mlp(hidden_states)

    return DenseMoEStandIn


class _Stream:
    """A CUDA stream placeholder: nothing here runs on a stream."""

    def __init__(self, *args, **kwargs):
        pass


@contextlib.contextmanager
def build_scope(decoders: tuple[str, ...] = (AMD + ".model",)) -> Iterator[None]:
    """While the family is constructed: the MoE of each module of `decoders`
    (whose decoder layer builds a `DeepseekV4MoE`: V4's amd model, V4.1's)
    as V4's own dense MLP, the aux CUDA streams as placeholders and the mHC
    CustomOps dispatching to forward_hip (CustomOp picks its forward once,
    in __init__)."""
    import importlib

    import torch
    from vllm.model_executor.layers import mhc

    moe = _dense_moe(importlib.import_module(AMD + ".model"))
    saved = [(torch.cuda, "Stream", torch.cuda.Stream)]
    torch.cuda.Stream = _Stream
    for name in decoders:
        model = importlib.import_module(name)
        saved.append((model, "DeepseekV4MoE", model.DeepseekV4MoE))
        model.DeepseekV4MoE = moe
    for name in MHC_OPS:
        cls = getattr(mhc, name)
        saved.append((cls, "dispatch_forward", cls.__dict__.get("dispatch_forward")))
        cls.dispatch_forward = lambda self, compile_native=False: self.forward_hip
    try:
        yield
    finally:
        for owner, attr, value in saved:
            if value is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, value)
