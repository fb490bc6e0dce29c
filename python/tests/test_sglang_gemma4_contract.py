"""Gemma4's MTP assistant in SGLang 0.5.23 (`Gemma4AssistantForCausalLM`,
sglang/srt/models/gemma4_mtp.py; issue 30). As for vLLM's (test_vllm_gemma4_contract.py),
no family row expresses its step (docs/SPEC.md §14), so nothing here is a
verdict (docs/FINDINGS.md F20): this checks the contract §14 states, read from
SGLang's own code at run time on tiny configs. Stood in: the decoder's
`Gemma4Attention` (its query meets the target's frozen KV pool; its rope
imports vLLM on a CPU, `rotary_embedding/base.py:138`); the logits processor
takes SGLang's own CPU branch of the soft cap (`_is_cpu`: the torch formula,
where a GPU runs the Triton `fused_softcap`).

Run by tools/ci/engines.sh in the SGLang venv with MTPCHECK_SGLANG_TESTS=1."""

import types

from conftest import SGLANG_TESTS, need

torch = need("torch", required=SGLANG_TESTS)
need("sglang", required=SGLANG_TESTS)

from gemma4_tiny import HB, HD, SOFTCAP, V, write_configs
from mtpcheck.capture import tiny_sglang


class _AttentionStandIn(torch.nn.Module):
    """Gemma4Attention's stand-in: one linear map (the black box of the
    captured-block form), with the attributes the assistant's frozen-KV
    binding writes."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        config = kwargs.get("config") or next(a for a in args if hasattr(a, "hidden_size"))
        self.is_kv_shared_layer, self.kv_shared_layer_index = False, None
        self.attn = types.SimpleNamespace(layer_id=0)
        self.W_a = torch.nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, positions, hidden_states, forward_batch=None, **kwargs):
        return self.W_a(hidden_states)


def _build(tmp_path, monkeypatch):
    """(Gemma4AssistantForCausalLM, server args), the assistant bound to a
    target embedding of width Hb by its own set_embed_and_head."""
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.layers import logits_processor
    from sglang.srt.model_loader.utils import get_model_architecture
    from sglang.srt.models import gemma4_causal

    monkeypatch.setattr(gemma4_causal, "Gemma4Attention", _AttentionStandIn)
    monkeypatch.setattr(logits_processor, "_is_cpu", True)
    dirs = write_configs(tmp_path)
    args = tiny_sglang.publish(dirs[0], 3, speculative_algorithm="FROZEN_KV_MTP",
                               speculative_draft_model_path=dirs[1])
    mc = ModelConfig.from_server_args(args, model_path=dirs[1], is_draft_model=True)
    model = tiny_sglang._construct(get_model_architecture(mc)[0], mc.hf_config, 0)
    with torch.no_grad():  # logits past the soft cap, so that the cap shows
        model.lm_head.weight.mul_(16)
    g = torch.Generator().manual_seed(5)
    model.set_embed_and_head((torch.randn(V, HB, generator=g) / 7).to(torch.bfloat16), None)
    return model, args


def test_gemma4_assistant_step_contract(tmp_path, monkeypatch):
    """SPEC.md §14 on SGLang's own class: the frozen-KV worker; fused =
    [E * sqrt(Hb) | h] with the scale a Python float (not rounded to bf16, as
    vLLM's is), no norms; the block's normed output to the soft-capped own
    head; post_projection of it handed back as the hidden the next step gets."""
    from sglang.srt.speculative.frozen_kv_mtp_worker_v2 import FrozenKVMTPWorkerV2

    model, args = _build(tmp_path, monkeypatch)
    assert type(model).__name__ == "Gemma4AssistantForCausalLM"
    assert tiny_sglang.worker_class(args) is FrozenKVMTPWorkerV2
    assert model.target_embed_scale == HB ** 0.5
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(0, V, (3,), generator=g)
    pos = torch.tensor([2, 4, 6])
    hidden = torch.randn(3, HB, generator=g).to(torch.bfloat16)
    seen = {}
    hooks = [model.pre_projection.register_forward_hook(
                 lambda m, a, o: seen.__setitem__("fused", a[0])),
             model.model.norm.register_forward_hook(
                 lambda m, a, o: seen.__setitem__("normed", o))]
    try:
        with torch.no_grad():
            out = model(ids, pos, tiny_sglang.forward_batch(ids, pos, hidden))
    finally:
        for h in hooks:
            h.remove()
    table = model.target_embed_weight
    e = torch.nn.functional.embedding(ids, table) * (HB ** 0.5)
    assert torch.equal(seen["fused"], torch.cat([e, hidden], dim=-1))
    e_vllm = torch.nn.functional.embedding(ids, table) * torch.tensor(HB ** 0.5).to(torch.bfloat16)
    assert not torch.equal(e, e_vllm)  # the two engines' scales differ
    normed = seen["normed"]
    assert normed.shape[-1] == HD and out.hidden_states.shape[-1] == HB
    assert torch.equal(out.hidden_states,
                       torch.nn.functional.linear(normed, model.post_projection.weight))
    with torch.no_grad():
        raw = torch.nn.functional.linear(normed, model.lm_head.weight).float()
    assert float(raw.abs().max()) > SOFTCAP
    want = SOFTCAP * torch.tanh(raw / SOFTCAP)
    got = out.next_token_logits.float()
    assert torch.allclose(got, want, atol=0.25), (got - want).abs().max()
