"""vLLM integration of the capture hooks.

What is recycled from one draft step to the next is vLLM's decision, taken
from vLLM's own proposer code: the legacy proposer's `model_returns_tuple()`
(`vllm/v1/spec_decode/llm_base_proposer.py`) says whether the draft model's
return value is one tensor (fed forward as it is) or a pair (the second
element fed forward).  Inside a chain the hooks need no rule at all: the
recycled state of step s is the `previous_hidden_states` vLLM passes to step
s+1.  The rule is used for the last step of a chain only.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .hooks import LogitsHook

if TYPE_CHECKING:
    import torch

    from . import Capture
    from .recorder import Step


def find_root(module: torch.nn.Module) -> torch.nn.Module:
    """The MTP model (DeepSeekMTP, Glm4MoeMTP, ...) holding this layer: a
    hook sees only its own module, so we walk up the module tree (once, when
    the first MTP layer runs)."""
    import gc
    import warnings

    best = module
    parents = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # isinstance on deprecated module proxies warns
        for obj in gc.get_objects():
            try:
                is_mod = _is_module(obj)
            except Exception:  # noqa: BLE001, S112 -- not a module if isinstance raises
                continue
            if is_mod:
                for child in obj._modules.values():
                    if child is not None:
                        parents.setdefault(id(child), obj)
    while id(best) in parents:
        best = parents[id(best)]
    return best


def _is_module(obj):
    import torch

    return isinstance(obj, torch.nn.Module)


def logits_hook(capture: Capture, module: torch.nn.Module) -> LogitsHook:
    return LogitsHook(capture, module, hidden_args=("hidden_states",))


def _version():
    try:
        import vllm

        return "vllm " + getattr(vllm, "__version__", "?")
    except Exception:  # noqa: BLE001 -- any import failure is reported as not importable
        return "vllm (not importable)"


def _draft_hf_config(model, layers):
    """The draft model's hf_config: on the model, on an MTP layer, or vLLM's
    current config."""
    for obj in [model] + list(layers):
        config = getattr(obj, "config", None)
        if config is not None and hasattr(config, "architectures"):
            return config
    try:
        from vllm.config import get_current_vllm_config

        return get_current_vllm_config().speculative_config.draft_model_config.hf_config
    except Exception:  # noqa: BLE001 -- no current config (outside an engine): none
        return None


def returns_tuple_rule(model: torch.nn.Module,
                       layers: Iterable[torch.nn.Module] = ()) -> bool | None:
    """vLLM's own answer to "does this draft model return a tuple?": the
    proposer's model_returns_tuple() run on the model's config.  None when
    vLLM's proposer cannot be imported."""
    try:
        from vllm.v1.spec_decode import llm_base_proposer as lbp
    except Exception:  # noqa: BLE001 -- any import failure: vLLM's rule is unknown
        return None
    cls = getattr(lbp, "SpecDecodeBaseProposer", None)
    if cls is None or not hasattr(cls, "model_returns_tuple"):
        return None
    config = _draft_hf_config(model, layers)
    fake = types.SimpleNamespace(
        method="mtp",
        draft_model_config=types.SimpleNamespace(hf_config=config),
        speculative_config=types.SimpleNamespace(
            method="mtp", draft_model_config=types.SimpleNamespace(hf_config=config)))
    try:
        fn = cls.model_returns_tuple
        fn = fn.fget if isinstance(fn, property) else fn
        return bool(fn(fake))
    except Exception:  # noqa: BLE001 -- vLLM's rule raising on the stand-in config: unknown
        return None


def _interpreter_bf16_stores() -> str:
    """How the interpreter's fp32 -> bf16 stores round here: truncated, or to
    nearest even where mtpcheck patched it (vllm_standins.triton_interpreter_rounding)."""
    try:
        from triton.runtime import interpreter
    except Exception:  # noqa: BLE001 -- no Triton: nothing ran under it
        return "truncate"
    rne = getattr(interpreter._convert_float, "mtpcheck_rne", False)
    return "round to nearest even (mtpcheck's patch, as a GPU's)" if rne else "truncate"


def interpreter_note() -> str | None:
    """The dump's note where Triton kernels run under the CPU interpreter
    (TRITON_INTERPRET=1, both sweeps), saying how its bf16 stores round."""
    import os

    if os.environ.get("TRITON_INTERPRET") != "1":
        return None
    return ("Triton kernels ran under the CPU interpreter (TRITON_INTERPRET=1), "
            "whose fp32->bf16 stores " + _interpreter_bf16_stores())


def engine_info(capture: Capture, model: torch.nn.Module) -> dict[str, Any]:
    info = {"version": _version(), "notes": []}
    info["returns_tuple"] = returns_tuple_rule(model, capture.layer_modules)
    if info["returns_tuple"] is None:
        info["notes"].append("vLLM's model_returns_tuple() not available: the last step's "
                             "recycled state is left out")
    note = interpreter_note()
    if note:
        info["notes"].append(note)
        info["interpreted"] = True
    standin = _flashinfer_norm_standin()
    if standin:
        info["notes"].append(standin)
    return info


def _flashinfer_norm_standin() -> str:
    """A note where FlashInfer's Gemma norm kernels are mtpcheck's torch
    stand-ins (vllm_standins.flashinfer_gemma_norms: MiniMax M3's nvidia
    norms): their rounding is the stand-in's; "" otherwise."""
    import sys

    fi = sys.modules.get("flashinfer.norm")
    if fi is None or not getattr(fi.gemma_rmsnorm, "mtpcheck_standin", False):
        return ""
    return ("FlashInfer's gemma_rmsnorm / gemma_fused_add_rmsnorm (CUDA only) ran as mtpcheck's "
            "torch stand-ins of their kernels (fp32, x * rsqrt(mean(x^2) + eps) * (1 + w), one "
            "rounding at the store; the fused add writes the rounded sum to the residual): the "
            "norms' rounding is the stand-in's, the rest vLLM's code")


def recycled_of(capture: Capture, step: Step) -> torch.Tensor | None:
    """The last step's recycled state, by the proposer's unpacking rule, on
    the draft model's return value. vLLM's MTP models return their layer's
    value unchanged, and their top-level class (wrapped for torch.compile) runs
    no module hooks, so the layer's return value stands in when the model's
    was not seen."""
    rule = capture.engine_info.get("returns_tuple")
    if rule is None:
        return None
    prefix = "model_out" if "model_out.0" in step.tensors else "out"
    return step.tensors.get("%s.%d" % (prefix, 1 if rule else 0))


def conventions(capture: Capture, step: Step) -> dict[str, str]:
    """Conventions that depend on where vLLM ran: the torch-native SiluAndMul
    (CPU) rounds twice, the CUDA kernel once."""
    dev = getattr(step, "device", "cpu")
    return {"silu_mul_rounding": "twice" if dev == "cpu" else "once"}


def embed_table(capture: Capture) -> torch.Tensor | None:
    for name, m in capture.root.named_modules():
        if name.endswith("embed_tokens") and hasattr(m, "weight"):
            return m.weight
    return None
