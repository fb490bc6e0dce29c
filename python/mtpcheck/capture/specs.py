"""What each engine's MTP modules are called and how they are called: the
adapters of the capture hooks.  One LayerSpec per MTP layer class; the
conventions are those of the engine's code (SPEC.md 12.1), declared in the
dump so that the harness judges the step under the engine's own contract."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def _path(module, dotted):
    """The attribute at `dotted`; a part "-1" is the last child of a module
    container (a block whose sublayer count is the checkpoint's: Nemotron-H)."""
    obj = module
    for part in dotted.split("."):
        if part == "-1" and hasattr(obj, "_modules"):
            obj = list(obj._modules.values())[-1] if obj._modules else None
        else:
            obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


class LayerSpec:
    def __init__(self, engine, family, classes, layer_inputs, block_attr, block_input_args,
                 block_outputs, weights, conventions, source, layer_inputs_from=None,
                 extra_attrs=None, notes="", block_tail=None, block_taps=None,
                 block_outputs_from=None, logits_at=None):
        self.engine = engine
        self.family = family
        self.classes = classes
        self.layer_inputs = layer_inputs
        self.layer_inputs_from = layer_inputs_from or {}
        self.block_attr = block_attr
        self.block_input_args = block_input_args
        self.block_outputs = block_outputs
        self.weights = weights
        self.conventions = conventions
        self.extra_attrs = extra_attrs or (lambda layer: {})
        self.source = source
        self.notes = notes
        # where the block's outputs are taken: None = the block's return value;
        # a dotted path = the positional arguments of that module's call (an
        # engine whose block leaves its residual in a stream, read by the final
        # add-norm: SGLang's shared_head.norm(hidden, residual))
        self.block_tail = block_tail
        # a block written inline in the layer (no block module, block_attr None):
        # dump name -> (dotted sub-module, "in" | "out", positional index), e.g. the
        # block's input = what enters its first norm, its output = what leaves its MLP
        self.block_taps = block_taps
        # where the block's return value lacks an output: (module, named, out)
        # -> the outputs in block_outputs' order (SGLang's MiMo block leaves
        # its residual in forward_batch.residual_stream and the layer folds
        # it in before its final norm, which gets the sum alone)
        self.block_outputs_from = block_outputs_from
        # "compute_logits": the logits read where the model's compute_logits returns them
        self.logits_at = logits_at

    def block(self, layer: torch.nn.Module) -> torch.nn.Module | None:
        return None if self.block_attr is None else _path(layer, self.block_attr)

    def weight(self, layer: torch.nn.Module, dotted: str) -> Any:
        return _path(layer, dotted)

    def conventions_of(self, layer: torch.nn.Module) -> dict[str, Any]:
        c = self.conventions
        return dict(c(layer) if callable(c) else c)

    def family_of(self, layer: torch.nn.Module) -> str:
        return self.family(layer) if callable(self.family) else self.family


V3_WEIGHTS = {
    "enorm_weight": "enorm.weight",
    "hnorm_weight": "hnorm.weight",
    "eh_proj_weight": "eh_proj.weight",
    "eh_proj_scale_inv": "eh_proj.weight_scale_inv",
    "shared_head_norm_weight": "shared_head.norm.weight",
    "head_weight": "shared_head.head.weight",
    "head_scale_inv": "shared_head.head.weight_scale_inv",
}
V4_WEIGHTS = {
    "enorm_weight": "enorm.weight",
    "hnorm_weight": "hnorm.weight",
    "e_proj_weight": "e_proj.weight",
    "e_proj_scale_inv": "e_proj.weight_scale_inv",
    "h_proj_weight": "h_proj.weight",
    "h_proj_scale_inv": "h_proj.weight_scale_inv",
    "hc_head_fn": "hc_head_fn",
    "hc_head_scale": "hc_head_scale",
    "hc_head_base": "hc_head_base",
    "shared_head_norm_weight": "shared_head.norm.weight",
    "head_weight": "shared_head.head.weight",
    "head_scale_inv": "shared_head.head.weight_scale_inv",
}
VLLM_LAYER_INPUTS = {
    "input_ids": ("input_ids",),
    "positions": ("positions",),
    "prev_hidden": ("previous_hidden_states",),
    "embeds": ("inputs_embeds",),
}


def _embeds_from_table(module, named, root=None):
    """V3.2 CUDA layer called with `embed_table` instead of `inputs_embeds`
    (fused_embed_eh_norm): the rows the kernel gathers."""
    table, ids = named.get("embed_table"), named.get("input_ids")
    return None if table is None or ids is None else table[ids.long()]


def _v32_conventions(layer):
    """nvidia: the final add fused with the norm (fused_allreduce_rms_norm);
    amd: `residual + hidden_states` then shared_head.norm, unfused."""
    amd = ".amd." in type(layer).__module__
    return {"pos0_mask": 1, "final_add": "unfused" if amd else "fused", "add_norm_input": "sum"}


# layer class -> mtpcheck family row, where it is not deepseek_v3
_ROWS = {"Glm4MoeMultiTokenPredictorLayer": "glm",
         "Glm4MoeLiteMultiTokenPredictorLayer": "glm4_moe_lite",
         # GLM-OCR: glm's row (GQA block, target lm_head loaded as shared head)
         "GlmOcrMultiTokenPredictorLayer": "glm",
         "Glm4MoeLiteModelNextN": "glm4_moe_lite"}


def _glm_or_v3(layer):
    name = type(layer).__name__
    if name in _ROWS:
        return _ROWS[name]
    return "glm" if "Glm" in name else "deepseek_v3"


def _eps(layer):
    return _eps_of(layer, "enorm")


def _eps_of(layer, name):
    norm = getattr(layer, name, None)
    eps = getattr(norm, "variance_epsilon", None)
    if eps is None:
        eps = getattr(norm, "eps", None)
    return {} if eps is None else {"eps": float(eps)}


def _v4_block(layer):
    """A V4 MTP layer's decoder block: vLLM's `mtp_block`, SGLang's `decoder`."""
    block = getattr(layer, "mtp_block", None)
    return block if block is not None else getattr(layer, "decoder", None)


def _v4_attrs(layer):
    attrs = _eps(layer)
    for name, key in (("hc_mult", "hc_mult"), ("hc_eps", "hc_eps"),
                      ("hc_sinkhorn_iters", "sinkhorn_iters")):
        value = getattr(layer, name, None)
        if value is None:
            value = getattr(_v4_block(layer), name, None)
        if value is not None:
            attrs[key] = value
    return attrs


# vLLM 0.33 deepseek_mtp.py / glm4_moe_mtp.py: eager RMSNorm (torch-native
# CustomOp on CPU), `torch.where` position-0 mask, final add `residual +
# hidden_states` unfused, the block's fused add-norm normalising the fp32 sum,
# LogitsProcessor returning logits in the activations' dtype.
VLLM_V3 = LayerSpec(
    engine="vllm", family=_glm_or_v3,
    classes=("DeepSeekMultiTokenPredictorLayer", "Glm4MoeMultiTokenPredictorLayer",
             "Glm4MoeLiteMultiTokenPredictorLayer", "GlmOcrMultiTokenPredictorLayer",
             "OpenPanguMultiTokenPredictorLayer"),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), weights=V3_WEIGHTS,
    conventions={"pos0_mask": 1, "final_add": "unfused", "add_norm_input": "sum"},
    source="vllm/model_executor/models/deepseek_mtp.py, glm4_moe_mtp.py, glm4_moe_lite_mtp.py, "
           "glm_ocr_mtp.py, openpangu_mtp.py",
    extra_attrs=lambda layer: dict(_eps(layer), rounding="eager"))

