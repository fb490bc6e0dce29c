"""The weights capture on vLLM's real loaders (tools/ci/weights.sh): for each
family, vLLM's own load_weights is run over a checkpoint's names on a tiny
MTP model built from vLLM's classes (real attention, MoE MTP block), and the
audit of that real mapping must reach the same findings as the audit
simulated from the same parameter and module lists under the engine's rules
(`--engine vllm@0.33`). The spec's own rules (`--engine spec`) must not."""

import json
import os
import subprocess

import pytest

ENGINE = os.environ.get("MTPCHECK_ENGINE_TESTS") == "1"
try:
    import torch  # noqa: F401
    import vllm  # noqa: F401
except Exception as e:  # half-installed engines raise more than ImportError
    if ENGINE:
        raise
    pytest.skip("vllm not importable (tools/ci/weights.sh runs these): %s" % e,
                allow_module_level=True)

from mtpcheck import weights, weights_vllm  # noqa: E402

BIN = os.environ.get("MTPCHECK_BIN", "build/mtpcheck")
FAMILIES = [("deepseek_v3", 61), ("glm", 92)]
CASES = [(f, n, q) for f, n in FAMILIES for q in (None, "fp8")]


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    out = {}
    for fam, n, q in CASES:
        d = tmp_path_factory.mktemp(fam)
        model, _ = weights_vllm.build(weights_vllm.write_config(fam, str(d), q))
        keys = weights_vllm.checkpoint_keys(fam, q)
        cap = weights.capture(model, weights.zeros(keys))
        assert cap.error is None, cap.error
        files = {k: str(d / (k + ".txt")) for k in ("keys", "params", "modules", "map")}
        with open(files["keys"], "w") as f:
            f.writelines(k + "\n" for k in keys)
        cap.write(files["params"], files["modules"], files["map"])
        out[fam, q] = (n, files, cap)
    return out


def audit(fam, n, files, *extra):
    js = files["map"] + ".%d.json" % abs(hash(extra))
    args = [BIN, "audit-weights", "--family", fam, "--layer", str(n), "--keys", files["keys"],
            "--params", files["params"], "--modules", files["modules"], "--json", js] + list(extra)
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    with open(js) as f:
        doc = json.load(f)
    version = doc.get("schema_version", "1.0")  # docs/RESULTS.md "Schema version"
    assert int(version.split(".")[0]) <= 2, "%s: schema_version %s is newer than this test reads (2.x)" % (js, version)
    return sorted((x["code"], x["key"], x["target"]) for x in doc["findings"])


def pairs(lines):
    return sorted(tuple(s.rstrip("\n").split("\t")[:2]) for s in lines if s.strip() and not s.startswith("#"))


@pytest.mark.parametrize("fam,n,q", CASES)
def test_real_mapping_equals_simulated(captured, fam, n, q):
    _, files, cap = captured[fam, q]
    if q == "fp8":  # every FP8 projection's scale is loaded, and into a scale
        with open(files["map"]) as f:
            rows = [s.split("\t") for s in f if "_scale_inv" in s.split("\t")[0]]
        assert rows and all("weight_scale" in r[1] for r in rows)
    real = audit(fam, n, files, "--mapping", files["map"])
    sim = audit(fam, n, files)
    assert real == sim
    assert real == []  # vLLM 0.33 loads every MTP key of these layouts
    r = subprocess.run([BIN, "audit-weights", "--family", fam, "--layer", str(n), "--keys",
                        files["keys"], "--params", files["params"], "--print-mapping"],
                       capture_output=True, text=True, check=True)
    with open(files["map"]) as f:
        assert pairs(r.stdout.splitlines()) == pairs(f)


@pytest.mark.parametrize("fam,n", FAMILIES)
def test_spec_rules_disagree_with_the_engine(captured, fam, n):
    """The spec's §6 rules against 0.33's parameters: the false
    STALE_WEIGHT_REMAP findings the engine rules remove."""
    _, files, _ = captured[fam, None]
    spec = audit(fam, n, files, "--engine", "spec")
    assert spec and all(code == "STALE_WEIGHT_REMAP" for code, _, _ in spec)
    assert any(".experts.w13_weight" in t for _, _, t in spec)


def test_tampered_mapping_is_named(captured, tmp_path):
    """A mapping that misses the gate bias (a stale remap) is a finding."""
    n, files, _ = captured["deepseek_v3", None]
    with open(files["map"]) as f:
        rows = [s for s in f if "e_score_correction_bias" not in s]
    bad = dict(files, map=str(tmp_path / "bad.txt"))
    with open(bad["map"], "w") as f:
        f.writelines(rows)
    found = audit("deepseek_v3", n, bad, "--mapping", bad["map"])
    assert ("STALE_WEIGHT_REMAP", "",
            "model.layers.61.mtp_block.mlp.gate.e_score_correction_bias") in found or \
        any("e_score_correction_bias" in t for _, _, t in found)


def test_glm_embedding_prefix_recorded(captured):
    """Module prefixes are what vLLM built: the MTP shared head's
    quantization prefix is `model.layers.N.head` (SPEC.md 12.5)."""
    _, _, cap = captured["glm", None]
    mods = dict(cap.modules)
    assert mods["model.layers.92.shared_head.head"] == "model.layers.92.head"
