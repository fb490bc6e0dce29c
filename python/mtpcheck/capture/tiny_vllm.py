"""Tiny vLLM MTP models built from vLLM's own classes on CPU (the recipe in
docs/FINDINGS.md): a real VllmConfig from a tiny config.json, vLLM's CPU
platform, a one-process gloo group; the decoder block's attention replaced,
before the block is built, by one linear map (attention does not run on CPU
here) and a dense MLP (first_k_dense_replace above the MTP layer index, or
`mlp_only_layers`; where the decoder builds its MoE whatever the config says,
the engine's own dense MLP in the MoE's place, MOE_STANDIN). Predictors behind
@support_torch_compile are hooked by the capture itself (hooks.wrap_forward).
The tiny configs are in tiny_vllm_configs.py.

`draft(...)` runs K draft steps the way vLLM's proposer does: the model's
return value is unpacked by the proposer's own `model_returns_tuple()`
(SpecDecodeBaseProposer, llm_base_proposer.py), called on a proposer object
carrying the real speculative config; logits by the model's compute_logits,
greedy tokens, positions + 1."""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

import torch
from torch import nn

from ..weights_vllm import _distributed
from . import vllm_standins
from .tiny_vllm_configs import CONFIGS, H, I, V  # noqa: F401 (I: re-exported, tests)
from .tiny_vllm_handoff import final_norm, target_handoff  # noqa: F401 (re-exported: the sweep)

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
    # layers whose block is inline: the MoE the MTP layer builds is replaced too
    "bailing_hybrid": ("bailing_moe_mtp", ("BailingMoeV25MLAAttention", "BailingMoeV25")),
    "bailing_v3": ("bailing_moe_v3_mtp", ("BailingMoeV3MLAAttention", "BailingMoeV3MoE")),
    "mimo_v2": ("mimo_v2_mtp", ("MiMoV2Attention",)),
    "mimo_v2_omni": ("mimo_v2_mtp", ("MiMoV2Attention",)),
    "exaone_moe": ("exaone_moe", ("ExaoneMoeAttention",)),
    "exaone4_5": ("exaone4", ("Exaone4Attention",)),
    "nemotron_h": ("nemotron_h", ("NemotronHAttention", "NemotronHMoE")),
    "step3p5": ("step3p5", ("Step3p5Attention",)),
    "qwen3_next": ("qwen3_next", ("Qwen3NextAttention",)),
    "qwen3_5_text": ("qwen3_5", ("Qwen3NextAttention",)),  # its decoder imports Qwen3-Next's
    "qwen3_5": ("qwen3_5", ("Qwen3NextAttention",)),
    "qwen3_5_moe": ("qwen3_5", ("Qwen3NextAttention",)),
    "interns2_mobius": ("qwen3_5", ("Qwen3NextAttention",)),
    "mimo": ("qwen2", ("Qwen2Attention",)),
    # a module outside model_executor/models: its full name
    "hy_v4": ("vllm.models.hy_v4.nvidia.model", ("HYV4MLAAttention",)),
    "step5": ("vllm.models.step5.nvidia.model", ("Step5Attention",)),
    "glm5_next": ("vllm.models.glm5next.common.model", ("Glm5NextMLAAttention",)),
    # V3.2 / GLM-5: the DSA attention (MLA and the lightning indexer) of each
    # platform's decoder layer, which the MTP layer builds as its block
    "deepseek_v32": ("vllm.models.deepseek_v32.nvidia.model", ("DeepseekV32Attention",)),
    "glm_moe_dsa": ("vllm.models.deepseek_v32.nvidia.model", ("DeepseekV32Attention",)),
    "deepseek_v32_amd": ("vllm.models.deepseek_v32.amd.model", ("DeepseekV32MLAAttention",)),
    "dots3_note": ("vllm.models.dots3_note.nvidia.model",
                   ("Dots3NoteSlidingAttention", "Dots3NoteFullAttention")),
    # ERNIE's MTP block is a LlamaDecoderLayer (its target's: TARGET_ATTENTION)
    "ernie4_5_moe": ("llama", ("LlamaAttention",)),
    # DeepSeek V4's amd decoder layer (vllm_standins_v4: the amd MTP module on a CPU)
    "deepseek_v4": ("vllm.models.deepseek_v4.amd.model", ("DeepseekV4ROCMAiterMLAAttention",)),
    # Kimi K3: NoPE MLA (the KDA class too, though the tiny config has no KDA layer);
    # its nvidia modules (vLLM's choice on every platform but ROCm) or amd ones
    "kimi_k3": ("vllm.models.kimi_k3.nvidia.model", ("MultiHeadLatentAttention",
                                                      "KimiK3DeltaAttention")),
    "kimi_k3_amd": ("vllm.models.kimi_k3.amd.linear", ("KimiMLAAttention",
                                                        "KimiK3DeltaAttention")),
    # MiniMax M3: the MTP block's forced sparse attention and the target's dense one
    "minimax_m3": ("vllm.models.minimax_m3.nvidia.model", ("MiniMaxM3SparseAttention",
                                                           "MiniMaxM3Attention")),
    "minimax_m3_amd": ("vllm.models.minimax_m3.amd.model", ("MiniMaxM3SparseAttention",
                                                            "MiniMaxM3Attention")),
    # Inkling: its relative-position attention (FA4 kernels) in the decoder layer,
    # of its nvidia modules (vLLM's choice on every platform but ROCm) or amd ones
    "inkling": ("vllm.models.inkling.nvidia.model", ("InklingAttention",)),
    "inkling_amd": ("vllm.models.inkling.amd.model", ("InklingAttention",)),
}
# model types with stand-ins of their own (a module of this package with
# prepare(), run before the attention is replaced, and build_scope(), the
# context the model is constructed in)
OWN_STANDINS = {"deepseek_v4": "vllm_standins_v4"}
# model type -> (module, MoE class name): the MoE class a decoder builds whatever
# its config says, replaced by the engine's own dense MLP of the config's width
MOE_STANDIN = {"qwen3_5_moe": (("qwen3_5", "Qwen3NextSparseMoeBlock"),),
               # InternS2-Mobius's target routes every layer through a shared bank
               # of MoE blocks (meta_mlp), whose bookkeeping its top-level class keeps
               "interns2_mobius": (("qwen3_5", "Qwen3NextSparseMoeBlock"),
                                   ("interns2_mobius", "InternS2MobiusMetaMoeBlock",
                                    "InternS2MobiusForConditionalGeneration"))}
