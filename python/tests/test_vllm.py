"""The capture hooks on real vLLM code (vllm==0.33.0 from PyPI, CPU): tiny
DeepSeek V3 and GLM MTP models built from vLLM's classes, a 3-step draft chain
run with what vLLM's proposer recycles, captured, judged by `mtpcheck verify`.
The verdicts are findings (docs/FINDINGS.md); each is asserted here."""

import types

import h5py
import numpy as np
import pytest

from conftest import judge, need

torch = need("torch")
need("vllm")

import vllm_tiny
from mtpcheck import capture

K, T = 3, 4


def _capture(tmp_path, model_type, mutate=None, mtp_layers=1, steps=K, max_bytes=256 << 20):
    model, vcfg = vllm_tiny.build(model_type, str(tmp_path), K=steps, mtp_layers=mtp_layers)
    if mutate is not None:
        mutate(model)
    path = str(tmp_path / ("%s.h5" % model_type))
    cap = capture.install(engine="vllm", path=path, steps=steps, model=model, max_bytes=max_bytes)
    gen = torch.Generator().manual_seed(11)
    ids = torch.randint(2, vllm_tiny.V, (T,), generator=gen)
    pos = torch.tensor([0, 7, 8, 20])  # row 0 at position 0: the mask is exercised
    hidden = torch.randn(T, vllm_tiny.H, generator=gen).to(torch.bfloat16)
    vllm_tiny.draft(model, vcfg, ids, pos, hidden, steps)
    cases = cap.write()
    cap.remove()
    return cases, path, cap


def _recycled_is_post_norm(path):
    with h5py.File(path) as f:
        c = f["cases/chain0/observed"]
        return np.array_equal(c["step.0/recycled"][()], c["step.0/hidden_post"][()])


def test_proposer_rule_is_vllms():
    """What the tests feed forward is decided by vLLM's proposer: DeepSeek V3's
    draft architecture is in its tuple set, GLM-4.5's is not."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        _, v3 = vllm_tiny.build("deepseek_v3", d)
        _, glm = vllm_tiny.build("glm4_moe", d)
    assert vllm_tiny.proposer_returns_tuple(v3) is True
    assert vllm_tiny.proposer_returns_tuple(glm) is False


def test_deepseek_v3_capture(tmp_path):
    cases, path, _ = _capture(tmp_path, "deepseek_v3")
    assert cases == ["chain0"] + ["chain0.step%d.layer0" % s for s in range(K)]
    with h5py.File(path) as f:
        c = f["cases/chain0"]
        assert c.attrs["family"] == "deepseek_v3" and c.attrs["block"] == "captured"
        assert c.attrs["logits_dtype"] == "bfloat16" and c.attrs["pos0_mask"] == 1
        assert c.attrs["final_add"] == "unfused" and c.attrs["silu_mul_rounding"] == "twice"
        assert c["inputs/step.2/block_in"].shape == (T, vllm_tiny.H)
        assert c["inputs/next_tokens"].shape == (K - 1, T)
        assert f["cases/chain0"].attrs["num_steps"] == K
    assert _recycled_is_post_norm(path)  # deepseek_mtp.py returns (h_pre, h_post)
    with h5py.File(path) as f:  # the last step: the tuple's second element, by vLLM's rule
        last = f["cases/chain0/observed/step.%d" % (K - 1)]
        assert np.array_equal(last["recycled"][()], last["hidden_post"][()])
    v = judge(path)
    assert v.returncode == 0, v.text
    assert set(v.cases.values()) == {"PASSED"} and len(v.cases) == len(cases), v.text


def test_glm_capture_recycles_pre_norm(tmp_path):
    """FINDING (docs/FINDINGS.md): vLLM 0.33.0's glm4_moe_mtp.py returns the
    pre-final-norm hidden as one tensor and the proposer's model_returns_tuple()
    is False for Glm4MoeMTPModel, so step s+1 is fed step s's h_pre."""
    _cases, path, _ = _capture(tmp_path, "glm4_moe")
    with h5py.File(path) as f:
        assert f["cases/chain0"].attrs["family"] == "glm"
    assert not _recycled_is_post_norm(path)
    with h5py.File(path) as f:  # the last step too: the single tensor, as the proposer feeds it
        last = f["cases/chain0/observed/step.%d" % (K - 1)]
        assert not np.array_equal(last["recycled"][()], last["hidden_post"][()])
    v = judge(path)
    assert v.returncode == 1, v.text
    assert v.cases["chain0"] == "FAILED", v.text
    assert "PRE_NORM_RECYCLE" in v.diagnoses, v.text