def _final_norm_spec(classes, head, conventions, source, block_taps=None,
                     layer_inputs_from=None):
    """V3's glue with the final norm as the layer's own `final_layernorm`,
    applied inside the layer: the post-norm hidden is what it returns. With
    `block_taps`, the block is written inline in the layer (no block module)."""
    return LayerSpec(
        engine="vllm", family="deepseek_v3", classes=classes, layer_inputs=VLLM_LAYER_INPUTS,
        layer_inputs_from=layer_inputs_from, block_taps=block_taps,
        block_attr=None if block_taps else "mtp_block", block_input_args=("hidden_states",),
        block_outputs=("block_out", "block_residual"),
        weights=dict(V3_WEIGHTS, shared_head_norm_weight="final_layernorm.weight",
                     head_weight=head + ".weight", head_scale_inv=head + ".weight_scale_inv"),
        conventions=dict(conventions, add_norm_input="sum"), source=source,
        extra_attrs=lambda layer: dict(_eps(layer), rounding="eager"))


# vLLM 0.33 longcat_flash_mtp.py (LongCat-Flash): no position-0 mask, the
# final add fused into `final_layernorm(hidden, residual)`, the post-norm
# hidden returned alone and fed to the top-level lm_head with no further norm.
VLLM_LONGCAT = _final_norm_spec(("LongCatMultiTokenPredictorLayer",), "..lm_head",
                                {"pos0_mask": 0, "final_add": "fused"},
                                "vllm/model_executor/models/longcat_flash_mtp.py")
