"""Tiny SGLang NextN/MTP draft models built from SGLang's own classes on a
CPU (SGLang 0.5.23 from PyPI), for the sweep (sweep_sglang.py).

Why: the same tiny config.json that tiny_vllm builds vLLM's MTP layers from
builds SGLang's, so the two engines' draft layers are judged on one footing.
What is SGLang's own here: the server arguments (`ServerArgs`, published into
SGLang's runtime context), the draft `ModelConfig` (which renames the
architecture to its NextN/MTP class), the model class the registry resolves,
the process groups (SGLang's `init_distributed_environment` /
`initialize_model_parallel` on gloo), the NextN layer, its decoder block's
norms, residual stream and dense MLP, the head and the `LogitsProcessor`.

Stubbed, each because it is GPU-only infrastructure, none of it in the glue
that is judged (the block is captured as a black box, docs/FINDINGS.md):
- the attention class of the decoder block -> `LinearAttention`, one linear
  map (SPEC.md 10.1's W_a): SGLang's attention needs a GPU attention backend
  and KV pool (`RadixAttention`), and its MLA rope asserts a rope scaling;
- the NextN block's sparse MoE -> SGLang's own dense MLP of the same decoder
  class (`_is_layer_sparse` answers False): the fused-MoE runner needs Triton
  GPU kernels;
- GLM-5 (DSA): server-arg resolution asks the CUDA device capability to pick
  its DSA kernels; answered as sm90 while the model is built (CAPABILITY);
- the `ModelRunner` and attention backends around the draft loop: the sweep
  calls the model's `forward(input_ids, positions, forward_batch)` with a
  `ForwardBatch` it builds (decode mode, one token per request, the hidden
  captured LAST), as `ModelRunner.forward_decode` would."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import socket
from typing import Any

import torch
from torch import nn

from .tiny_vllm import CONFIGS, H, V  # re-exported: one tiny config for both engines

# model type -> (SGLang module of the decoder block, attention class names to
# replace, the decoder class whose `_is_layer_sparse` answers False, or
# (MoE class, the dense FFN class built in its place) where the MoE is chosen
# otherwise)
BLOCKS = {
    "deepseek_v3": ("deepseek_v2", ("DeepseekV2AttentionMLA",), "DeepseekV2DecoderLayer"),
    "glm4_moe": ("glm4_moe", ("Glm4MoeAttention",), "Glm4MoeDecoderLayer"),
    "glm_moe_dsa": ("deepseek_v2", ("DeepseekV2AttentionMLA",), "DeepseekV2DecoderLayer"),
    "glm4_moe_lite": ("glm4_moe_lite", ("DeepseekV2AttentionMLA",), "Glm4MoeLiteDecoderLayer"),
    "glm_ocr": ("glm4", ("Glm4Attention",), None),  # Glm4DecoderLayer: dense already
    "longcat_flash": ("longcat_flash_nextn", ("DeepseekV2AttentionMLA",), None),  # dense decoder
    "qwen3_moe": ("qwen3_moe", ("Qwen3MoeAttention",), None),  # dense: mlp_only_layers [0]
    "exaone_moe": ("exaone_moe", ("ExaoneMoEAttention",), None),  # dense: layer 0
    # hunyuan_v3_nextn.py forces the MoE (first_k_dense_replace = 0 while it builds)
    "hy_v3": ("hunyuan_v3", ("HYV3Attention",), ("HYV3MoEFused", "HYV3FeedForward")),
}


# tiny configs of families tiny_vllm does not build (same sizes); Qwen3-MoE's
# MTP layer is dense by its own config (`mlp_only_layers`)
SGLANG_CONFIGS = {
    "qwen3_moe": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": H,
        "intermediate_size": 96, "moe_intermediate_size": 32, "vocab_size": V,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32,
        "rms_norm_eps": 1e-6, "num_experts": 4, "num_experts_per_tok": 2, "decoder_sparse_step": 1,
        "mlp_only_layers": [0], "norm_topk_prob": True, "hidden_act": "silu",
        "max_position_embeddings": 512, "rope_theta": 10000.0, "torch_dtype": "bfloat16",
        "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1},
    # GLM-5 (DSA): DeepSeek V3's fields, the sparse-attention indexer's, dense MLP
    "glm_moe_dsa": dict(CONFIGS["deepseek_v3"], architectures=["GlmMoeDsaForCausalLM"],
                        model_type="glm_moe_dsa", q_lora_rank=16, index_head_dim=16,
                        index_n_heads=2, index_topk=8, indexer_types=["full", "full"],
                        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}),
    # EXAONE MoE: layer 0 dense by its own config (first_k_dense_replace, mlp_layer_types)
    "exaone_moe": {
        "architectures": ["ExaoneMoEForCausalLM"], "model_type": "exaone_moe", "hidden_size": H,
        "intermediate_size": 96, "moe_intermediate_size": 32, "vocab_size": V,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32,
        "rms_norm_eps": 1e-6, "num_experts": 4, "num_experts_per_tok": 2,
        "first_k_dense_replace": 1, "mlp_layer_types": ["dense", "sparse"],
        "is_moe_layer": [False, True],  # what SGLang's ExaoneMoEDecoderLayer reads
        "layer_types": ["full_attention", "full_attention"], "hidden_act": "silu",
        "max_position_embeddings": 512, "rope_parameters": {"rope_type": "default",
                                                            "rope_theta": 10000.0},
        "torch_dtype": "bfloat16", "tie_word_embeddings": False, "bos_token_id": 0,
        "eos_token_id": 1},
}


class LinearAttention(nn.Module):
    """The attention stand-in: one linear map of the normed input, whatever
    the attention class was given; the two hooks SGLang's decoder layers call
    on their attention are no-ops."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        cfg = kwargs.get("config")
        h = kwargs.get("hidden_size") or cfg.hidden_size
        self.W_a = nn.Linear(h, h, bias=False)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor, *args: Any,
                **kwargs: Any) -> torch.Tensor:
        return self.W_a(hidden_states)

    def maybe_use_decode_attn_tp(self, forward_batch: Any) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    prepare_qkv_latent = None  # DeepseekV2DecoderLayer hands it to its stages
    qkv_proj = None  # Glm4MoeDecoderLayer looks for an fp8 format on it (HIP only)