@pytest.mark.parametrize("model_type", ["deepseek_v3", "glm4_moe"])
def test_row_subset_bound_splits_the_chain(tmp_path, model_type):
    """At a bound where the head and the embedding table (V x H bf16, 32 KiB
    each) pass max_bytes/8, as a real vocabulary does at the default bound:
    the chain is written as its steps (mtp_step cases with the head's rows),
    and verify still judges the recycling: DeepSeek V3 passes, GLM's pre-norm
    recycle (docs/FINDINGS.md) is named at every step."""
    cases, path, _ = _capture(tmp_path, model_type, max_bytes=200000)
    assert cases == ["chain0.step%d.layer0" % s for s in range(K)]
    with h5py.File(path) as f:
        for c in cases:
            assert f["cases"][c].attrs["split_from"] == "chain0"
            assert f["cases"][c]["inputs/head_weight"].attrs["full_rows"] == vllm_tiny.V
    v = judge(path)
    if model_type == "deepseek_v3":
        assert v.returncode == 0 and v.cases == {c: "PASSED" for c in cases}, v.text
    else:  # the last step too: vLLM feeds its single tensor forward
        assert v.returncode == 1 and v.cases == {c: "FAILED" for c in cases}, v.text
        for c in cases:
            assert v.diagnoses_of(c) == ["PRE_NORM_RECYCLE"], v.text


def _broken_forward(self, input_ids, positions, previous_hidden_states, inputs_embeds=None,
                    spec_step_index=0):
    """A copy of vLLM 0.33's DeepSeekMultiTokenPredictorLayer.forward that hands
    the pre-norm hidden back as the hidden to recycle."""
    inputs_embeds = torch.where(positions.unsqueeze(-1) == 0, 0, inputs_embeds)
    inputs_embeds = self.enorm(inputs_embeds)
    previous_hidden_states = self.hnorm(previous_hidden_states)
    hidden_states = self.eh_proj(torch.cat([inputs_embeds, previous_hidden_states], dim=-1))
    hidden_states, residual = self.mtp_block(positions=positions, hidden_states=hidden_states,
                                             residual=None)
    hidden_states = residual + hidden_states
    return hidden_states, hidden_states  # the bug: (h_pre, h_pre)


def test_broken_copy_named(tmp_path):
    def mutate(model):
        for layer in model.model.layers.values():
            layer.forward = types.MethodType(_broken_forward, layer)

    _cases, path, _ = _capture(tmp_path, "deepseek_v3", mutate)
    assert not _recycled_is_post_norm(path)
    v = judge(path)
    assert v.returncode == 1 and v.cases["chain0"] == "FAILED", v.text
    assert "PRE_NORM_RECYCLE" in v.diagnoses, v.text


def _logits_without_norm(self, hidden_states, spec_step_idx=0):
    """A copy of vLLM 0.33's DeepSeekMultiTokenPredictor.compute_logits that
    skips the shared head's norm: the logits of the pre-norm hidden."""
    layer = self.layers[str(self.mtp_start_layer_idx + spec_step_idx % self.num_mtp_layers)]
    return self.logits_processor(layer.shared_head.head, hidden_states)  # the bug: no norm


def test_head_norm_missing_copy_named(tmp_path):
    """Issue 30's HEAD_NORM_MISSING from engine code: DeepSeek V3's draft model
    with its logits taken from the hidden that skipped the final norm (the
    recycled hidden still normed) is named as that, and only that."""
    def mutate(model):
        model.model.compute_logits = types.MethodType(_logits_without_norm, model.model)

    _cases, path, _ = _capture(tmp_path, "deepseek_v3", mutate)
    v = judge(path)
    assert v.returncode == 1 and v.cases["chain0"] == "FAILED", v.text
    assert set(v.diagnoses) == {"HEAD_NORM_MISSING"}, v.text


