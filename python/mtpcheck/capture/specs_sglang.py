"""The SGLang 0.5.23 MTP layers' specs (specs.py holds the vLLM ones, the
LayerSpec class and the helpers both share): what each NextN / MTP module is
called, how it is called, and the conventions of its code (SPEC.md 12.1)."""

from __future__ import annotations

from .specs import (
    V3_WEIGHTS,
    V4_WEIGHTS,
    VLLM_ERNIE,
    VLLM_MIMO,
    VLLM_NEMOTRON_H,
    LayerSpec,
    _embeds_of_ids,
    _eps,
    _eps_of,
    _glm_or_v3,
    _ids_from_embeds,
    _path,
    _prefixed,
    _v4_attrs,
    _v4_contract,
)


def _sglang_prev_hidden(module, named, root=None):
    batch = named.get("forward_batch")
    info = getattr(batch, "spec_info", None)
    return getattr(info, "hidden_states", None)




# SGLang's conventions on this CPU path, for the specs built on its RMSNorm:
# RMSNorm off CUDA without AMX is forward_native, which adds the residual in
# float32 and rounds the float32 product once, `(x * self.weight).to(orig_dtype)`
# (layers/layernorm.py:869-872: fused, no cast_x_before_out_mul in these
# models); LogitsProcessor._compute_lm_head multiplies in the head's dtype
# (bf16 logits, handed over as float32) unless the config sets
# `enable_lm_head_fp32` (`use_fp32_lm_head`): HY V4's config class does by
# default (configs/hy_v4.py:37), as IQuest Q1's (SGLANG_IQUEST): float32 logits.
SGLANG_CONV = {"pos0_mask": 0, "final_add": "fused", "add_norm_input": "sum",
               "logits_dtype": "bfloat16"}
# HY V3 keeps its earlier declaration (eager, float32 logits): declared as the
# code is (fused, bf16), verify names CONVENTION_MISMATCH at its step 0. One
# logit's exact sum lies 4.5e-8 from a bf16 tie; torch's float32 sum rounds onto
# the tie and then to even (the engine's bf16 is rounded twice), where verify's
# bf16 reference rounds the exact sum once: 1 bf16 ulp apart (docs/FINDINGS.md S6)
_KEPT_EAGER = ("HYV3ModelNextN",)


def _nextn_rounding(layer):
    return "eager" if type(layer).__name__ in _KEPT_EAGER else "fused"


# NextN models whose config turns on the float32 LM head (the model keeps no config)
_FP32_HEAD = ("HYV4ModelNextN",)


def _nextn_conventions(layer):
    c = dict(SGLANG_CONV)
    if type(layer).__name__ in _KEPT_EAGER + _FP32_HEAD:
        c["logits_dtype"] = "float32"
    return c


# SGLang deepseek_nextn.py / glm4_moe_nextn.py: the previous hidden comes in
# forward_batch.spec_info.hidden_states, the block is `decoder`, and the model
# ends with shared_head.norm(hidden, residual) (add fused into the norm);
# the head is the top-level lm_head. In 0.5.23 the decoder leaves its residual
# in forward_batch.residual_stream and `residual_batch.final_norm` hands the
# pair to shared_head.norm: the block's outputs are read there (block_tail).
SGLANG_NEXTN = LayerSpec(
    engine="sglang", family=_glm_or_v3,
    classes=("DeepseekModelNextN", "Glm4MoeModelNextN", "Glm4MoeLiteModelNextN", "GlmOcrModelNextN",
             "HYV3ModelNextN", "GigaChat35ModelNextN", "HYV4ModelNextN"),
    layer_inputs={"input_ids": ("input_ids",), "positions": ("positions",),
                  "embeds": ("input_embeds",), "prev_hidden": ()},
    layer_inputs_from={"prev_hidden": _sglang_prev_hidden, "embeds": _embeds_of_ids},
    block_attr="decoder", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="shared_head.norm",
    weights=dict(V3_WEIGHTS, head_weight="..lm_head.weight", head_scale_inv="..lm_head.weight_scale_inv"),
    conventions=_nextn_conventions,
    source="sglang/srt/models/deepseek_nextn.py, glm4_moe_nextn.py, glm4_moe_lite_nextn.py, "
           "glm_ocr_nextn.py, hunyuan_v3_nextn.py, gigachat35_mtp.py, hunyuan_v4_nextn.py",
    extra_attrs=lambda layer: dict(_eps(layer), rounding=_nextn_rounding(layer)),
    notes="no position-0 mask in NextN; recycled = the hidden the logits processor hands back")

