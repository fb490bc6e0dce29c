"""The SGLang sweep on real SGLang code (sglang==0.5.23 from PyPI, CPU):
each NextN family built from SGLang's classes, drafted through the worker's
own draft_forward, judged by `mtpcheck verify`; the records must equal the
committed docs/findings/sglang-0.5.23.json (a change in SGLang or in the
judge shows here). A deliberately broken copy (the model hands the logits
processor its pre-norm hidden as `hidden_states_before_norm`, which SGLang
then feeds forward) must be named PRE_NORM_RECYCLE.

Run by tools/ci/engines.sh in the SGLang venv with MTPCHECK_SGLANG_TESTS=1
(then a missing sglang or binary fails); elsewhere these skip."""

import json
import os
import sys

import pytest

from conftest import SGLANG_TESTS as REQUIRED
from conftest import need
from mtpcheck import verify

COMMITTED = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "findings",
                         "sglang-0.5.23.json")
need("sglang", required=REQUIRED)

from mtpcheck.capture import sweep, sweep_sglang


def _binary():
    b = verify.find_binary()
    if b is None:
        if REQUIRED:
            pytest.fail("no mtpcheck binary (MTPCHECK_BIN)")
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN)")
    return b


def _committed(family):
    with open(COMMITTED) as f:
        return [r for r in json.load(f)["records"] if r["family"] == family]


@pytest.mark.parametrize("family", ["glm4_moe", "deepseek_v3", "glm_moe_dsa", "deepseek_v32",
                                    "qwen3_next", "qwen3_5", "mimo",
                                    "ernie", "step3p5", "gigachat3_5", "mimo_v2", "hy_v4",
                                    "nemotron_h", "glm5_next", "dots3_note", "bailing_hybrid",
                                    "bailing_v3", "bailing_moe_v2", "iquest_q1"])
def test_family_as_committed(tmp_path, family):
    """GLM-4.5: vLLM 0.33 recycles its pre-norm hidden (F1); SGLang's layer
    norms before the logits processor, which hands that hidden back.
    Qwen3-Next and Qwen3.5: the zero-centred row (SPEC.md §2.6)."""
    rec = sweep_sglang.judge_one(family, str(tmp_path), _binary())
    (want,) = _committed(family)
    for field in sweep.COMPARED:
        assert rec.get(field) == want.get(field), (field, rec, want)


@pytest.mark.parametrize("family,module,cls", [
    ("glm4_moe", "glm4_moe_nextn", "Glm4MoeForCausalLMNextN"),
    ("hy_v4", "hunyuan_v4_nextn", "HYV4ForCausalLMNextN")])
def test_pre_norm_handed_back_is_named(tmp_path, monkeypatch, family, module, cls):
    """The broken copy: the NextN model's forward (GLM-4.5's, HY V4's) passing
    the pre-norm sum (final_norm's own `capture` of the updated residual) to
    the logits processor as hidden_states_before_norm."""
    import importlib

    m = importlib.import_module("sglang.srt.models." + module)

    orig_norm = m.residual_batch.final_norm

    def broken(self, input_ids, positions, forward_batch):
        kept = []

        def final_norm(h, fb, norm, capture=None, **kw):
            return orig_norm(h, fb, norm, capture=lambda r: kept.append(r.clone()), **kw)

        monkeypatch.setattr(m.residual_batch, "final_norm", final_norm)
        try:
            hidden = self.model(input_ids, positions, forward_batch)
        finally:
            monkeypatch.setattr(m.residual_batch, "final_norm", orig_norm)
        return self.logits_processor(input_ids, hidden, self.lm_head, forward_batch,
                                     hidden_states_before_norm=kept[0])

    monkeypatch.setattr(getattr(m, cls), "forward", broken)
    rec = sweep_sglang.judge_one(family, str(tmp_path), _binary())
    assert rec["verdict"] == "FAILED", rec
    assert rec["diagnoses"] == ["PRE_NORM_RECYCLE"], rec


