"""What the vLLM family tests share (test_vllm_families.py, test_vllm_v32.py,
test_vllm_v4.py):
the sweep's own command run in a fresh process (the Triton interpreter that
some layers' input norms need is chosen before vLLM loads), its records next
to the committed ones (docs/findings/vllm-0.33.0.json), and a broken-copy
script's records."""

import json
import os
import subprocess
import sys

import pytest

from mtpcheck import verify
from mtpcheck.capture import sweep

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def need_binary():
    """The mtpcheck binary, or the test skips."""
    binary = verify.find_binary()
    if binary is None:
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN)")
    return binary


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


def swept(families, out):
    """(the records of `sweep --family F...` run in a fresh process, the
    committed records of those families)."""
    need_binary()
    cmd = [sys.executable, "-m", "mtpcheck.capture", "sweep", "--engine", "vllm",
           "--out", str(out)]
    for f in families:
        cmd += ["--family", f]
    fresh_process(cmd)
    with open(os.path.join(str(out), "findings.json")) as f:
        got = json.load(f)["records"]
    with open(os.path.join(ROOT, "docs", "findings", "vllm-0.33.0.json")) as f:
        committed = [r for r in json.load(f)["records"] if r["family"] in families]
    return got, committed


def broken_records(script, *args):
    """The records a broken-copy script (broken_layers.py, v32_broken.py)
    prints, run in a fresh process."""
    need_binary()
    out = fresh_process([sys.executable, os.path.join(os.path.dirname(__file__), script)]
                        + [str(a) for a in args])
    return json.loads(out.strip().splitlines()[-1])


def assert_as_committed(tmp_path, families, count):
    """The sweep's own command on `families` (a fresh process): every record's
    verdict, cases and diagnoses as committed, `count` records of them."""
    got, committed = swept(families, tmp_path)
    assert len(committed) == count, "the committed findings lack these families"
    assert compared(got) == compared(committed)