def test_global_install_finds_the_model(tmp_path):
    """install() without a model: the first MTP layer that runs is found and hooked."""
    model, vcfg = vllm_tiny.build("deepseek_v3", str(tmp_path), K=2)
    cap = capture.install(engine="vllm", path=str(tmp_path / "g.h5"), steps=2, max_tokens=2)
    try:
        ids = torch.tensor([5, 6, 7])
        vllm_tiny.draft(model, vcfg, ids, torch.tensor([3, 4, 5]),
                        torch.randn(3, vllm_tiny.H).to(torch.bfloat16), 2)
        cases = cap.write()
    finally:
        cap.remove()
    assert any(cap.root is m for m in model.modules()) and "chain0" in cases
    with h5py.File(str(tmp_path / "g.h5")) as f:
        assert f["cases/chain0/inputs/step.1/block_in"].shape == (2, vllm_tiny.H)  # max_tokens


def test_vllm_finds_the_plugin():
    """vLLM's plugin loader sees the package's entry point (once `pip install ./python`)."""
    from importlib.metadata import entry_points

    from conftest import ENGINE_TESTS

    names = [e.value for e in entry_points(group="vllm.general_plugins")]
    if "mtpcheck.capture.plugin:register" not in names:
        if ENGINE_TESTS:
            pytest.fail("the mtpcheck package is not installed in the engine venv")
        pytest.skip("mtpcheck not pip-installed here (tools/ci/engines.sh installs it)")
    from vllm.plugins import load_plugins_by_group

    assert "mtpcheck_capture" in load_plugins_by_group("vllm.general_plugins")


