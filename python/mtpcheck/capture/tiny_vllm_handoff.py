"""What a tiny vLLM target hands draft step 0 (issue 30), measured from
vLLM's own target class built by tiny_vllm.build_target: the inputs of its
final norm and the hidden vLLM's `get_drafter_hidden_states` feeds step 0.

Why apart: tiny_vllm.py builds the models; this reads one of them run."""

from __future__ import annotations

from typing import Any

import torch

# final norms whose stored output is one rounding of the fp32 product (SPEC.md
# §2.6): vLLM's GemmaRMSNorm; MiniMax M3's MiniMAXGemmaRMSNorm (FlashInfer's
# kernels, or their stand-in, on nvidia; a Triton kernel on amd)
FUSED_ROUNDING_NORMS = ("GemmaRMSNorm", "MiniMAXGemmaRMSNorm")


def final_norm(target: Any) -> tuple:
    """(its name, the module): the target's final norm, `model.norm` (or
    Nemotron-H's `model.norm_f`) of the model or of its language model (a
    multimodal target such as GLM-OCR)."""
    name, norm, _ = _final_norm_of(target)
    return name, norm


def _final_norm_of(target: Any) -> tuple:
    """(its name, the final norm, the decoder model holding it and its layers)."""
    for prefix, owner in (("", target), ("language_model.", getattr(target, "language_model", None))):
        inner = getattr(owner, "model", None)
        for name in ("norm", "norm_f"):
            norm = getattr(inner, name, None)
            if norm is not None:
                return prefix + "model." + name, norm, inner
    raise RuntimeError(f"{type(target).__name__}: no model.norm (nor language_model.model.norm)")


def target_handoff(target: Any, tvcfg: Any, input_ids: Any, positions: Any) -> dict:
    """Runs the target on the given tokens and returns what it hands draft step
    0, measured from vLLM's own code: the inputs of its final norm (the last
    decoder layer's output and residual), the norm's weight and eps, and the
    hidden the runners feed step 0 (vLLM's `get_drafter_hidden_states`: the
    forward() output unless the model defines `get_mtp_target_hidden_states`)."""
    from vllm.config import set_current_vllm_config
    from vllm.forward_context import set_forward_context
    from vllm.v1.worker.gpu.spec_decode.utils import get_drafter_hidden_states

    norm_name, norm, inner = _final_norm_of(target)
    seen = {}

    def hook(module, args, kwargs):  # before the call: a fused add-norm may work in place
        seen["norm_called"] = True
        x = args[0] if args else kwargs["x"]
        res = args[1] if len(args) > 1 else kwargs.get("residual")
        if res is not None:
            seen["hidden"], seen["residual"] = x.detach().clone(), res.detach().clone()

    def last_layer(module, args, out):
        # a target whose forward returns the sum and norms it only in
        # compute_logits (MiMo, Kimi K3): its final norm is not called in
        # forward, so the norm's inputs are the last decoder layer's (hidden,
        # residual); Kimi K3's layer returns (hidden, AttnRes prefix sum, residual),
        # the prefix sum None without AttnRes
        outs = [t for t in out if t is not None] if isinstance(out, tuple) else []
        if len(outs) == 2 and all(torch.is_tensor(t) for t in outs):
            seen["layer"] = tuple(t.detach().clone() for t in outs)

    hooks = [norm.register_forward_pre_hook(hook, with_kwargs=True)]
    layers = getattr(inner, "layers", None)
    if layers is not None and len(layers):
        hooks.append(layers[len(layers) - 1].register_forward_hook(last_layer))
    try:
        with set_current_vllm_config(tvcfg), set_forward_context(None, tvcfg), torch.no_grad():
            out = target(input_ids=input_ids, positions=positions)
            handoff = get_drafter_hidden_states(target, out)
    finally:
        for h in hooks:
            h.remove()
    if "norm_called" not in seen and "layer" in seen:
        seen["hidden"], seen["residual"] = seen["layer"]
        norm_name += " (not called in forward: the last layer's outputs)"
    if "residual" not in seen or seen["residual"] is None:
        raise RuntimeError(f"{type(target).__name__}'s final norm was not called with "
                           "(hidden, residual)")
    eps = getattr(norm, "variance_epsilon", None) or norm.eps
    source = (f"{type(target).__name__}.forward, {norm_name} ({type(norm).__name__}), "
              "get_drafter_hidden_states")
    return {"hidden": seen["hidden"], "residual": seen["residual"], "norm_weight": norm.weight,
                "handoff": handoff, "eps": float(eps), "source": source,
                "rounding": "fused" if type(norm).__name__ in FUSED_ROUNDING_NORMS else "eager"}