# SGLang longcat_flash_nextn.py: NextN's glue, the final add-norm the model's
# own `final_layernorm(hidden, residual)`, the top-level lm_head.
SGLANG_LONGCAT = LayerSpec(
    engine="sglang", family="deepseek_v3", classes=("LongcatFlashModelNextN",),
    layer_inputs=SGLANG_NEXTN.layer_inputs, layer_inputs_from=SGLANG_NEXTN.layer_inputs_from,
    block_attr="decoder", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="final_layernorm",
    weights=dict(SGLANG_NEXTN.weights, shared_head_norm_weight="final_layernorm.weight"),
    conventions=SGLANG_CONV, source="sglang/srt/models/longcat_flash_nextn.py",
    extra_attrs=SGLANG_NEXTN.extra_attrs, notes=SGLANG_NEXTN.notes)

# SGLang mimo_v2_nextn.py (MiMo-V2): LongCat's shape, the block `mtp_block`.
SGLANG_MIMO_V2 = LayerSpec(
    engine="sglang", family="deepseek_v3", classes=("MiMoV2ModelNextN",),
    layer_inputs=SGLANG_NEXTN.layer_inputs, layer_inputs_from=SGLANG_NEXTN.layer_inputs_from,
    block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="final_layernorm",
    weights=SGLANG_LONGCAT.weights, conventions=SGLANG_CONV,
    source="sglang/srt/models/mimo_v2_nextn.py", extra_attrs=SGLANG_NEXTN.extra_attrs,
    notes="each step fed the target's hidden (not chained: the multi-layer worker's choice)")



def _sglang_model_embeds(module, named, root=None):
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
    conventions=SGLANG_CONV,
    source="sglang/srt/models/qwen3_moe_mtp.py, exaone_moe_mtp.py",
    extra_attrs=lambda layer: dict(_eps_of(layer, "pre_fc_norm_embedding"), rounding="fused"),
    notes=SGLANG_NEXTN.notes)

# Qwen3-Next / Qwen3.5 (SGLang): SGLANG_FC_MTP's layer on the zero-centred row,
# every norm a GemmaRMSNorm, which rounds once (fused, SPEC.md §2.6)
SGLANG_QWEN3_NEXT = LayerSpec(
    engine="sglang", family="qwen3_next",
    classes=("Qwen3NextForCausalLMMTP", "Qwen3_5ForCausalLMMTP"),
    layer_inputs=SGLANG_FC_MTP.layer_inputs, layer_inputs_from=SGLANG_FC_MTP.layer_inputs_from,
    block_attr=SGLANG_FC_MTP.block_attr, block_input_args=SGLANG_FC_MTP.block_input_args,
    block_outputs=SGLANG_FC_MTP.block_outputs, block_tail=SGLANG_FC_MTP.block_tail,
    weights=SGLANG_FC_MTP.weights,
    # SGLang's GemmaRMSNorm.forward_native adds the residual in the activation
    # dtype before the norm (`x = x + residual`, layers/layernorm.py): unfused;
    # its logits are bf16 values handed over as float32 (verify named both,
    # exactly, when this spec declared SGLANG_FC_MTP's fused add and fp32 logits)
    conventions=dict(SGLANG_FC_MTP.conventions, final_add="unfused", logits_dtype="bfloat16"),
    source="sglang/srt/models/qwen3_next_mtp.py, qwen3_5_mtp.py",
    extra_attrs=lambda layer: dict(_eps_of(layer, "pre_fc_norm_embedding"), rounding="fused"),
    notes=SGLANG_FC_MTP.notes)

