"""The Python API (mtpcheck.verify / mtpcheck.run -> mtpcheck.results dataclasses)
and the pytest plugin's fixture, on the bundled bug dumps (docs/PYTHON.md).  The
binary is $MTPCHECK_BIN, the wheel's own, or one on PATH; without one the tests
that run it skip."""

import importlib.metadata
import os

import pytest

import mtpcheck
from mtpcheck import _bin
from mtpcheck.api import options_to_argv
from mtpcheck.results import Results, ResultsError

pytest_plugins = ["pytester"]

HERE = os.path.dirname(os.path.abspath(__file__))
BUGS = os.path.join(HERE, "..", "..", "fixtures", "dumps", "bugs.h5")
if not os.path.exists(BUGS):  # an installed wheel's copy
    BUGS = mtpcheck.data_path("fixtures/dumps/bugs.h5") or BUGS


def need_binary():
    if _bin.find_binary() is None:
        pytest.skip("no mtpcheck binary (MTPCHECK_BIN, the wheel's, or PATH)")


DOC = {
    "format": "mtpcheck-results", "schema_version": "2.3", "format_version": 2,
    "meta": {"tool": "mtpcheck", "version": "0.1.0", "cpus": 2,
             "backends": [{"name": "ref", "device": "scalar", "new": 1}]},
    "command": "verify", "summary": {"FAILED": 1}, "exit_code": 1, "later_field": [1],
    "results": [{"file": "d.h5", "case": "c", "backend": "dump", "verdict": "FAILED",
                 "message": "m", "first_bad_output": "recycled", "repro": "mtpcheck verify d.h5",
                 "seconds": 0.5, "conventions_matched": "x",
                 "diagnosis": {"code": "PRE_NORM_RECYCLE", "ratio": "inf", "text": "t",
                               "hypotheses": [{"code": "PRE_NORM_RECYCLE",
                                               "error_vs_hypothesis": 0,
                                               "error_vs_reference": "nan",
                                               "informative_outputs": 1}]},
                 "outputs": [{"tensor": "recycled", "passed": False, "max_abs": "-inf",
                              "worst_index": [1, 2], "ulp_histogram": [0] * 8,
                              "threshold": {"rtol": 0.016, "atol": 1e-5, "origin": "o"}}]}],
}


def test_results_read_every_field_and_keep_unknown_ones():
    r = Results.from_dict(DOC)
    c = r.results[0]
    assert (c.case, c.verdict, c.diagnosis.code, c.first_bad_output) == (
        "c", "FAILED", "PRE_NORM_RECYCLE", "recycled")
    assert c.diagnosis.ratio == float("inf") and c.outputs[0].max_abs == float("-inf")
    assert c.diagnosis.hypotheses[0].error_vs_reference != c.diagnosis.hypotheses[0].error_vs_reference
    assert c.outputs[0].threshold.rtol == 0.016 and c.outputs[0].worst_index == [1, 2]
    assert c.extra == {"conventions_matched": "x"} and r.extra == {"later_field": [1]}
    assert r.meta.backends[0].name == "ref" and r.meta.backends[0].extra == {"new": 1}
    assert not r.passed and r.failures == [c] and r.diagnoses == ["PRE_NORM_RECYCLE"]
    assert "FAILED" in str(r) and "PRE_NORM_RECYCLE" in str(r)
    assert "repro: mtpcheck verify d.h5" in c.describe()


@pytest.mark.parametrize("doc", [dict(DOC, schema_version="3.0"), dict(DOC, format="mtpcheck-bench"),
                                 [1]])
def test_results_refuse_what_they_cannot_read(doc):
    with pytest.raises(ResultsError):
        Results.from_dict(doc)


def test_options_become_long_options():
    assert options_to_argv({"filter": "v3.*", "full_logits": True, "weights_only": False,
                            "max_bytes": 10, "backend": ["ref", "cpu"], "fixtures": ["a", "b"],
                            "html": None}) == [
        "--filter", "v3.*", "--full-logits", "--max-bytes", "10", "--backend", "ref,cpu",
        "--fixtures", "a", "--fixtures", "b"]


