"""The vLLM 0.33 draft families that docs/FINDINGS.md's coverage once listed as
"not tried" or "not judged" (issue 30): InternS2-Mobius, MiMo-V2-Omni, HY V4,
Dots3Note, Step5, GLM-5-Next, Kimi K3, MiniMax M3 and Inkling, each built from vLLM's own classes by
the sweep and judged by `mtpcheck verify`. Nothing is declared here: the
records must be what the committed findings (docs/findings/vllm-0.33.0.json)
say, and a deliberately broken copy of a layer must be named."""

from broken_layers import layer_forward_replaced
from conftest import need

torch = need("torch")
need("vllm")

from mtpcheck.capture import sweep
from sweep_records import assert_as_committed, broken_records, need_binary

FAMILIES = ("interns2_mobius", "mimo_v2_omni", "hy_v4", "dots3_note", "step5", "glm5_next")


def _broken_layer(tmp_path, family):
    """The sweep's records of `family` with its layer replaced by the broken
    copy broken_layers.py holds for it (a fresh process)."""
    recs = broken_records("broken_layers.py", family, tmp_path)
    assert [r["path"] for r in recs] == ["v1:EagleProposer", "v2:MTPSpeculator"], recs
    return recs


def test_formerly_untried_families_as_committed(tmp_path):
    """The six families once marked "not tried", as committed."""
    assert_as_committed(tmp_path, FAMILIES, 12)


def test_kimi_k3_as_committed(tmp_path):
    """Kimi K3 (F16), built from its nvidia modules (vLLM's choice off ROCm)
    and from its amd ones: its CUDA streams, MLA attention and MoE stood in,
    its Triton fused_mtp_input under the interpreter, judged on the kimi_k3
    row on both proposer paths with the step-0 hand-off of its tiny target, as
    committed."""
    assert_as_committed(tmp_path, ("kimi_k3", "kimi_k3_amd"), 4)


def _hyv4_embedding_last(self, input_ids, positions, previous_hidden_states,
                         inputs_embeds=None):
    """HYV4MultiTokenPredictorLayer.forward (vLLM 0.33) with eh_proj's input
    halves swapped: [hnorm h, enorm e]."""
    e = self.enorm(inputs_embeds)
    h = self.hnorm(previous_hidden_states)
    hidden_states = self.eh_proj(torch.cat([h, e], dim=-1))
    hidden_states, residual = self.mtp_block(positions=positions, hidden_states=hidden_states,
                                             residual=None)
    hidden_states, _ = self.final_layernorm(hidden_states, residual)
    return hidden_states


def test_hy_v4_swapped_halves_named(tmp_path, monkeypatch):
    """HY V4's layer concatenating [hidden, embedding]: the sweep's verify
    names CONCAT_ORDER_SWAPPED on both paths."""
    binary = need_binary()
    from mtpcheck.capture import tiny_vllm

    monkeypatch.setattr(tiny_vllm, "construct", layer_forward_replaced(
        tiny_vllm.construct, "HYV4MultiTokenPredictorLayer", _hyv4_embedding_last))
    recs = sweep.sweep(["hy_v4"], str(tmp_path), binary)
    assert [r["path"] for r in recs] == ["v1:EagleProposer", "v2:MTPSpeculator"], recs
    for r in recs:
        assert r["verdict"] == "FAILED" and "CONCAT_ORDER_SWAPPED" in r["diagnoses"], r


def test_glm5_next_pre_norm_fed_forward_named(tmp_path):
    """GLM-5-Next's layer, run with its Triton input norm under the
    interpreter, replaced by a copy that feeds the next step the pre-norm sum
    (broken_layers.py): PRE_NORM_RECYCLE on both paths."""
    for r in _broken_layer(tmp_path, "glm5_next"):
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["PRE_NORM_RECYCLE"], r