def _dense(*args, **kwargs):
    """`_is_layer_sparse(config, layer_id, is_nextn)`: the dense MLP everywhere."""
    return False


def _patch_for_cpu(model_type):
    """The stubs of the module docstring, applied before the model is built."""
    mod_name, attn_names, decoder = BLOCKS[model_type]
    mod = importlib.import_module("sglang.srt.models." + mod_name)
    for name in attn_names:
        setattr(mod, name, LinearAttention)
    if isinstance(decoder, str):
        getattr(mod, decoder)._is_layer_sparse = staticmethod(_dense)
    elif decoder is not None:
        moe, ffn = decoder
        setattr(mod, moe, _dense_ffn(getattr(mod, ffn)))


def _dense_ffn(ffn):
    """A constructor taking the MoE's arguments that builds the engine's own
    dense FFN of the config's intermediate size."""
    def build(config, quant_config=None, prefix="", **unused):
        return ffn(hidden_size=config.hidden_size, intermediate_size=config.intermediate_size,
                   hidden_act=config.hidden_act, quant_config=quant_config, prefix=prefix)
    return build


_DIST = []


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# server arguments a family's own checks demand: SGLang refuses EXAONE MoE
# unless the attention backend is one of its GPU ones; the attention is the
# stand-in here whatever the backend says
SERVER_ARGS = {"exaone_moe": {"attention_backend": "triton"}}


# families whose server-arg resolution asks the GPU's compute capability (to
# pick DSA kernels and KV-cache dtypes, GPU-only infrastructure the attention
# stand-in never uses): answered as this value while the family is built
CAPABILITY = {"glm_moe_dsa": (9, 0)}


@contextlib.contextmanager
def _capability(model_type):
    answer = CAPABILITY.get(model_type)
    if answer is None:
        yield
        return
    orig = torch.cuda.get_device_capability
    torch.cuda.get_device_capability = lambda *a, **k: answer
    try:
        yield
    finally:
        torch.cuda.get_device_capability = orig


def publish(model_dir: str, steps: int, **extra: Any) -> Any:
    """SGLang's ServerArgs for a NEXTN draft of `steps` tokens (top-1, CPU),
    published into the runtime context; the gloo group made once per process."""
    from sglang.srt.distributed import parallel_state as ps
    from sglang.srt.runtime_context import SpawnRanks, get_parallel, reset_context
    from sglang.srt.runtime_context import publish as publish_context
    from sglang.srt.server_args import ServerArgs

    args = ServerArgs(model_path=model_dir, speculative_algorithm="NEXTN",
                      speculative_num_steps=steps, speculative_eagle_topk=1,
                      speculative_num_draft_tokens=steps + 1, device="cpu",
                      skip_tokenizer_init=True, disable_cuda_graph=True, **extra)
    if ps.model_parallel_is_initialized():  # the groups of the previous family's context
        ps.destroy_model_parallel()
    reset_context()
    publish_context(args, role="test", ranks=SpawnRanks(world_rank=0))
    if not _DIST:
        ps.init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="gloo",
                                        distributed_init_method="tcp://127.0.0.1:%d"
                                        % _free_port())
        _DIST.append(True)
    get_parallel().override_permanently(world_group=ps._WORLD)
    ps.initialize_model_parallel(backend="gloo")
    return args


