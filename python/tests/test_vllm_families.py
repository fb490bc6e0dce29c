"""The vLLM 0.33 draft families that docs/FINDINGS.md's coverage once listed as
"not tried" (issue 30): InternS2-Mobius, MiMo-V2-Omni, HY V4, Dots3Note, Step5
and GLM-5-Next, each built from vLLM's own classes by the sweep and judged by
`mtpcheck verify`. Nothing is declared here: the records must be what the
committed findings (docs/findings/vllm-0.33.0.json) say, and a deliberately
broken copy of one of them must be named."""

import json
import os
import subprocess
import sys

import pytest

from conftest import need
from glm5next_broken import layer_forward_replaced

torch = need("torch")
need("vllm")

from mtpcheck import verify
from mtpcheck.capture import sweep

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
FAMILIES = ("interns2_mobius", "mimo_v2_omni", "hy_v4", "dots3_note", "step5", "glm5_next")


def _binary():
    binary = verify.find_binary()
    if binary is None:
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN)")
    return binary


def _fresh_process(cmd):
    """stdout of `cmd` run in a fresh process that imports this tree's mtpcheck."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    run = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def _compared(records):
    """The fields `sweep --check` compares, and the hand-off note (measured
    where, or what stopped it: HY V4's target norms one tensor alone)."""
    return sorted(({f: r.get(f) for f in sweep.COMPARED + ("handoff",)} for r in records),
                  key=lambda r: (r["family"], r["path"]))


def test_formerly_untried_families_as_committed(tmp_path):
    """The sweep's own command on the six families (a fresh process: the
    Triton interpreter that Dots3Note's and GLM-5-Next's input norms need is
    chosen before vLLM loads): every record's verdict, cases and diagnoses as
    committed, hand-off notes included."""
    _binary()
    cmd = [sys.executable, "-m", "mtpcheck.capture", "sweep", "--engine", "vllm",
           "--out", str(tmp_path)]
    for f in FAMILIES:
        cmd += ["--family", f]
    _fresh_process(cmd)
    with open(tmp_path / "findings.json") as f:
        got = json.load(f)["records"]
    with open(os.path.join(ROOT, "docs", "findings", "vllm-0.33.0.json")) as f:
        committed = [r for r in json.load(f)["records"] if r["family"] in FAMILIES]
    assert len(committed) == 12, "the committed findings lack these families"
    assert _compared(got) == _compared(committed)


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
    binary = _binary()
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
    _binary()
    out = _fresh_process([sys.executable, os.path.join(os.path.dirname(__file__),
                                                       "glm5next_broken.py"), str(tmp_path)])
    recs = json.loads(out.strip().splitlines()[-1])
    assert [r["path"] for r in recs] == ["v1:EagleProposer", "v2:MTPSpeculator"], recs
    for r in recs:
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["PRE_NORM_RECYCLE"], r
