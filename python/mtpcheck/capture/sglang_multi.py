"""SGLang's multi-layer MTP draft loop (`MultiLayerEagleWorkerV2`), driven on a
CPU for the sweep (sweep_sglang.py).

Why: for Step-3.5, GigaChat 3.5 and MiMo-V2 SGLang's `create_worker` picks
`MultiLayerEagleWorkerV2`, whose `draft_forward` runs no model on top-1
chains: every draft step runs in the draft extend, step `s` on its own runner
(`draft_runner_list[s]`, one MTP layer each), and whether step `s + 1` gets
step `s`'s `logits_output.hidden_states` or the target's hidden is the
worker's `chain_mtp_hidden_states` (a list of architectures in its
`__init__`). This module runs the worker's own
`MultiLayerEagleDraftWorker._draft_extend_for_prefill` (the loop, its
top-1, the chaining and the token rotation between steps) on a stand-in
holding the fields it reads, one tiny draft model per step, and reads the
chain decision from the worker's own source at run time.

Stubbed (GPU-only infrastructure, none of it in the judged glue):
- `ForwardBatch.init_new(batch, runner, ...)`, which needs a ModelRunner, KV
  pools and attention backends: an extend-mode ForwardBatch of one token per
  request, built here with the capture mode and the
  `return_hidden_states_before_norm` the worker asks for;
- `rotate_input_ids` (sgl_kernel's CPU op is absent from the PyPI wheel, the
  other path a Triton GPU kernel): the same rotation in torch (each request's
  tokens shift left by one, the new token written last);
- the boundary-KV stash of sliding-window drafts (`draft_extend_num_front_tokens
  = 0`, so `_seed_boundary_kv_stash` returns at once): KV-cache bookkeeping
  that the attention stand-in has no use for."""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import types
from typing import Any

import torch


def runner_per_step(draft_cls: type) -> bool:
    """Whether the draft worker runs each step on its own runner (the
    multi-layer worker's `mtp_model_runner(step)`), not one model for all."""
    return callable(getattr(draft_cls, "mtp_model_runner", None))


def chain_architectures(draft_cls: type) -> list:
    """The architectures whose draft steps chain their own hidden, read from
    the `chain_mtp_hidden_states = arch in [...]` of the worker's __init__."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(draft_cls.__init__)))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr == "chain_mtp_hidden_states"
                and isinstance(node.value, ast.Compare)):
            return [e.value for e in node.value.comparators[0].elts]
    raise RuntimeError("%s.__init__: no chain_mtp_hidden_states list" % draft_cls.__name__)


def _rotate(input_ids, extend_start_loc, extend_seq_lens, topk_index, select_index=None):
    """rotate_input_ids' semantics in torch: each request's extend segment
    shifts left by one and its last token becomes the new one."""
    new = topk_index.reshape(-1)
    for i in range(extend_seq_lens.shape[0]):
        s, n = int(extend_start_loc[i]), int(extend_seq_lens[i])
        if n > 0:
            input_ids[s:s + n - 1] = input_ids[s + 1:s + n].clone()
            last = int(select_index[i]) if select_index is not None else s + n - 1
            input_ids[last] = new[i]
    return input_ids


def _init_new(positions):
    """ForwardBatch.init_new's stand-in: an extend batch, one token a request."""
    from sglang.srt.model_executor.forward_batch_info import ForwardBatch, ForwardMode

    def init_new(batch, runner, capture_hidden_mode=None,
                 return_hidden_states_before_norm=False, **unused):
        n = positions.shape[0]
        ones = torch.ones(n, dtype=torch.int32)
        return ForwardBatch(
            forward_mode=ForwardMode.EXTEND, batch_size=n,
            input_ids=torch.zeros(n, dtype=torch.long), req_pool_indices=torch.arange(n),
            seq_lens=positions + 1, out_cache_loc=torch.arange(n),
            seq_lens_sum=int((positions + 1).sum()), positions=positions,
            spec_info=batch.spec_info, capture_hidden_mode=capture_hidden_mode,
            return_hidden_states_before_norm=return_hidden_states_before_norm,
            extend_seq_lens=ones, extend_start_loc=torch.arange(n, dtype=torch.int32),
            extend_prefix_lens=positions.to(torch.int32), extend_num_tokens=n,
            extend_seq_lens_cpu=[1] * n, extend_prefix_lens_cpu=positions.tolist(),
            extend_logprob_start_lens_cpu=[0] * n)
    return types.SimpleNamespace(init_new=init_new)


def _runner(model, config):
    """What the worker reads of `draft_runner_list[s]`: forward(batch) calling
    the model as ModelRunner.forward_extend does (no attention backend: the
    attention is the stand-in), its pools (unused) and its config."""
    def forward(fb):
        from sglang.srt.model_executor.forward_context import ForwardContext, forward_context

        with forward_context(ForwardContext(attn_backend=None), forward_batch=fb):
            return types.SimpleNamespace(logits_output=model(fb.input_ids, fb.positions, fb))
    return types.SimpleNamespace(forward=forward, req_to_token_pool=None, token_to_kv_pool=None,
                                 model_config=types.SimpleNamespace(hf_config=config))


def draft(models: list, worker_cls: type, args: Any, config: Any, ids: torch.Tensor,
          pos: torch.Tensor, hidden: torch.Tensor) -> tuple[Any, bool]:
    """The worker's own draft extend over len(models) steps, step s on
    models[s]; `ids` the tokens after the target's, `hidden` the target's.
    Returns (the worker's next EagleDraftInput, whether it chained)."""
    from sglang.srt.model_executor.forward_batch_info import ForwardMode
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    from .sweep_sglang import draft_worker_class

    cls = draft_worker_class(worker_cls)
    mod = sys.modules[cls.__module__]
    runners = [_runner(m, config) for m in models]
    stub = types.SimpleNamespace(
        model_config=types.SimpleNamespace(vocab_size=config.vocab_size),
        speculative_algorithm=SpeculativeAlgorithm.from_string(args.speculative_algorithm),
        chain_mtp_hidden_states=config.architectures[0] in chain_architectures(cls),
        draft_runner_list=runners, draft_runner=runners[0], speculative_num_steps=len(models),
        topk=1, use_rejection_sampling=False, draft_extend_num_front_tokens=0)
    for name in ("_apply_deferred_mamba_init_to_draft_pools", "_seed_boundary_kv_stash"):
        setattr(stub, name, types.MethodType(getattr(cls, name), stub))
    batch = types.SimpleNamespace(forward_mode=ForwardMode.EXTEND, spec_info=None)
    saved = mod.ForwardBatch, mod.rotate_input_ids
    mod.ForwardBatch, mod.rotate_input_ids = _init_new(pos), _rotate
    try:
        with torch.no_grad():
            out = cls._draft_extend_for_prefill(stub, batch, hidden, ids)
    finally:
        mod.ForwardBatch, mod.rotate_input_ids = saved
    return out, stub.chain_mtp_hidden_states