# vLLM 0.33 hy_v3_mtp.py (HY V3): the position-0 mask (in place), `residual +
# hidden_states` then `final_layernorm`; its shared_head is the identity before
# `shared_head.head`.
VLLM_HYV3 = _final_norm_spec(("HYV3MultiTokenPredictorLayer",), "shared_head.head",
                             {"pos0_mask": 1, "final_add": "unfused"},
                             "vllm/model_executor/models/hy_v3_mtp.py")
# vLLM 0.33 models/hy_v4/nvidia/mtp.py (HY V4): the position-0 mask by the
# predictor (the layer gets the masked embeddings), the final add fused into
# `final_layernorm(hidden, residual)`; shared_head the identity before its head.
VLLM_HYV4 = _final_norm_spec(("HYV4MultiTokenPredictorLayer",), "shared_head.head",
                             {"pos0_mask": 1, "final_add": "fused"},
                             "vllm/models/hy_v4/nvidia/mtp.py")



def _prefixed(weights, prefix):
    """A weight map whose paths all sit under `prefix` (a layer that holds its
    glue in a sub-module: SGLang's Dots3 head)."""
    return {k: prefix + v for k, v in weights.items()}


def _embeds_of_ids(module, named, root=None):
    """The rows of the layer's own `embed_tokens` for its input ids (a layer
    that embeds inside its forward)."""
    ids = named.get("input_ids")
    table = _path(module, "embed_tokens.weight")
    return None if ids is None or table is None else table[ids.long()]


def _ids_from_embeds(module, named, root=None):
    """The token ids of a layer called with its embeddings only (MiMo-V2): the
    rows of the draft model's embedding table equal to them (the embedding
    is a row gather, so each row is found exactly)."""
    embeds = named.get("inputs_embeds")
    table = None if root is None else _path(root, "model.embed_tokens.weight")
    if embeds is None or table is None:
        return None
    hit = (embeds.unsqueeze(1) == table.unsqueeze(0)).all(dim=-1)
    return hit.float().argmax(dim=-1) if bool(hit.any(dim=-1).all()) else None


# The block written inline in the layer: its input is what enters
# input_layernorm; its output what leaves the MLP; its residual the sum the
# second norm receives (Bailing: the input of post_attention_layernorm) or
# hands on (MiMo-V2: the fused add-norm's second output).
_BAILING_TAPS = {"block_in": ("input_layernorm", "in", 0), "block_out": ("mlp", "out", 0),
                 "block_residual": ("post_attention_layernorm", "in", 0)}
# vLLM 0.33 bailing_moe_mtp.py (Bailing V2.5, position-0 mask by torch.where) and
# bailing_moe_v3_mtp.py (Bailing V3, no mask): eh_proj over [enorm e, hnorm h],
# `residual + mlp` unfused, `final_layernorm` in the layer, its output returned
# alone; shared_head the identity before `shared_head.head`.
VLLM_BAILING_V25 = _final_norm_spec(("BailingMoeV25MultiTokenPredictorLayer",), "shared_head.head",
                                    {"pos0_mask": 1, "final_add": "unfused"},
                                    "vllm/model_executor/models/bailing_moe_mtp.py",
                                    block_taps=_BAILING_TAPS)
VLLM_BAILING_V3 = _final_norm_spec(("BailingMoeV3MultiTokenPredictorLayer",), "shared_head.head",
                                   {"pos0_mask": 0, "final_add": "unfused"},
                                   "vllm/model_executor/models/bailing_moe_v3_mtp.py",
                                   block_taps=_BAILING_TAPS)
