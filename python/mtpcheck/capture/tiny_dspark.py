"""A tiny Qwen3 DSpark drafter built from vLLM 0.33's own classes on a CPU,
run through one draft block the way vLLM's DSpark speculator runs it, so that
the DSpark capture hooks (capture/dspark.py) see the engine's real tensors.

Why the pieces that are not vLLM's are here (docs/FINDINGS.md says the same):
* vLLM's `Attention` layer has no CPU backend in the PyPI wheel: it is
  replaced, before the drafter is built, by `BlockAttention`, which keeps the
  context K/V that `precompute_and_store_context_kv` writes and attends from
  each query to every context key and every key of its own block (the
  non-causal in-block mask of SPEC.md §13 Step DS-3). DFlashQwen3Attention
  around it (qkv_proj, q/k norms, RoPE, o_proj) is vLLM's.
* `vllm._C` is absent, so `_custom_ops.rms_norm` and `rotary_embedding` (the
  CUDA kernels of the context-KV path) are replaced by vLLM's own
  torch-native code (`vllm.ir.ops.rms_norm`, `RotaryEmbedding.forward_static`).
* The sequential Markov loop is `DSparkSpeculator._sample_sequential`, vLLM's
  method, run on a speculator object that carries only the buffers it reads
  (the GPU model runner cannot be built here).

Greedy drafting (`draft_logits = None`), one request per block forward (the
stand-in attention has no per-request metadata), all requests sampled
together as the speculator does.
"""

from __future__ import annotations

import json
import os
import types
from collections.abc import Sequence
from typing import Any, Callable

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "1")  # dspark is V2-only

import torch
from torch import nn

from .tiny_vllm import construct

H, V, R, N = 64, 256, 8, 4  # hidden, vocabulary, Markov rank, draft block length
TARGET_LAYERS = [1, 3]
MASK_ID = 5

TARGET = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": H,
          "intermediate_size": 96, "num_hidden_layers": 4, "num_attention_heads": 2,
          "num_key_value_heads": 1, "head_dim": 32, "vocab_size": V, "rms_norm_eps": 1e-6,
          "max_position_embeddings": 512, "torch_dtype": "bfloat16", "rope_theta": 10000.0,
          "tie_word_embeddings": False, "hidden_act": "silu"}
DRAFT = dict(TARGET, architectures=["Qwen3DSparkModel"], num_hidden_layers=2, markov_rank=R,
             target_layer_ids=TARGET_LAYERS, block_size=N, enable_confidence_head=True,
             confidence_head_with_markov=True,
             dflash_config={"mask_token_id": MASK_ID, "target_layer_ids": TARGET_LAYERS})


class BlockAttention(nn.Module):
    """Stand-in for vLLM's Attention (no CPU backend here): softmax attention
    of the block's queries over [context keys ; the block's own keys], no
    mask inside the block; grouped K/V heads repeated."""

    def __init__(self, num_heads, head_size, scale, num_kv_heads=None, prefix="", **kwargs):
        super().__init__()
        self.num_heads, self.head_size, self.scale = num_heads, head_size, scale
        self.num_kv_heads = num_kv_heads or num_heads
        self.layer_name = prefix
        self.kv_cache = None
        self.ctx = None
        self.impl = types.SimpleNamespace(do_kv_cache_update=self._store)

    def _store(self, layer, k, v, kv_cache, slot_mapping):
        self.ctx = (k.reshape(k.shape[0], -1).clone(), v.reshape(v.shape[0], -1).clone())

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.ctx is not None:
            k, v = torch.cat([self.ctx[0], k]), torch.cat([self.ctx[1], v])
        t, hd, g = q.shape[0], self.head_size, self.num_heads // self.num_kv_heads
        qh = q.view(t, self.num_heads, hd).transpose(0, 1).float()
        kh = k.view(-1, self.num_kv_heads, hd).repeat_interleave(g, 1).transpose(0, 1).float()
        vh = v.view(-1, self.num_kv_heads, hd).repeat_interleave(g, 1).transpose(0, 1).float()
        p = torch.softmax((qh @ kh.transpose(1, 2)) * self.scale, dim=-1)
        return (p @ vh).transpose(0, 1).reshape(t, -1).to(q.dtype)


def _native_rms_norm(out, x, weight, eps):
    """_custom_ops.rms_norm by vLLM's torch-native rms_norm; a [L, D] weight
    is the grouped form (one weight row per leading index)."""
    from vllm import ir

    if weight.dim() == 1:
        out.copy_(ir.ops.rms_norm(x, weight, eps))
        return
    for i in range(weight.shape[0]):
        out[i].copy_(ir.ops.rms_norm(x[i], weight[i], eps))


def _native_rotary(positions, query, key, head_size, cos_sin_cache, is_neox, *rest):
    from vllm.model_executor.layers.rotary_embedding.base import RotaryEmbedding

    q, k = RotaryEmbedding.forward_static(positions, query, key, head_size, head_size,
                                          cos_sin_cache, is_neox)
    query.copy_(q)
    if key is not None:
        key.copy_(k)


