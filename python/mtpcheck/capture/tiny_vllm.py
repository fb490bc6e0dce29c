"""Tiny vLLM MTP models built from vLLM's own classes on CPU (the recipe in
docs/FINDINGS.md): a real VllmConfig from a tiny config.json, vLLM's CPU
platform, a one-process gloo group; the decoder block's attention replaced,
before the block is built, by one linear map (attention does not run on CPU
here) and a dense MLP (first_k_dense_replace above the MTP layer index).

`draft(...)` runs K draft steps the way vLLM's proposer does: the model's
return value is unpacked by the proposer's own `model_returns_tuple()`
(SpecDecodeBaseProposer, llm_base_proposer.py), called on a proposer object
carrying the real speculative config; logits by the model's compute_logits,
greedy tokens, positions + 1."""

from __future__ import annotations

import json
import os
from typing import Any

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

import torch
from torch import nn

from ..weights_vllm import _distributed

H, V, I = 64, 256, 96  # hidden, vocabulary, dense MLP width

BASE = {
    "hidden_size": H, "intermediate_size": I, "moe_intermediate_size": 32, "vocab_size": V,
    "num_hidden_layers": 2, "num_nextn_predict_layers": 1, "num_attention_heads": 2,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-6, "first_k_dense_replace": 100,
    "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "n_group": 1,
    "topk_group": 1, "hidden_act": "silu", "max_position_embeddings": 512,
    "torch_dtype": "bfloat16", "rope_theta": 10000.0, "routed_scaling_factor": 1.0,
    "norm_topk_prob": True, "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1,
}
CONFIGS = {
    "deepseek_v3": dict(BASE, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3",
                        kv_lora_rank=16, q_lora_rank=None, qk_nope_head_dim=16,
                        qk_rope_head_dim=8, v_head_dim=16, topk_method="noaux_tc",
                        scoring_func="sigmoid"),
    "glm4_moe": dict(BASE, architectures=["Glm4MoeForCausalLM"], model_type="glm4_moe",
                     head_dim=32, partial_rotary_factor=0.5, attention_bias=False, use_qk_norm=False),
    "glm4_moe_lite": dict(BASE, architectures=["Glm4MoeLiteForCausalLM"], model_type="glm4_moe_lite",
                          kv_lora_rank=16, q_lora_rank=None, qk_nope_head_dim=16,
                          qk_rope_head_dim=8, v_head_dim=16, topk_method="noaux_tc",
                          scoring_func="sigmoid", rms_norm_eps=1e-5),
    "glm_ocr": {"architectures": ["GlmOcrForConditionalGeneration"], "model_type": "glm_ocr",
                "text_config": dict(BASE, model_type="glm_ocr_text", head_dim=32,
                                    partial_rotary_factor=0.5, attention_bias=False,
                                    rms_norm_eps=1e-5),
                "vision_config": {"depth": 1, "hidden_size": 32, "num_heads": 2,
                                  "out_hidden_size": H, "intermediate_size": 32},
                "tie_word_embeddings": False, "torch_dtype": "bfloat16"},
    "longcat_flash": dict(BASE, architectures=["LongcatFlashForCausalLM"], model_type="longcat_flash",
                          num_layers=1, ffn_hidden_size=I, expert_ffn_hidden_size=32,
                          kv_lora_rank=16, q_lora_rank=16, qk_nope_head_dim=16,
                          qk_rope_head_dim=8, v_head_dim=16, head_dim=24, moe_topk=2,
                          zero_expert_num=0, mla_scale_q_lora=False, mla_scale_kv_lora=False,
                          rms_norm_eps=1e-5),
    # OpenPangu Ultra MoE: its config class is remote code (no class for
    # `pangu_ultra_moe` in transformers); DeepSeek V3's fields, registered under
    # that name by _register_config
    "pangu_ultra_moe": dict(BASE, architectures=["PanguUltraMoEForCausalLM"],
                            model_type="pangu_ultra_moe", kv_lora_rank=16, q_lora_rank=None,
                            qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=16,
                            topk_method="noaux_tc", scoring_func="sigmoid"),
    "hy_v3": dict(BASE, architectures=["HYV3ForCausalLM"], model_type="hy_v3", head_dim=32,
                  num_experts=4, num_shared_experts=1, rms_norm_eps=1e-5),
}