# vLLM 0.33 mimo_v2_mtp.py (MiMo-V2, MiMo-V2-Omni): no mask; the layer is called
# with the embeddings only (ids recovered from the table); the residual comes out
# of `pre_mlp_layernorm(h, residual)`, `h + residual` unfused, `final_layernorm`,
# the top-level `lm_head`.
VLLM_MIMO_V2 = _final_norm_spec(("MiMoV2MTPLayer",), "..lm_head",
                                {"pos0_mask": 0, "final_add": "unfused"},
                                "vllm/model_executor/models/mimo_v2_mtp.py",
                                block_taps={"block_in": ("input_layernorm", "in", 0),
                                            "block_out": ("mlp", "out", 0),
                                            "block_residual": ("pre_mlp_layernorm", "out", 1)},
                                layer_inputs_from={"input_ids": _ids_from_embeds})
# vLLM 0.33 exaone_moe_mtp.py / exaone4_5_mtp.py: the predictor is the layer
# (`@support_torch_compile`, so its call runs no hooks: hooks.wrap_forward);
# fc over [pre_fc_norm_embedding e, pre_fc_norm_hidden h], no mask, the block
# `layers.0` returning (hidden, residual), `norm(hidden, residual)` fused, the
# post-norm hidden returned alone to the top-level `lm_head`.
def _exaone_spec(classes, block_outputs, block_taps, final_add, source):
    return LayerSpec(
        engine="vllm", family="deepseek_v3", classes=classes,
        layer_inputs=dict(VLLM_LAYER_INPUTS, prev_hidden=("hidden_states",)),
        layer_inputs_from={"embeds": _embeds_of_ids},
        block_attr="layers.0", block_input_args=("hidden_states",), block_outputs=block_outputs,
        block_taps=block_taps,
        weights={"enorm_weight": "pre_fc_norm_embedding.weight",
                 "hnorm_weight": "pre_fc_norm_hidden.weight", "eh_proj_weight": "fc.weight",
                 "shared_head_norm_weight": "norm.weight", "head_weight": "..lm_head.weight",
                 "head_scale_inv": "..lm_head.weight_scale_inv"},
        conventions={"pos0_mask": 0, "final_add": final_add, "add_norm_input": "sum"},
        source=source,
        extra_attrs=lambda layer: dict(_eps_of(layer, "pre_fc_norm_embedding"), rounding="eager"),
        notes="one MTP layer: the block is layers.0")


VLLM_EXAONE = _exaone_spec(("ExaoneMoeMultiTokenPredictor",), ("block_out", "block_residual"),
                           None, "fused", "vllm/model_executor/models/exaone_moe_mtp.py")
# vLLM 0.33 exaone4_5_mtp.py: the block is a post-LN Exaone4DecoderLayer that
# returns (residual + post_feedforward_layernorm(mlp), residual), the final add
# done inside it, and the predictor's own forward norms the first alone
# (`norm(hidden_states)`): the block's output is the post-FFN norm's output.
VLLM_EXAONE4_5 = _exaone_spec(("Exaone4_5MultiTokenPredictor",), (None, "block_residual"),
                              {"block_out": ("layers.0.post_feedforward_layernorm", "out", 0)},
                              "unfused", "vllm/model_executor/models/exaone4_5_mtp.py")

# vLLM 0.33 nemotron_h_mtp.py: the predictor is the layer (compiled: wrapped);
# its block is a pattern of sublayers (`mtp_hybrid_override_pattern`), the
# first fusing eh_proj over [enorm e, hnorm h] (no mask), each passing (hidden,
# residual) on; the last adds `hidden + residual` (unfused) and norms with its
# `final_layernorm`, returned alone to the target's shared `lm_head`. The
# block's input enters the first sublayer's norm; its output leaves the last
# sublayer's mixer, its residual the last sublayer's fused add-norm.
VLLM_NEMOTRON_H = LayerSpec(
    engine="vllm", family="deepseek_v3", classes=("NemotronHMultiTokenPredictor",),
    layer_inputs=dict(VLLM_LAYER_INPUTS, prev_hidden=("hidden_states",)),
    layer_inputs_from={"embeds": _embeds_of_ids}, block_attr=None,
    block_input_args=("hidden_states",), block_outputs=(),
    block_taps={"block_in": ("layers.0.norm", "in", 0), "block_out": ("layers.-1.mixer", "out", 0),
                "block_residual": ("layers.-1.norm", "out", 1)},
    weights={"enorm_weight": "layers.0.enorm.weight", "hnorm_weight": "layers.0.hnorm.weight",
             "eh_proj_weight": "layers.0.eh_proj.weight",
             "shared_head_norm_weight": "layers.-1.final_layernorm.weight",
             "head_weight": "..lm_head.weight", "head_scale_inv": "..lm_head.weight_scale_inv"},
    conventions={"pos0_mask": 0, "final_add": "unfused", "add_norm_input": "sum"},
    source="vllm/model_executor/models/nemotron_h_mtp.py",
    extra_attrs=lambda layer: dict(_eps_of(_path(layer, "layers.0"), "enorm"), rounding="eager"),
    notes="a block of two sublayers or more (the last one's norm fuses the residual add)")

