"""A tiny DeepSeek V4.1 DSpark drafter built from vLLM 0.33's own amd module
(`vllm/models/deepseek_v41/amd/dspark.py`) on a CPU, as on a gfx942 GPU whose
mHC takes vLLM's fallbacks, run through one draft block the way vLLM's DSpark
speculator runs it (tiny_dspark.run_block), so that the DSpark capture hooks
see the engine's tensors.

Why the amd module: `vllm.models.deepseek_v41` picks nvidia or amd by
platform; the nvidia drafter's layers run TileLang mHC (`mhc_post_tilelang`)
and attention. The amd one runs here with DeepSeek V4's machinery
(vllm_standins_v4, docs/FINDINGS.md F14): the ROCm platform module's GPU query
answered gfx942, the mHC CustomOps (`MHCPreDelayedOp`) dispatched to
`forward_hip`, which without AITER or TileLang falls back to vLLM's
`mhc_pre_delayed_torch`, `hc_collapse_triton` under Triton's interpreter with
bf16 stores rounded to nearest even, the MoE as V4's own dense MLP. vLLM's:
`DSparkDeepseekV4ForCausalLM` and `DSparkDeepseekV4Model` (main_proj,
main_norm, the broadcast to hc_mult streams, the layer loop, the final
`mhc_post_torch`, `DeepseekV4DecoderLayer._hc_collapse`, norm, lm_head through
`draft_lm_head.compute_logits`, the Markov and confidence heads), the decoder
layers' `forward` (their mHC seams and norms), `DSparkSpeculator.
_sample_sequential` (after the drafter's own `sample_sequential`, which
declines without --monokernel). Stood in, and said in FINDINGS.md:
* the layers' sparse MLA attention (`DeepseekV41ROCMAiterMLAAttention`: AITER
  and a ROCm attention backend) by `ContextAttention`: vLLM's projection
  names the context path reads (`fused_wqa_wkv`, `q_lora_rank`, `kv_norm`), a
  linear map of the block's input plus a linear map of the mean stored
  context K/V;
* the context-KV insert `_insert_context_kv` (RoPE, quantisation and the
  paged-cache write, `torch.ops._C.fused_deepseek_v4_qnorm_rope_kv_rope_*`,
  absent from the PyPI wheel): the normed K/V kept by the stand-in attention,
  no RoPE;
* the MoE (dense MLP), as for V4 (F14).
Everything stood in sits inside the captured block (SPEC.md §13.9.1).

Environment: TRITON_INTERPRET=1 and CUDA_VISIBLE_DEVICES empty before vLLM
loads (a fresh process), as the sweep sets them.
"""

from __future__ import annotations

import json
import os
from typing import Any

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "1")  # dspark is V2-only
os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import torch
from torch import nn

from . import tiny_dspark, vllm_standins, vllm_standins_v4
from .tiny_vllm import LinearAttention, construct
from .tiny_vllm_configs import CONFIGS

AMD41 = "vllm.models.deepseek_v41.amd"
H, V, R, N = tiny_dspark.H, tiny_dspark.V, tiny_dspark.R, tiny_dspark.N
TARGET_LAYERS = [0, 1]  # dspark_target_layer_ids of the 2-layer tiny target
LAYERS = 2  # draft layers (n_mtp_layers; V4.1 ships 3: a third repeats the same seam)

# V4's tiny config (tiny_vllm_configs) as a V4.1 checkpoint with DSpark stages
CONFIG = dict(CONFIGS["deepseek_v4"], architectures=["DeepseekV41ForCausalLM"],
              model_type="deepseek_v41", dspark_target_layer_ids=TARGET_LAYERS,
              dspark_markov_rank=R, n_mtp_layers=LAYERS, num_nextn_predict_layers=LAYERS,
              dspark_block_size=N, enable_confidence_head=True,
              mlp_layer_types=["sparse"] * 2)  # transformers' names (V4's config says "moe")