# The attention classes each model type's decoder block is built with (module
# of vllm.model_executor.models, class names): replaced by LinearAttention.
ATTENTION = {
    "deepseek_v3": ("deepseek_v2", ("DeepseekV2MLAAttention", "DeepseekV2Attention",
                                    "DeepseekAttention")),
    "glm4_moe": ("glm4_moe", ("Glm4MoeAttention",)),
    "glm4_moe_lite": ("glm4_moe_lite", ("Glm4MoeLiteMLAAttention", "Glm4MoeLiteAttention")),
    "glm_ocr": ("glm4", ("Glm4Attention",)),
    "hy_v3": ("hy_v3", ("HYV3Attention",)),
    "pangu_ultra_moe": ("openpangu", ("OpenPanguMLAAttention", "OpenPanguEmbeddedAttention",
                                      "OpenPanguSinkAttention")),
    "longcat_flash": ("deepseek_v2", ("DeepseekV2MLAAttention", "DeepseekV2Attention",
                                      "DeepseekAttention")),
}
# MTP classes that ask for an MoE layer only to copy expert counts (EPLB
# bookkeeping): with the dense block there is none, so the copy is skipped.
DENSE_SKIP = {
    "glm4_moe": ("glm4_moe_mtp", "Glm4MoeMTP"),
    "glm4_moe_lite": ("glm4_moe_lite_mtp", "Glm4MoeLiteMTP"),
}


