"""The sweep's comparison with a committed findings file (no engine needed):
a changed verdict, a changed diagnosis or a record gone are differences;
a wall time or a dump name is not."""

import json

from mtpcheck.capture import sweep


def _rec(**kw):
    r = {"engine": "vllm", "version": "0.33.0", "family": "glm4_moe", "row": "glm",
         "architecture": "Glm4MoeMTPModel", "path": "v1:EagleProposer", "verdict": "FAILED",
         "cases": {"chain0": "FAILED"}, "diagnoses": ["PRE_NORM_RECYCLE"], "dump": "a.h5"}
    r.update(kw)
    return r


def _committed(tmp_path, records):
    p = tmp_path / "findings.json"
    p.write_text(json.dumps({"records": records}))
    return str(p)


def test_same_findings_no_difference(tmp_path):
    path = _committed(tmp_path, [_rec()])
    assert sweep.compare([_rec(dump="other.h5")], path) == []


def test_changed_verdict_is_a_difference(tmp_path):
    path = _committed(tmp_path, [_rec()])
    diffs = sweep.compare([_rec(verdict="PASSED", cases={"chain0": "PASSED"}, diagnoses=[])],
                          path)
    assert any("verdict is 'PASSED'" in d for d in diffs), diffs
    assert any("diagnoses" in d for d in diffs), diffs


def test_missing_and_new_records(tmp_path):
    path = _committed(tmp_path, [_rec(), _rec(path="v2:MTPSpeculator")])
    diffs = sweep.compare([_rec(), _rec(path="v2:Other"), _rec(family="hy_v3")], path)
    assert any("v2:MTPSpeculator: in " in d for d in diffs), diffs
    assert any("v2:Other: new in this sweep" in d for d in diffs), diffs
    assert any("hy_v3 v1:EagleProposer: new in this sweep" in d for d in diffs), diffs


def test_markdown_names_the_diagnosis():
    md = sweep.markdown([_rec(), _rec(family="deepseek_v3", verdict="PASSED", diagnoses=[])])
    assert "| glm4_moe | glm | Glm4MoeMTPModel | v1:EagleProposer | FAILED | PRE_NORM_RECYCLE |" in md
    assert "| deepseek_v3 |" in md


def test_markdown_says_why_a_path_did_not_run():
    md = sweep.markdown([_rec(verdict="ENGINE_ERROR", cases={}, diagnoses=[],
                              why="AttributeError: no use_sequence_parallel_moe")])
    assert "| ENGINE_ERROR | AttributeError: no use_sequence_parallel_moe |" in md