class ContextAttention(LinearAttention):
    """Stand-in for V4.1's ROCm sparse MLA attention, with the projections
    `precompute_and_store_context_kv` reads: `fused_wqa_wkv` (its wkv part,
    after `q_lora_rank` columns) and `kv_norm`. The block's output is
    W_a(x) + W_c(mean of the stored context K/V)."""

    def __init__(self, vllm_config: Any, prefix: str = "", **unused: Any) -> None:
        from vllm.model_executor.layers.layernorm import RMSNorm
        from vllm.model_executor.layers.linear import ReplicatedLinear

        super().__init__(vllm_config=vllm_config)
        cfg = vllm_config.model_config.hf_config
        self.q_lora_rank, self.head_dim = cfg.q_lora_rank, cfg.head_dim
        self.fused_wqa_wkv = ReplicatedLinear(cfg.hidden_size, cfg.q_lora_rank + cfg.head_dim,
                                              bias=False, prefix=prefix + ".fused_wqa_wkv")
        self.kv_norm = RMSNorm(cfg.head_dim, eps=cfg.rms_norm_eps)
        self.W_c = nn.Linear(cfg.head_dim, cfg.hidden_size, bias=False)
        self.context = None

    def store_context(self, kv: torch.Tensor) -> None:
        self.context = kv.detach().clone()

    def forward(self, positions: torch.Tensor, x: torch.Tensor, *unused: Any) -> torch.Tensor:
        out = self.W_a(x)
        if self.context is not None:
            out = out + self.W_c(self.context.float().mean(0).to(x.dtype))
        return out


def _insert_context_kv(attn: nn.Module, kv: torch.Tensor, positions: torch.Tensor,
                       slot_mapping: torch.Tensor) -> None:
    """amd/dspark.py's `_insert_context_kv` (CUDA ops of vllm._C): the normed
    context K/V kept by the stand-in attention."""
    attn.store_context(kv)


def prepare() -> None:
    """Before vLLM's configs ask the registry: the ROCm platform module
    (gfx942), the registry's DSparkV41DraftModel as the amd class, the amd
    decoder's attention and the context insert stood in, Triton's
    interpreter rounding as a GPU's stores do."""
    import importlib

    vllm_standins.triton_interpreter_rounding()
    vllm_standins_v4.rocm_platform_module()
    vllm_standins.register_in_process(AMD41 + ".dspark",
                                      {"DSparkV41DraftModel": "DSparkDeepseekV4ForCausalLM"})
    model = importlib.import_module(AMD41 + ".model")
    model.DeepseekV41ROCMAiterMLAAttention = ContextAttention  # _select_dsv4_attn_cls returns it
    importlib.import_module(AMD41 + ".dspark")._insert_context_kv = _insert_context_kv


def build(workdir: str, seed: int = 0) -> tuple[torch.nn.Module, Any]:
    """(vLLM's amd DSparkDeepseekV4ForCausalLM, vllm_config), random bf16
    weights (norm weights away from 1)."""
    from vllm.config import (
        CompilationConfig,
        ModelConfig,
        ParallelConfig,
        SpeculativeConfig,
        VllmConfig,
    )
    from vllm.config.compilation import CompilationMode

    prepare()
    path = os.path.join(workdir, "deepseek_v41")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(CONFIG, f)
    target = ModelConfig(model=path, tokenizer=path, skip_tokenizer_init=True, dtype="bfloat16",
                         max_model_len=256, enforce_eager=True)
    parallel = ParallelConfig()
    # the draft is the target's checkpoint (mtp.* stages): the same directory
    spec = SpeculativeConfig(method="dspark", model=path, num_speculative_tokens=N,
                             target_model_config=target, target_parallel_config=parallel)
    vcfg = VllmConfig(model_config=target, speculative_config=spec, parallel_config=parallel,
                      compilation_config=CompilationConfig(mode=CompilationMode.NONE))
    with vllm_standins_v4.build_scope((AMD41 + ".model",)):
        model = construct(vcfg, spec.draft_model_config, seed)
    return model, vcfg
