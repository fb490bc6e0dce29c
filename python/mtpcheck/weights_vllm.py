"""Tiny vLLM MTP models for the weights capture, built from vLLM's own
classes on CPU (real attention, MoE MTP block, real quantization config),
and checkpoint key lists named as the published checkpoints are."""

from __future__ import annotations

import json
import os
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: torch and vLLM are imported where used
    import torch

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

H, V = 64, 256

BASE = {
    "hidden_size": H, "intermediate_size": 96, "moe_intermediate_size": 32, "vocab_size": V,
    "num_nextn_predict_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
    "rms_norm_eps": 1e-6, "first_k_dense_replace": 0, "n_routed_experts": 4,
    "n_shared_experts": 1, "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1,
    "hidden_act": "silu", "max_position_embeddings": 512, "torch_dtype": "bfloat16",
    "rope_theta": 10000.0, "routed_scaling_factor": 1.0, "norm_topk_prob": True,
    "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1,
}
# family -> (config, N = num_hidden_layers as published)
CONFIGS = {
    "deepseek_v3": (dict(BASE, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3",
                         kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=16,
                         qk_rope_head_dim=8, v_head_dim=16, topk_method="noaux_tc",
                         scoring_func="sigmoid"), 61),
    "deepseek_v32": (dict(BASE, architectures=["DeepseekV32ForCausalLM"],
                          model_type="deepseek_v32", kv_lora_rank=16, q_lora_rank=24,
                          qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=16,
                          topk_method="noaux_tc", scoring_func="sigmoid", index_n_heads=2,
                          index_head_dim=32, index_topk=8), 61),
    "glm": (dict(BASE, architectures=["Glm4MoeForCausalLM"], model_type="glm4_moe", head_dim=32,
                 partial_rotary_factor=0.5, attention_bias=True, use_qk_norm=False), 92),
    # GLM-5.x: DeepSeek V3.2's sparse attention under GLM's name; vLLM builds
    # its MTP layer with the V3.2 MTP class (config/speculative.py
    # hf_config_override: glm_moe_dsa -> DeepseekV32MTPModel)
    "glm5": (dict(BASE, architectures=["GlmMoeDsaForCausalLM"], model_type="glm_moe_dsa",
                  kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=16, qk_rope_head_dim=8,
                  v_head_dim=16, topk_method="noaux_tc", scoring_func="sigmoid",
                  index_n_heads=2, index_head_dim=32, index_topk=8), 78),
    # DeepSeek V4-Flash (N 43): MLA with compressed sparse attention, the
    # hyper-connection weights, a noaux_tc router (its gate bias); every
    # layer MoE. Built with the CUDA platform's MTP class (the CPU platform
    # registers a stub that raises), see _allow_v4_on_cpu.
    "deepseek_v4": (dict(  # noqa: C408 (keyword arguments, as config.json keys)
        architectures=["DeepseekV4ForCausalLM"], model_type="deepseek_v4", vocab_size=V,
        hidden_size=H, moe_intermediate_size=32, num_attention_heads=2, num_key_value_heads=1,
        head_dim=64, q_lora_rank=32, num_experts_per_tok=2, n_routed_experts=4,
        n_shared_experts=1, scoring_func="sqrtsoftplus", topk_method="noaux_tc",
        norm_topk_prob=True, routed_scaling_factor=1.5, max_position_embeddings=512,
        rope_theta=10000.0, compress_rates={"compressed_sparse_attention": 4,
                                            "heavily_compressed_attention": 128},
        compress_rope_theta=160000.0, hc_mult=4, hc_sinkhorn_iters=2, hc_eps=1e-6,
        swiglu_limit=10.0, sliding_window=16, o_groups=2, o_lora_rank=32, index_n_heads=2,
        index_head_dim=32, index_topk=8, hidden_act="silu", rms_norm_eps=1e-6,
        bos_token_id=0, eos_token_id=1, tie_word_embeddings=False, qk_rope_head_dim=8,
        partial_rotary_factor=0.125, torch_dtype="bfloat16",
        rope_parameters={"main": {"rope_type": "default", "rope_theta": 10000.0,
                                  "partial_rotary_factor": 0.125},
                         "compress": {"rope_theta": 160000.0, "rope_type": "default",
                                      "partial_rotary_factor": 0.125}}), 43),
}
# DeepSeek V4-Pro (N 61): V4-Flash's class and loader (the same
# DeepseekV4ForCausalLM), with V4-Pro's published layer count and
# hc_sinkhorn_iters (SPEC.md §1); tiny hidden sizes as above
CONFIGS["deepseek_v4_pro"] = (dict(CONFIGS["deepseek_v4"][0], hc_sinkhorn_iters=20), 61)
V4 = ("deepseek_v4", "deepseek_v4_pro")
# the audit's --family for each capture family: V3.2 and GLM-5 load with
# the DeepSeek MTP loader (deepseek_mtp.py / deepseek_v32 mtp.py)
AUDIT_FAMILY = {"deepseek_v3": "deepseek_v3", "deepseek_v32": "deepseek_v3",
                "glm5": "deepseek_v3", "glm": "glm", "deepseek_v4": "deepseek_v4",
                "deepseek_v4_pro": "deepseek_v4"}