# vLLM 0.33 step3p5_mtp.py (Step-3.5): eh_proj over [enorm e, hnorm h], no mask,
# the block `mtp_block` (Step3p5DecoderLayer) finishing `ffn + residual` itself
# and returning the sum alone (its output read at `mlp`, its residual where
# `post_attention_layernorm` receives it), the sum returned alone and normed in
# compute_logits by `shared_head.norm` before the layer's own head: glm's shape.
# Its norms are zero-centred (GemmaRMSNorm, 1 + w, one rounding: SPEC.md §2.6) and
# the pre-norm sum is chained on purpose (SGLang's step3p5_mtp.py): its own row.
VLLM_STEP3P5 = LayerSpec(
    engine="vllm", family="step3p5", classes=("Step3p5AMultiTokenPredictorLayer",),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=(None,),
    block_taps={"block_out": ("mtp_block.mlp", "out", 0),
                "block_residual": ("mtp_block.post_attention_layernorm", "in", 0)},
    weights=V3_WEIGHTS, conventions={"pos0_mask": 0, "final_add": "unfused", "add_norm_input": "sum"},
    source="vllm/model_executor/models/step3p5_mtp.py",
    extra_attrs=lambda layer: dict(_eps(layer), rounding="fused"),
    notes="zero-centred norms (GemmaRMSNorm), the pre-norm sum recycled: the step3p5 row")
# vLLM 0.33 models/step5/nvidia/mtp.py (Step5): Step-3.5's glue (eh_proj over
# [enorm e, hnorm h], no mask) with a block returning (output, residual), the
# layer's `_add_for_residual` sum returned alone, normed in compute_logits by
# `shared_head.norm` before the layer's own head; Step5RMSNorm zero-centred by
# the config's flag, one rounding of the fp32 product (layernorm.py)
VLLM_STEP5 = LayerSpec(
    engine="vllm", family="step3p5", classes=("Step5MultiTokenPredictorLayer",),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), weights=V3_WEIGHTS,
    conventions=VLLM_STEP3P5.conventions, source="vllm/models/step5/nvidia/mtp.py",
    extra_attrs=VLLM_STEP3P5.extra_attrs, notes=VLLM_STEP3P5.notes)


# vLLM 0.33 qwen3_next_mtp.py (Qwen3-Next): the predictor is the layer (fc over
# [pre_fc_norm_embedding e, pre_fc_norm_hidden h], no position-0 mask, layers[0],
# norm(hidden, residual) fusing the final add, the post-norm hidden returned and
# fed to the top-level lm_head with no further norm); every norm a GemmaRMSNorm:
# the zero-centred row, one rounding, the fp32 sum normalised (ir.ops).
VLLM_QWEN3_NEXT = LayerSpec(
    engine="vllm", family="qwen3_next",
    classes=("Qwen3NextMultiTokenPredictor", "Qwen3_5MultiTokenPredictor"),
    layer_inputs={"input_ids": ("input_ids",), "positions": ("positions",),
                  "prev_hidden": ("hidden_states",), "embeds": ("inputs_embeds",)},
    layer_inputs_from={"embeds": _embeds_of_ids},
    block_attr="layers.0", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="norm",
    weights={"enorm_weight": "pre_fc_norm_embedding.weight",
             "hnorm_weight": "pre_fc_norm_hidden.weight", "eh_proj_weight": "fc.weight",
             "shared_head_norm_weight": "norm.weight", "head_weight": "..lm_head.weight",
             "head_scale_inv": "..lm_head.weight_scale_inv"},
    conventions={"pos0_mask": 0, "final_add": "fused", "add_norm_input": "sum"},
    source="vllm/model_executor/models/qwen3_next_mtp.py, qwen3_5_mtp.py",
    extra_attrs=lambda layer: dict(_eps_of(layer, "pre_fc_norm_embedding"), rounding="fused"),
    notes="the predictor is an @support_torch_compile class: hooked through its forward "
          "(hooks.wrap_forward)")