# model types whose MTP predictor asserts its attention's class (GLM-5-Next:
# `isinstance(self_attn, Glm5NextMLAAttention)`, common/mtp.py) -> the
# sub-modules it reads from it at construction (empty modules on the stand-in)
ISINSTANCE_STANDIN = {"glm5_next": ("mla_attn",)}
# model types whose MTP layer's input norms are Triton kernels (V3.2's fused_eh_norm)
TRITON_INPUT_NORMS = ("dots3_note", "glm5_next", "deepseek_v32", "glm_moe_dsa", "deepseek_v32_amd",
                      "kimi_k3", "kimi_k3_amd", "minimax_m3_amd", "inkling", "inkling_amd")
# model types whose layers create CUDA streams at construction (Kimi K3's MTP
# layer and its target: `torch.cuda.Stream()`, which raises without a driver):
# built with vllm_standins.cuda_stream_standin in place
CUDA_STREAMS = ("kimi_k3",)
# hybrid (Mamba-state) MLA targets built with prefix caching off from the start:
# vLLM's hybrid hook aligns the Mamba block to the cache block while prefix
# caching is on (its default), then the CPU platform turns prefix caching off
# for MLA models (platforms/cpu.py), and VllmConfig refuses the aligned block
# without it (`--mamba-block-size can only be set with --enable-prefix-caching`)
PREFIX_CACHING_OFF = ("kimi_k3",)
# model types whose module imports vllm_flash_attn's CUDA kernels at load time
NEEDS_FLASH_ATTN_STUB = ("dots3_note",)
# model type -> ((module, its registry entries: architecture -> class), ...),
# registered as classes loaded in this process: where a stand-in must be in place
# (Dots3Note), or where the registry resolves the architecture by platform and a
# CPU gets another class (vllm/models/deepseek_v32/__init__.py: on a CPU
# `DeepseekV32MTPModel` is deepseek_mtp.py's DeepSeekMTP; the CUDA and ROCm
# modules are what a GPU runs; `vllm.models.kimi_k3` re-exports the nvidia
# classes, the amd ones on ROCm: both are built here)
_V32 = "vllm.models.deepseek_v32."
_K3 = "vllm.models.kimi_k3."
_M3 = "vllm.models.minimax_m3."
_INK = "vllm.models.inkling."
IN_PROCESS = {
    "dots3_note": (("vllm.models.dots3_note", {"Dots3NoteForCausalLM": "Dots3NoteForCausalLM",
                                               "Dots3NoteMTPModel": "Dots3NoteMTP"}),),
    "deepseek_v32": ((_V32 + "nvidia.mtp", {"DeepseekV32MTPModel": "DeepseekV32MTP"}),
                     (_V32 + "nvidia.model", {"DeepseekV32ForCausalLM": "DeepseekV32ForCausalLM"})),
    "glm_moe_dsa": ((_V32 + "nvidia.mtp", {"DeepseekV32MTPModel": "DeepseekV32MTP"}),
                    (_V32 + "nvidia.model", {"GlmMoeDsaForCausalLM": "DeepseekV32ForCausalLM"})),
    "deepseek_v32_amd": ((_V32 + "amd.mtp", {"DeepseekV32MTPModel": "DeepseekV32MTP"}),
                         (_V32 + "amd.model", {"DeepseekV32ForCausalLM": "DeepseekV32ForCausalLM"})),
    "kimi_k3": ((_K3 + "nvidia.mtp", {"KimiK3MTPModel": "KimiK3MTP"}),
                (_K3 + "nvidia.model", {"KimiK3ForConditionalGeneration":
                                        "KimiK3ForConditionalGeneration",
                                        "KimiLinearForCausalLM": "KimiLinearForCausalLM"})),
    "kimi_k3_amd": ((_K3 + "amd.mtp", {"KimiK3MTPModel": "KimiK3MTP"}),
                    (_K3 + "amd.model", {"KimiK3ForConditionalGeneration":
                                         "KimiK3ForConditionalGeneration"}),
                    (_K3 + "amd.linear", {"KimiLinearForCausalLM": "KimiLinearForCausalLM"})),
    **{t: ((_M3 + d + ".mtp", {"MiniMaxM3MTP": "MiniMaxM3MTP"}),
           (_M3 + d + ".model", {a: a for a in ("MiniMaxM3SparseForConditionalGeneration",
                                                "MiniMaxM3SparseForCausalLM")}))
       for t, d in (("minimax_m3", "nvidia"), ("minimax_m3_amd", "amd"))},
    **{t: ((_INK + d + ".mtp", {"InklingMTPModel": "InklingMTP"}),
           (_INK + d + ".model", {"InklingForCausalLM": "InklingForCausalLM"}))
       for t, d in (("inkling", "nvidia"), ("inkling_amd", "amd"))},
}
# model type -> (module, MoE class, dense MLP class): a decoder that builds its
# MoE whatever the config says (MiniMax M3's MTP block: force_moe) gets the
# module's own dense MLP instead (vllm_standins.own_dense_mlp)
OWN_DENSE_MLP = {t: (_M3 + d + ".model", "MiniMaxM3MoE", "MiniMaxM3MLP")
                 for t, d in (("minimax_m3", "nvidia"), ("minimax_m3_amd", "amd"))}
