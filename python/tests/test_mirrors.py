"""The hooks on module trees mirroring engines that do not run here: SGLang's
NextN model (deepseek_nextn.py names and call contract), vLLM's DeepSeek V4
MTP layer (deepseek_v4/*/mtp.py names, the deferred hc_post contract) and
vLLM's DeepSeek V3.2 MTP model (deepseek_v32/nvidia/mtp.py names, the fused
input norms and final add; vllm_v32_mirror.py)."""

import h5py
import numpy as np
import pytest

from conftest import judge, need

torch = need("torch")

import mirrors
import vllm_v32_mirror as v32
from mtpcheck import capture

H, V, F, T, K = 64, 128, 96, 4, 3


def _sglang(tmp_path, steps=K):
    gen = torch.Generator().manual_seed(3)
    model = mirrors.DeepseekV3ForCausalLMNextN(H, V, F)
    mirrors.randomize(model, gen)
    path = str(tmp_path / "sglang.h5")
    cap = capture.install(engine="sglang", path=path, steps=steps, model=model)
    ids = torch.randint(0, V, (T,), generator=gen)
    pos = torch.arange(5, 5 + T)
    hidden = (torch.randn(T, H, generator=gen)).to(torch.bfloat16)
    with torch.no_grad():
        mirrors.sglang_draft(model, ids, pos, hidden, steps)
    return cap, cap.write(), path


def test_sglang_nextn_capture_layout(tmp_path):
    _cap, cases, path = _sglang(tmp_path)
    assert cases[0] == "chain0" and len(cases) == 1 + K
    with h5py.File(path) as f:
        assert f.attrs["format_version"] == 2
        c = f["cases/chain0"]
        assert c.attrs["op"] == "draft_chain" and c.attrs["block"] == "captured"
        assert c.attrs["final_add"] == "fused" and c.attrs["pos0_mask"] == 0
        assert c.attrs["num_steps"] == K and c.attrs["pass_step_idx"] == 0
        assert c.attrs["logits_dtype"] == "bfloat16"
        assert c["inputs/next_tokens"].shape == (K - 1, T)
        assert c["inputs/layer.0/head_weight"].shape == (V, H)
        for s in range(K):
            assert c["inputs/step.%d/block_in" % s].shape == (T, H)
            assert c["observed/step.%d/logits" % s].shape == (T, V)
        # recycled at step 0 is what step 1 was fed: the logits processor's hidden
        assert np.array_equal(c["observed/step.0/recycled"][()], c["observed/step.0/hidden_post"][()])
        # weights written once: the per-step cases link to the chain's
        link = f["cases/chain0.step1.layer0/inputs"].get("eh_proj_weight", getlink=True)
        assert isinstance(link, h5py.SoftLink)


def test_sglang_nextn_verdict(tmp_path):
    _cap, cases, path = _sglang(tmp_path)
    v = judge(path)
    assert v.returncode == 0, v.text
    assert set(v.cases) >= set(cases) and set(v.cases.values()) == {"PASSED"}, v.text


def test_v4_mirror_hooks(tmp_path):
    """V4: the hooks on a module tree named as vLLM's V4 MTP layer record the
    deferred block's four outputs and the recycled streams [T, M*H]."""
    M = 4
    gen = torch.Generator().manual_seed(4)

    class DeepSeekV4MTP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = torch.nn.Embedding(V, H, dtype=torch.bfloat16)
            self.layers = torch.nn.ModuleDict({"43": mirrors.DeepSeekV4MultiTokenPredictorLayer(H, V, M, F)})

        def forward(self, input_ids, positions, hidden_states):
            return self.layers["43"](input_ids, positions, hidden_states, self.embed_tokens(input_ids))

    model = DeepSeekV4MTP()
    mirrors.randomize(model, gen)
    path = str(tmp_path / "v4.h5")
    cap = capture.install(engine="vllm", path=path, steps=2, model=model)
    ids = torch.randint(0, V, (T,), generator=gen)
    pos = torch.arange(1, 1 + T)
    hidden = torch.randn(T, M * H, generator=gen).to(torch.bfloat16)
    with torch.no_grad():
        h1 = model(ids, pos, hidden)
        model(ids, pos + 1, h1)
    cases = cap.write()
    with h5py.File(path) as f:
        c = f["cases/chain0"]
        assert c.attrs["family"] == "deepseek_v4" and c.attrs["block_contract"] == "deferred"
        assert c.attrs["hc_mult"] == M
        assert c["inputs/step.0/block_in"].shape == (T, M, H)
        assert c["inputs/step.0/block_residual"].shape == (T, M, H)
        assert c["inputs/step.0/post_mix"].shape == (T, M)
        assert c["inputs/step.0/comb_mix"].shape == (T, M, M)
        assert c["inputs/layer.0/hc_head_fn"].attrs["dtype"] == "float32"
        assert c["observed/step.0/recycled"].shape == (T, M * H)
        assert "chain0.step1.layer0" in cases