def _sglang_stream_residual(module, named, out):
    """(block output, block residual) of an SGLang decoder layer that returns
    its output and leaves the residual in the batch's residual stream: the
    residual that stream holds when the layer returns (SGLang's own
    `residual_batch.written_residual`), which the caller's `fold` adds."""
    from sglang.srt.layers.layer_boundary.residual import batch as residual_batch

    hidden = out[0] if isinstance(out, (tuple, list)) else out
    return hidden, residual_batch.written_residual(named["forward_batch"])


# SGLang mimo_mtp.py (MiMo-7B): input_proj over [hidden_layernorm(h),
# token_layernorm(e)], hidden first (the mimo row), the position-0 mask in
# place; a Qwen2 decoder block whose residual stays in the batch's residual
# stream until `residual_batch.fold` adds it; final_layernorm of the sum, the
# post-norm hidden handed to the logits processor and back as the next hidden.
SGLANG_MIMO = LayerSpec(
    engine="sglang", family="mimo", classes=("MiMoMultiTokenPredictorLayer",),
    layer_inputs={"input_ids": ("input_ids",), "positions": ("positions",),
                  "embeds": ("input_embeds",), "prev_hidden": ()},
    layer_inputs_from={"prev_hidden": _sglang_prev_hidden, "embeds": _embeds_of_ids},
    block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_outputs_from=_sglang_stream_residual,
    weights=dict(VLLM_MIMO.weights),
    conventions={"pos0_mask": 1, "final_add": "unfused", "add_norm_input": "sum",
                 "logits_dtype": "bfloat16"},
    source="sglang/srt/models/mimo_mtp.py",
    extra_attrs=lambda layer: dict(VLLM_MIMO.extra_attrs(layer), rounding="fused"),
    notes="recycled = the hidden the logits processor hands back")

# SGLang ernie4_eagle.py (ERNIE 4.5): the glue of VLLM_ERNIE (the position-0
# mask in place), an Ernie4DecoderLayer returning (hidden, residual), the sum
# handed to the logits processor with no norm; judged against the target's
# final norm, as VLLM_ERNIE.
SGLANG_ERNIE = LayerSpec(
    engine="sglang", family="deepseek_v3", classes=("Ernie4ModelMTP",),
    layer_inputs=SGLANG_NEXTN.layer_inputs, layer_inputs_from=SGLANG_NEXTN.layer_inputs_from,
    block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), weights=dict(VLLM_ERNIE.weights),
    conventions=dict(VLLM_ERNIE.conventions, logits_dtype="bfloat16"),
    source="sglang/srt/models/ernie4_eagle.py",
    extra_attrs=lambda layer: dict(VLLM_ERNIE.extra_attrs(layer), rounding="fused"),
    notes=VLLM_ERNIE.notes)

# SGLang step3p5_mtp.py (Step-3.5): NextN's glue (eh_proj over [enorm e, hnorm
# h], no mask, the previous hidden in spec_info), the block `mtp_block` leaving
# its residual in the stream for `residual_batch.final_norm`, which hands
# (hidden, residual) to shared_head.norm; the pre-norm snapshot passed as
# `hidden_states_before_norm` and handed back; the layer's own head. Every norm
# a GemmaRMSNorm (one rounding; its native path adds the residual in bf16 first).
SGLANG_STEP3P5 = LayerSpec(
    engine="sglang", family="step3p5", classes=("Step3p5AMultiTokenPredictor",),
    layer_inputs=SGLANG_NEXTN.layer_inputs, layer_inputs_from=SGLANG_NEXTN.layer_inputs_from,
    block_attr="mtp_block", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="shared_head.norm",
    weights=V3_WEIGHTS,
    conventions={"pos0_mask": 0, "final_add": "unfused", "add_norm_input": "sum",
                 "logits_dtype": "bfloat16"},
    source="sglang/srt/models/step3p5_mtp.py",
    extra_attrs=lambda layer: dict(_eps(layer), rounding="fused"),
    notes="zero-centred norms (GemmaRMSNorm), the pre-norm snapshot handed back and chained")