# vLLM 0.33 mimo_mtp.py (MiMo-7B): input_proj over [hidden_layernorm(h),
# token_layernorm(mask e)], hidden first (the mimo row); a Qwen2 decoder block;
# `residual + hidden_states` then final_layernorm, the post-norm hidden returned
# alone and fed to the top-level lm_head with no further norm.
VLLM_MIMO = LayerSpec(
    engine="vllm", family="mimo", classes=("MiMoMultiTokenPredictorLayer",),
    layer_inputs=VLLM_LAYER_INPUTS, layer_inputs_from={"input_ids": _ids_from_embeds},
    block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"),
    weights={"enorm_weight": "token_layernorm.weight", "hnorm_weight": "hidden_layernorm.weight",
             "eh_proj_weight": "input_proj.weight",
             "shared_head_norm_weight": "final_layernorm.weight",
             "head_weight": "..lm_head.weight", "head_scale_inv": "..lm_head.weight_scale_inv"},
    conventions={"pos0_mask": 1, "final_add": "unfused", "add_norm_input": "sum"},
    source="vllm/model_executor/models/mimo_mtp.py",
    extra_attrs=lambda layer: dict(_eps_of(layer, "token_layernorm"), rounding="eager"))

# vLLM 0.33 ernie_mtp.py (ERNIE 4.5): V3's glue (mtp_emb_norm, mtp_hidden_norm,
# mtp_linear_proj over [embedding, hidden], the position-0 mask in place), a
# Llama decoder block, `residual + hidden_states` returned with no norm and fed
# to the head as it is. ERNIE's contract (Baidu's FastDeploy ernie4_5_mtp.py:
# the target's shared final norm over (hidden, residual) before the head) has
# a final norm the draft model does not hold: the capture takes the target's
# (`mtpcheck_target_norm`, attached by the sweep from the tiny target).
VLLM_ERNIE = LayerSpec(
    engine="vllm", family="deepseek_v3", classes=("ErnieMultiTokenPredictorLayer",),
    layer_inputs=VLLM_LAYER_INPUTS, layer_inputs_from={"input_ids": _ids_from_embeds},
    block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"),
    weights={"enorm_weight": "mtp_emb_norm.weight", "hnorm_weight": "mtp_hidden_norm.weight",
             "eh_proj_weight": "mtp_linear_proj.weight",
             "shared_head_norm_weight": "..mtpcheck_target_norm.weight",
             "head_weight": "..lm_head.weight", "head_scale_inv": "..lm_head.weight_scale_inv"},
    conventions={"pos0_mask": 1, "final_add": "fused", "add_norm_input": "sum"},
    source="vllm/model_executor/models/ernie_mtp.py",
    extra_attrs=lambda layer: dict(_eps_of(layer, "mtp_emb_norm"), rounding="eager"),
    notes="the final norm judged is the target's (ERNIE's contract, FastDeploy): the layer has none")

# vLLM 0.33 models/deepseek_v32/*/mtp.py (V3.2, GLM-5): fused Triton input
# norms (fused_eh_norm, or fused_embed_eh_norm given the replicated embedding
# table: mask, enorm, hnorm, one rounding); nvidia fuses the final add with
# the norm, amd adds first; both return (h_post, h_post).
VLLM_V32 = LayerSpec(
    engine="vllm", family=_glm_or_v3,
    classes=("DeepseekV32MultiTokenPredictorLayer", "DeepSeekV32MultiTokenPredictorLayer",
             "Dots3NoteMultiTokenPredictorLayer"),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), weights=V3_WEIGHTS,
    layer_inputs_from={"embeds": _embeds_from_table},
    conventions=_v32_conventions,
    source="vllm/models/deepseek_v32/{nvidia,amd}/mtp.py",
    extra_attrs=lambda layer: dict(_eps(layer), rounding="fused"),
    notes="input norms are Triton kernels: on a CPU under TRITON_INTERPRET=1, whose bf16 stores "
          "truncate unless rounded (vllm_standins.triton_interpreter_rounding, as the sweep does); "
          "the sweep builds the layer with its DSA attention stood in (docs/FINDINGS.md F15)")