SPARSE = ("deepseek_v32", "glm5")
FP8 = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
       "weight_block_size": [16, 16]}
# compressed-tensors, block FP8 on every Linear but the router gate and the
# head (the layout of the published compressed-tensors DeepSeek/GLM
# checkpoints); its scales are `weight_scale`, not `weight_scale_inv`
CT_FP8 = {"quant_method": "compressed-tensors", "format": "float-quantized",
          "config_groups": {"group_0": {
              "targets": ["Linear"],
              "weights": {"num_bits": 8, "type": "float", "strategy": "block",
                          "block_structure": [8, 8], "symmetric": True, "dynamic": False},
              "input_activations": {"num_bits": 8, "type": "float", "strategy": "group",
                                    "group_size": 16, "symmetric": True, "dynamic": True}}},
          "ignore": ["lm_head", "re:.*mlp.gate$", "re:.*eh_proj$", "re:.*shared_head.head$",
                     "re:.*indexer.weights_proj$"]}
QUANTS = {"fp8": FP8, "ct-fp8": CT_FP8}
# DeepSeek V4: FP8 linears (vLLM's DeepseekV4FP8Config, routed from "fp8"),
# the routed experts in FP8 (V4-Flash-Base) or MXFP4 (V4-Flash)
V4_QUANTS = {"fp8": "fp8", "fp4": "fp4"}
# DeepSeek V4 under compressed-tensors: block FP8 on every Linear (routed
# experts too) but the router gate, the head and the MTP input projections
# e_proj / h_proj (ignored by name, as the DeepSeek / GLM layouts above
# ignore eh_proj). The ignore rule matches only a module built with its
# prefix (SPEC.md §12.5 #6); its scales are `weight_scale`
V4_CT_FP8 = dict(CT_FP8, ignore=["re:.*ffn.gate$", "re:.*head$", "re:.*\\.e_proj$",
                                 "re:.*\\.h_proj$"])
V4_CT_IGNORED = (".e_proj.", ".h_proj.")


def _distributed():
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    from vllm.distributed.parallel_state import model_parallel_is_initialized

    if model_parallel_is_initialized():
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="gloo",
                                 distributed_init_method=f"tcp://127.0.0.1:{port:d}")
    initialize_model_parallel(1, 1)


def _vllm_023():
    import vllm

    return vllm.__version__.startswith("0.23")


