"""vLLM 0.33's real DeepSeek V3 MTP step under tensor_parallel_size = 2 on
two CPU ranks (vLLM's distributed init over gloo; mtpcheck.capture.tp_vllm),
every rank captured and judged by `mtpcheck verify` (issue 32). The verdicts
are findings (docs/FINDINGS.md); each is asserted here as verify gave it.

One spawn of the two ranks runs both variants (vLLM's import is most of the
time): the engine as it is, and rank 1's block reduction removed."""

from __future__ import annotations

import os
from typing import Any

import h5py
import numpy as np
import pytest

from conftest import judge, need

need("torch")
need("vllm")

from mtpcheck.capture import tp_vllm

VARIANTS = (("ok", -1), ("missing1", 1))


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    work = str(tmp_path_factory.mktemp("tp"))
    dirs = tp_vllm.run_ranks(work, 2, VARIANTS)
    return {name: d for (name, _), d in zip(VARIANTS, dirs)}


def _merged(ranks: dict[str, str], name: str, **kw: Any) -> str:
    out = os.path.join(ranks[name], "merged.h5")
    assert tp_vllm.merge_ranks(ranks[name], 2, out, **kw) == ["step0.rank0", "step0.rank1"]
    return out


def test_tp2_step_passes(ranks: dict[str, str]) -> None:
    """FINDING: vLLM 0.33.0's DeepSeek V3 MTP step at TP = 2 (vocab-parallel
    embedding and head, the block MLP column/row-parallel with its all-reduce)
    matches Step V3-8 on both ranks."""
    path = _merged(ranks, "ok")
    with h5py.File(path) as f:
        c = f["cases/step0.rank1"]
        assert c.attrs["tp_rank"] == 1 and c["inputs/block_out_parts"].shape == (2, 4, 64)
        assert c["inputs/block_out_parts"].attrs["tp"] == "partial"
        assert c["inputs/block_in"].attrs["tp"] == "replicated"
        assert c["inputs/head_weight"].shape == (256, 64)  # gathered from the shards
        assert list(c["observed/logits_rows"][()]) == list(range(128, 256))
    v = judge(path)
    assert v.returncode == 0, v.text
    assert v.cases == {"step0.rank0": "PASSED", "step0.rank1": "PASSED"}, v.text


def test_captured_block_out_is_the_sum_of_the_partials(ranks: dict[str, str]) -> None:
    """The partials the tap recorded are what vLLM reduced: the captured
    (reduced) block output is bf16(x0 + x1) bit for bit on both ranks."""
    with h5py.File(_merged(ranks, "ok")) as f:
        parts = f["cases/step0.rank0/inputs/block_out_parts"][()]
    torch = need("torch")
    x = torch.from_numpy(parts.view(np.int16)).view(torch.bfloat16).float()
    want = (x[0] + x[1]).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    for p in range(2):
        with h5py.File(os.path.join(ranks["ok"], f"rank{p:d}.h5")) as f:
            got = f["cases/chain0/inputs/step.0/block_out"][()]
        assert np.array_equal(got, want)


def test_rank1_reduction_removed_is_named(ranks: dict[str, str]) -> None:
    """Rank 1 keeps its own partial (it still joins the collective): verify
    names ALLREDUCE_MISSING on rank 1 and passes rank 0."""
    v = judge(_merged(ranks, "missing1"))
    assert v.returncode == 1, v.text
    assert v.cases == {"step0.rank0": "PASSED", "step0.rank1": "FAILED"}, v.text
    assert v.diagnoses_of("step0.rank1") == ["ALLREDUCE_MISSING"], v.text


def test_gathered_logits_are_not_named(ranks: dict[str, str]) -> None:
    """FINDING: with the gathered logits kept whole, one rank's missing
    reduction reaches every rank through the vocab-parallel head (rank 0's
    second half of the logits is rank 1's work), and verify's per-rank
    hypothesis, which computes every column from the rank's own hidden, names
    nothing: both ranks FAILED without a diagnosis."""
    v = judge(_merged(ranks, "missing1", own_logits=False))
    assert v.returncode == 1, v.text
    assert v.cases == {"step0.rank0": "FAILED", "step0.rank1": "FAILED"}, v.text
    assert v.diagnoses_of("step0.rank0") == [] and v.diagnoses_of("step0.rank1") == [], v.text


def test_rank_files_merged_by_verify(ranks: dict[str, str], tmp_path: Any) -> None:
    """One file per rank (FORMAT.md), given to verify in any order: merged,
    the same verdicts as the one-file dump, named after the first rank file."""
    from mtpcheck import verify

    paths = tp_vllm.write_rank_files(ranks["missing1"], 2, str(tmp_path / "ranks"))
    with h5py.File(paths[1]) as f:
        assert f.attrs["tp_size"] == 2 and f.attrs["tp_rank"] == 1
        assert f["cases/step0/inputs/block_out_part"].shape == (4, 64)
    binary = verify.find_binary()
    if binary is None:
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN)")
    v = verify.run(paths[1], binary, extra=[paths[0]])
    assert v.returncode == 1, v.text
    assert v.cases == {"step0.rank0": "PASSED", "step0.rank1": "FAILED"}, v.text
    assert v.diagnoses_of("step0.rank1") == ["ALLREDUCE_MISSING"], v.text
    assert "rank0.h5+1:step0.rank1" in v.text, v.text
