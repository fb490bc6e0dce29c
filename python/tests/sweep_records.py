"""What the engine tests of sweep families share: running the sweep's own
command in a fresh process (Triton's interpreter, which some families' kernels
need on a CPU, is chosen before vLLM loads) and comparing its records with the
committed findings (docs/findings/vllm-0.33.0.json) on the fields `sweep
--check` compares, hand-off notes included. Nothing here declares a verdict."""

import json
import os
import subprocess
import sys

import pytest

from mtpcheck import verify
from mtpcheck.capture import sweep

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
COMMITTED = os.path.join(ROOT, "docs", "findings", "vllm-0.33.0.json")


def binary():
    """The mtpcheck binary, or the test skips."""
    found = verify.find_binary()
    if found is None:
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN)")
    return found


def fresh_process(cmd):
    """stdout of `cmd` run in a fresh process that imports this tree's mtpcheck."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    run = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def compared(records):
    """The fields `sweep --check` compares, and the hand-off note (measured
    where, or what stopped it)."""
    return sorted(({f: r.get(f) for f in sweep.COMPARED + ("handoff",)} for r in records),
                  key=lambda r: (r["family"], r["path"]))


def assert_as_committed(tmp_path, families, count):
    """The sweep's own command on `families` (a fresh process): every record's
    verdict, cases and diagnoses as committed, `count` records of them."""
    binary()
    cmd = [sys.executable, "-m", "mtpcheck.capture", "sweep", "--engine", "vllm",
           "--out", str(tmp_path)]
    for f in families:
        cmd += ["--family", f]
    fresh_process(cmd)
    with open(os.path.join(str(tmp_path), "findings.json")) as f:
        got = json.load(f)["records"]
    with open(COMMITTED) as f:
        committed = [r for r in json.load(f)["records"] if r["family"] in families]
    assert len(committed) == count, "the committed findings lack these families"
    assert compared(got) == compared(committed)
