"""DeepSeek V4.1's DSpark drafter judged from vLLM 0.33's own amd module
(issue 31, docs/FINDINGS.md F18): built on a CPU as on a gfx942 GPU whose mHC
takes vLLM's fallbacks (capture/tiny_dspark_v41.py), one draft block for two
requests captured (`dspark_step` with `block = captured`, SPEC.md §13.9.1, and
the per-op cases) and judged by `mtpcheck verify`. Nothing is declared here:
each verdict is asserted as verify gave it, and two broken copies of the
drafter must be named. Each run is a fresh process (dspark_v41_amd.py):
`hc_collapse_triton` runs under Triton's interpreter, chosen before vLLM
loads."""

import pytest

from conftest import need
from sweep_records import broken_records

need("torch")
need("vllm")

BLOCK = ["dspark_step.captured.req0", "dspark_step.captured.req1"]
# two block forwards (one per request) of 2 layers, 2 sublayers each; 4 Markov steps
PER_OP = ["confidence.block0", "main_proj_norm.block0", "main_proj_norm.block1",
          "hc_collapse.block0", "hc_collapse.block1"] + \
    ["hc_pre_delayed.call%d" % k for k in range(8)] + ["markov_bias.step%d" % k for k in range(4)]


def _run(variant, tmp_path):
    """{case: [verdict, diagnoses]} of dspark_v41_amd.py's VARIANT."""
    return broken_records("dspark_v41_amd.py", variant, tmp_path)


def test_v41_amd_dspark_passes(tmp_path):
    """FINDING: vLLM 0.33's amd V4.1 DSpark drafter (its decoder layers' mHC
    seams through forward_hip, the final mhc_post_torch and hc_collapse_triton,
    main_proj / main_norm, the head, the Markov loop, the confidence) agrees
    with SPEC.md §13: every captured-block and per-op case PASSED, the
    sublayers' hc_pre_delayed and the final hc_collapse among them."""
    got = _run("correct", tmp_path)
    assert sorted(got) == sorted(BLOCK + PER_OP), got
    assert all(v == ["PASSED", []] for v in got.values()), got


@pytest.mark.parametrize("variant,diagnosis,per_op_failed", [
    ("dropped_bias", "DSPARK_MARKOV_BIAS_DROPPED", ["markov_bias.step%d" % k for k in range(4)]),
    ("early", "DSPARK_POSITIONS_SHIFTED", [])])
def test_v41_amd_broken_copy_named(tmp_path, variant, diagnosis, per_op_failed):
    """The drafter with its Markov bias dropped, or run one position early:
    both captured cases FAILED with the diagnosis named; of the per-op cases
    only the Markov steps see a dropped bias."""
    got = _run(variant, tmp_path)
    for c in BLOCK:
        assert got[c] == ["FAILED", [diagnosis]], got
    for c in PER_OP:
        assert got[c][0] == ("FAILED" if c in per_op_failed else "PASSED"), got