# SGLang dots3_nextn.py (Dots3, `Dot3NoteModelNextN`): DeepSeek NextN's glue
# and final add-norm, all of it held by the one full-sharing head `heads.0`
# (enorm, hnorm, eh_proj, decoder, shared_head.norm); the top-level lm_head.
SGLANG_DOTS3 = LayerSpec(
    engine="sglang", family="deepseek_v3", classes=("Dot3NoteModelNextN",),
    layer_inputs=SGLANG_NEXTN.layer_inputs, layer_inputs_from=SGLANG_NEXTN.layer_inputs_from,
    block_attr="heads.0.decoder", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="heads.0.shared_head.norm",
    weights=dict(_prefixed(V3_WEIGHTS, "heads.0."), head_weight="..lm_head.weight",
                 head_scale_inv="..lm_head.weight_scale_inv"),
    conventions=SGLANG_CONV, source="sglang/srt/models/dots3_common/nextn.py",
    extra_attrs=lambda layer: dict(_eps_of(_path(layer, "heads.0"), "enorm"), rounding="fused"),
    notes=SGLANG_NEXTN.notes)

# SGLang nemotron_h_mtp.py (Nemotron-H): the predictor is the layer; its block a
# pattern of sublayers (`mtp_hybrid_override_pattern`), the first fusing
# eh_proj over [enorm e, hnorm h] (no mask) and writing the sum as the residual
# stream, the last folding `hidden + residual` (`residual_batch.fold`, in the
# activation dtype: unfused) and norming with its `final_layernorm`; the post-
# norm hidden to the logits processor and back. The block's input enters the
# first sublayer's norm; its output leaves the last sublayer's MLP (whose
# mixer is called through `.forward`, so its `down_proj` is read); its residual
# is the last sublayer's fused add-norm's second output. vLLM's reading
# (VLLM_NEMOTRON_H) otherwise.
SGLANG_NEMOTRON_H = LayerSpec(
    engine="sglang", family="deepseek_v3", classes=("NemotronHMultiTokenPredictor",),
    layer_inputs=dict(SGLANG_NEXTN.layer_inputs, embeds=("inputs_embeds",)),
    layer_inputs_from=SGLANG_NEXTN.layer_inputs_from, block_attr=None,
    block_input_args=("hidden_states",), block_outputs=(),
    block_taps=dict(VLLM_NEMOTRON_H.block_taps,
                    block_out=("layers.-1.mixer.down_proj", "out", 0)),
    weights=VLLM_NEMOTRON_H.weights,
    conventions=dict(VLLM_NEMOTRON_H.conventions, logits_dtype="bfloat16"),
    source="sglang/srt/models/nemotron_h_mtp.py",
    extra_attrs=lambda layer: dict(VLLM_NEMOTRON_H.extra_attrs(layer), rounding="fused"),
    notes="a block of two sublayers or more; " + SGLANG_NEXTN.notes)

def _sglang_word_embeds(module, named, root=None):
    ids = named.get("input_ids")
    table = _path(module, "word_embeddings.weight")
    return None if ids is None or table is None else table[ids.long()]


# SGLang bailing_moe_nextn.py (Bailing V2.5 / V3, `BailingMoEModelNextN`): NextN's
# glue (eh_proj over [enorm e, hnorm h], no mask, the embedding table
# `word_embeddings`), the final add-norm the model's own `final_layernorm(hidden,
# residual)` through `residual_batch.final_norm`; the top-level lm_head.
SGLANG_BAILING = LayerSpec(
    engine="sglang", family="deepseek_v3", classes=("BailingMoEModelNextN",),
    layer_inputs=SGLANG_NEXTN.layer_inputs,
    layer_inputs_from=dict(SGLANG_NEXTN.layer_inputs_from, embeds=_sglang_word_embeds),
    block_attr="decoder", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_tail="final_layernorm",
    weights=SGLANG_LONGCAT.weights, conventions=SGLANG_CONV,
    source="sglang/srt/models/bailing_moe_nextn.py", extra_attrs=SGLANG_NEXTN.extra_attrs,
    notes=SGLANG_NEXTN.notes)


def _whole_sum(module, named, out):
    """(block output, zeros): a block that adds its residual itself and
    returns the sum alone (IQuest Q1's IQuestQ1MTPInnerLayer), so the layer's
    final norm gets the hidden alone; with the residual recorded as zeros the
    relation judged is the norm of that sum (its add `0 + h` is exact)."""
    import torch

    hidden = out[0] if isinstance(out, (tuple, list)) else out
    return hidden, torch.zeros_like(hidden)