def test_kimi_k3_post_norm_fed_forward_named(tmp_path):
    """Kimi K3's layer replaced by a copy that feeds the next step the
    post-norm hidden instead of the pre-norm sum (broken_layers.py): every
    draft case FAILED, named POST_NORM_RECYCLE on both paths; the hand-off,
    which the copy does not touch, still PASSED."""
    for r in _broken_layer(tmp_path, "kimi_k3"):
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["POST_NORM_RECYCLE"], r
        assert r["cases"].pop("handoff") == "PASSED", r
        assert set(r["cases"].values()) == {"FAILED"}, r


MINIMAX_M3 = ("minimax_m3", "minimax_m3_amd", "minimax_m3_2modules")


def test_minimax_m3_as_committed(tmp_path):
    """MiniMax M3 (F17), from its nvidia modules (FlashInfer's two Gemma norm
    kernels stood in by torch) and its amd ones (its own Triton norms under
    the interpreter), one and two MTP modules: its sparse attention and MoE
    stood in, judged on the qwen3_next row on both proposer paths with the
    step-0 hand-off of its tiny target, as committed."""
    assert_as_committed(tmp_path, MINIMAX_M3, 6)


def test_minimax_m3_post_norm_returned_passes(tmp_path):
    """MiniMax M3's layer replaced by the fix its row implies (broken_layers.py:
    final_layernorm(h + r) returned, the head alone in compute_logits), the
    stand-ins unchanged: one module PASSED on both paths and both builds, so
    the PRE_NORM_RECYCLE of vLLM's layer is not the stand-ins'; two modules
    FAILED on both paths as SPEC_STEP_LAYER_REUSE alone, every step case
    PASSED (each path runs module 0 at every step)."""
    recs = broken_records("broken_layers.py", ",".join(MINIMAX_M3), tmp_path)
    assert [(r["family"], r["path"]) for r in recs] == [
        (f, p) for f in MINIMAX_M3 for p in ("v1:EagleProposer", "v2:MTPSpeculator")], recs
    for r in recs:
        if r["family"] != "minimax_m3_2modules":
            assert r["verdict"] == "PASSED", r
            continue
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["SPEC_STEP_LAYER_REUSE"], r
        assert r["cases"].pop("chain0") == "FAILED", r
        assert set(r["cases"].values()) == {"PASSED"}, r


def test_inkling_as_committed(tmp_path):
    """Inkling (F19), from its nvidia and its amd modules: its attention stood in, its
    Triton norms and SiLU under the interpreter (grids sized for one SM), its
    short convolutions on their own no-metadata path, judged on the inkling row
    (two embedding norms, the mup head) on both proposer paths, as committed."""
    assert_as_committed(tmp_path, ("inkling", "inkling_amd"), 4)


def test_inkling_embedding_first_named(tmp_path):
    """Inkling's predictor (both builds) replaced by a copy that concatenates the
    embedding first (broken_layers.py): every case FAILED, named
    CONCAT_ORDER_SWAPPED on both paths."""
    recs = broken_records("broken_layers.py", "inkling,inkling_amd", tmp_path)
    assert [(r["family"], r["path"]) for r in recs] == [
        (f, p) for f in ("inkling", "inkling_amd")
        for p in ("v1:EagleProposer", "v2:MTPSpeculator")], recs
    for r in recs:
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["CONCAT_ORDER_SWAPPED"], r
        assert set(r["cases"].values()) == {"FAILED"}, r


def test_inkling_mup_dropped_named(tmp_path):
    """Inkling's compute_logits replaced by its own `not mup` path (the plain
    logits processor, broken_layers.py): every case FAILED on its logits alone,
    named LOGITS_MUP_DROPPED on both paths."""
    recs = broken_records("broken_layers.py", "inkling/mup_dropped", tmp_path)
    assert [r["path"] for r in recs] == ["v1:EagleProposer", "v2:MTPSpeculator"], recs
    for r in recs:
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["LOGITS_MUP_DROPPED"], r
        assert set(r["cases"].values()) == {"FAILED"}, r