def test_nemotron_h_final_norm_dropped_is_named(tmp_path, monkeypatch):
    """Nemotron-H's MTP block is read at its sublayers (SGLANG_NEMOTRON_H's
    block_taps). The broken copy: its last sublayer writes the folded sum
    without its `final_layernorm` (nemotron_h_mtp.py), so the head and the
    next step get the pre-norm sum: FINAL_NORM_MISSING, the hand-off passing."""
    from sglang.srt.models import nemotron_h_mtp as m

    orig = m.NemotronHMTPMoEDecoderLayer.forward

    def broken(self, **kw):
        self.final_layernorm.forward = lambda x: x  # on the instance: hooks still fire
        try:
            return orig(self, **kw)
        finally:
            del self.final_layernorm.forward

    monkeypatch.setattr(m.NemotronHMTPMoEDecoderLayer, "forward", broken)
    rec = sweep_sglang.judge_one("nemotron_h", str(tmp_path), _binary())
    assert rec["verdict"] == "FAILED" and rec["cases"]["handoff"] == "PASSED", rec
    assert rec["diagnoses"] == ["FINAL_NORM_MISSING"], rec


def test_target_pre_norm_handoff_is_named(tmp_path, monkeypatch):
    """The broken copy of issue 30's step-0 bug (LightLLM #1402): the target's
    final norm hands on the rounded pre-norm sum `hidden + residual` instead of
    its norm, so the logits output's `hidden_states`, which the EAGLE worker
    feeds draft step 0, is pre-norm while every later step gets the draft
    layer's post-norm hidden. The sweep's target_handoff case must be named
    HANDOFF_MISMATCH; the draft chain itself, fed what it was fed, passes."""
    from mtpcheck.capture import tiny_sglang

    orig_build = tiny_sglang.build_target

    def build_broken(model_type, args, seed=1):
        target = orig_build(model_type, args, seed)
        norm = target.model.norm

        def pre_norm(x, residual=None, *a, **kw):
            s = (x.float() + residual.float()).to(x.dtype)
            return s, s

        norm.forward = pre_norm  # on the instance: the capture's hook still fires
        return target

    monkeypatch.setattr(tiny_sglang, "build_target", build_broken)
    rec = sweep_sglang.judge_one("deepseek_v3", str(tmp_path), _binary())
    assert rec["handoff"].startswith("measured: "), rec
    assert rec["cases"]["handoff"] == "FAILED", rec
    assert rec["diagnoses"] == ["HANDOFF_MISMATCH"], rec
    assert {c: v for c, v in rec["cases"].items() if c != "handoff"} == {
        "chain0": "PASSED", "chain0.step0.layer0": "PASSED", "chain0.step1.layer0": "PASSED",
        "chain0.step2.layer0": "PASSED"}, rec


def _flip_family(path, family):
    import h5py

    with h5py.File(path, "r+") as f:
        for cid in f["cases"]:
            f["cases"][cid].attrs.create("family", data=family, dtype=h5py.string_dtype())


def test_zero_centred_read_as_plain_fails(tmp_path):
    """The Qwen3.5 dump judged on a plain-weight row (deepseek_v3, the same
    math otherwise) fails everywhere: what passes is the (1 + w) norm form,
    not a tolerance wide enough for either."""
    rec = sweep_sglang.judge_one("qwen3_5", str(tmp_path), _binary())
    assert rec["verdict"] == "PASSED", rec
    dump = os.path.join(str(tmp_path), "qwen3_5.sglang.h5")
    _flip_family(dump, "deepseek_v3")
    v = verify.run(dump, _binary())
    assert v.cases and all(x == "FAILED" for x in v.cases.values()), v.text


