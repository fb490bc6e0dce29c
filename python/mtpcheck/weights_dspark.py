"""The DSpark drafter of DeepSeek V4.1 for the weights capture: vLLM 0.33's
DSparkDeepseekV4ForCausalLM (vllm/models/deepseek_v41/nvidia/dspark.py)
built on CPU from a tiny V4.1 config, and a key list named as a V4.1
checkpoint ships its DSpark stages (mtp.{s}.*). The class's load_weights,
_remap_dspark_name and stacked rules are the engine's own: nothing here
restates them (docs/WEIGHTS.md "DSpark checkpoints")."""

import json
import os

from . import weights_vllm as wv

# num_hidden_layers N: the stages' attention/quantization prefixes are
# model.layers.{N+s}; the parameter paths model.layers.{s} (ours: 43)
N = 43
STAGES = 3
RANK = 8  # dspark_markov_rank
TEXT = dict(wv.CONFIGS["deepseek_v4"][0], num_hidden_layers=N, num_nextn_predict_layers=STAGES,
            dspark_target_layer_ids=[1, 21, 41], dspark_markov_rank=RANK,
            dspark_n_routed_experts=2, dspark_block_size=4, enable_confidence_head=True)
TEXT.pop("architectures")
TEXT.pop("model_type")


def write_config(workdir, quant=None):
    """A V4.1 model folder (config.json: text_config nested, as published)."""
    text = dict(TEXT, layer_types=["compressed_sparse_attention"] * N, num_hash_layers=3)
    cfg = {"architectures": ["DeepseekV41ForCausalLM"], "model_type": "deepseek_v41",
           "text_config": text, "torch_dtype": "bfloat16"}
    if quant:
        text.update(expert_dtype=wv.V4_QUANTS[quant])
        cfg["quantization_config"] = dict(wv.FP8, expert_dtype=wv.V4_QUANTS[quant])
    d = os.path.join(workdir, "deepseek_v41_dspark.%s" % (quant or "bf16"))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    return d


def build(model_dir):
    """DSparkDeepseekV4ForCausalLM for the folder, on CPU (method dspark)."""
    import torch

    wv._cpu_platform()
    from vllm.config import (CompilationConfig, ModelConfig, ParallelConfig, SpeculativeConfig,
                             VllmConfig, set_current_vllm_config)
    from vllm.config.compilation import CompilationMode
    from vllm.model_executor.model_loader.utils import get_model_architecture

    target = ModelConfig(model=model_dir, tokenizer=model_dir, skip_tokenizer_init=True,
                         dtype="bfloat16", max_model_len=256, enforce_eager=True)
    parallel = ParallelConfig()
    spec = SpeculativeConfig(method="dspark", target_model_config=target,
                             target_parallel_config=parallel)
    draft = spec.draft_model_config
    vcfg = VllmConfig(model_config=draft, speculative_config=spec, parallel_config=parallel,
                      compilation_config=CompilationConfig(mode=CompilationMode.NONE),
                      **wv._reference_mla())
    wv._allow_fp8_on_cpu()
    wv._allow_sparse_on_cpu()
    wv._allow_v4_on_cpu()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with set_current_vllm_config(vcfg):
            wv._distributed()
            cls, _ = get_model_architecture(draft)
            model = cls(vllm_config=vcfg, prefix="")
    finally:
        torch.set_default_dtype(torch.float32)
    return model, vcfg
