"""DeepSeek V4.1's DSpark drafter on vLLM's real loader (docs/WEIGHTS.md
"DSpark checkpoints"): DSparkDeepseekV4ForCausalLM built on CPU records
today the same parameters, modules and mappings as the fixtures the C test
weights_dspark.sh judges (fixtures/weights/dspark), so those stay the real
loader's; and the capture CLI's own audit line is clean."""

import filecmp
import os
import subprocess

import pytest

ENGINE = os.environ.get("MTPCHECK_ENGINE_TESTS") == "1"
try:
    import vllm
except Exception as e:  # half-installed engines raise more than ImportError
    if ENGINE:
        raise
    pytest.skip(f"vllm not importable (tools/ci/weights.sh runs these): {e}",
                allow_module_level=True)
if not vllm.__version__.startswith("0.33"):
    pytest.skip(f"vLLM {vllm.__version__}: the DSpark class read is 0.33's",
                allow_module_level=True)

from mtpcheck import weights_cli, weights_dspark

BIN = os.environ.get("MTPCHECK_BIN", "build/mtpcheck")
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "..", "fixtures", "weights", "dspark")


@pytest.mark.parametrize("quant", [None, "fp8", "fp4"], ids=["bf16", "fp8", "fp4"])
def test_recorded_fixtures_are_the_real_loaders(tmp_path, quant):
    weights_dspark.record(str(tmp_path), (quant,))
    name = quant or "bf16"
    for sub in (name, name + "-noshared", name + "-mtpkeys", name + "-asmtp"):
        for f in sorted(os.listdir(tmp_path / sub)):
            assert filecmp.cmp(tmp_path / sub / f, os.path.join(FIXTURES, sub, f),
                               shallow=False), f"{sub}/{f} differs from the fixture"


def test_cli_capture_audits_clean(tmp_path, capsys):
    assert weights_cli.main(["--family", "deepseek_v41_dspark", "--quant", "fp8",
                             "--out", str(tmp_path)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("mtpcheck audit-weights ") and "--mtp-layers 3" in line
    r = subprocess.run([BIN] + line.split()[1:], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(DSpark loader), checkpoint kind dspark" in r.stdout