def test_qwen3_5_target_pre_norm_handoff_is_named(tmp_path, monkeypatch):
    """Issue 30's field report (LightLLM #1402, Qwen3.5 MTP): the target hands
    draft step 0 the raw pre-norm sum. Built from SGLang's own Qwen3.5 target
    with its final GemmaRMSNorm replaced by the rounded sum: the target_handoff
    case is HANDOFF_MISMATCH under the zero-centred row; the chain passes."""
    from mtpcheck.capture import tiny_sglang

    orig_build = tiny_sglang.build_target

    def build_broken(model_type, args, seed=1):
        target = orig_build(model_type, args, seed)

        def pre_norm(x, residual=None, *a, **kw):
            s = (x.float() + residual.float()).to(x.dtype)
            return s, s

        target.model.norm.forward = pre_norm
        return target

    monkeypatch.setattr(tiny_sglang, "build_target", build_broken)
    rec = sweep_sglang.judge_one("qwen3_5", str(tmp_path), _binary())
    assert rec["cases"]["handoff"] == "FAILED", rec
    assert rec["diagnoses"] == ["HANDOFF_MISMATCH"], rec
    assert all(v == "PASSED" for c, v in rec["cases"].items() if c != "handoff"), rec


def test_mimo_embedding_first_is_named(tmp_path, monkeypatch):
    """The broken copy of MiMo's layer (sglang/srt/models/mimo_mtp.py): its
    input_proj fed [token_layernorm(e), hidden_layernorm(h)], DeepSeek's order,
    instead of MiMo's hidden first: CONCAT_ORDER_SWAPPED on the mimo row."""
    import torch
    from sglang.srt.models import mimo_mtp as m

    def swapped_cat(tensors, dim=0, **kw):
        return torch.cat(tuple(reversed(tensors)), dim=dim, **kw)

    monkeypatch.setattr(m, "torch", type("T", (), {"cat": staticmethod(swapped_cat)}))
    rec = sweep_sglang.judge_one("mimo", str(tmp_path), _binary())
    assert rec["verdict"] == "FAILED", rec
    assert "CONCAT_ORDER_SWAPPED" in rec["diagnoses"], rec


def test_iquest_q1_pre_norm_handed_back_is_named(tmp_path, monkeypatch):
    """The broken copy of IQuest Q1's draft model (iquest_q1_mtp.py): its
    forward hands the logits processor the block's pre-norm sum as
    hidden_states_before_norm, which SGLang then feeds forward, the head
    keeping the post-norm hidden: PRE_NORM_RECYCLE, the hand-off passing."""
    from sglang.srt.models import iquest_q1_mtp as m

    def broken(self, input_ids, positions, forward_batch, input_embeds=None, **kw):
        kept = []
        hook = self.model.mtp_layer.mtp_model_layer.register_forward_hook(
            lambda mod, args, out: kept.append(out.clone()))
        try:
            hidden = self.model(input_ids, positions, forward_batch, input_embeds)
        finally:
            hook.remove()
        return self.logits_processor(input_ids, hidden, self.lm_head, forward_batch,
                                     hidden_states_before_norm=kept[0])

    monkeypatch.setattr(m.IQuestQ1MTP, "forward", broken)
    rec = sweep_sglang.judge_one("iquest_q1", str(tmp_path), _binary())
    assert rec["verdict"] == "FAILED" and rec["cases"]["handoff"] == "PASSED", rec
    assert rec["diagnoses"] == ["PRE_NORM_RECYCLE"], rec


def test_iquest_q1_hidden_first_is_named(tmp_path, monkeypatch):
    """The broken copy of IQuest Q1's layer: eh_proj fed [hnorm(h), enorm(e)]
    (MiMo's order) instead of its embedding first: CONCAT_ORDER_SWAPPED on
    the deepseek_v3 row."""
    import torch
    from sglang.srt.models import iquest_q1_mtp as m

    def swapped_cat(tensors, dim=0, **kw):
        return torch.cat(tuple(reversed(tensors)), dim=dim, **kw)

    monkeypatch.setattr(m, "torch", type("T", (), {"cat": staticmethod(swapped_cat)}))
    rec = sweep_sglang.judge_one("iquest_q1", str(tmp_path), _binary())
    assert rec["verdict"] == "FAILED", rec
    assert "CONCAT_ORDER_SWAPPED" in rec["diagnoses"], rec