def test_byte_bound_stops_recording(tmp_path):
    """A capture cannot grow past max_bytes: recording stops, the dump holds what fit."""
    gen = torch.Generator().manual_seed(5)
    model = mirrors.DeepseekV3ForCausalLMNextN(H, V, F)
    mirrors.randomize(model, gen)
    path = str(tmp_path / "small.h5")
    cap = capture.install(engine="sglang", path=path, steps=K, model=model, max_bytes=6000)
    with torch.no_grad():
        mirrors.sglang_draft(model, torch.arange(T), torch.arange(1, 1 + T),
                             torch.randn(T, H).to(torch.bfloat16), K)
    assert cap.recorder.full and cap.recorder.bytes <= 6000
    assert any("byte bound" in n for n in cap.recorder.notes)
    with pytest.raises(Exception, match="bound"):
        cap.write()  # the weights alone do not fit either: refused, not truncated silently


def test_env_install(tmp_path, monkeypatch):
    """MTPCHECK_CAPTURE, as the vLLM plugin reads it: the capture is installed
    and attaches to the first MTP model that runs (a global pre-hook)."""
    from mtpcheck.capture import plugin

    monkeypatch.setenv("MTPCHECK_CAPTURE", str(tmp_path / "env-%p.h5") + ":2:engine=sglang")
    before = len(capture._active)
    plugin.register()
    cap = capture._active[-1]
    assert len(capture._active) == before + 1 and cap.bounds.steps == 2 and "%p" not in cap.path
    try:
        gen = torch.Generator().manual_seed(6)
        model = mirrors.DeepseekV3ForCausalLMNextN(H, V, F)
        mirrors.randomize(model, gen)
        with torch.no_grad():
            mirrors.sglang_draft(model, torch.arange(T), torch.arange(1, 1 + T),
                                 torch.randn(T, H).to(torch.bfloat16), 2)
        assert cap.root is model
        assert cap.write()[0] == "chain0"
    finally:
        cap.remove()
        capture._active.remove(cap)


# A vocabulary large against the byte bound: the head and the embedding table
# (VS x H bf16, 64 KiB each) pass max_bytes/8 and are written as row subsets,
# as every real vocabulary is at the default bound.
VS, SMALL = 512, 256 << 10


def _sglang_subset(tmp_path, name, pre_norm_recycle=False):
    gen = torch.Generator().manual_seed(7)
    model = mirrors.DeepseekV3ForCausalLMNextN(H, VS, F)
    mirrors.randomize(model, gen)
    path = str(tmp_path / name)
    cap = capture.install(engine="sglang", path=path, steps=K, model=model, max_bytes=SMALL)
    ids = torch.randint(0, VS, (T,), generator=gen)
    with torch.no_grad():
        mirrors.sglang_draft(model, ids, torch.arange(1, 1 + T),
                             torch.randn(T, H, generator=gen).to(torch.bfloat16), K,
                             pre_norm_recycle=pre_norm_recycle)
    return cap.write(), path


def test_large_head_and_table_as_row_subsets(tmp_path):
    """A head or embedding table too large for the bound is written as a row
    subset (FORMAT.md v2 rules 1-6): the top logits and every token fed on.
    The chain is then written as its steps, each an mtp_step case (the harness
    judges subsets on mtp_step only), fed what the engine fed it."""
    cases, path = _sglang_subset(tmp_path, "subset.h5")
    assert cases == ["chain0.step%d.layer0" % s for s in range(K)]
    with h5py.File(path) as f:
        assert "chain0" not in f["cases"]
        assert "written as its %d steps" % K in f.attrs["description"]
        assert "head written as" in f.attrs["description"]
        used = set()
        for s in range(K):
            c = f["cases/chain0.step%d.layer0" % s]
            assert c.attrs["op"] == "mtp_step" and c.attrs["block"] == "captured"
            assert c.attrs["split_from"] == "chain0"
            assert "draft step %d of %d" % (s, K) in c.attrs["description"]
            assert "row subsets" in c.attrs["description"]
            rows = c["inputs/head_rows"][()]
            assert c["inputs/head_weight"].attrs["full_rows"] == VS
            assert c["inputs/head_weight"].shape == (len(rows), H) and len(rows) < VS
            assert np.all(np.diff(rows) > 0)
            assert "embed_table" not in c["inputs"] and "embed_table_rows" not in c["inputs"]
            for name in ("block_in", "block_out", "block_residual", "embeds", "prev_hidden"):
                assert c["inputs/" + name].shape == (T, H), name
            assert c["observed/logits"].shape == (T, len(rows))
            assert np.array_equal(c["observed/logits_rows"][()], rows)
            assert c["observed/recycled"].shape == (T, H)
            if s + 1 < K:  # recycled: what the engine fed the next step
                nxt = f["cases/chain0.step%d.layer0" % (s + 1)]
                assert np.array_equal(c["observed/recycled"][()], nxt["inputs/prev_hidden"][()])
                used |= set(c["observed/token"][()])
        assert used <= set(rows)