# vLLM 0.33 models/glm5next/common/mtp.py (GLM-5-Next): V3.2's input (the
# Triton fused_eh_norm of its nvidia ops: mask, enorm, hnorm, one rounding),
# an MLA block returning (output, residual, None, None), the final add fused
# into shared_head.norm, the layer itself returning (h_post, h_post)
VLLM_GLM5NEXT = LayerSpec(
    engine="vllm", family="deepseek_v3", classes=("Glm5NextMultiTokenPredictorLayer",),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), weights=V3_WEIGHTS,
    conventions={"pos0_mask": 1, "final_add": "fused", "add_norm_input": "sum"},
    source="vllm/models/glm5next/common/mtp.py",
    extra_attrs=VLLM_V32.extra_attrs, notes="input norms: a Triton kernel (TRITON_INTERPRET=1 on CPU)")

def _v4_contract(layer):
    """The V4 layer's block contract and hc_head variant, read from the layer as
    built. `deferred` where the block leaves the last hc_post to the layer: the
    amd decoder's fused seam (`mtp_block.use_fused_mhc`, on which vLLM 0.33's amd
    mtp.py gates its hc_post), and the nvidia / xpu blocks, which have no such
    flag; `internal` where the amd decoder takes its unfused path and applies
    the hc_post itself. SGLang's decoder says it by `use_fused_mhc_post_pre`
    (off: it applies its last hc_post and returns (streams, None, None, None)).
    hc_head `rocm` where the layer's HCHeadOp runs hc_head_triton (its
    forward_hip without TileLang), else `cuda` (TileLang; SGLang's NextN model
    has no HCHeadOp: its torch `hc_head` is the cuda form, SPEC.md §4.4.4)."""
    block = _v4_block(layer)
    fused = getattr(block, "use_fused_mhc", getattr(block, "use_fused_mhc_post_pre", True))
    op = getattr(layer, "hc_head_op", None)
    rocm = False
    if getattr(getattr(op, "_forward_method", None), "__name__", "") == "forward_hip":
        from vllm.model_executor.layers import mhc

        rocm = not mhc.HAS_TILELANG_MHC
    return {"block_contract": "deferred" if fused else "internal",
            "hc_head_variant": "rocm" if rocm else "cuda"}


def _present(module, named, out):
    """The block's outputs that are tensors (a return value with an unused
    slot: Kimi K3's nvidia block returns an AttnRes prefix sum, None without
    AttnRes, between its output and residual; its amd block returns the pair)."""
    return [t for t in (out if isinstance(out, (tuple, list)) else (out,)) if t is not None]


# vLLM 0.33 models/kimi_k3/{nvidia,amd}/mtp.py (Kimi K3): V3.2's input (the
# Triton fused_mtp_input of common/mtp.py: mask, enorm, hnorm, one rounding), a
# KimiDecoderLayer block returning its output and residual, the final add
# fused into shared_head.norm, which returns (h_post, the sum): the layer
# returns both, the pre-norm sum fed forward on purpose (the kimi_k3 row,
# SPEC.md §5.5)
VLLM_KIMI_K3 = LayerSpec(
    engine="vllm", family="kimi_k3", classes=("KimiK3MultiTokenPredictorLayer",),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_outputs_from=_present, weights=V3_WEIGHTS,
    conventions={"pos0_mask": 1, "final_add": "fused", "add_norm_input": "sum"},
    source="vllm/models/kimi_k3/{nvidia,amd}/mtp.py, common/mtp.py",
    extra_attrs=VLLM_V32.extra_attrs, notes="input norms: a Triton kernel (TRITON_INTERPRET=1 on CPU)")