def write_config(family: str, workdir: str, quant: str | None = None, mtp_layers: int = 1) -> str:
    """A model folder for family under workdir (config.json of a tiny model with
    mtp_layers MTP layers, quantized as quant): its path."""
    cfg, n = CONFIGS[family]
    cfg = dict(cfg, num_hidden_layers=n, num_nextn_predict_layers=mtp_layers)
    if family in V4:  # the first 3 layers hash-routed, as published
        # (vLLM 0.23 reads num_hash_layers, 0.33 counts the hash_moe
        # entries; the MTP layer N > 3 routes by its gate either way)
        cfg.update(layer_types=["compressed_sparse_attention"] * (n + mtp_layers),
                   mlp_layer_types=["hash_moe"] * 3 + ["moe"] * (n + mtp_layers - 3),
                   num_hash_layers=3)
        if quant == "ct-fp8":
            cfg.update(quantization_config=V4_CT_FP8)
        elif quant:
            cfg.update(expert_dtype=V4_QUANTS[quant], quantization_config=FP8)
        if _vllm_023():  # 0.23 reads one flat rope dict (config/model.py
            # _get_and_verify_max_len: rp["rope_type"]); RoPE has no parameters
            cfg["rope_parameters"] = dict(cfg["rope_parameters"]["main"])
    elif quant:
        cfg["quantization_config"] = QUANTS[quant]
    d = os.path.join(workdir, f"{family}.{quant or 'bf16'}.L{mtp_layers:d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    return d


class _NoKernel:
    def __init__(self, *args, **kwargs):
        pass


def _allow_fp8_on_cpu():
    """FP8 linear layers: vLLM picks the scaled-mm kernel at construction and
    on this CPU none qualifies (no AMX-FP8, no vllm._C). Only the kernel
    choice is relaxed (the platform's first candidate): weights and scales
    are created as vLLM creates them; no forward runs."""
    from vllm.model_executor.kernels import linear as kl

    if getattr(kl, "_mtpcheck_fp8", False):
        return
    orig = kl.choose_scaled_mm_linear_kernel

    def choose(config, possible_kernels, *args, **kwargs):
        try:
            return orig(config, possible_kernels, *args, **kwargs)
        except ValueError:
            from vllm.platforms import current_platform

            cands = possible_kernels.get(current_platform._enum, [])
            if not cands:  # vLLM 0.23's W8A16 FP8 (compressed-tensors on a
                # machine without FP8 compute) lists no CPU kernel at all:
                # a parameter-free stand-in (the scheme registered the
                # weight and its scale before it asks for a kernel)
                return _NoKernel
            return cands[-1]

    kl.choose_scaled_mm_linear_kernel = choose
    kl._mtpcheck_fp8 = True


def _allow_sparse_on_cpu():
    """V3.2 / GLM-5: vLLM's CPU platform refuses a sparse MLA backend at
    construction (platforms/cpu.py get_attn_backend_cls: "Sparse Attention
    is not supported on CPU"; vLLM 0.23 refuses any MLA backend: the Triton
    MLA backend is named instead). The backend only decides how attention runs,
    not which parameters the layer has or how load_weights maps them: the
    selection is asked for the dense MLA backend instead. No forward runs."""
    from vllm.platforms import cpu

    if getattr(cpu.CpuPlatform, "_mtpcheck_sparse", False):
        return
    orig = cpu.CpuPlatform.get_attn_backend_cls.__func__

    def select(cls, backend, attn_selector_config, *args, **kwargs):
        if attn_selector_config.use_sparse:
            attn_selector_config = attn_selector_config._replace(use_sparse=False)
        try:
            return orig(cls, backend, attn_selector_config, *args, **kwargs)
        except NotImplementedError:  # vLLM 0.23: "MLA is not supported on CPU"
            from vllm.v1.attention.backends.registry import AttentionBackendEnum

            return AttentionBackendEnum.TRITON_MLA.get_path()

    cpu.CpuPlatform.get_attn_backend_cls = classmethod(select)
    cpu.CpuPlatform._mtpcheck_sparse = True
    _allow_mla_prefill_on_cpu()


def _allow_mla_prefill_on_cpu():
    """vLLM 0.23's MLA layer builds its prefill backend at construction, and
    the one it picks needs flash-attn (an assertion on CPU). The backend is
    a kernel helper without parameters: when it cannot be built, a stand-in
    takes its place. (vLLM 0.33 builds it lazily; nothing to relax there.)"""
    try:
        from vllm.model_executor.layers.attention import mla_attention as ma
    except ImportError:
        return
    orig = getattr(ma, "get_mla_prefill_backend", None)
    if orig is None or getattr(ma, "_mtpcheck_prefill", False):
        return

    class _NoPrefill:
        def __init__(self, *args, **kwargs):
            pass

    def choose(*args, **kwargs):
        cls = orig(*args, **kwargs)

        def make(*a, **k):
            try:
                return cls(*a, **k)
            except (AssertionError, ImportError):
                return _NoPrefill()

        return make

    ma.get_mla_prefill_backend = choose
    ma._mtpcheck_prefill = True


def _allow_v4_on_cpu():
    """DeepSeek V4: vLLM's CPU platform registers an MTP stub that raises
    (models/deepseek_v4/cpu/mtp.py), so the CUDA platform's class is built
    (models/deepseek_v4/nvidia/mtp.py). Three construction-time choices are
    relaxed, none of which names a parameter or changes load_weights: the
    aux CUDA streams (unused without a forward), the attention's fp8 einsum
    recipe (asks the GPU arch: the SM90 recipe is taken), and the MXFP4 MoE
    backend (none qualifies on CPU: the first candidate is taken)."""
    import torch
    from vllm.model_executor.layers.fused_moe.oracle import mxfp4 as ox
    from vllm.model_executor.layers.quantization import mxfp4 as mq
    from vllm.models.deepseek_v4.nvidia import flashmla

    if getattr(flashmla, "_mtpcheck_cpu", False):
        return

    class _Stream:
        def __init__(self, *args, **kwargs):
            pass

    torch.cuda.Stream = _Stream
    flashmla.compute_fp8_einsum_recipe = lambda block_size=128: ((1, 128, 128), False)
    orig = ox.select_deepseek_v4_mxfp4_moe_backend

    def select(*args, **kwargs):
        try:
            return orig(*args, **kwargs)
        except NotImplementedError:
            backend = ox._get_priority_backends()[0]
            return backend, ox.backend_to_kernel_cls(backend)[0]

    ox.select_deepseek_v4_mxfp4_moe_backend = select
    mq.select_deepseek_v4_mxfp4_moe_backend = select
    flashmla._mtpcheck_cpu = True


def v4_mtp_class() -> type:
    """vLLM's DeepSeek V4 MTP class (models/deepseek_v4/nvidia/mtp.py), buildable on CPU."""
    _allow_v4_on_cpu()
    from vllm.models.deepseek_v4.nvidia.mtp import DeepSeekV4MTP

    return DeepSeekV4MTP


def cuda_mtp_class() -> type:
    """The CUDA platform's V3.2 / GLM-5 MTP class (models/deepseek_v32/
    nvidia/mtp.py DeepseekV32MTP), importable and buildable on CPU."""
    from vllm.models.deepseek_v32.nvidia.mtp import DeepseekV32MTP

    return DeepseekV32MTP


def _glm5_config():
    """GLM-5 (model_type glm_moe_dsa) on vLLM 0.23 with transformers 4.57
    (the version its venv resolves): transformers has no config class for
    it and vLLM 0.23's config registry (transformers_utils/config.py
    _CONFIG_REGISTRY) names none, so ModelConfig refuses the folder. vLLM
    0.23's model code does handle it (registry GlmMoeDsaForCausalLM,
    speculative.py hf_config_override: glm_moe_dsa -> DeepSeekMTPModel).
    The stand-in registers DeepseekV3Config under that model type, as vLLM
    0.23 itself does for deepseek_v32: it carries config.json's values; the
    indexer is built because index_topk is set (deepseek_v2.py is_v32)."""
    from transformers import AutoConfig

    try:
        AutoConfig.for_model("glm_moe_dsa")
        return
    except ValueError:
        pass
    from transformers import DeepseekV3Config
    from vllm.transformers_utils import config as tc

    class GlmMoeDsaStandIn(DeepseekV3Config):
        model_type = "glm_moe_dsa"

    tc._CONFIG_REGISTRY["glm_moe_dsa"] = GlmMoeDsaStandIn


def _cpu_platform():
    """vLLM 0.23 ignores VLLM_TARGET_DEVICE=cpu on a machine with CUDA
    libraries: its CPU platform is set before any module is built."""
    from vllm import platforms

    if platforms._current_platform is None or not platforms._current_platform.is_cpu():
        from vllm.platforms.cpu import CpuPlatform

        platforms._current_platform = CpuPlatform()


def _reference_mla():
    """The VllmConfig argument that keeps MLA layers on vLLM's reference CPU
    backend. On a CPU with AMX tiles the CPU platform picks AMX_MLA, whose
    implementation in vLLM 0.33 refuses the V3.2 layers' topk_indices_buffer
    at construction (TypeError), so the weight audit could not build the
    model on Intel machines. The loaders, the audit's subject, are the same
    under either backend. Empty for versions without the setting."""
    try:
        from vllm.config import AttentionConfig
        from vllm.v1.attention.backends.registry import AttentionBackendEnum
        backend = AttentionBackendEnum.CPU_MLA
    except (ImportError, AttributeError):
        return {}
    return {"attention_config": AttentionConfig(backend=backend)}


def build(model_dir: str, cls: type | None = None) -> tuple[torch.nn.Module, Any]:
    """vLLM's MTP model for the model folder (config.json), on CPU: the
    class the CPU platform registers, or cls (built with the same config;
    e.g. the CUDA platform's DeepseekV32MTP, whose loader GPUs run)."""
    import torch

    _cpu_platform()
    _glm5_config()
    from vllm.config import (
        CacheConfig,
        CompilationConfig,
        ModelConfig,
        ParallelConfig,
        SpeculativeConfig,
        VllmConfig,
        set_current_vllm_config,
    )
    from vllm.config.compilation import CompilationMode
    from vllm.model_executor.model_loader.utils import get_model_architecture

    target = ModelConfig(model=model_dir, tokenizer=model_dir, skip_tokenizer_init=True,
                         dtype="bfloat16", max_model_len=256, enforce_eager=True)
    parallel = ParallelConfig()
    spec = SpeculativeConfig(method="mtp", num_speculative_tokens=1, target_model_config=target,
                             target_parallel_config=parallel)
    draft = spec.draft_model_config
    extra = {}
    if _vllm_023() and draft.hf_config.architectures[0] == "DeepSeekV4MTPModel":
        # 0.23's V4 attention asserts an fp8 KV cache at construction
        # (deepseek_v4/attention.py _resolve_dsv4_kv_cache_dtype); the
        # cache is no parameter
        extra["cache_config"] = CacheConfig(cache_dtype="fp8")
    extra.update(_reference_mla())
    vcfg = VllmConfig(model_config=draft, speculative_config=spec, parallel_config=parallel,
                      compilation_config=CompilationConfig(mode=CompilationMode.NONE), **extra)
    _allow_fp8_on_cpu()
    _allow_sparse_on_cpu()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with set_current_vllm_config(vcfg):
            _distributed()
            if cls is None and draft.hf_config.architectures[0] == "DeepSeekV4MTPModel":
                cls = v4_mtp_class()
            if cls is None:
                cls, _ = get_model_architecture(draft)
            model = cls(vllm_config=vcfg, prefix="")
    finally:
        torch.set_default_dtype(torch.float32)
    return model, vcfg


def _v3_layer(family, n):
    p = f"model.layers.{n:d}."
    keys = [p + s for s in ("embed_tokens.weight", "enorm.weight", "hnorm.weight",
                            "eh_proj.weight", "shared_head.norm.weight",
                            "shared_head.head.weight", "input_layernorm.weight",
                            "post_attention_layernorm.weight")]
    if family == "glm":
        attn = [f"self_attn.{x}_proj.{w}" for x in "qkvo" for w in ("weight", "bias")
                if not (x == "o" and w == "bias")]
    else:
        attn = [f"self_attn.{x}.weight" for x in ("q_a_proj", "q_a_layernorm", "q_b_proj",
                                                    "kv_a_proj_with_mqa", "kv_a_layernorm",
                                                    "kv_b_proj", "o_proj")]
    if family in SPARSE:
        attn += [f"self_attn.indexer.{x}" for x in ("wq_b.weight", "wk.weight",
                                                      "k_norm.weight", "k_norm.bias",
                                                      "weights_proj.weight")]
    mlp = ["mlp.gate.weight", "mlp.gate.e_score_correction_bias"]
    mlp += [f"mlp.shared_experts.{x}.weight" for x in ("gate_proj", "up_proj", "down_proj")]
    mlp += [f"mlp.experts.{e:d}.{x}.weight" for e in range(BASE["n_routed_experts"])
            for x in ("gate_proj", "up_proj", "down_proj")]
    return keys + [p + s for s in attn + mlp]


def _quantized(key):
    """Whether a published FP8 checkpoint stores key in FP8 with a scale:
    the projections but eh_proj and the indexer's weights_proj (bf16), and
    the indexer's wk (FP8 beside a bf16 weights_proj)."""
    return (("_proj.weight" in key and "eh_proj" not in key and "weights_proj" not in key)
            or key.endswith((".indexer.wk.weight", ".indexer.wq_b.weight")))


def _v4_layer(i):
    """The V4-Flash MTP layer i as published (mtp.{i}.*), two experts."""
    p = f"mtp.{i:d}."
    lin = ["attn.wq_a", "attn.wkv", "attn.wq_b", "attn.wo_a", "attn.wo_b", "e_proj", "h_proj"]
    lin += [f"ffn.shared_experts.w{k:d}" for k in (1, 2, 3)]
    lin += [f"ffn.experts.{e:d}.w{k:d}" for e in range(2) for k in (1, 2, 3)]
    keys = [p + x + ".weight" for x in lin]
    keys += [p + x for x in ("attn.attn_sink", "attn.q_norm.weight", "attn.kv_norm.weight",
                             "attn_norm.weight", "ffn_norm.weight", "enorm.weight",
                             "hnorm.weight", "norm.weight", "ffn.gate.weight", "ffn.gate.bias",
                             "hc_attn_fn", "hc_attn_base", "hc_attn_scale", "hc_ffn_fn",
                             "hc_ffn_base", "hc_ffn_scale", "hc_head_fn", "hc_head_base",
                             "hc_head_scale")]
    return keys


def checkpoint_keys(family: str, quant: str | None = None, mtp_layers: int = 1) -> list[str]:
    """The key list of a checkpoint named as the published ones (the MTP
    layers and a few target-model keys); FP8: a scale beside each quantized
    weight (`weight_scale_inv`; compressed-tensors: `weight_scale`)."""
    n = CONFIGS[family][1]
    if family in V4:  # V4-Flash / Pro: top-level head/embed only (no mtp.{i}.head)
        keys = ["embed.weight", "head.weight", "norm.weight", "layers.0.attn_norm.weight"]
        for i in range(mtp_layers):
            keys += _v4_layer(i)
        if quant:
            lin = (".attn.wq_a.", ".attn.wkv.", ".attn.wq_b.", ".attn.wo_a.", ".attn.wo_b.",
                   ".e_proj.", ".h_proj.", ".experts.", ".shared_experts.")
            if quant == "ct-fp8":
                lin = tuple(x for x in lin if x not in V4_CT_IGNORED)
            suffix = ".weight_scale" if quant == "ct-fp8" else ".scale"
            keys += [k[: -len(".weight")] + suffix for k in keys
                     if k.startswith("mtp.") and k.endswith(".weight") and any(x in k for x in lin)]
        return keys
    keys = ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight",
            "model.layers.0.input_layernorm.weight"]
    for i in range(mtp_layers):
        keys += _v3_layer(family, n + i)
    if quant:
        suffix = ".weight_scale" if quant == "ct-fp8" else ".weight_scale_inv"
        keys += [k[: -len(".weight")] + suffix for k in keys if _quantized(k)]
    return keys


