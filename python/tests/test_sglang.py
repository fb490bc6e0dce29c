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

import pytest

from mtpcheck import verify

COMMITTED = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "findings",
                         "sglang-0.5.23.json")
REQUIRED = os.environ.get("MTPCHECK_SGLANG_TESTS") == "1"

try:
    import sglang  # noqa: F401
except Exception as e:  # torch / sglang raise more than ImportError when half there
    if REQUIRED:
        raise
    pytest.skip("sglang not installed (tools/ci/engines.sh runs these): %s" % e,
                allow_module_level=True)

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


@pytest.mark.parametrize("family", ["glm4_moe", "deepseek_v3"])
def test_family_as_committed(tmp_path, family):
    """GLM-4.5: vLLM 0.33 recycles its pre-norm hidden (F1); SGLang's layer
    norms before the logits processor, which hands that hidden back."""
    rec = sweep_sglang.judge_one(family, str(tmp_path), _binary())
    (want,) = _committed(family)
    for field in sweep.COMPARED:
        assert rec.get(field) == want.get(field), (field, rec, want)


def test_pre_norm_handed_back_is_named(tmp_path, monkeypatch):
    """The broken copy: Glm4MoeForCausalLMNextN.forward passing the pre-norm
    sum (final_norm's own `capture` of the updated residual) to the logits
    processor as hidden_states_before_norm."""
    from sglang.srt.models import glm4_moe_nextn as m

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

    monkeypatch.setattr(m.Glm4MoeForCausalLMNextN, "forward", broken)
    rec = sweep_sglang.judge_one("glm4_moe", str(tmp_path), _binary())
    assert rec["verdict"] == "FAILED", rec
    assert rec["diagnoses"] == ["PRE_NORM_RECYCLE"], rec


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