# model types whose MTP layer count is another config field than
# num_nextn_predict_layers (MiniMax M3: text_config.num_mtp_modules)
LAYER_COUNT = {"minimax_m3": "num_mtp_modules", "minimax_m3_amd": "num_mtp_modules"}
# model types whose norms call FlashInfer's CUDA kernels with no native path
# (MiniMax M3's nvidia MiniMAXGemmaRMSNorm): run with the torch stand-ins of
# vllm_standins.flashinfer_gemma_norms while the family runs (run_scope)
FLASHINFER_NORMS = ("minimax_m3",)
# model types whose Triton kernels size their grids from the GPU's SM count
# (Inkling's rmsnorm and silu_and_mul): run under vllm_standins.gpu_properties
GPU_PROPERTIES = ("inkling", "inkling_amd")
# draft model types holding no embedding and no head until the proposer shares the
# target's (Inkling's InklingMTP: None, attached by load_eagle_model)
TARGET_SHARED = ("inkling_mtp",)
# Model types built on Qwen3-Next's MoE mixin, whose EPLB bookkeeping
# (set_moe_parameters) is skipped when the dense block leaves no MoE layer.
QWEN_NEXT_MOE_MIXIN = {"qwen3_next", "qwen3_5_text", "qwen3_5", "qwen3_5_moe", "interns2_mobius"}
# A target whose attention class lives in another module than the draft's
# (the draft module imported it by name before the patch): replaced there too.
TARGET_ATTENTION = {"mimo_v2": ("mimo_v2", ("MiMoV2Attention",)),
                    "mimo_v2_omni": ("mimo_v2", ("MiMoV2Attention",)),
                    # ERNIE's MTP block is a LlamaDecoderLayer, its target's layers Ernie4_5_Moe's
                    "ernie4_5_moe": ("ernie45_moe", ("Ernie4_5_MoeAttention",)),
                    "interns2_mobius": ("interns2_mobius", ("Qwen3NextAttention",))}
