"""The DSpark drafter of DeepSeek V4.1 for the weights capture: vLLM 0.33's
DSparkDeepseekV4ForCausalLM (vllm/models/deepseek_v41/nvidia/dspark.py)
built on CPU from a tiny V4.1 config, and a key list named as a V4.1
checkpoint ships its DSpark stages (mtp.{s}.*). The class's load_weights,
_remap_dspark_name and stacked rules are the engine's own: nothing here
restates them (docs/WEIGHTS.md "DSpark checkpoints")."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from . import weights_vllm as wv

if TYPE_CHECKING:
    import torch

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


def write_config(workdir: str, quant: str | None = None) -> str:
    """A V4.1 model folder (config.json: text_config nested, as published)."""
    text = dict(TEXT, layer_types=["compressed_sparse_attention"] * N, num_hash_layers=3)
    cfg = {"architectures": ["DeepseekV41ForCausalLM"], "model_type": "deepseek_v41",
           "text_config": text, "torch_dtype": "bfloat16"}
    if quant:
        text.update(expert_dtype=wv.V4_QUANTS[quant])
        cfg["quantization_config"] = dict(wv.FP8, expert_dtype=wv.V4_QUANTS[quant])
    d = os.path.join(workdir, f"deepseek_v41_dspark.{quant or 'bf16'}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    return d


def _allow_v41_on_cpu():
    """V4.1's attention asks the GPU arch for its fp8 einsum recipe, as V4's
    does (weights_vllm._allow_v4_on_cpu: the SM90 recipe is taken); it
    names no parameter and does not touch load_weights."""
    from vllm.models.deepseek_v41.nvidia import flashmla

    flashmla.compute_fp8_einsum_recipe = lambda block_size=128: ((1, 128, 128), False)


def build(model_dir: str) -> torch.nn.Module:
    """DSparkDeepseekV4ForCausalLM for the folder, on CPU (method dspark)."""
    # DSpark is served by Model Runner V2 only (its speculator is
    # v1/worker/gpu/spec_decode/dspark; config/vllm.py refuses V1)
    runner = os.environ.get("VLLM_USE_V2_MODEL_RUNNER")
    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "1"
    try:
        return _build(model_dir)
    finally:  # the MTP builds of the same process keep their runner
        if runner is None:
            os.environ.pop("VLLM_USE_V2_MODEL_RUNNER")
        else:
            os.environ["VLLM_USE_V2_MODEL_RUNNER"] = runner


def _build(model_dir):
    import torch

    wv._cpu_platform()
    v4 = _v41_quant_config()
    from vllm.config import (
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
    spec = SpeculativeConfig(method="dspark", num_speculative_tokens=4, target_model_config=target,
                             target_parallel_config=parallel)
    draft = spec.draft_model_config
    vcfg = VllmConfig(model_config=draft, speculative_config=spec, parallel_config=parallel,
                      compilation_config=CompilationConfig(mode=CompilationMode.NONE),
                      **wv._reference_mla())
    wv._allow_fp8_on_cpu()
    wv._allow_sparse_on_cpu()
    wv._allow_v4_on_cpu()
    _allow_v41_on_cpu()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with set_current_vllm_config(vcfg):
            wv._distributed()
            cls, _ = get_model_architecture(draft)
            model = cls(vllm_config=vcfg, prefix="")
    finally:
        torch.set_default_dtype(torch.float32)
        v4.DeepseekV4FP8Config = v4._mtpcheck_fp8_config
    return model, vcfg


def _v41_quant_config():
    """The quantization registry (model_executor/layers/quantization
    get_quantization_config) gives "deepseek_v4_fp8" V4.1's config class
    (models/deepseek_v41/quant_config.py) on CUDA and ROCm, V4's on any other
    platform; V4's builds the routed experts FP8 whatever the expert dtype,
    and the loader then names MXFP4 scales no parameter has. For the build,
    the CPU branch is given the class CUDA uses; restored after."""
    import vllm.models.deepseek_v4 as v4
    from vllm.models.deepseek_v41.quant_config import DeepseekV4FP8Config as V41

    if not hasattr(v4, "_mtpcheck_fp8_config"):
        v4._mtpcheck_fp8_config = v4.DeepseekV4FP8Config
    v4.DeepseekV4FP8Config = V41
    return v4


# V4's MTP-only keys, which a DSpark stage does not carry (v4.1 has no
# learned hc_head, no e_proj/h_proj/enorm/hnorm; norm only in the last stage)
_MTP_ONLY = (".e_proj.", ".h_proj.", ".enorm.", ".hnorm.", ".norm.", ".hc_head_")
# the model-level heads: main_* from stage 0, the rest from the last stage
HEADS_FIRST = ("main_proj.weight", "main_norm.weight")
HEADS_LAST = ("norm.weight", "markov_head.embed.weight", "markov_head.head.weight",
              "confidence_head.proj.weight")


def checkpoint_keys(quant: str | None = None, stages: int = STAGES,
                    drop: Iterable[str] = ()) -> list[str]:
    """The key list of a V4.1 checkpoint's DSpark stages (mtp.{s}.*, two
    routed experts each) and a few target keys; FP8 (quant fp8 / fp4): a
    `.scale` beside each quantized linear (fp4: the routed experts' MXFP4
    scales), as V4-Flash publishes its MTP layer. drop: substrings of keys
    a converter lost (e.g. ".shared_experts.")."""
    keys = ["embed.weight", "head.weight", "norm.weight", "layers.0.attn_norm.weight"]
    for s in range(stages):
        keys += [k for k in wv._v4_layer(s) if not any(x in k[k.index(".", 4):] for x in _MTP_ONLY)]
    keys += ["mtp.0." + h for h in HEADS_FIRST]
    keys += [f"mtp.{stages - 1}.{h}" for h in HEADS_LAST]
    if quant:
        lin = (".attn.wq_a.", ".attn.wkv.", ".attn.wq_b.", ".attn.wo_a.", ".attn.wo_b.",
               ".experts.", ".shared_experts.", ".main_proj.")
        keys += [k[: -len(".weight")] + ".scale" for k in keys
                 if k.startswith("mtp.") and k.endswith(".weight") and any(x in k for x in lin)]
    return [k for k in keys if not any(x in k for x in drop)]


def checkpoint_tensors(quant: str | None = None, stages: int = STAGES,
                       drop: Iterable[str] = ()) -> list[tuple[str, torch.dtype, tuple[int, ...]]]:
    """(key, dtype, shape) as checkpoint_keys names them (as weights_vllm's
    V4 layout: FP8 where a scale is beside, the shared experts 2-D)."""
    import torch

    keys = checkpoint_keys(quant, stages, drop)
    have = set(keys)
    out = []
    for k in keys:
        scaled = k.endswith(".weight") and k[:-7] + ".scale" in have and not (
            quant == "fp4" and ".experts." in k and ".shared_" not in k)
        if ".shared_experts." in k and not k.endswith(".scale"):
            out.append((k, torch.bfloat16, (2, 2)))
        elif scaled:
            out.append((k, torch.float8_e4m3fn, (32, 64)))
        elif k.endswith(".scale"):
            out.append((k, torch.float32, (2, 4)))
        else:
            out.append((k, torch.bfloat16, (1,)))
    return out


def record(out: str, quants: Iterable[str | None] = (None, "fp8", "fp4")) -> None:
    """The fixtures of harness/tests/weights_dspark.sh (fixtures/weights/
    dspark/): for each layout, the DSpark model's parameters, modules and
    the mapping its own load_weights made of the DSpark key list (CASE/),
    of the same list without stage 1's shared experts (CASE-noshared/:
    map.txt only), and of V4-Flash's MTP key list of three layers
    (CASE-mtpkeys/, the loader-on-MTP confusion; KeyError reruns as in
    weights.capture), and V4's MTP model of three layers with the mapping
    its load_weights made of the DSpark key list (CASE-asmtp/: params,
    modules, map). Run in the vLLM 0.33 venv."""
    import shutil
    import tempfile

    from . import weights

    # not under out: vLLM 0.33 turns method "mtp" into "dspark" when the
    # model path holds "dspark" (config/speculative.py)
    cfg = tempfile.mkdtemp(prefix="mtpcheck-cfg-")
    try:
        _record(out, quants, cfg, weights)
    finally:
        shutil.rmtree(cfg, ignore_errors=True)


def _record(out, quants, cfg, weights):
    for q in quants:
        name = q or "bf16"
        model, _ = build(write_config(cfg, q))
        ts = checkpoint_tensors(q)
        for sub, tensors in ((name, ts),
                             (name + "-noshared", checkpoint_tensors(
                                 q, drop=("mtp.1.ffn.shared_experts.",))),
                             (name + "-mtpkeys", wv.checkpoint_tensors(
                                 "deepseek_v4", q, STAGES))):
            keys = [k for k, _, _ in tensors]
            cap = weights.capture(model, weights.zeros(
                keys, {k: s for k, _, s in tensors}, dtypes={k: d for k, d, _ in tensors}))
            d = os.path.join(out, sub)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "keys.txt"), "w") as f:
                f.writelines(k + "\n" for k in keys)
            paths = [os.path.join(d, n + ".txt") for n in ("params", "modules", "map")]
            cap.write(*paths)
            if sub != name:  # the model's lists are CASE/'s
                os.remove(paths[0])
                os.remove(paths[1])
        # the reverse: V4's MTP class of three layers over the DSpark keys
        # (method=mtp on a DSpark checkpoint, vLLM #41834)
        mtp, _ = wv.build(wv.write_config("deepseek_v4", cfg, q, STAGES))
        cap = weights.capture(mtp, weights.zeros(
            [k for k, _, _ in ts], {k: s for k, _, s in ts}, dtypes={k: d for k, d, _ in ts}))
        d = os.path.join(out, name + "-asmtp")
        os.makedirs(d, exist_ok=True)
        cap.write(*[os.path.join(d, n + ".txt") for n in ("params", "modules", "map")])
