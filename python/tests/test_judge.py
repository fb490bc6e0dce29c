"""The tests' own judge (conftest.judge): an exit 2 saying the binary cannot
read the dump skips a test outside CI, and fails it under
MTPCHECK_ENGINE_TESTS=1 (tools/ci/engines.sh), where every dump the capture
writes must be judged."""

import os
import stat

import pytest

import conftest

SAYS = ("/cases/chain0: the captured block is not supported by this build",
        "/cases/chain0: unknown op draft_chain",
        "/cases/chain0/inputs/x: not supported yet")


def _fake_binary(tmp_path, line, rc=2):
    path = tmp_path / "mtpcheck"
    path.write_text("#!/bin/sh\necho 'mtpcheck: %s'\nexit %d\n" % (line, rc))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _outcome():
    """What judge() did: ('skip' | 'fail', message) or ('returned', Verdict)."""
    try:
        return "returned", conftest.judge(os.devnull)
    except pytest.skip.Exception as e:  # caught here, so that a skip cannot pass for a pass
        return "skip", str(e)
    except pytest.fail.Exception as e:
        return "fail", str(e)


@pytest.mark.parametrize("line", SAYS)
def test_cannot_judge_fails_under_engine_tests(tmp_path, monkeypatch, line):
    monkeypatch.setenv("MTPCHECK_BIN", _fake_binary(tmp_path, line))
    monkeypatch.setattr(conftest, "ENGINE_TESTS", True)
    kind, what = _outcome()
    assert kind == "fail" and "cannot judge" in what and line in what, (kind, what)


@pytest.mark.parametrize("line", SAYS)
def test_cannot_judge_skips_elsewhere(tmp_path, monkeypatch, line):
    monkeypatch.setenv("MTPCHECK_BIN", _fake_binary(tmp_path, line))
    monkeypatch.setattr(conftest, "ENGINE_TESTS", False)
    kind, what = _outcome()
    assert kind == "skip" and "cannot judge" in what and line in what, (kind, what)


def test_other_exits_are_returned(tmp_path, monkeypatch):
    """A bad file (exit 2 for another reason) or a verdict is the test's to assert."""
    monkeypatch.setattr(conftest, "ENGINE_TESTS", True)
    for line, rc in (("/cases/c: head_rows not strictly increasing", 2), ("ok", 0)):
        monkeypatch.setenv("MTPCHECK_BIN", _fake_binary(tmp_path, line, rc))
        kind, v = _outcome()
        assert kind == "returned" and v.returncode == rc, (kind, v)