def test_verify_names_the_bugs():
    need_binary()
    r = mtpcheck.verify(BUGS)
    assert r.command == "verify" and r.exit_code == 1 and not r.passed
    assert r.verdicts["v3.ok"] == "PASSED"
    assert r.verdicts["v3.pre_norm_recycle"] == "FAILED"
    assert {"PRE_NORM_RECYCLE", "MISSING_HC_POST", "HC_POST_TWICE", "HC_HEAD_OWNER"} <= set(r.diagnoses)
    bad = next(c for c in r.results if c.case == "v3.pre_norm_recycle")
    assert bad.repro.startswith("mtpcheck verify ") and bad.outputs and bad.seconds >= 0
    assert "v3.pre_norm_recycle  PRE_NORM_RECYCLE" in str(r)
    assert "PRE_NORM_RECYCLE" in r.console  # the binary's own text too
    ok = mtpcheck.verify(BUGS, filter="v3.ok")
    assert ok.passed and ok.verdicts == {"v3.ok": "PASSED"}


def test_verify_check_raises_with_the_diagnosis():
    need_binary()
    with pytest.raises(mtpcheck.MtpcheckFailed) as e:
        mtpcheck.verify(BUGS, filter="v4.hc_post_twice", check=True)
    assert "diagnosis: HC_POST_TWICE" in str(e.value) and "repro: mtpcheck verify" in str(e.value)


def test_verify_bad_input_is_an_error(tmp_path):
    need_binary()
    bad = tmp_path / "not.h5"
    bad.write_text("not hdf5")
    with pytest.raises(mtpcheck.MtpcheckError) as e:
        mtpcheck.verify(bad)
    assert e.value.returncode == 2 and "not.h5" in str(e.value)
    with pytest.raises(TypeError):
        mtpcheck.verify(BUGS, quiet=True)


def test_run_returns_the_suite():
    need_binary()
    r = mtpcheck.run(backend=["ref"], op="rmsnorm", filter="rmsnorm.*")
    assert r.command == "run" and r.passed and r.results
    assert {c.op for c in r.results} == {"rmsnorm"} and r.meta.backends[0].name == "ref"


def test_old_verify_module_still_works():
    need_binary()
    v = mtpcheck.verify.run(BUGS)
    assert v.returncode == 1 and v.cases["v3.pre_norm_recycle"] == "FAILED"


def _plugin_args():
    eps = importlib.metadata.entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    loaded = any(ep.value == "mtpcheck.pytest_plugin" for ep in group)
    return [] if loaded else ["-p", "mtpcheck.pytest_plugin"]


def test_plugin_fails_with_diagnosis_and_repro(pytester):
    need_binary()
    pytester.makepyfile(test_engine="""
        def test_good(mtpcheck_capture):
            mtpcheck_capture.check(%r, filter="v3.ok")

        def test_broken(mtpcheck_capture):
            mtpcheck_capture.check(%r, filter="v3.pre_norm_recycle")
        """ % (os.path.abspath(BUGS), os.path.abspath(BUGS)))
    res = pytester.runpytest_subprocess(*_plugin_args())
    res.assert_outcomes(passed=1, failed=1)
    out = res.stdout.str()
    assert "diagnosis: PRE_NORM_RECYCLE" in out and "repro: mtpcheck verify" in out
    assert "Traceback" not in out  # the diagnosis, not a stack


def test_plugin_capture_without_a_step_fails(pytester):
    pytester.makepyfile(test_empty="""
        def test_nothing_ran(mtpcheck_capture):
            class Cap:
                def write(self): return []
                def remove(self): pass
            import mtpcheck.capture as c
            c.install = lambda **kw: Cap()
            with mtpcheck_capture(object(), steps=2):
                pass
        """)
    res = pytester.runpytest_subprocess(*_plugin_args())
    res.assert_outcomes(failed=1)
    assert "no MTP step" in res.stdout.str()


def test_console_script_needs_a_binary(monkeypatch, capsys):
    if _bin.bundled():
        pytest.skip("this installation bundles the binary")
    monkeypatch.delenv("MTPCHECK_BIN", raising=False)
    assert _bin.main(["--version"]) == 2
    assert "no binary" in capsys.readouterr().err