# vLLM 0.33 models/minimax_m3/{nvidia,amd}/mtp.py (MiniMax M3): V3's glue (the
# position-0 mask by torch.where, enorm, hnorm, eh_proj over [e, h]), every norm
# a MiniMAXGemmaRMSNorm (1 + w, fp32, one rounding: FlashInfer's kernels on
# nvidia, Triton on amd); the block `transformer_layer` (called with no
# residual) returns (output, residual), `hidden_states += residual` unfused, the
# sum returned alone; compute_logits norms it with the layer's
# `final_layernorm` before the top-level `lm_head`: the qwen3_next row's norm
# form. The block's input is read where its input_layernorm receives it: the
# nvidia post-attention norm adds the attention output into that tensor in place
# (FlashInfer's gemma_fused_add_rmsnorm writes the residual back).
VLLM_MINIMAX_M3 = LayerSpec(
    engine="vllm", family="qwen3_next", classes=("MiniMaxM3MultiTokenPredictorLayer",),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="transformer_layer",
    block_input_args=("hidden_states",), block_outputs=("block_out", "block_residual"),
    block_taps={"block_in": ("transformer_layer.input_layernorm", "in", 0)},
    weights=dict(V3_WEIGHTS, shared_head_norm_weight="final_layernorm.weight",
                 head_weight="..lm_head.weight", head_scale_inv="..lm_head.weight_scale_inv"),
    conventions={"pos0_mask": 1, "final_add": "unfused", "add_norm_input": "sum"},
    source="vllm/models/minimax_m3/{nvidia,amd}/mtp.py",
    extra_attrs=lambda layer: dict(_eps(layer), rounding="fused"),
    notes="zero-centred norms (MiniMAXGemmaRMSNorm): the qwen3_next row's form")

# vLLM DeepSeek V4 (deepseek_v4/{nvidia,amd,xpu}/mtp.py): e_proj/h_proj (the amd
# and nvidia layers behind one fused Triton input norm: mask, enorm, per-stream
# hnorm, one rounding), the mHC block returning (f, residual, post_mix, res_mix)
# with the last hc_post left to the layer, or (streams, None, None, None) with it
# applied inside (_v4_contract); the layer returns the streams flattened,
# recycled as they are.
VLLM_V4 = LayerSpec(
    engine="vllm", family="deepseek_v4",
    classes=("DeepSeekV4MultiTokenPredictorLayer", "DeepseekV4MultiTokenPredictorLayer"),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="mtp_block", block_input_args=("x", "hidden_states"),
    block_outputs=("block_out", "block_residual", "post_mix", "comb_mix"), weights=V4_WEIGHTS,
    conventions={"pos0_mask": 1},
    source="vllm/models/deepseek_v4/{nvidia,amd,xpu}/mtp.py",
    extra_attrs=lambda layer: dict(_v4_attrs(layer), **_v4_contract(layer), rounding="fused",
                                   post_mult=2.0),
    notes="runs on a CPU as vLLM's amd module (the sweep's deepseek_v4_amd: the mHC fallbacks "
          "of gfx942); the nvidia module is TileLang, the cpu one raises")


# Inkling's (specs_inkling.py) and the SGLang layers' specs (specs_sglang.py):
# both import this module's helpers
from .specs_inkling import VLLM_INKLING
from .specs_sglang import (
    SGLANG_BAILING,
    SGLANG_DOTS3,
    SGLANG_ERNIE,
    SGLANG_FC_MTP,
    SGLANG_IQUEST,
    SGLANG_LONGCAT,
    SGLANG_MIMO,
    SGLANG_MIMO_V2,
    SGLANG_NEMOTRON_H,
    SGLANG_NEXTN,
    SGLANG_QWEN3_NEXT,
    SGLANG_STEP3P5,
    SGLANG_V4,
)

SPECS = {"vllm": (VLLM_V3, VLLM_V32, VLLM_V4, VLLM_LONGCAT, VLLM_HYV3, VLLM_HYV4, VLLM_BAILING_V25,
                  VLLM_BAILING_V3, VLLM_MIMO_V2, VLLM_EXAONE, VLLM_EXAONE4_5, VLLM_NEMOTRON_H,
                  VLLM_STEP3P5, VLLM_STEP5, VLLM_GLM5NEXT, VLLM_QWEN3_NEXT, VLLM_MIMO, VLLM_ERNIE,
                  VLLM_KIMI_K3, VLLM_MINIMAX_M3, VLLM_INKLING),
         "sglang": (SGLANG_NEXTN, SGLANG_LONGCAT, SGLANG_FC_MTP, SGLANG_QWEN3_NEXT, SGLANG_MIMO,
                    SGLANG_ERNIE, SGLANG_STEP3P5, SGLANG_MIMO_V2, SGLANG_DOTS3, SGLANG_NEMOTRON_H,
                    SGLANG_BAILING, SGLANG_IQUEST, SGLANG_V4)}


def spec_for(engine: str, module: torch.nn.Module) -> LayerSpec | None:
    name = type(module).__name__
    for spec in SPECS.get(engine, ()):
        if name in spec.classes:
            return spec
    return None
