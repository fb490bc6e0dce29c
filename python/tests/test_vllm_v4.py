"""DeepSeek V4's MTP layer judged from vLLM 0.33's own amd module (issue 30,
docs/FINDINGS.md F14): the sweep's deepseek_v4_amd (one MTP layer) and
deepseek_v4_amd_2layers (two) built on a CPU as on a gfx942 GPU whose mHC takes
vLLM's fallbacks (capture/vllm_standins_v4.py). Nothing is declared here: the
records must be what the committed findings say, the decoder's other control
flow (its fused post/pre seam) is run and judged, and a deliberately broken
copy of the layer must be named. Each run is a fresh process: V4's input and
shared-head norms are Triton kernels, run by the interpreter that is chosen
before vLLM loads."""

import json
import os
import sys

from conftest import need
from sweep_records import assert_as_committed, fresh_process, need_binary

need("torch")
need("vllm")

FAMILIES = ("deepseek_v4_amd", "deepseek_v4_amd_2layers")
PATHS = ["v1:EagleProposer", "v2:MTPSpeculator"]


def _variant(name, tmp_path):
    """The records of v4amd_variants.py's VARIANT run (a fresh process)."""
    need_binary()
    out = fresh_process([sys.executable, os.path.join(os.path.dirname(__file__),
                                                      "v4amd_variants.py"), name, str(tmp_path)])
    return json.loads(out.strip().splitlines()[-1])


def test_v4_amd_families_as_committed(tmp_path):
    """One MTP layer on the V1 EagleProposer and the V2 MTPSpeculator, two MTP
    layers on V1 and on the V2 MultiModuleMTPSpeculator: every record's
    verdict, cases and diagnoses as committed."""
    assert_as_committed(tmp_path, FAMILIES, 4)


def test_v4_amd_fused_seam_control_flow(tmp_path):
    """The amd decoder's fused seam (`use_fused_mhc` set): its block leaves the
    last hc_post to the layer, the contract read from the layer is `deferred`,
    and verify judges the steps under it, on both paths."""
    recs = _variant("fused_seam", tmp_path)
    assert [r["path"] for r in recs] == PATHS, recs
    for r in recs:
        assert r["block_contract"] == "deferred", r
        assert r["verdict"] == "PASSED" and r["diagnoses"] == [], r


def test_v4_amd_unmasked_position0_named(tmp_path):
    """A copy of the amd layer whose fused input norm never masks position 0:
    MISSING_POS0_MASK on both paths (the row at position 0 is step 0's)."""
    recs = _variant("no_pos0_mask", tmp_path)
    assert [r["path"] for r in recs] == PATHS, recs
    for r in recs:
        assert r["block_contract"] == "internal", r
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["MISSING_POS0_MASK"], r
        assert r["cases"]["chain0.step0.layer0"] == "FAILED", r
