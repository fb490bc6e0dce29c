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
- Qwen3-Next and Qwen3.5 (INLINE_ATTENTION): their decoder layers compute
  attention inline (`self_attention` over `qkv_proj`, RadixAttention, rope),
  so that method becomes one linear map through the layer's own `o_proj`
  (2 heads x 32 = H) and the rope is not built (its CPU path imports vLLM);
  Qwen3-Next's MoE (always sparse) -> a dense `Qwen2MoeMLP` of the config's
  intermediate size; the server arguments ask no Mamba cache snapshots
  (`mamba_radix_cache_strategy = no_buffer`, which SGLang requires with the
  overlap schedule off): GPU-only state of the linear-attention layers, which
  the tiny configs do not have (`full_attention_interval = 1`);
- GLM-5, HY V4, Dots3 (DSA): server-arg resolution asks the CUDA device
  capability to pick its DSA kernels; answered as sm90 while the model is
  built (CAPABILITY); Dots3's decoder refuses a non-CUDA device outright
  (`_require_cuda`, for its attention kernels): a no-op while it is built
  (CUDA_GUARD);
- HY V4, Nemotron-H, Bailing (MoE V2, V2.5, V3): their MTP decoders build
  the MoE themselves (HY V4: DeepSeek's, given DeepSeek's dense MLP;
  Nemotron-H: its MoE sublayer, given SGLang's dense relu2 NemotronHMLP;
  Bailing: its own dense MLP); Nemotron-H, Bailing and GLM-5-Next ask no
  Mamba state snapshots, as Qwen3-Next (their targets' linear-attention /
  Mamba caches); Bailing MoE V2's config class, which SGLang defines but
  does not register, is registered under its model type (CONFIG_CLASS);
