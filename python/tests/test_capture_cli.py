"""The capture's user interface without an engine: the environment variable,
the bounds, and `python -m mtpcheck.capture` (no torch needed)."""

import subprocess
import sys

import pytest

from mtpcheck import capture
from mtpcheck.capture.recorder import Bounds


def test_parse_env():
    assert capture.parse_env("/tmp/x.h5") == {"path": "/tmp/x.h5"}
    kw = capture.parse_env("/tmp/x-%p.h5:4:max_tokens=8,layers=0+1,engine=sglang,max_bytes=1000")
    assert kw == {"path": "/tmp/x-%p.h5", "steps": 4, "max_tokens": 8, "layers": [0, 1],
                  "engine": "sglang", "max_bytes": 1000}
    for bad in (":3", "/tmp/x.h5:three", "/tmp/x.h5:3:colour=red"):
        with pytest.raises(ValueError):
            capture.parse_env(bad)


def test_bounds_refuse_nonsense():
    for kw in ({"steps": 0}, {"max_tokens": 0}, {"max_bytes": 0}, {"chains": 0}, {"skip_chains": -1}):
        with pytest.raises(ValueError):
            Bounds(**kw)
    assert "at most 4 token rows" in Bounds(max_tokens=4).describe()


def test_unknown_engine_refused():
    with pytest.raises(ValueError):
        capture.install(engine="tgi", path="/tmp/never.h5", model=object())


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "mtpcheck.capture", *args], capture_output=True,
                          text=True, timeout=120, check=False)


def test_cli_describe():
    p = _cli("--describe", "--engine", "vllm", "--steps", "2", "--max-tokens", "8")
    assert p.returncode == 0, p.stderr
    for word in ("DeepSeekMultiTokenPredictorLayer", "Glm4MoeMultiTokenPredictorLayer",
                 "DeepseekV32MultiTokenPredictorLayer", "DeepSeekV4MultiTokenPredictorLayer",
                 "2 draft step(s)", "at most 8 token rows", "recycled",
                 "block_out = output of mlp (0)", "ExaoneMoeMultiTokenPredictor"):
        assert word in p.stdout, word
    p = _cli("--describe", "--engine", "sglang")
    assert p.returncode == 0 and "DeepseekModelNextN" in p.stdout
    p = _cli("--env", "/tmp/x.h5:2:max_tokens=3")
    assert p.returncode == 0 and "dump file: /tmp/x.h5" in p.stdout and "3 token rows" in p.stdout
    p = _cli("--env", "/tmp/x.h5:2:bogus=1")
    assert p.returncode == 2 and "bogus" in p.stderr
    p = _cli("--help")
    assert p.returncode == 0 and "MTPCHECK_CAPTURE" in p.stdout