def test_iquest_q1_float32_residual_is_refused(tmp_path, monkeypatch):
    """IQuest Q1's own default, `fp32_residual_connection = True` (the sweep's
    tiny draft config turns it off): the block then hands its sum to
    final_layernorm in float32, and the dump format takes a captured
    `block_out` in the activation dtype only, so verify refuses the file (exit
    2) naming that tensor. What judging it would need: a float32 `block_out`
    for a block that adds its residual itself (docs/FINDINGS.md S6)."""
    from mtpcheck.capture import tiny_sglang_configs

    draft = dict(tiny_sglang_configs.DRAFT_CONFIGS["iquest_q1"], fp32_residual_connection=True)
    monkeypatch.setitem(tiny_sglang_configs.DRAFT_CONFIGS, "iquest_q1", draft)
    rec = sweep_sglang.judge_one("iquest_q1", str(tmp_path), _binary())
    assert rec["verdict"] == "ERROR (exit 2)", rec
    assert "'step.0/block_out': dtype float32 not allowed" in " ".join(rec["why"]), rec


def test_deepseek_v4_as_committed(tmp_path):
    """DeepSeek V4 (deepseek_v4_nextn.py): the sweep's own command in a fresh
    process (the mHC Triton kernels inside its block run under Triton's
    interpreter, chosen before SGLang loads): its record as committed, every
    step PASSED on the deepseek_v4 row (internal contract, hc_head `cuda`)."""
    from sweep_records import compared, fresh_process

    _binary()
    fresh_process([sys.executable, "-m", "mtpcheck.capture", "sweep", "--engine", "sglang",
                   "--family", "deepseek_v4", "--out", str(tmp_path)])
    with open(os.path.join(str(tmp_path), "findings.json")) as f:
        got = json.load(f)["records"]
    assert compared(got) == compared(_committed("deepseek_v4"))


def test_deepseek_v4_head_norm_dropped_is_named(tmp_path):
    """The broken copy of SGLang's V4 NextN model (broken_layers.py, a fresh
    process): shared_head.norm skipped, hc_head's output going to the head
    unnormed: HEAD_NORM_MISSING in every case."""
    from sweep_records import broken_records

    _binary()
    (rec,) = broken_records("broken_layers.py", "deepseek_v4", tmp_path)
    assert rec["verdict"] == "FAILED", rec
    assert rec["diagnoses"] == ["HEAD_NORM_MISSING"], rec


def test_step3p5_runs_on_the_multi_layer_worker(tmp_path):
    """Step-3.5: SGLang's create_worker picks MultiLayerEagleWorkerV2 (its
    EAGLE model override), whose draft extend runs step s on runner s, one MTP
    layer each, and chains the hidden the logits processor hands back (the
    worker's chain_mtp_hidden_states list names Step3p5MTP). Every step is
    judged on its own (the loop keeps the target's positions: no draft_chain)."""
    rec = sweep_sglang.judge_one("step3p5", str(tmp_path), _binary())
    assert rec["path"] == "MultiLayerEagleWorkerV2/MultiLayerEagleDraftWorker", rec
    steps = sorted(c for c in rec["cases"] if c.startswith("chain0.step"))
    assert steps == ["chain0.step%d.layer%d" % (s, s) for s in range(sweep.K)], rec
    assert rec["handoff"].startswith("measured: "), rec


def test_step3p5_post_norm_chained_is_named(tmp_path, monkeypatch):
    """The broken copy: Step3p5MTP.forward without its pre-norm snapshot, so
    the logits processor hands back (and the multi-layer worker chains) the
    post-norm hidden; the step3p5 row chains the pre-norm sum: POST_NORM_RECYCLE."""
    from sglang.srt.models import step3p5_mtp as m

    def broken(self, input_ids, positions, forward_batch):
        hidden, _before_norm = self.model(input_ids, positions, forward_batch)
        return self.logits_processor(input_ids, hidden, self.model.shared_head.head,
                                     forward_batch)

    monkeypatch.setattr(m.Step3p5MTP, "forward", broken)
    rec = sweep_sglang.judge_one("step3p5", str(tmp_path), _binary())
    assert rec["verdict"] == "FAILED", rec
    assert rec["diagnoses"] == ["POST_NORM_RECYCLE"], rec