class LinearAttention(nn.Module):
    """The attention stand-in: one linear map of the normed input (SPEC.md
    10.1's W_a), whatever the attention class was given."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        h = kwargs.get("hidden_size") or kwargs["config"].hidden_size
        self.W_a = nn.Linear(h, h, bias=False)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor, *args: Any,
                **kwargs: Any) -> torch.Tensor:
        return self.W_a(hidden_states)


def _patch_for_cpu(model_type):
    """The attention classes of `model_type` -> LinearAttention; the MoE
    bookkeeping copy of DENSE_SKIP skipped when there is no MoE layer."""
    import importlib

    mod_name, names = ATTENTION[model_type]
    mod = importlib.import_module("vllm.model_executor.models." + mod_name)
    for name in names:
        setattr(mod, name, LinearAttention)
    if model_type == "longcat_flash":
        _skip_lora_scaling()
    if model_type == "pangu_ultra_moe":
        _register_config(model_type)
    if model_type not in DENSE_SKIP:
        return
    mod_name, cls_name = DENSE_SKIP[model_type]
    _skip_moe_copy(getattr(importlib.import_module("vllm.model_executor.models." + mod_name),
                           cls_name))


def _skip_moe_copy(cls):
    """cls.extract_moe_parameters (the EPLB bookkeeping copy of an MoE layer's
    expert counts) skipped when the dense stand-in leaves no MoE layer."""
    if cls.__dict__.get("_mtpcheck_dense", False) or not hasattr(cls, "extract_moe_parameters"):
        return
    orig = cls.extract_moe_parameters

    def extract(self, example_moe):
        if example_moe is not None:
            orig(self, example_moe)

    cls.extract_moe_parameters = extract
    cls._mtpcheck_dense = True


def _register_config(model_type):
    """A config class for a model type whose class ships as remote code: DeepSeek
    V3's, under that name (the fields the engine reads are DeepSeek V3's)."""
    from transformers import CONFIG_MAPPING, AutoConfig, DeepseekV3Config

    if model_type in CONFIG_MAPPING:
        return
    cls = type("MtpcheckConfig_" + model_type, (DeepseekV3Config,), {"model_type": model_type})
    AutoConfig.register(model_type, cls)


def _skip_lora_scaling():
    """LongCat's MTP layer and its target's decoder fold the MLA LoRA scale into
    the attention's norm loaders at construction: the stand-in has no such
    norms (and nothing is loaded), so the fold is skipped for it."""
    import importlib

    for name in ("longcat_flash_mtp", "longcat_flash"):
        m = importlib.import_module("vllm.model_executor.models." + name)
        orig = m.scale_mla_lora_norms_on_load
        if getattr(orig, "_mtpcheck", False):
            continue

        def scale(self_attn, config, orig=orig):
            if not isinstance(self_attn, LinearAttention):
                orig(self_attn, config)

        scale._mtpcheck = True
        m.scale_mla_lora_norms_on_load = scale


def build(model_type: str, workdir: str, K: int = 3, seed: int = 0,
          mtp_layers: int = 1, tp: int = 1) -> tuple[torch.nn.Module, Any]:
    """(draft model, vllm_config): vLLM's MTP model for `model_type` with
    random bf16 weights, norm weights away from 1 (so that a pre-norm recycle
    shows); `tp` ranks of tensor parallelism (the caller has initialized
    vLLM's distributed state with that many, tp_vllm.py)."""
    from vllm.config import (
        CompilationConfig,
        ModelConfig,
        ParallelConfig,
        SpeculativeConfig,
        VllmConfig,
    )
    from vllm.config.compilation import CompilationMode

    _patch_for_cpu(model_type)
    d = os.path.join(workdir, "%s.L%d" % (model_type, mtp_layers))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(dict(CONFIGS[model_type], num_nextn_predict_layers=mtp_layers), f)
    target = ModelConfig(model=d, tokenizer=d, skip_tokenizer_init=True, dtype="bfloat16",
                         max_model_len=256, enforce_eager=True)
    parallel = ParallelConfig(tensor_parallel_size=tp)
    spec = SpeculativeConfig(method="mtp", num_speculative_tokens=K, target_model_config=target,
                             target_parallel_config=parallel)
    draft_cfg = spec.draft_model_config
    # eager: forward hooks do not fire inside compiled regions (docs/DUMPS.md)
    vcfg = VllmConfig(model_config=draft_cfg, speculative_config=spec, parallel_config=parallel,
                      compilation_config=CompilationConfig(mode=CompilationMode.NONE))
    return construct(vcfg, draft_cfg, seed), vcfg


def construct(vcfg: Any, draft_cfg: Any, seed: int) -> torch.nn.Module:
    """The draft model of `draft_cfg` built under `vcfg` (bf16), with random
    weights (norm weights away from 1, so that a pre-norm recycle shows) and
    what vLLM's loader does after loading; in eval mode."""
    from vllm.config import set_current_vllm_config
    from vllm.model_executor.model_loader.utils import get_model_architecture

    torch.set_default_dtype(torch.bfloat16)
    try:
        with set_current_vllm_config(vcfg):
            _distributed()  # weights_vllm's one-process gloo group
            cls, _ = get_model_architecture(draft_cfg)
            model = cls(vllm_config=vcfg, prefix="")
    finally:
        torch.set_default_dtype(torch.float32)
    randomize(model, seed)
    after_loading(model, vcfg, draft_cfg)
    return model.eval()


def randomize(model: torch.nn.Module, seed: int) -> None:
    """Random weights: norm weights in [0.3, 1.7] (so that a pre-norm recycle
    shows), the others N(0, 1/fan_in); cast to each parameter's dtype."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_((0.3 + 1.4 * torch.rand(p.shape, generator=gen)).to(p.dtype))
            else:
                p.copy_((torch.randn(p.shape, generator=gen) / p.shape[-1] ** 0.5).to(p.dtype))


def after_loading(model: torch.nn.Module, vcfg: Any, model_config: Any) -> None:
    """What vLLM's loader does after loading (on CPU: picks the linear
    kernels). The PyPI wheel has no vllm._C, so the AMX "sgl" kernels it would
    pick on this CPU are absent: keep vLLM's own fallback, F.linear."""
    from vllm.config import set_current_vllm_config
    from vllm.model_executor.layers import utils as layer_utils
    from vllm.model_executor.model_loader.utils import process_weights_after_loading

    layer_utils.check_cpu_sgl_kernel = lambda *a: False
    with set_current_vllm_config(vcfg):
        process_weights_after_loading(model, model_config, torch.device("cpu"))


