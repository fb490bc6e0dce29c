"""vLLM 0.33's Inkling MTP layer spec (specs.py holds the LayerSpec class, the
helpers and the other vLLM specs; this one moved here when specs.py reached its
600-line limit)."""

from __future__ import annotations

from .specs import VLLM_LAYER_INPUTS, LayerSpec, _embeds_of_ids, _eps_of, _path


def _inkling_residual(module, named, out):
    """(None, the residual the block's standalone tail adds its MLP output to),
    kept by vllm_standins.inkling_residual_tap; block_out is the mlp_sconv tap."""
    return (None, getattr(module.mlp_sconv, "_mtpcheck_residual", None))


def _inkling_attrs(predictor):
    """eps, fused rounding (its Triton norms: fp32, one rounding) and the head's
    divisor, the config's logits_mup_width_multiplier (none: no attribute)."""
    attrs = dict(_eps_of(_path(predictor, "layers.0"), "hidden_norm"), rounding="fused")
    mup = getattr(predictor.config, "logits_mup_width_multiplier", None)
    if mup:
        attrs["logits_mup"] = float(mup)
    return attrs


# vLLM 0.33 models/inkling/{nvidia,amd}/mtp.py (Inkling; the same file in both
# builds): the predictor `InklingMultiTokenPredictor` is the layer: its Triton
# embed_dual_rmsnorm_cat writes [hidden_norm(h) | embed_norm(backbone_embed_norm(e))]
# (the inkling row: hidden first, two norms on the embedding, no mask), input_proj,
# the depth's transformer_block returning `residual + sconv(mlp)` alone (block_out
# read where mlp_sconv returns, the residual where the tail function receives it),
# the shared chain_norm, whose output is both returned (recycled) and fed to
# compute_logits, which divides the head's logits by logits_mup_width_multiplier.
# The embedding is read from the table by the ids: inputs_embeds, where a path
# passes them, already hold the backbone norm (embed_input_ids).
VLLM_INKLING = LayerSpec(
    engine="vllm", family="inkling", classes=("InklingMultiTokenPredictor",),
    layer_inputs=dict(VLLM_LAYER_INPUTS, embeds=()), layer_inputs_from={"embeds": _embeds_of_ids},
    block_attr="layers.0.transformer_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_outputs_from=_inkling_residual,
    block_taps={"block_out": ("layers.0.transformer_block.mlp_sconv", "out", 0)},
    weights={"enorm_weight": "layers.0.embed_norm.weight",
             "hnorm_weight": "layers.0.hidden_norm.weight",
             "eh_proj_weight": "layers.0.input_proj.weight",
             "embed_pre_norm_weight": "backbone_embed_norm.weight",
             "shared_head_norm_weight": "chain_norm.weight", "head_weight": "..lm_head.weight",
             "head_scale_inv": "..lm_head.weight_scale_inv"},
    conventions={"pos0_mask": 0, "final_add": "unfused", "add_norm_input": "sum"},
    source="vllm/models/inkling/{nvidia,amd}/mtp.py", extra_attrs=_inkling_attrs,
    logits_at="compute_logits",
    notes="one depth: the block is layers.0.transformer_block; Triton norms (TRITON_INTERPRET=1)")