def checkpoint_tensors(family: str, quant: str | None = None,
                       mtp_layers: int = 1) -> list[tuple[str, torch.dtype, tuple[int, ...]]]:
    """(key, dtype, shape) as checkpoint_keys names them: FP8 weights in
    float8_e4m3fn with a [2, 4] block scale (16 x 16 blocks of a [32, 64]
    weight), the rest bf16 [1]. Only the dtype and the weight/scale shape
    ratio matter: vLLM dequantizes an FP8 indexer wk at load (deepseek_v2.py
    _try_load_fp8_indexer_wk), and only when its dtype is FP8."""
    import torch

    keys = checkpoint_keys(family, quant, mtp_layers)
    if family in V4:  # FP8 where a scale is beside (FP4 experts: not FP8)
        have = set(keys)
        scaled = {k for k in keys if k.endswith(".weight")
                  and (k[:-7] + ".scale" in have or k + "_scale" in have)
                  and not (quant == "fp4" and ".experts." in k and ".shared_" not in k)}
    else:
        scaled = {k for k in keys if quant and _quantized(k)}
    out = []
    for k in keys:
        if ".shared_experts." in k:  # V4 pads them at load: 2-D
            out.append((k, torch.bfloat16, (2, 2)))
            continue
        if k in scaled:
            out.append((k, torch.float8_e4m3fn, (32, 64)))
        elif quant and k.endswith((".weight_scale_inv", ".weight_scale", ".scale")):
            out.append((k, torch.float32, (2, 4)))
        else:
            out.append((k, torch.bfloat16, (1,)))
    return out