def proposer_returns_tuple(vcfg: Any) -> bool:
    """vLLM's own SpecDecodeBaseProposer.model_returns_tuple(), run on a
    proposer object that carries the real speculative config."""
    from vllm.v1.spec_decode.llm_base_proposer import SpecDecodeBaseProposer

    p = object.__new__(SpecDecodeBaseProposer)
    p.method = vcfg.speculative_config.method
    p.draft_model_config = vcfg.speculative_config.draft_model_config
    p.speculative_config = vcfg.speculative_config
    p.vllm_config = vcfg
    return bool(p.model_returns_tuple())


def draft(model: torch.nn.Module, vcfg: Any, input_ids: torch.Tensor, positions: torch.Tensor,
          target_hidden: torch.Tensor, K: int) -> list[torch.Tensor]:
    """K draft steps as llm_base_proposer.propose() runs them (first pass,
    then steps 1..K-1), one token per request."""
    from vllm.config import set_current_vllm_config
    from vllm.forward_context import set_forward_context

    returns_tuple = proposer_returns_tuple(vcfg)
    tokens = []
    hidden = target_hidden
    with set_current_vllm_config(vcfg), set_forward_context(None, vcfg), torch.no_grad():
        for _ in range(K):
            ret = model(input_ids=input_ids, positions=positions, hidden_states=hidden)
            if not returns_tuple:
                last_hidden = hidden = ret
            else:
                last_hidden, hidden = ret
            logits = model.compute_logits(last_hidden)
            input_ids = logits.argmax(dim=-1)
            tokens.append(input_ids)
            positions = positions + 1
    return tokens


def build_target(vcfg: Any, seed: int = 1) -> tuple:
    """(target model, its vllm_config): the target model of the draft's
    speculative config, built from the same tiny config.json with vLLM's own
    class (the same attention stand-in and dense MLP), random weights."""
    from vllm.config import CompilationConfig, VllmConfig
    from vllm.config.compilation import CompilationMode
    from vllm.model_executor.model_loader.utils import get_model_architecture

    spec = vcfg.speculative_config
    tcfg = spec.target_model_config
    _skip_moe_copy(get_model_architecture(tcfg)[0])
    tvcfg = VllmConfig(model_config=tcfg, speculative_config=spec,
                       parallel_config=vcfg.parallel_config,
                       compilation_config=CompilationConfig(mode=CompilationMode.NONE))
    return construct(tvcfg, tcfg, seed), tvcfg


def final_norm(target: Any) -> tuple:
    """(its name, the module): the target's final norm, `model.norm` of the
    model or of its language model (a multimodal target such as GLM-OCR)."""
    for prefix, owner in (("", target), ("language_model.", getattr(target, "language_model", None))):
        norm = getattr(getattr(owner, "model", None), "norm", None)
        if norm is not None:
            return prefix + "model.norm", norm
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

    norm_name, norm = final_norm(target)
    seen = {}

    def hook(module, args, kwargs, out):
        x = args[0] if args else kwargs["x"]
        res = args[1] if len(args) > 1 else kwargs.get("residual")
        seen["hidden"], seen["residual"] = x.detach().clone(), res.detach().clone()

    h = norm.register_forward_hook(hook, with_kwargs=True)
    try:
        with set_current_vllm_config(tvcfg), set_forward_context(None, tvcfg), torch.no_grad():
            out = target(input_ids=input_ids, positions=positions)
            handoff = get_drafter_hidden_states(target, out)
    finally:
        h.remove()
    if "residual" not in seen or seen["residual"] is None:
        raise RuntimeError(f"{type(target).__name__}'s final norm was not called with "
                           "(hidden, residual)")
    eps = getattr(norm, "variance_epsilon", None) or norm.eps
    source = (f"{type(target).__name__}.forward, {norm_name} ({type(norm).__name__}), "
              "get_drafter_hidden_states")
    return {"hidden": seen["hidden"], "residual": seen["residual"], "norm_weight": norm.weight,
                "handoff": handoff, "eps": float(eps), "source": source}
