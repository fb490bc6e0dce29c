"""vLLM 0.33's DeepSeek V3.2 / GLM-5 MTP layer (`DeepseekV32MTPModel`,
vllm/models/deepseek_v32/{nvidia,amd}/mtp.py; docs/FINDINGS.md F15), built
by the sweep from vLLM's own CUDA and ROCm modules (the DSA attention stood
in, the Triton input norms under the interpreter) for `deepseek_v32` and
GLM-5's `glm_moe_dsa`, judged by `mtpcheck verify`. Nothing is declared here:
the records must be what the committed findings say, and copies of the layer
broken in a named way must be named so. The module-tree mirror of the same
layer (vllm_v32_mirror.py, test_mirrors.py) stays: it needs no vLLM."""

import os

from conftest import need

need("torch")
need("vllm")
h5py = need("h5py")

from sweep_records import broken_records, compared, swept

FAMILIES = ("deepseek_v32", "deepseek_v32_amd", "glm_moe_dsa")
# which module built the layer shows in the conventions the capture read
# from it (specs._v32_conventions): CUDA fuses the final add into the norm
FINAL_ADD = {"deepseek_v32": "fused", "deepseek_v32_amd": "unfused", "glm_moe_dsa": "fused"}
PATHS = ["v1:EagleProposer", "v2:MTPSpeculator"]


def test_v32_families_as_committed(tmp_path):
    """The sweep's own command on the three V3.2 families: every record's
    verdict, cases, diagnoses and hand-off note as committed; the layer built
    from the platform module the family names."""
    got, committed = swept(FAMILIES, tmp_path)
    assert len(committed) == 6, "the committed findings lack the V3.2 families"
    assert compared(got) == compared(committed)
    for r in got:
        with h5py.File(os.path.join(str(tmp_path), r["dump"]), "r") as f:
            attrs = f["cases/chain0"].attrs
            assert attrs["final_add"] == FINAL_ADD[r["family"]], r["dump"]
            assert int(attrs["pos0_mask"]) == 1 and attrs["rounding"] == "fused", r["dump"]


def test_v32_pre_norm_fed_forward_named(tmp_path):
    """The CUDA layer keeping the fused add-norm's second output (the bf16
    pre-norm sum) as the hidden it returns for the next step
    (v32_broken.py pre_norm): PRE_NORM_RECYCLE on both paths."""
    recs = broken_records("v32_broken.py", tmp_path, "pre_norm", "deepseek_v32")
    assert [r["path"] for r in recs] == PATHS, recs
    for r in recs:
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["PRE_NORM_RECYCLE"], r


def test_v32_kernel_without_pos0_mask_named(tmp_path):
    """vLLM's own fused input-norm kernel (CUDA: fused_embed_eh_norm; ROCm:
    fused_eh_norm) never shown position 0, so the row at position 0 keeps its
    embedding (v32_broken.py no_pos0_mask): MISSING_POS0_MASK on both modules
    and paths, on step 0 only (the only step with a row at position 0)."""
    recs = broken_records("v32_broken.py", tmp_path, "no_pos0_mask", "deepseek_v32",
                          "deepseek_v32_amd")
    assert [(r["family"], r["path"]) for r in recs] == [
        (f, p) for f in ("deepseek_v32", "deepseek_v32_amd") for p in PATHS], recs
    for r in recs:
        assert r["verdict"] == "FAILED" and r["diagnoses"] == ["MISSING_POS0_MASK"], r
        assert r["cases"]["chain0.step0.layer0"] == "FAILED", r
        assert r["cases"]["chain0.step1.layer0"] == "PASSED", r