def test_interpreter_made_capture_says_so(tmp_path, monkeypatch):
    """Under TRITON_INTERPRET=1 (Triton kernels on CPU, bf16 stores truncated)
    the dump says it was interpreter-made."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    _cases, path, _ = _capture(tmp_path, "deepseek_v3")
    with h5py.File(path) as f:
        assert "interpreter" in f.attrs["description"]


def test_two_mtp_layers_every_step_runs_layer_0(tmp_path):
    """FINDING (docs/FINDINGS.md F4): with two MTP layers, vLLM 0.33.0's legacy
    proposer passes no spec_step_idx, so every draft step runs the first layer
    (SPEC_STEP_LAYER_REUSE, SPEC.md 12.4). The chain declares the contract of a
    two-layer model (pass_step_idx 1: step s on layer s % 2), and the steps say
    what ran (layer 0 each); asserted: what verify says of that."""
    cases, path, cap = _capture(tmp_path, "deepseek_v3", mtp_layers=2, steps=4)  # K % L == 0
    assert [st.layer for st in cap.recorder.chains[0]] == [0, 0, 0, 0]
    assert cases == ["chain0"] + ["chain0.step%d.layer0" % s for s in range(4)]
    with h5py.File(path) as f:
        c = f["cases/chain0"]
        assert c.attrs["num_layers"] == 2 and c.attrs["pass_step_idx"] == 1
        assert "layer.1/eh_proj_weight" in c["inputs"]
    v = judge(path)
    assert v.returncode == 1, v.text
    assert v.cases["chain0"] == "FAILED", v.text
    assert v.diagnoses_of("chain0") == ["SPEC_STEP_LAYER_REUSE"], v.text
    assert {c: r for c, r in v.cases.items() if c != "chain0"} == {
        "chain0.step%d.layer0" % s: "PASSED" for s in range(4)}, v.text


def test_qwen3_5_target_pre_norm_handoff_is_named(tmp_path, monkeypatch):
    """Issue 30's field report (LightLLM #1402, Qwen3.5 MTP): the target hands
    draft step 0 its raw pre-norm sum. vLLM's own Qwen3.5 target and draft
    (the sweep's qwen3_5 family, zero-centred row) with the target's final
    GemmaRMSNorm returning the rounded sum: the hand-off case is
    HANDOFF_MISMATCH on every proposer path, the chain itself passes."""
    from mtpcheck import verify
    from mtpcheck.capture import sweep, tiny_vllm

    orig_build = tiny_vllm.build_target

    def build_broken(vcfg, seed=1):
        target, tvcfg = orig_build(vcfg, seed)
        _, norm = tiny_vllm.final_norm(target)

        def pre_norm(x, residual=None, *a, **kw):
            s = (x.float() + residual.float()).to(x.dtype)
            return s, s

        norm.forward = pre_norm  # on the instance: the capture's hook still fires
        return target, tvcfg

    monkeypatch.setattr(tiny_vllm, "build_target", build_broken)
    binary = verify.find_binary()
    if binary is None:
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN)")
    recs = sweep.sweep(["qwen3_5"], str(tmp_path), binary)
    assert len(recs) == 2, recs  # the V1 EagleProposer and the V2 MTPSpeculator
    for rec in recs:
        assert rec["handoff"].startswith("measured: "), rec
        assert rec["cases"]["handoff"] == "FAILED", rec
        assert rec["diagnoses"] == ["HANDOFF_MISMATCH"], rec
        assert all(v == "PASSED" for c, v in rec["cases"].items() if c != "handoff"), rec


def test_mimo_hidden_first_passes(tmp_path):
    """MiMo-7B (`mimo_mtp.py`): input_proj over [hidden, embedding], judged on
    the mimo row (hidden first): the chain and its steps pass."""
    cases, path, _ = _capture(tmp_path, "mimo")
    assert cases == ["chain0"] + ["chain0.step%d.layer0" % s for s in range(K)]
    with h5py.File(path) as f:
        assert f["cases/chain0"].attrs["family"] == "mimo"
    v = judge(path)
    assert v.returncode == 0 and v.cases["chain0"] == "PASSED", v.text


def _mimo_embedding_first(self, inputs_embeds, positions, previous_hidden_states,
                          spec_step_index=0):
    """vLLM's MiMoMultiTokenPredictorLayer.forward with the halves swapped:
    input_proj over [embedding, hidden] (DeepSeek's order, mlx-lm #1469's mix-up)."""
    inputs_embeds = torch.where(positions.unsqueeze(-1) == 0, 0, inputs_embeds)
    inputs_embeds = self.token_layernorm(inputs_embeds)
    previous_hidden_states = self.hidden_layernorm(previous_hidden_states)
    hidden_states = self.input_proj(torch.cat([inputs_embeds, previous_hidden_states], dim=-1))
    hidden_states, residual = self.mtp_block(positions=positions, hidden_states=hidden_states,
                                             residual=None)
    return self.final_layernorm(residual + hidden_states)


def test_mimo_swapped_halves_named(tmp_path):
    """The same layer concatenating [embedding, hidden]: CONCAT_ORDER_SWAPPED."""
    def mutate(model):
        for layer in model.model.mtp_layers.values():
            layer.forward = types.MethodType(_mimo_embedding_first, layer)

    _cases, path, _ = _capture(tmp_path, "mimo", mutate)
    v = judge(path)
    assert v.returncode == 1 and v.cases["chain0"] == "FAILED", v.text
    assert "CONCAT_ORDER_SWAPPED" in v.diagnoses, v.text


def test_ernie_has_no_final_norm(tmp_path):
    """ERNIE 4.5 (`ernie_mtp.py`), judged against its contract (Baidu FastDeploy:
    the target's final norm after the MTP block, attached by the sweep from the
    tiny target): no final norm at all, FINAL_NORM_MISSING on both paths."""
    from mtpcheck import verify
    from mtpcheck.capture import sweep

    binary = verify.find_binary()
    if binary is None:
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN)")
    recs = sweep.sweep(["ernie"], str(tmp_path), binary)
    assert [r["path"] for r in recs] == ["v1:EagleProposer", "v2:MTPSpeculator"], recs
    for r in recs:
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["FINAL_NORM_MISSING"], r
        assert r["cases"]["handoff"] == "PASSED", r