def test_row_subset_capture_verdict(tmp_path):
    """The subset capture judged by `mtpcheck verify`: the control passes
    (partially: the head rows it holds), and a loop that feeds each step the
    pre-norm hidden is named PRE_NORM_RECYCLE at every step it fed forward."""
    cases, path = _sglang_subset(tmp_path, "subset.h5")
    v = judge(path)
    assert v.returncode == 0, v.text
    assert v.cases == {c: "PASSED" for c in cases}, v.text
    assert "note: partial: head_weight" in v.text

    cases, path = _sglang_subset(tmp_path, "subset-bug.h5", pre_norm_recycle=True)
    v = judge(path)
    assert v.returncode == 1, v.text
    fed = ["chain0.step%d.layer0" % s for s in range(K - 1)]  # the last step recycles by rule
    assert v.cases == dict({c: "FAILED" for c in fed}, **{cases[-1]: "PASSED"}), v.text
    for c in fed:
        assert v.diagnoses_of(c) == ["PRE_NORM_RECYCLE"], v.text


def _v32(tmp_path, name, replicated=True, pre_norm_recycle=False, steps=2):
    gen = torch.Generator().manual_seed(9)
    model = v32.DeepseekV32MTP(H, V, F, replicated_embed=replicated,
                               pre_norm_recycle=pre_norm_recycle)
    mirrors.randomize(model, gen)
    path = str(tmp_path / name)
    cap = capture.install(engine="vllm", path=path, steps=steps, model=model)
    ids = torch.randint(0, V, (T,), generator=gen)
    pos = torch.tensor([0, 7, 8, 20])  # row 0 at position 0: the fused mask is exercised
    hidden = torch.randn(T, H, generator=gen).to(torch.bfloat16)
    v32.draft(model, ids, pos, hidden, steps)
    cases = cap.write()
    cap.remove()
    return cap, cases, path, model


@pytest.mark.parametrize("replicated", [True, False], ids=["embed_table", "inputs_embeds"])
def test_v32_mirror_capture(tmp_path, replicated):
    """V3.2: the hooks on a module tree named and called as vLLM 0.33's
    DeepseekV32 MTP model find the layer, record the embeds whichever way the
    predictor passes them (the replicated table folded into the fused norm, or
    gathered), and declare the V3.2 contract."""
    cap, cases, path, model = _v32(tmp_path, "v32.h5", replicated)
    assert cases == ["chain0", "chain0.step0.layer0", "chain0.step1.layer0"]
    layer = model.model.layers["61"]
    with h5py.File(path) as f:
        c = f["cases/chain0"]
        assert c.attrs["op"] == "draft_chain" and c.attrs["family"] == "deepseek_v3"
        assert c.attrs["block"] == "captured" and c.attrs["rounding"] == "fused"
        assert c.attrs["final_add"] == "fused" and c.attrs["add_norm_input"] == "sum"
        assert c.attrs["pos0_mask"] == 1 and c.attrs["num_steps"] == 2
        assert c.attrs["logits_dtype"] == "bfloat16"
        step0 = f["cases/chain0.step0.layer0/inputs"]
        want = model.model.embed_tokens.weight[torch.as_tensor(c["inputs/input_ids"][()])]
        assert np.array_equal(step0["embeds"][()], want.view(torch.int16).numpy().view(np.uint16))
        assert np.array_equal(c["inputs/layer.0/head_weight"][()],
                              layer.shared_head.head.weight.view(torch.int16).numpy().view(np.uint16))
        # (h_post, h_post): step 0's recycled is the hidden the head saw
        obs = c["observed"]
        assert np.array_equal(obs["step.0/recycled"][()], obs["step.0/hidden_post"][()])
        if cap.engine_info.get("returns_tuple") is not None:  # vLLM's proposer rule ran
            assert cap.engine_info["returns_tuple"] is True
            assert np.array_equal(obs["step.1/recycled"][()], obs["step.1/hidden_post"][()])


def test_v32_mirror_verdict(tmp_path):
    """A 2-step V3.2 chain judged by `mtpcheck verify` under the declared
    contract (fused input norms, final add fused into the norm): it passes;
    the same model recycling the pre-norm hidden (the bug vLLM #47448 fixed)
    is named PRE_NORM_RECYCLE, on the chain and on the step that fed it."""
    cap, cases, path, _ = _v32(tmp_path, "v32.h5")
    v = judge(path)
    assert v.returncode == 0, v.text
    assert v.cases == {c: "PASSED" for c in cases}, v.text

    cap, cases, path, _ = _v32(tmp_path, "v32-bug.h5", pre_norm_recycle=True)
    v = judge(path)
    assert v.returncode == 1, v.text
    assert v.cases["chain0"] == "FAILED" and v.cases["chain0.step0.layer0"] == "FAILED", v.text
    assert "PRE_NORM_RECYCLE" in v.diagnoses_of("chain0"), v.text
    assert v.diagnoses_of("chain0.step0.layer0") == ["PRE_NORM_RECYCLE"], v.text
    # the last step: recycled by vLLM's proposer rule (the tuple's second element)
    last = "FAILED" if cap.engine_info.get("returns_tuple") is not None else "PASSED"
    assert v.cases["chain0.step1.layer0"] == last, v.text