def worker_class(args: Any) -> type:
    """The speculative worker SGLang's own `create_worker` picks for these
    server arguments (EAGLEWorkerV2, MultiLayerEagleWorkerV2, ...)."""
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    return SpeculativeAlgorithm.from_string(args.speculative_algorithm).create_worker(args)


def build(model_type: str, workdir: str, steps: int = 3,
          seed: int = 0) -> tuple[torch.nn.Module, Any, Any]:
    """(draft model, server args, draft ModelConfig) with random bf16 weights,
    norm weights away from 1 (so that a pre-norm recycle shows)."""
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.model_loader.utils import get_model_architecture

    _patch_for_cpu(model_type)
    d = os.path.join(workdir, "%s.sglang" % model_type)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(SGLANG_CONFIGS.get(model_type) or CONFIGS[model_type], f)
    with _capability(model_type):
        args = publish(d, steps, **SERVER_ARGS.get(model_type, {}))
        mc = ModelConfig.from_server_args(args, is_draft_model=True)
        model = _construct(get_model_architecture(mc)[0], mc.hf_config, seed)
    return model, args, mc


def _construct(cls, hf_config, seed: int):
    """cls built in bf16 with random weights, norm weights away from 1 (so that
    a pre-norm recycle or hand-off shows); in eval mode."""
    torch.set_default_dtype(torch.bfloat16)
    try:
        model = cls(hf_config, quant_config=None)
    finally:
        torch.set_default_dtype(torch.float32)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_((0.3 + 1.4 * torch.rand(p.shape, generator=gen)).to(p.dtype))
            else:
                p.copy_((torch.randn(p.shape, generator=gen) / p.shape[-1] ** 0.5).to(p.dtype))
    return model.eval()


def build_target(model_type: str, args: Any, seed: int = 1) -> Any:
    """The target model of the same server arguments and tiny config.json, built
    from SGLang's own class (the same stubs as the draft), random weights."""
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.model_loader.utils import get_model_architecture

    with _capability(model_type):
        mc = ModelConfig.from_server_args(args)
        return _construct(get_model_architecture(mc)[0], mc.hf_config, seed)


def target_handoff(target: Any, input_ids: Any, positions: Any) -> dict:
    """Runs the target on the given tokens (a forward as ModelRunner's, the
    hidden captured LAST) and returns what it hands draft step 0, from SGLang's
    own code: its final norm's inputs (the last layer's output and residual),
    the norm's weight and eps, and the logits output's `hidden_states`, which
    the EAGLE worker puts in the draft's `spec_info`."""
    from sglang.srt.model_executor.forward_context import ForwardContext, forward_context

    norm = target.model.norm
    seen = {}

    def hook(module, args, kwargs, out):
        seen["args"] = [a.detach().clone() for a in args[:2]]

    h = norm.register_forward_hook(hook, with_kwargs=True)
    fb = forward_batch(input_ids, positions, None)
    fb.spec_info = None
    try:
        with torch.no_grad(), forward_context(ForwardContext(attn_backend=None), forward_batch=fb):
            out = target(input_ids, positions, fb)
    finally:
        h.remove()
    if len(seen.get("args", [])) != 2 or out.hidden_states is None:
        raise RuntimeError(f"{type(target).__name__}: no (hidden, residual) at model.norm, "
                           "or no hidden_states in its logits output")
    eps = getattr(norm, "variance_epsilon", None) or norm.eps
    return {"hidden": seen["args"][0], "residual": seen["args"][1], "norm_weight": norm.weight,
                "handoff": out.hidden_states, "eps": float(eps),
                "source": f"{type(target).__name__}.forward, model.norm ({type(norm).__name__}), "
                       "LogitsProcessorOutput.hidden_states"}


def forward_batch(ids: torch.Tensor, positions: torch.Tensor, hidden: torch.Tensor) -> Any:
    """A decode-mode ForwardBatch, one token per request, the hidden captured
    LAST (what the EAGLE worker asks of a draft step), the previous hidden in
    its EagleDraftInput."""
    from sglang.srt.model_executor.forward_batch_info import (
        CaptureHiddenMode,
        ForwardBatch,
        ForwardMode,
    )
    from sglang.srt.speculative.eagle_info import EagleDraftInput

    n = ids.shape[0]
    info = EagleDraftInput(hidden_states=hidden, capture_hidden_mode=CaptureHiddenMode.LAST,
                           num_tokens_per_req=1, num_tokens_for_logprob_per_req=1)
    return ForwardBatch(forward_mode=ForwardMode.DECODE, batch_size=n, input_ids=ids,
                        req_pool_indices=torch.arange(n), seq_lens=positions + 1,
                        out_cache_loc=torch.arange(n), seq_lens_sum=int((positions + 1).sum()),
                        positions=positions, spec_info=info,
                        capture_hidden_mode=CaptureHiddenMode.LAST)