def _patch_for_cpu():
    from vllm import _custom_ops
    from vllm.model_executor.models import qwen3_dflash

    qwen3_dflash.Attention = BlockAttention
    _custom_ops.rms_norm = _native_rms_norm
    _custom_ops.rotary_embedding = _native_rotary


def build(workdir: str, seed: int = 0,
          draft: dict[str, Any] | None = None) -> tuple[torch.nn.Module, Any]:
    """(Qwen3DSparkForCausalLM, vllm_config) with random bf16 weights (norm
    weights away from 1), as vLLM's DSpark loader leaves it
    (`_build_fused_kv_buffers` after loading)."""
    from vllm.config import (
        CompilationConfig,
        ModelConfig,
        ParallelConfig,
        SpeculativeConfig,
        VllmConfig,
    )
    from vllm.config.compilation import CompilationMode

    _patch_for_cpu()
    dirs = {}
    for name, cfg in (("target", TARGET), ("dspark_draft", draft or DRAFT)):
        dirs[name] = os.path.join(workdir, "qwen3_" + name)
        os.makedirs(dirs[name], exist_ok=True)
        with open(os.path.join(dirs[name], "config.json"), "w") as f:
            json.dump(cfg, f)
    target = ModelConfig(model=dirs["target"], tokenizer=dirs["target"], skip_tokenizer_init=True,
                         dtype="bfloat16", max_model_len=256, enforce_eager=True)
    parallel = ParallelConfig()
    spec = SpeculativeConfig(method="dspark", model=dirs["dspark_draft"], num_speculative_tokens=N,
                             target_model_config=target, target_parallel_config=parallel)
    vcfg = VllmConfig(model_config=target, speculative_config=spec, parallel_config=parallel,
                      compilation_config=CompilationConfig(mode=CompilationMode.NONE))
    model = construct(vcfg, spec.draft_model_config, seed)
    model.model._build_fused_kv_buffers()  # the end of Qwen3DSparkForCausalLM.load_weights
    return model, vcfg


def speculator(model: torch.nn.Module, ids: torch.Tensor, n: int) -> Any:
    """A DSparkSpeculator carrying what `_sample_sequential` reads, greedy."""
    from vllm.v1.worker.gpu.spec_decode.dspark.speculator import DSparkSpeculator

    reqs = ids.shape[0] // n
    s = object.__new__(DSparkSpeculator)
    s.model = model
    s.num_speculative_steps = n
    s._draft_topk = None
    s.draft_logits = None
    s.acceptance_estimator = None
    s.use_confidence_head = model.model.confidence_head is not None
    s.sample_indices = torch.arange(reqs * n)
    s.sample_idx_mapping = torch.arange(reqs).repeat_interleave(n)
    s.sample_pos = torch.zeros(reqs * n, dtype=torch.long)
    s.input_buffers = types.SimpleNamespace(input_ids=ids)
    s._anchor_idx = torch.arange(reqs) * n
    s._step_cols = torch.arange(n)
    s.draft_tokens = torch.zeros(reqs, n, dtype=torch.long)
    s.draft_token_confidence_probs = torch.zeros(reqs, n)
    return s


def _context_slots(model: torch.nn.Module, ctx_positions: torch.Tensor) -> Any:
    """The context rows' cache slots: one mapping (Qwen3), or one per draft
    layer (V4.1, whose layers may sit in different KV-cache groups)."""
    slots = torch.arange(ctx_positions.shape[0])
    if getattr(model.model, "hc_mult", None) is None:
        return slots
    return [slots] * len(model.model.layers)


def run_block(model: torch.nn.Module, vcfg: Any, aux: Sequence[Sequence[torch.Tensor]],
              ctx_positions: Sequence[torch.Tensor], bonus: Sequence[int],
              spec_hook: Callable[[Any], None] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """One DSpark draft block per request, as the speculator runs it:
    `aux` is a list of A tensors [C, H] per request (the target's hidden
    states at target_layer_ids), `ctx_positions` [C] per request, `bonus`
    the bonus token per request. Returns (draft tokens [reqs, N], the
    confidence [reqs, N]). `spec_hook(speculator)` may wrap the speculator's
    methods before the Markov loop runs."""
    from vllm.config import set_current_vllm_config
    from vllm.forward_context import set_forward_context

    n = vcfg.speculative_config.num_speculative_tokens
    ids, hidden = [], []
    with set_current_vllm_config(vcfg), set_forward_context(None, vcfg), torch.no_grad():
        for a, cpos, b in zip(aux, ctx_positions, bonus):
            main_x = model.combine_hidden_states(torch.cat(a, dim=-1))  # DS-1 (fc)
            model.precompute_and_store_context_kv(main_x, cpos, _context_slots(model, cpos))
            q_ids = torch.full((n,), MASK_ID, dtype=torch.long)
            q_ids[0] = b
            q_pos = cpos[-1] + 1 + torch.arange(n)  # DS-3, sample_from_anchor
            hidden.append(model(q_ids, q_pos))
            ids.append(q_ids)
        s = speculator(model, torch.cat(ids), n)
        if spec_hook is not None:
            spec_hook(s)
        s._sample_sequential(len(aux), torch.cat(hidden))
    return s.draft_tokens.clone(), s.draft_token_confidence_probs.clone()
