"""Gemma4's MTP assistant in vLLM 0.33 (`Gemma4MTP`, vllm/model_executor/models/
gemma4_mtp.py; issue 30). No family row expresses its step (docs/SPEC.md §14), so
the sweep does not judge it and nothing here is a verdict (docs/FINDINGS.md F20).
What this file checks is the contract §14 states, read from vLLM's own code at
run time on tiny configs: the proposer each runner picks, the tuple it unpacks,
the positions it holds, the fused input, the two widths, what is fed forward
and the soft-capped head. If vLLM's code changes any of it, §14 (and the row
fields F20 lists as missing) must be read again."""

import types

from conftest import need
from gemma4_tiny import HB, HD, SOFTCAP, V, write_configs

torch = need("torch")
need("vllm")


class _QOnlyStandIn(torch.nn.Module):
    """Gemma4MTPAttention's stand-in: its query meets the target's KV cache,
    which does not run here (the black box of the captured-block form)."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        h = kwargs["hidden_size"]
        self.W_a = torch.nn.Linear(h, h, bias=False)

    def forward(self, positions, hidden_states, **kwargs):
        return self.W_a(hidden_states)


def _build(tmp_path, monkeypatch, centroids=False):
    """(Gemma4MTP with random bf16 weights and the target's embedding shared
    by the engine's own Gemma4Proposer._maybe_share_embeddings, vllm_config)."""
    from vllm.config import (
        CompilationConfig,
        ModelConfig,
        ParallelConfig,
        SpeculativeConfig,
        VllmConfig,
        set_current_vllm_config,
    )
    from vllm.config.compilation import CompilationMode
    from vllm.model_executor.layers.vocab_parallel_embedding import VocabParallelEmbedding
    from vllm.model_executor.models import gemma4_mtp
    from vllm.v1.spec_decode.gemma4 import Gemma4Proposer

    from mtpcheck.capture import tiny_vllm

    monkeypatch.setattr(gemma4_mtp, "Gemma4MTPAttention", _QOnlyStandIn)
    tdir, ddir = write_configs(tmp_path, centroids)
    target = ModelConfig(model=tdir, tokenizer=tdir, skip_tokenizer_init=True, dtype="bfloat16",
                         max_model_len=256, enforce_eager=True)
    par = ParallelConfig()
    spec = SpeculativeConfig(method="mtp", model=ddir, num_speculative_tokens=3,
                             target_model_config=target, target_parallel_config=par)
    vcfg = VllmConfig(model_config=spec.draft_model_config, speculative_config=spec,
                      parallel_config=par,
                      compilation_config=CompilationConfig(mode=CompilationMode.NONE))
    model = tiny_vllm.construct(vcfg, spec.draft_model_config, 0)
    if centroids:  # a token ordering (the checkpoint's buffer), a permutation
        g = torch.Generator().manual_seed(3)
        model.masked_embedding.token_ordering.copy_(torch.randperm(V, generator=g))
    with set_current_vllm_config(vcfg):
        embed = VocabParallelEmbedding(V, HB, params_dtype=torch.bfloat16)
    tiny_vllm.randomize(embed, 5)
    with torch.no_grad():  # logits past the soft cap, so that the cap shows
        model.lm_head.weight.mul_(16)
    owner = types.SimpleNamespace(model=model)
    Gemma4Proposer._maybe_share_embeddings(owner, types.SimpleNamespace(
        model=types.SimpleNamespace(embed_tokens=embed)))
    return model, vcfg


def _step(model, vcfg, ids, pos, hidden):
    """One call of the model as both proposers make it, with the pre-projection
    input and the last layer's output recorded."""
    from vllm.config import set_current_vllm_config
    from vllm.forward_context import set_forward_context

    seen = {}
    hooks = [model.model.pre_projection.register_forward_hook(
                 lambda m, a, o: seen.__setitem__("fused", a[0])),
             model.model.layers[-1].register_forward_hook(
                 lambda m, a, o: seen.__setitem__("block_out", o))]
    try:
        with set_current_vllm_config(vcfg), set_forward_context(None, vcfg), torch.no_grad():
            ret = model(input_ids=ids, positions=pos, hidden_states=hidden)
            logits = model.compute_logits(ret[0])
    finally:
        for h in hooks:
            h.remove()
    return ret, logits, seen


def test_gemma4_proposers_as_the_engine_picks_them(tmp_path, monkeypatch):
    """Both runners pick Gemma4's own proposer (the speculative config's own
    `use_gemma4_mtp`, asked as the sweep asks it); V1 unpacks a tuple; neither
    advances the positions between draft steps."""
    from vllm.v1.spec_decode.gemma4 import Gemma4Proposer
    from vllm.v1.worker.gpu.spec_decode.gemma4.speculator import Gemma4Speculator

    from mtpcheck.capture import sweep

    _, vcfg = _build(tmp_path, monkeypatch)
    spec = vcfg.speculative_config
    assert spec.use_gemma4_mtp() and spec.draft_model_config.architectures == ["Gemma4MTPModel"]
    assert sweep._v1_path(vcfg) == "Gemma4Proposer"
    assert Gemma4Proposer.model_returns_tuple(None) is True
    assert Gemma4Speculator.advance_draft_positions.fget(None) is False
    v2 = sweep._v2_speculator(vcfg)
    assert v2 is Gemma4Speculator, v2


def test_gemma4_step_contract(tmp_path, monkeypatch):
    """SPEC.md §14 on vLLM's own layer: fused = [E * bf16(sqrt(Hb)) | h] (no
    norms, no position-0 mask) into pre_projection [Hd, 2 Hb]; the block's
    output normed; (norm, post_projection(norm)) returned, Hd then Hb wide;
    logits of the normed hidden through the draft's own tied head, soft-capped."""
    model, vcfg = _build(tmp_path, monkeypatch)
    inner = model.model
    assert inner.normalizer.dtype == torch.bfloat16
    assert float(inner.normalizer) == float(torch.tensor(HB ** 0.5).to(torch.bfloat16))
    assert float(inner.normalizer) != HB ** 0.5  # rounded: 6.9375, not 6.928...
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(0, V, (4,), generator=g)
    pos = torch.tensor([0, 3, 5, 9])
    hidden = torch.randn(4, HB, generator=g).to(torch.bfloat16)
    (head_in, fed), logits, seen = _step(model, vcfg, ids, pos, hidden)

    e = inner.embed_tokens.weight[ids] * inner.normalizer
    assert torch.equal(seen["fused"], torch.cat([e, hidden], dim=-1))  # row 0 (position 0) too
    out, residual = seen["block_out"]
    assert residual is None  # the layer completes its own residual: no final add
    assert torch.equal(head_in, inner.norm(out))
    assert head_in.shape[-1] == HD and fed.shape[-1] == HB
    assert torch.equal(fed, torch.nn.functional.linear(head_in, inner.post_projection.weight))
    assert model.lm_head.weight.shape == (V, HD)  # the draft's own head, not the target's
    raw = torch.nn.functional.linear(head_in, model.lm_head.weight).float()
    want = (SOFTCAP * torch.tanh(raw / SOFTCAP)).to(logits.dtype)
    assert float(raw.abs().max()) > SOFTCAP
    assert torch.allclose(logits.float(), want.float(), atol=0.25), (logits - want).abs().max()


def test_gemma4_centroid_head_is_not_soft_capped(tmp_path, monkeypatch):
    """With `use_ordered_embeddings` the logits come from the masked embedder:
    the selected tokens' raw dot products (no soft cap), every other token at
    the dtype's lowest value."""
    model, vcfg = _build(tmp_path, monkeypatch, centroids=True)
    g = torch.Generator().manual_seed(8)
    ids = torch.randint(0, V, (3,), generator=g)
    hidden = torch.randn(3, HB, generator=g).to(torch.bfloat16)
    (head_in, _), logits, _ = _step(model, vcfg, ids, torch.tensor([1, 2, 3]), hidden)
    raw = torch.nn.functional.linear(head_in, model.lm_head.weight)
    low = torch.finfo(logits.dtype).min
    kept = logits != low
    assert int(kept.sum(dim=-1)[0]) == 2 * (V // 8)  # top-k centroids x tokens per centroid
    assert float(raw[kept].abs().max()) > SOFTCAP
    assert torch.allclose(logits[kept].float(), raw[kept].float(), atol=0.25)