# model types whose config class ships as remote code: the transformers class
# whose fields the engine reads, registered under that name
REMOTE_CONFIG = {"pangu_ultra_moe": "DeepseekV3Config", "mimo_v2": "DeepseekV3Config",
                 "mimo_v2_omni": "DeepseekV3Config",
                 "mimo": "Qwen2Config", "interns2_mobius": "Qwen3_5MoeConfig"}
# MTP classes that ask for an MoE layer only to copy expert counts (EPLB
# bookkeeping): with the dense block there is none, so the copy is skipped.
DENSE_SKIP = {
    "glm4_moe": ("glm4_moe_mtp", "Glm4MoeMTP"),
    "glm4_moe_lite": ("glm4_moe_lite_mtp", "Glm4MoeLiteMTP"),
}


class LinearAttention(nn.Module):
    """The attention stand-in: one linear map of the normed input (SPEC.md
    10.1's W_a), whatever the attention class was given."""

    # dense attention (HY V4's MTP predictor asks whether a layer's is sparse)
    is_sparse = False

    def __init__(self, *args, **kwargs):
        nn.Module.__init__(self)  # not the replaced class's (a subclass: ISINSTANCE_STANDIN)
        config = kwargs.get("config") or next((a for a in args if hasattr(a, "hidden_size")), None)
        h = kwargs.get("hidden_size")
        if h is None and config is None:  # given the VllmConfig alone (DeepSeek V4's attention)
            vcfg = kwargs.get("vllm_config") or next(a for a in args if hasattr(a, "model_config"))
            config = vcfg.model_config.hf_config
        h = h or config.hidden_size
        self.W_a = nn.Linear(h, h, bias=False)

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        """W_a of the hidden, however the block passes it (by name, or as the
        one floating-point positional argument beside integer positions)."""
        hidden = kwargs.get("hidden_states")
        if hidden is None:
            hidden = next(a for a in args if torch.is_tensor(a) and a.is_floating_point())
        return self.W_a(hidden)


def _standin_for(model_type: str, cls: type) -> type:
    """LinearAttention, or where the engine asserts the attention's class
    (ISINSTANCE_STANDIN), a LinearAttention that is also a `cls`, carrying
    the attributes the engine reads from it at construction."""
    attrs = ISINSTANCE_STANDIN.get(model_type)
    if attrs is None:
        return LinearAttention

    def init(self, *args, **kwargs):
        LinearAttention.__init__(self, *args, **kwargs)
        for name in attrs:
            setattr(self, name, nn.Module())

    return type(cls.__name__ + "StandIn", (LinearAttention, cls), {"__init__": init})