def _ids_of_input_embeds(module, named, root=None):
    """The token ids of a layer called with its embeddings only, as
    `input_embeds` (IQuest Q1): _ids_from_embeds' rows of the table."""
    return _ids_from_embeds(module, {"inputs_embeds": named.get("input_embeds")}, root)


# SGLang iquest_q1_mtp.py (IQuest Q1, `IQuestQ1MTPLayer`): eh_proj over [enorm
# e, hnorm h] (embedding first, no mask; the layer is called with the
# embeddings, its ids recovered from the table), the block `mtp_model_layer`
# (sandwich norms and output scales, its residual added inside: _whole_sum),
# `final_layernorm` of the block's sum, post-norm to the logits processor and
# back; the draft's own top-level lm_head. Every norm an IQuestQ1RMSNorm: the
# float32 normalised value times the weight, one rounding (fused).
SGLANG_IQUEST = LayerSpec(
    engine="sglang", family="deepseek_v3", classes=("IQuestQ1MTPLayer",),
    layer_inputs={"input_ids": (), "positions": ("positions",),
                  "prev_hidden": ("previous_hidden_states",), "embeds": ("input_embeds",)},
    layer_inputs_from={"input_ids": _ids_of_input_embeds},
    block_attr="mtp_model_layer", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual"), block_outputs_from=_whole_sum,
    weights=dict(V3_WEIGHTS, shared_head_norm_weight="final_layernorm.weight",
                 head_weight="..lm_head.weight", head_scale_inv="..lm_head.weight_scale_inv"),
    conventions={"pos0_mask": 0, "final_add": "unfused", "add_norm_input": "sum"},
    source="sglang/srt/models/iquest_q1_mtp.py",
    extra_attrs=lambda layer: dict(_eps(layer), rounding="fused"),
    notes="the block adds its residual itself: its sum judged with a zero residual")


# SGLang deepseek_v4_nextn.py (DeepSeek V4, `DeepseekV4ModelNextN`): e_proj(enorm
# e) broadcast over the streams plus h_proj(hnorm) of each stream of the previous
# hidden (forward_batch.spec_info.hidden_states, [T, M*H]), no position-0 mask;
# the decoder off CUDA (DeepseekV4PlatformDecoderLayer) returning (streams, None,
# None, None) with its last hc_post applied, or (f, residual, post, comb) for the
# model's own hc_post; then hc_head (torch, in the model), shared_head.norm, the
# top-level lm_head; the pre-hc_head streams flattened go back to the logits
# processor as hidden_states_before_norm, which hands them back.
SGLANG_V4 = LayerSpec(
    engine="sglang", family="deepseek_v4", classes=("DeepseekV4ModelNextN",),
    layer_inputs=SGLANG_NEXTN.layer_inputs, layer_inputs_from=SGLANG_NEXTN.layer_inputs_from,
    block_attr="decoder", block_input_args=("hidden_states",),
    block_outputs=("block_out", "block_residual", "post_mix", "comb_mix"),
    weights=dict(V4_WEIGHTS, head_weight="..lm_head.weight",
                 head_scale_inv="..lm_head.weight_scale_inv"),
    # SGLang's LogitsProcessor hands over bf16 logits as float32 (as Qwen3-Next's)
    conventions={"pos0_mask": 0, "logits_dtype": "bfloat16"},
    source="sglang/srt/models/deepseek_v4_nextn.py",
    # mHC attributes and contract as vLLM's V4 layers are read (specs._v4_contract);
    # SGLang's RMSNorm off CUDA without AMX is its forward_native, which rounds the
    # float32 product once (`(x * self.weight).to(orig_dtype)`): fused
    extra_attrs=lambda layer: dict(_v4_attrs(layer), **_v4_contract(layer), rounding="fused",
                                   post_mult=2.0),
    notes="the mHC ops inside the block on SGLang's torch path and its Triton port of "
          "hc_split_sinkhorn (interpreter); the streams before hc_head handed back")
