"""What each engine's MTP modules are called and how they are called: the
adapters of the capture hooks.  One LayerSpec per MTP layer class; the
conventions are those of the engine's code (SPEC.md 12.1), declared in the
dump so that the harness judges the step under the engine's own contract."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def _path(module, dotted):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


class LayerSpec:
    def __init__(self, engine, family, classes, layer_inputs, block_attr, block_input_args,
                 block_outputs, weights, conventions, source, layer_inputs_from=None,
                 extra_attrs=None, notes="", block_tail=None):
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

    def block(self, layer: torch.nn.Module) -> torch.nn.Module:
        return _path(layer, self.block_attr)

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


def _embeds_from_table(module, named):
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


def _v4_attrs(layer):
    attrs = _eps(layer)
    for name, key in (("hc_mult", "hc_mult"), ("hc_eps", "hc_eps"),
                      ("hc_sinkhorn_iters", "sinkhorn_iters")):
        value = getattr(layer, name, None)
        if value is None:
            value = getattr(getattr(layer, "mtp_block", None), name, None)
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

def _final_norm_spec(classes, head, conventions, source):
    """V3's glue with the final norm as the layer's own `final_layernorm`,
    applied inside the layer: the post-norm hidden is what it returns."""
    return LayerSpec(
        engine="vllm", family="deepseek_v3", classes=classes, layer_inputs=VLLM_LAYER_INPUTS,
        block_attr="mtp_block", block_input_args=("hidden_states",),
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

# vLLM 0.33 models/deepseek_v32/*/mtp.py (V3.2, GLM-5): fused Triton input
# norms (fused_eh_norm: one rounding); nvidia fuses the final add with the norm.
VLLM_V32 = LayerSpec(
    engine="vllm", family=_glm_or_v3,
    classes=("DeepseekV32MultiTokenPredictorLayer", "DeepSeekV32MultiTokenPredictorLayer"),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), weights=V3_WEIGHTS,
    layer_inputs_from={"embeds": _embeds_from_table},
    conventions=_v32_conventions,
    source="vllm/models/deepseek_v32/{nvidia,amd}/mtp.py",
    extra_attrs=lambda layer: dict(_eps(layer), rounding="fused"),
    notes="input norms are Triton kernels: under TRITON_INTERPRET=1 (CPU) bf16 stores truncate; "
          "the model cannot be built on CPU (sparse attention): hooks tested on a mirror module tree")

# vLLM DeepSeek V4 (deepseek_v4/{nvidia,amd,xpu}/mtp.py): e_proj/h_proj, mHC
# block returning (f, residual, post_mix, res_mix) with hc_post deferred to the
# layer; the layer returns the streams flattened, recycled as they are.
VLLM_V4 = LayerSpec(
    engine="vllm", family="deepseek_v4",
    classes=("DeepSeekV4MultiTokenPredictorLayer", "DeepseekV4MultiTokenPredictorLayer"),
    layer_inputs=VLLM_LAYER_INPUTS, block_attr="mtp_block", block_input_args=("x", "hidden_states"),
    block_outputs=("block_out", "block_residual", "post_mix", "comb_mix"), weights=V4_WEIGHTS,
    conventions={"pos0_mask": 1},
    source="vllm/models/deepseek_v4/{nvidia,amd,xpu}/mtp.py",
    extra_attrs=lambda layer: dict(_v4_attrs(layer), rounding="fused", block_contract="deferred",
                                   post_mult=2.0, hc_head_variant="cuda"),
    notes="the whole V4 step does not run on CPU (TileLang); hooks tested on a mirror module tree")


def _sglang_prev_hidden(module, named):
    batch = named.get("forward_batch")
    info = getattr(batch, "spec_info", None)
    return getattr(info, "hidden_states", None)


def _sglang_embeds(module, named):
    ids = named.get("input_ids")
    table = _path(module, "embed_tokens.weight")
    return None if ids is None or table is None else table[ids.long()]


# SGLang deepseek_nextn.py / glm4_moe_nextn.py: the previous hidden comes in
# forward_batch.spec_info.hidden_states, the block is `decoder`, and the model
# ends with shared_head.norm(hidden, residual) (add fused into the norm);
# the head is the top-level lm_head. In 0.5.23 the decoder leaves its residual
# in forward_batch.residual_stream and `residual_batch.final_norm` hands the
# pair to shared_head.norm: the block's outputs are read there (block_tail).
SGLANG_NEXTN = LayerSpec(
    engine="sglang", family=_glm_or_v3,
    classes=("DeepseekModelNextN", "Glm4MoeModelNextN", "Glm4MoeLiteModelNextN", "GlmOcrModelNextN",
             "HYV3ModelNextN"),
    layer_inputs={"input_ids": ("input_ids",), "positions": ("positions",),
                  "embeds": ("input_embeds",), "prev_hidden": ()},
    layer_inputs_from={"prev_hidden": _sglang_prev_hidden, "embeds": _sglang_embeds},
    block_attr="decoder", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="shared_head.norm",
    weights=dict(V3_WEIGHTS, head_weight="..lm_head.weight", head_scale_inv="..lm_head.weight_scale_inv"),
    conventions={"pos0_mask": 0, "final_add": "fused", "add_norm_input": "sum"},
    source="sglang/srt/models/deepseek_nextn.py, glm4_moe_nextn.py, glm4_moe_lite_nextn.py, "
           "glm_ocr_nextn.py, hunyuan_v3_nextn.py",
    extra_attrs=lambda layer: dict(_eps(layer), rounding="eager"),
    notes="no position-0 mask in NextN; recycled = the hidden the logits processor hands back")

# SGLang longcat_flash_nextn.py: NextN's glue, the final add-norm the model's
# own `final_layernorm(hidden, residual)`, the top-level lm_head.
SGLANG_LONGCAT = LayerSpec(
    engine="sglang", family="deepseek_v3", classes=("LongcatFlashModelNextN",),
    layer_inputs=SGLANG_NEXTN.layer_inputs, layer_inputs_from=SGLANG_NEXTN.layer_inputs_from,
    block_attr="decoder", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="final_layernorm",
    weights=dict(SGLANG_NEXTN.weights, shared_head_norm_weight="final_layernorm.weight"),
    conventions=SGLANG_NEXTN.conventions, source="sglang/srt/models/longcat_flash_nextn.py",
    extra_attrs=SGLANG_NEXTN.extra_attrs, notes=SGLANG_NEXTN.notes)



def _sglang_model_embeds(module, named):
    ids = named.get("input_ids")
    table = _path(module, "model.embed_tokens.weight")
    return None if ids is None or table is None else table[ids.long()]


# SGLang qwen3_moe_mtp.py, exaone_moe_mtp.py: the draft model itself is the layer: fc over
# [pre_fc_norm_embedding(e), pre_fc_norm_hidden(h)] (embedding first), the one
# decoder layer model.layers.0, the final add-norm model.norm(hidden,
# residual) via residual_batch.final_norm, lm_head; no position-0 mask.
SGLANG_FC_MTP = LayerSpec(
    engine="sglang", family="deepseek_v3", classes=("Qwen3MoeForCausalLMMTP", "ExaoneMoEForCausalLMMTP"),
    layer_inputs=SGLANG_NEXTN.layer_inputs,
    layer_inputs_from={"prev_hidden": _sglang_prev_hidden, "embeds": _sglang_model_embeds},
    block_attr="model.layers.0", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="model.norm",
    weights={"enorm_weight": "pre_fc_norm_embedding.weight",
             "hnorm_weight": "pre_fc_norm_hidden.weight", "eh_proj_weight": "fc.weight",
             "shared_head_norm_weight": "model.norm.weight", "head_weight": "lm_head.weight",
             "head_scale_inv": "lm_head.weight_scale_inv"},
    conventions=SGLANG_NEXTN.conventions,
    source="sglang/srt/models/qwen3_moe_mtp.py, exaone_moe_mtp.py",
    extra_attrs=lambda layer: dict(_eps_of(layer, "pre_fc_norm_embedding"), rounding="eager"),
    notes=SGLANG_NEXTN.notes)

SPECS = {"vllm": (VLLM_V3, VLLM_V32, VLLM_V4, VLLM_LONGCAT, VLLM_HYV3),
         "sglang": (SGLANG_NEXTN, SGLANG_LONGCAT, SGLANG_FC_MTP)}


def spec_for(engine: str, module: torch.nn.Module) -> LayerSpec | None:
    name = type(module).__name__
    for spec in SPECS.get(engine, ()):
        if name in spec.classes:
            return spec
    return None