def _patch_for_cpu(model_type):
    """The attention classes of `model_type` -> LinearAttention; the MoE
    bookkeeping copy of DENSE_SKIP skipped when there is no MoE layer."""
    import importlib

    if model_type in OWN_STANDINS:
        own_standins(model_type).prepare()
    if model_type == "inkling_amd":  # its modules import vllm.platforms.rocm: gfx942 answers
        from .vllm_standins_v4 import rocm_platform_module

        rocm_platform_module()
    if model_type in NEEDS_FLASH_ATTN_STUB:
        vllm_standins.flash_attn_stub()
    for module, archs in IN_PROCESS.get(model_type, ()):
        vllm_standins.register_in_process(module, archs)
    if model_type in TRITON_INPUT_NORMS:
        vllm_standins.triton_interpreter_rounding()
    if model_type in ("inkling", "inkling_amd"):  # the block's residual: a function's argument
        vllm_standins.inkling_residual_tap(ATTENTION[model_type][0])
    for mod_name, names in (ATTENTION[model_type], TARGET_ATTENTION.get(model_type, ("", ()))):
        if not names:
            continue
        mod = vllm_standins.models_module(mod_name)
        for name in names:
            orig = getattr(mod, name, None)
            if orig is None or not issubclass(orig, LinearAttention):
                setattr(mod, name, LinearAttention if orig is None else _standin_for(model_type, orig))
    if model_type == "ernie4_5_moe":
        _llama_attention_default()
    if model_type == "longcat_flash":
        _skip_lora_scaling()
    if model_type in REMOTE_CONFIG:
        _register_config(model_type)
    if model_type in QWEN_NEXT_MOE_MIXIN:
        vllm_standins.qwen_next_bookkeeping()
    for standin in MOE_STANDIN.get(model_type, ()):
        vllm_standins.dense_moe(*standin)
    if model_type in OWN_DENSE_MLP:
        vllm_standins.own_dense_mlp(*OWN_DENSE_MLP[model_type])
    if model_type not in DENSE_SKIP:
        return
    mod_name, cls_name = DENSE_SKIP[model_type]
    _skip_moe_copy(getattr(importlib.import_module("vllm.model_executor.models." + mod_name),
                           cls_name))


def own_standins(model_type: str) -> Any:
    """The module of OWN_STANDINS for `model_type`, or None."""
    import importlib

    name = OWN_STANDINS.get(model_type)
    return None if name is None else importlib.import_module("." + name, __package__)


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


def _llama_attention_default():
    """LlamaDecoderLayer takes its attention class as a keyword default bound
    when the class was defined (`attn_layer_type=LlamaAttention`): the
    stand-in goes there too (ERNIE's MTP block is a LlamaDecoderLayer)."""
    from vllm.model_executor.models import llama

    init = llama.LlamaDecoderLayer.__init__
    kw = dict(init.__kwdefaults__ or {})
    if "attn_layer_type" in kw:
        kw["attn_layer_type"] = LinearAttention
        init.__kwdefaults__ = kw
    elif init.__defaults__:
        init.__defaults__ = tuple(  # by name: the module's own name is replaced already
            LinearAttention if getattr(d, "__name__", "") == "LlamaAttention" else d
            for d in init.__defaults__)


def _register_config(model_type):
    """A config class for a model type whose class ships as remote code: the
    transformers class REMOTE_CONFIG names, under that name (the fields the
    engine reads are that class's)."""
    import transformers
    from transformers import CONFIG_MAPPING, AutoConfig

    name = CONFIGS[model_type]["model_type"]  # the name config.json gives
    if name in CONFIG_MAPPING:
        return
    base = getattr(transformers, REMOTE_CONFIG[model_type])
    cls = type("MtpcheckConfig_" + name, (base,), {"model_type": name})
    AutoConfig.register(name, cls)


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
        json.dump(_with_layer_count(model_type, mtp_layers), f)
    target = ModelConfig(model=d, tokenizer=d, skip_tokenizer_init=True, dtype="bfloat16",
                         max_model_len=256, enforce_eager=True)
    parallel = ParallelConfig(tensor_parallel_size=tp)
    spec = SpeculativeConfig(method="mtp", num_speculative_tokens=K, target_model_config=target,
                             target_parallel_config=parallel)
    draft_cfg = spec.draft_model_config
    # eager: forward hooks do not fire inside compiled regions (docs/DUMPS.md)
    vcfg = VllmConfig(model_config=draft_cfg, speculative_config=spec, parallel_config=parallel,
                      compilation_config=CompilationConfig(mode=CompilationMode.NONE))
    own = own_standins(model_type)
    with own.build_scope() if own is not None else contextlib.nullcontext():
        return construct(vcfg, draft_cfg, seed), vcfg


def _with_layer_count(model_type: str, layers: int) -> dict:
    """The tiny config with `layers` MTP layers, in the field the model reads
    (LAYER_COUNT, in its text config where it has one)."""
    cfg = dict(CONFIGS[model_type], num_nextn_predict_layers=layers)
    field = LAYER_COUNT.get(model_type)
    if field is not None:
        del cfg["num_nextn_predict_layers"]
        cfg["text_config"] = dict(cfg["text_config"], **{field: layers})
    return cfg


