"""The vLLM 0.33 draft families that docs/FINDINGS.md's coverage once listed as
"not tried" (issue 30): InternS2-Mobius, MiMo-V2-Omni, HY V4, Dots3Note, Step5
and GLM-5-Next, each built from vLLM's own classes by the sweep and judged by
`mtpcheck verify`. Nothing is declared here: the records must be what the
committed findings (docs/findings/vllm-0.33.0.json) say, and a deliberately
broken copy of one of them must be named."""

from conftest import need
from glm5next_broken import layer_forward_replaced

torch = need("torch")
need("vllm")

from mtpcheck.capture import sweep
from sweep_records import assert_as_committed, broken_records, need_binary

FAMILIES = ("interns2_mobius", "mimo_v2_omni", "hy_v4", "dots3_note", "step5", "glm5_next")


def test_formerly_untried_families_as_committed(tmp_path):
    """The sweep's own command on the six families (a fresh process: the
    Triton interpreter that Dots3Note's and GLM-5-Next's input norms need is
    chosen before vLLM loads): every record's verdict, cases and diagnoses as
    committed, hand-off notes included."""
    assert_as_committed(tmp_path, FAMILIES, 12)


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
    (glm5next_broken.py, a fresh process): PRE_NORM_RECYCLE on both paths."""
    recs = broken_records("glm5next_broken.py", tmp_path)
    assert [r["path"] for r in recs] == ["v1:EagleProposer", "v2:MTPSpeculator"], recs
    for r in recs:
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["PRE_NORM_RECYCLE"], r