- DeepSeek V4: the decoder's MQALayer (the linear stand-in) and its MoE
  (deepseek_v2's, given its dense MLP while the family is built: SCOPED);
  the mHC inside its block on SGLang's own non-TileLang path, its Triton
  kernels under the interpreter (sglang_standins_v4, SETUP);
- IQuest Q1: its sink attention and its MoE (IQuest's dense MLP in its
  place); its draft is a checkpoint of its own (DRAFT_CONFIGS, passed as
  SGLang's `speculative_draft_model_path`), and SGLang's FA3-only check is
  answered with `fa3` (SERVER_ARGS);
- the `ModelRunner` and attention backends around the draft loop: the sweep
  calls the model's `forward(input_ids, positions, forward_batch)` with a
  `ForwardBatch` it builds (decode mode, one token per request, the hidden
  captured LAST), as `ModelRunner.forward_decode` would."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import socket
from typing import Any

import torch
from torch import nn

from . import sglang_standins_v4
from .tiny_sglang_configs import DRAFT_CONFIGS, SGLANG_CONFIGS  # configs of their own
from .tiny_vllm import CONFIGS, H, V  # noqa: F401 (one tiny config; H, V re-exported)

# model type -> (SGLang module of the decoder block, attention class names to
# replace, the decoder class whose `_is_layer_sparse` answers False, or
# (MoE class, the dense FFN class built in its place) where the MoE is chosen
# otherwise)
BLOCKS = {
    "deepseek_v3": ("deepseek_v2", ("DeepseekV2AttentionMLA",), "DeepseekV2DecoderLayer"),
    "glm4_moe": ("glm4_moe", ("Glm4MoeAttention",), "Glm4MoeDecoderLayer"),
    "glm_moe_dsa": ("deepseek_v2", ("DeepseekV2AttentionMLA",), "DeepseekV2DecoderLayer"),
    "deepseek_v32": ("deepseek_v2", ("DeepseekV2AttentionMLA",), "DeepseekV2DecoderLayer"),
    "glm4_moe_lite": ("glm4_moe_lite", ("DeepseekV2AttentionMLA",), "Glm4MoeLiteDecoderLayer"),
    "glm_ocr": ("glm4", ("Glm4Attention",), None),  # Glm4DecoderLayer: dense already
    "longcat_flash": ("longcat_flash_nextn", ("DeepseekV2AttentionMLA",), None),  # dense decoder
    "qwen3_moe": ("qwen3_moe", ("Qwen3MoeAttention",), None),  # dense: mlp_only_layers [0]
    "exaone_moe": ("exaone_moe", ("ExaoneMoEAttention",), None),  # dense: layer 0
    # hunyuan_v3_nextn.py forces the MoE (first_k_dense_replace = 0 while it builds)
    "hy_v3": ("hunyuan_v3", ("HYV3Attention",), ("HYV3MoEFused", "HYV3FeedForward")),
    "mimo": ("qwen2", ("Qwen2Attention",), None),  # Qwen2DecoderLayer: dense
    # ERNIE 4.5: ernie4.py's attention is llama's, imported under this name; the
    # MTP block is dense (is_mtp), the target too (moe_layer_start_index above it)
    "ernie4_5_moe": ("ernie4", ("Ernie4Attention",), None),
    "step3p5": ("step3p5", ("Step3p5Attention",), None),  # dense: moe_layers_enum
    # GigaChat 3.5: a DeepseekV2DecoderLayer subclass, dense unless nextn_is_sparse
    # (its base class builds DeepSeek's MLA attention first, then replaces it)
    "gigachat3_5": ("gigachat35", ("GigaChat35AttentionMLA", "deepseek_v2.DeepseekV2AttentionMLA"),
                    None),
    # MiMo-V2: the MTP layer's block is dense (MiMoV2MLP); the target's layers
    # too (moe_layer_freq); the attention is imported by name into the NextN module
    "mimo_v2": ("mimo_v2_nextn", ("MiMoV2Attention", "mimo_v2.MiMoV2Attention"), None),
    # HY V4: the MTP decoder builds DeepSeek's MoE itself (is_nextn), given
    # DeepSeek's dense MLP; its attention is imported by name from hunyuan_v4
    # (whose target layers are dense by mlp_layer_types)
    "hy_v4": ("hunyuan_v4_nextn", ("HYV4Attention", "hunyuan_v4.HYV4Attention"),
              ("DeepseekV2MoE", "deepseek_v2.DeepseekV2MLP")),
    # Nemotron-H: attention sublayers stood in; the MTP block's MoE sublayer
    # ("E") given SGLang's own dense relu2 NemotronHMLP (_relu2_dense)
    "nemotron_h": ("nemotron_h", ("NemotronHAttention",),
                   ("NemotronHMoE", lambda mod: _relu2_dense(mod.NemotronHMLP))),
    # GLM-5-Next: its NextN model is DeepSeek's (DeepseekModelNextN over
    # text_config), the block DeepSeek's decoder
    "glm5_next": ("deepseek_v2", ("DeepseekV2AttentionMLA",), "DeepseekV2DecoderLayer"),
    # Dots3: its decoder builds a dense Dots3MLP for the MTP block itself
    "dots3_note": ("dots3_common.modeling", ("Dots3AttentionMLA",), None),
    # Bailing V2.5 (bailing_hybrid): the NextN decoder is a softmax-attention
    # layer (attention_type 1, MLA) whose MoE is forced (is_nextn), given
    # SGLang's dense BailingMLP
    "bailing_hybrid": ("bailing_moe_linear", ("DsV3MLA",), ("BailingMoE", "BailingMLP")),
    # Bailing MoE V2 (Ling 2.0, not hybrid): the NextN decoder is a BailingMoEBlock
    # (GQA attention), its MoE forced (is_nextn), given its dense BailingMoEMLP
    "bailing_moe_v2": ("bailing_moe", ("BailingMoEAttention",),
                       ("BailingMoESparseMoeBlock", "BailingMoEMLP")),
    # Bailing V3 (bailing_hybrid with KDA, `use_kda`): the same, from bailing_moe_v3
    "bailing_v3": ("bailing_moe_v3", ("DsV3MLA",), ("BailingMoE", "BailingMLP")),
    # IQuest Q1: the MTP block (IQuestQ1MTPInnerLayer) builds its attention and
    # its MoE by the names imported into iquest_q1_mtp (the MoE given IQuest's
    # own dense IQuestQ1DenseMLP); the target's attention from iquest_q1 (its
    # layers dense by mlp_only_layers)
    "iquest_q1": ("iquest_q1_mtp", ("IQuestQ1Attention", "iquest_q1.IQuestQ1Attention"),
                  ("IQuestQ1MoEBlock", "iquest_q1.IQuestQ1DenseMLP")),
    # DeepSeek V4: the decoder (DeepseekV4PlatformDecoderLayer off CUDA) builds
    # its MQALayer by name; its MoE is deepseek_v2's, given a dense stand-in
    # while the family is built (SCOPED)
    "deepseek_v4": ("deepseek_v4", ("MQALayer",), None),
    # zero-centred (GemmaRMSNorm) families: attention inline, see INLINE_ATTENTION
    "qwen3_next": ("qwen3_next", (), None),
    "qwen3_5_text": ("qwen3_5", (), None),
}

# model type -> (the decoder class whose inline `self_attention` becomes the
# linear stand-in, the MoE class name to replace by a dense MLP or None)
INLINE_ATTENTION = {
    "qwen3_next": ("Qwen3HybridAttentionDecoderLayer", "Qwen2MoeSparseMoeBlock"),
    "qwen3_5_text": ("Qwen3_5AttentionDecoderLayer", None),  # dense by its model type
}


class LinearAttention(nn.Module):
    """The attention stand-in: one linear map of the normed input, whatever
    the attention class was given; the two hooks SGLang's decoder layers call
    on their attention are no-ops."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        # the config by keyword, or the first positional argument that is one
        # (HY V4's and Nemotron-H's attention take it positionally)
        cfg = kwargs.get("config") or next((a for a in args if hasattr(a, "hidden_size")), None)
        h = kwargs.get("hidden_size") or cfg.hidden_size
        self.W_a = nn.Linear(h, h, bias=False)

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        """(positions, hidden_states, ...) as the decoder layers call it, or
        by keyword: hidden_states (Nemotron-H's mixer call), x (DeepSeek V4's
        MQALayer call)."""
        for name in ("hidden_states", "x"):
            if name in kwargs:
                return self.W_a(kwargs[name])
        return self.W_a(args[1])

    def maybe_use_decode_attn_tp(self, forward_batch: Any) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    prepare_qkv_latent = None  # DeepseekV2DecoderLayer hands it to its stages
    qkv_proj = None  # Glm4MoeDecoderLayer looks for an fp8 format on it (HIP only)


def _dense(*args, **kwargs):
    """`_is_layer_sparse(config, layer_id, is_nextn)`: the dense MLP everywhere."""
    return False


# model types whose config class ships as remote code and that SGLang defines
# but does not register: (SGLang module, class), registered under the type
CONFIG_CLASS = {"bailing_moe_v2": ("sglang.srt.configs.bailing_moe_v2", "BailingMoeV2Config")}


def _patch_for_cpu(model_type):
    """The stubs of the module docstring, applied before the model is built."""
    from transformers import CONFIG_MAPPING, AutoConfig

    from .tiny_vllm import REMOTE_CONFIG, _register_config

    if model_type in REMOTE_CONFIG:  # MiMo's config class is remote code
        _register_config(model_type)
    if model_type in CONFIG_CLASS and model_type not in CONFIG_MAPPING:
        where, name = CONFIG_CLASS[model_type]
        AutoConfig.register(model_type, getattr(importlib.import_module(where), name))
    if model_type in SETUP:
        SETUP[model_type]()
    mod_name, attn_names, decoder = BLOCKS[model_type]
    mod = importlib.import_module("sglang.srt.models." + mod_name)
    for name in attn_names:  # "module.Class": a class of another SGLang module
        where, _, name = name.rpartition(".")
        setattr(importlib.import_module("sglang.srt.models." + where) if where else mod, name,
                LinearAttention)
    if isinstance(decoder, str):
        getattr(mod, decoder)._is_layer_sparse = staticmethod(_dense)
    elif decoder is not None:  # (MoE class, its dense FFN's name or a builder of it)
        moe, ffn = decoder
        setattr(mod, moe, ffn(mod) if callable(ffn) else _dense_ffn(_resolve(mod, ffn)))
    if model_type in INLINE_ATTENTION:
        _patch_inline_attention(mod, *INLINE_ATTENTION[model_type])


def _resolve(mod, name):
    """`Class` of mod, or `module.Class` of another SGLang model module."""
    where, _, name = name.rpartition(".")
    return getattr(importlib.import_module("sglang.srt.models." + where) if where else mod, name)


def _linear_self_attention(self, positions, hidden_states, forward_batch):
    """The attention stand-in of a decoder that computes attention inline:
    one linear map, the layer's own `o_proj` (its input width is H here)."""
    return self.o_proj(hidden_states)[0]


def _patch_inline_attention(mod, decoder, moe):
    """INLINE_ATTENTION's stubs: the decoder's `self_attention` a linear map,
    no rope built, the MoE (if named) SGLang's dense `Qwen2MoeMLP`."""
    from sglang.srt.models.qwen2_moe import Qwen2MoeMLP

    class DenseMoe(Qwen2MoeMLP):
        num_fused_shared_experts = 0  # what the MTP model asks of its MoE

        def __init__(self, config=None, quant_config=None, prefix="", **unused):
            super().__init__(hidden_size=config.hidden_size,
                             intermediate_size=config.intermediate_size,
                             hidden_act=config.hidden_act, quant_config=quant_config,
                             prefix=prefix, reduce_results=False)

        def forward(self, hidden_states, forward_batch=None, **unused):
            return super().forward(hidden_states)

    mod.get_rope = lambda *a, **k: None
    getattr(mod, decoder).self_attention = _linear_self_attention
    if moe:
        setattr(mod, moe, DenseMoe)


def _dense_ffn(ffn):
    """A constructor taking the MoE's arguments that builds the engine's own
    dense FFN of the config's intermediate size, with the two attributes the
    layers ask of their MoE (no shared experts, none fused)."""
    def build(config, *unused_args, quant_config=None, prefix="", **unused):
        kw = {"hidden_size": config.hidden_size, "intermediate_size": config.intermediate_size,
              "quant_config": quant_config, "prefix": prefix, "hidden_act": config.hidden_act,
              "config": config}
        takes = inspect.signature(ffn).parameters  # each FFN class takes its own subset
        mlp = ffn(**{k: v for k, v in kw.items() if k in takes})
        mlp.shared_experts, mlp.num_fused_shared_experts = None, 0
        return mlp
    return build


def _relu2_dense(mlp):
    """Nemotron-H's MoE constructor building SGLang's dense `NemotronHMLP`
    (relu2) of the config's intermediate size, called as the MoE is (with the
    batch)."""
    class DenseMoe(mlp):
        def __init__(self, config, layer_idx=None, quant_config=None, prefix="", is_nextn=False):
            super().__init__(config, intermediate_size=config.intermediate_size,
                             quant_config=quant_config, bias=config.mlp_bias,
                             reduce_results=False, prefix=prefix)

        def forward(self, hidden_states, forward_batch=None):
            return super().forward(hidden_states)

    return DenseMoe


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
# IQuest Q1 refuses any attention backend but FA3 (its sink attention reads the
# softmax LSE), and drafts from a checkpoint of its own (DRAFT_CONFIGS)
SERVER_ARGS["iquest_q1"] = {"attention_backend": "fa3"}
# Qwen3-Next / Qwen3.5 (hybrid Mamba-style caches): no state snapshots, which
# SGLang allows only with the overlap schedule off
SERVER_ARGS["qwen3_next"] = {"mamba_radix_cache_strategy": "no_buffer",
                             "disable_overlap_schedule": True}
SERVER_ARGS["qwen3_5_text"] = SERVER_ARGS["qwen3_next"]
# Nemotron-H and Bailing V2.5 (hybrid Mamba / linear-attention targets): the same
SERVER_ARGS["nemotron_h"] = SERVER_ARGS["bailing_hybrid"] = SERVER_ARGS["qwen3_next"]
SERVER_ARGS["glm5_next"] = SERVER_ARGS["bailing_v3"] = SERVER_ARGS["qwen3_next"]  # KDA state
# Dots3's target is the omni model: its towers (audio, vision) are built
# unless the server serves the language model only (`--language-only`)
SERVER_ARGS["dots3_note"] = {"language_only": True}
# the multi-layer families: SGLang's model overrides turn on its multi-layer
# worker (`enable_multi_layer_eagle`) for the EAGLE algorithm only
SERVER_ARGS["step3p5"] = {"speculative_algorithm": "EAGLE"}
SERVER_ARGS["gigachat3_5"] = SERVER_ARGS["step3p5"]
SERVER_ARGS["mimo_v2"] = SERVER_ARGS["step3p5"]


# DeepSeek V4: SGLang refuses NEXTN for it (apply_deepseek_v4_defaults: EAGLE or
# DSPARK only); EAGLE with top-1 picks the same EAGLEWorkerV2
SERVER_ARGS["deepseek_v4"] = SERVER_ARGS["step3p5"]


# families with stand-ins set only while they are built: model type -> a
# function returning (owner, attribute, stand-in) triples
SCOPED = {"deepseek_v4": sglang_standins_v4.dense_moe}
# families with process-wide settings made before they are built
SETUP = {"deepseek_v4": sglang_standins_v4.cpu_mhc}


# families whose server-arg resolution asks the GPU's compute capability (to
# pick DSA kernels and KV-cache dtypes, GPU-only infrastructure the attention
# stand-in never uses): answered as this value while the family is built
CAPABILITY = {"glm_moe_dsa": (9, 0), "deepseek_v32": (9, 0), "hy_v4": (9, 0), "dots3_note": (9, 0)}


# families whose layers refuse a non-CUDA device when built, for the kernels of
# the parts stood in here: (SGLang module, its guard function), made a no-op
# while the family is built. Dots3: `Dots3DecoderLayer.__init__` calls
# `_require_cuda()` (dots3_common/modeling.py), whose CUDA-only kernels
# (merge_state_v2, tiny_gemm) serve its attention, the stand-in here
CUDA_GUARD = {"dots3_note": ("dots3_common.modeling", "_require_cuda")}


@contextlib.contextmanager
def _capability(model_type):
    """CAPABILITY's answer, CUDA_GUARD's no-op and SCOPED's stand-ins, while a
    family is built."""
    saved = []
    if model_type in CAPABILITY:
        answer = CAPABILITY[model_type]
        saved.append((torch.cuda, "get_device_capability", torch.cuda.get_device_capability))
        torch.cuda.get_device_capability = lambda *a, **k: answer
    if model_type in CUDA_GUARD:
        where, name = CUDA_GUARD[model_type]
        mod = importlib.import_module("sglang.srt.models." + where)
        saved.append((mod, name, getattr(mod, name)))
        setattr(mod, name, lambda *a, **k: None)
    for owner, name, value in SCOPED[model_type]() if model_type in SCOPED else ():
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, orig in reversed(saved):
            setattr(owner, name, orig)


def publish(model_dir: str, steps: int, **extra: Any) -> Any:
    """SGLang's ServerArgs for a NEXTN draft of `steps` tokens (top-1, CPU),
    published into the runtime context; the gloo group made once per process."""
    from sglang.srt.distributed import parallel_state as ps
    from sglang.srt.runtime_context import SpawnRanks, get_parallel, reset_context
    from sglang.srt.runtime_context import publish as publish_context
    from sglang.srt.server_args import ServerArgs

    kwargs = {"model_path": model_dir, "speculative_algorithm": "NEXTN",
              "speculative_num_steps": steps, "speculative_eagle_topk": 1,
              "speculative_num_draft_tokens": steps + 1, "device": "cpu",
              "skip_tokenizer_init": True, "disable_cuda_graph": True}
    args = ServerArgs(**dict(kwargs, **extra))  # a family's own arguments win
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
    extra, draft_dir = dict(SERVER_ARGS.get(model_type, {})), None
    if model_type in DRAFT_CONFIGS:  # a draft checkpoint of its own, beside the target's
        draft_dir = os.path.join(d, "draft")
        os.makedirs(draft_dir, exist_ok=True)
        with open(os.path.join(draft_dir, "config.json"), "w") as f:
            json.dump(DRAFT_CONFIGS[model_type], f)
        extra["speculative_draft_model_path"] = draft_dir
    with _capability(model_type):
        args = publish(d, steps, **extra)
        mc = ModelConfig.from_server_args(args, model_path=draft_dir, is_draft_model=True)
        model = _construct(get_model_architecture(mc)[0], mc.hf_config, seed)
    return model, args, mc


def step_models(model: torch.nn.Module, mc: Any, steps: int) -> list:
    """The draft models of a multi-layer worker, one a step as its runners
    hold them (SGLang's `draft_model_idx` s picks MTP layer s of the
    checkpoint): `model` for step 0, fresh random layers for the others, the
    one embedding table of the checkpoint shared by value."""
    from sglang.srt.model_loader.utils import get_model_architecture

    cls = get_model_architecture(mc)[0]
    models = [model] + [_construct(cls, mc.hf_config, seed, draft_model_idx=seed)
                        for seed in range(1, steps)]
    with torch.no_grad():
        for m in models[1:]:
            m.model.embed_tokens.weight.copy_(model.model.embed_tokens.weight)
            # the worker's init_lm_head binds one embedding and head into every
            # step's model through the model's own set_embed_and_head (a no-op
            # for Step-3.5, whose layers keep their own heads); MiMo-V2's then
            # synchronises CUDA unconditionally: a no-op here, no device
            with _no_cuda_sync():
                m.set_embed_and_head(*model.get_embed_and_head())
    return models


@contextlib.contextmanager
def _no_cuda_sync():
    saved = torch.cuda.synchronize, torch.cuda.empty_cache
    torch.cuda.synchronize = torch.cuda.empty_cache = lambda *a, **k: None
    try:
        yield
    finally:
        torch.cuda.synchronize, torch.cuda.empty_cache = saved


def _construct(cls, hf_config, seed: int, **kwargs: Any):
    """cls built in bf16 with random weights, norm weights away from 1 (so that
    a pre-norm recycle or hand-off shows); in eval mode."""
    torch.set_default_dtype(torch.bfloat16)
    try:  # the config by keyword where the class takes it so (NemotronHForCausalLM)
        param = inspect.signature(cls.__init__).parameters.get("config")
        if param is not None and param.kind == inspect.Parameter.KEYWORD_ONLY:
            model = cls(config=hf_config, quant_config=None, **kwargs)
        else:
            model = cls(hf_config, quant_config=None, **kwargs)
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


# the target's final norm where it is not `model.norm`
TARGET_NORM = {"nemotron_h": "model.norm_f"}


# target final norms whose output is rounded once (SPEC.md §2.2): SGLang's
# RMSNorm too, whose forward_native (this CPU path, no AMX) rounds the float32
# product once (layers/layernorm.py:869-872) unless cast_x_before_out_mul
ONE_ROUNDING = ("GemmaRMSNorm", "IQuestQ1RMSNorm", "RMSNorm")


def target_norm(target: Any, model_type: str) -> Any:
    """The target model's final norm module (TARGET_NORM, else model.norm)."""
    norm = target
    for part in TARGET_NORM.get(model_type, "model.norm").split("."):
        norm = getattr(norm, part)
    return norm


def target_handoff(target: Any, input_ids: Any, positions: Any, model_type: str) -> dict:
    """Runs the target on the given tokens (a forward as ModelRunner's, the
    hidden captured LAST) and returns what it hands draft step 0, from SGLang's
    own code: its final norm's inputs (the last layer's output and residual;
    zeros where the norm gets the hidden alone: HY V4's, after hc_head
    collapses the streams), the norm's weight and eps, and the logits output's
    `hidden_states`, which the EAGLE worker puts in the draft's `spec_info`
    (float32 holding bf16 values exactly, as Bailing V2.5's target hands it
    over, is stored as the bf16 it holds: the draft casts it so)."""
    from sglang.srt.model_executor.forward_context import ForwardContext, forward_context

    norm, seen = target_norm(target, model_type), {}

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
    args, handoff = seen.get("args", []), out.hidden_states
    if not args or handoff is None:
        raise RuntimeError(f"{type(target).__name__}: its final norm not called, "
                           "or no hidden_states in its logits output")
    where = [f"{type(target).__name__}.forward",
             f"{TARGET_NORM.get(model_type, 'model.norm')} ({type(norm).__name__})",
             "LogitsProcessorOutput.hidden_states"]
    if len(args) == 1:
        args.append(torch.zeros_like(args[0]))
        where[1] += " of the hidden alone (residual recorded as zeros)"
    if handoff.dtype == torch.float32 and torch.equal(handoff.to(args[0].dtype).float(), handoff):
        handoff = handoff.to(args[0].dtype)
        where[2] += f" (float32 holding {args[0].dtype} values, stored as such)"
    eps = getattr(norm, "variance_epsilon", None) or norm.eps
    return {"hidden": args[0], "residual": args[1], "norm_weight": norm.weight,
            "handoff": handoff, "eps": float(eps),
            # GemmaRMSNorm's native path rounds once (SPEC.md §2.6), as does
            # IQuestQ1RMSNorm (the float32 product of the weight, one store)
            "rounding": "fused" if type(norm).__name__ in ONE_ROUNDING
                        and not getattr(norm, "cast_x_before_out_mul", False) else "eager",
            "source": ", ".join(where)}


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