def run_scope(model_type: str) -> Any:
    """What a family needs in place while it is built and run (the draft steps
    and the target's forward): the FlashInfer norm stand-ins of
    FLASHINFER_NORMS' models, nothing otherwise."""
    if model_type in FLASHINFER_NORMS:
        return vllm_standins.flashinfer_gemma_norms()
    if model_type in GPU_PROPERTIES:
        return vllm_standins.gpu_properties()
    return contextlib.nullcontext()


def construct(vcfg: Any, draft_cfg: Any, seed: int) -> torch.nn.Module:
    """The draft model of `draft_cfg` built under `vcfg` (bf16), with random
    weights (norm weights away from 1, so that a pre-norm recycle shows) and
    what vLLM's loader does after loading; in eval mode."""
    from vllm.config import set_current_vllm_config
    from vllm.model_executor.model_loader.utils import get_model_architecture

    torch.set_default_dtype(torch.bfloat16)
    try:
        with set_current_vllm_config(vcfg), _build_scope(vcfg):
            _distributed()  # weights_vllm's one-process gloo group
            cls, _ = get_model_architecture(draft_cfg)
            model = cls(vllm_config=vcfg, prefix="")
    finally:
        torch.set_default_dtype(torch.float32)
    share_target_modules(model, vcfg)
    randomize(model, seed)
    after_loading(model, vcfg, draft_cfg)
    return model.eval()


def _build_scope(vcfg: Any) -> Any:
    """What a model needs in place while it is built, by the target's model
    type (the draft's and the target's build alike): NoStream for the CUDA
    streams of CUDA_STREAMS' models, nothing otherwise."""
    import contextlib

    spec = vcfg.speculative_config
    target = spec.target_model_config if spec is not None else vcfg.model_config
    if getattr(target.hf_config, "model_type", None) in CUDA_STREAMS:
        return vllm_standins.cuda_stream_standin()
    return contextlib.nullcontext()


def share_target_modules(model: torch.nn.Module, vcfg: Any) -> None:
    """A draft model that owns no embedding or head (`has_own_embed_tokens` /
    `has_own_lm_head` False: Nemotron-H; a deferred `shared_head.head`:
    GLM-5-Next) gets the target's from the proposer, which shares them after
    loading (llm_base_proposer.py); with no target built, an embedding and a
    head of the target's shapes stand in."""
    from vllm.config import set_current_vllm_config
    from vllm.model_executor.layers.vocab_parallel_embedding import (
        ParallelLMHead,
        VocabParallelEmbedding,
    )

    inner = getattr(model, "model", None)
    with set_current_vllm_config(vcfg):
        shared = getattr(vcfg.model_config.hf_config, "model_type", None) in TARGET_SHARED
        if (shared or getattr(model, "has_own_embed_tokens", True) is False) \
                and inner is not None and getattr(inner, "embed_tokens", False) is None:
            inner.embed_tokens = VocabParallelEmbedding(V, H, params_dtype=torch.bfloat16)
        if (shared or getattr(model, "has_own_lm_head", True) is False) and \
                getattr(model, "lm_head", False) is None:
            model.lm_head = ParallelLMHead(V, H, params_dtype=torch.bfloat16)
        # a layer whose shared head defers its head to the target's lm_head
        # (SharedHead(defer_lm_head=True): GLM-5-Next), shared the same way
        layers = getattr(inner, "layers", None)
        for layer in (layers.values() if isinstance(layers, nn.ModuleDict) else layers or ()):
            sh = getattr(layer, "shared_head", None)
            if sh is not None and getattr(sh, "head", False) is None:
                sh.head = ParallelLMHead(V, H, params_dtype=torch.bfloat16)


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
    extra = {}
    if tcfg.hf_config.model_type in PREFIX_CACHING_OFF:
        from vllm.config import CacheConfig

        extra["cache_config"] = CacheConfig(enable_prefix_caching=False)
    tvcfg = VllmConfig(model_config=tcfg, speculative_config=spec,
                       parallel_config=vcfg.parallel_config,
                       compilation_config=CompilationConfig(mode=CompilationMode.NONE), **extra)
    return construct(tvcfg, tcfg, seed), tvcfg