def _step_inputs(path, name):
    import h5py

    with h5py.File(path, "r") as f:
        return {c: f["cases"][c]["inputs"][name][()] for c in sorted(f["cases"])
                if c.startswith("chain0.step")}


def test_gigachat3_5_is_inconsistent_on_either_contract(tmp_path):
    """GigaChat 3.5: its target hands step 0 the post-norm hidden (measured),
    while the multi-layer worker chains each head's pre-norm snapshot into the
    next. On the post-norm deepseek_v3 row the steps are PRE_NORM_RECYCLE;
    the same dump on the pre-norm-chaining kimi_k3 row (the same plain-norm
    glue) passes the steps and names the hand-off HANDOFF_MISMATCH: no
    contract makes both right."""
    rec = sweep_sglang.judge_one("gigachat3_5", str(tmp_path), _binary())
    assert rec["diagnoses"] == ["PRE_NORM_RECYCLE"] and rec["cases"]["handoff"] == "PASSED", rec
    dump = os.path.join(str(tmp_path), "gigachat3_5.sglang.h5")
    _flip_family(dump, "kimi_k3")
    v = verify.run(dump, _binary())
    assert v.cases["handoff"] == "FAILED", v.text
    assert all(x == "PASSED" for c, x in v.cases.items() if c != "handoff"), v.text
    assert "HANDOFF_MISMATCH" in v.text, v.text


def test_mimo_v2_every_step_gets_the_target_hidden(tmp_path):
    """MiMo-V2 is outside the worker's chain_mtp_hidden_states list: every
    step is fed the target's hidden (no recycled hidden to judge), each on its
    own MTP layer; the steps' glue and logits pass on the deepseek_v3 row."""
    import numpy as np

    rec = sweep_sglang.judge_one("mimo_v2", str(tmp_path), _binary())
    assert rec["verdict"] == "PASSED", rec
    fed = list(_step_inputs(os.path.join(str(tmp_path), "mimo_v2.sglang.h5"),
                            "prev_hidden").values())
    assert len(fed) == sweep.K and all(np.array_equal(fed[0], h) for h in fed[1:])


def test_mimo_v2_chained_would_be_named(tmp_path, monkeypatch):
    """The same worker told to chain MiMo-V2 (its architecture added to the
    list the capture reads from the worker's source): each step then gets the
    pre-norm snapshot the draft extend asks for (return_hidden_states_before_
    norm), which the deepseek_v3 row names PRE_NORM_RECYCLE: the recycle check
    is live on this path whenever the engine chains."""
    from mtpcheck.capture import sglang_multi

    orig = sglang_multi.chain_architectures
    monkeypatch.setattr(sglang_multi, "chain_architectures",
                        lambda cls: orig(cls) + ["MiMoV2MTP"])
    rec = sweep_sglang.judge_one("mimo_v2", str(tmp_path), _binary())
    assert rec["verdict"] == "FAILED", rec
    assert rec["diagnoses"] == ["PRE_NORM_RECYCLE"], rec


def test_multi_layer_stand_ins():
    """The two pieces sglang_multi puts in place of GPU code: the token
    rotation (rotate_input_ids' kernel semantics: each request's segment
    shifts left, the new token last) and the chain list, read from the
    worker's own __init__."""
    import torch
    from sglang.srt.speculative.multi_layer_eagle_worker_v2 import MultiLayerEagleDraftWorker

    from mtpcheck.capture import sglang_multi

    ids = torch.tensor([1, 2, 3, 4, 5])
    sglang_multi._rotate(ids, torch.tensor([0, 3]), torch.tensor([3, 2]), torch.tensor([[9], [8]]))
    assert ids.tolist() == [2, 3, 9, 5, 8]
    chained = sglang_multi.chain_architectures(MultiLayerEagleDraftWorker)
    assert "Step3p5MTP" in chained and "GigaChat35ForCausalLMNextN" in chained
    assert "MiMoV2MTP" not in chained
