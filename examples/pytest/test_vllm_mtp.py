"""What an engine's own test suite gains from `pip install mtpcheck`: the plugin's
`mtpcheck_capture` fixture records the MTP draft steps of a model built inside the
test and fails the test, with the diagnosis and the repro line, unless `mtpcheck
verify` passes them (docs/PYTHON.md, "The pytest plugin").

The model is a tiny vLLM DeepSeek V3 MTP layer on CPU, built from vLLM's own
classes (python/tests/vllm_tiny.py: random bf16 weights, attention replaced by a
linear map, a dense MLP), drafting 3 tokens the way vLLM's proposer does.
MTPCHECK_EXAMPLE_BREAK=1 breaks its glue on purpose (the position-0 mask of the
embedding dropped): the test then fails naming MISSING_POS0_MASK.

    pip install .                     # the repository root: the wheel
    pip install vllm==0.33.0 pytest   # CPU
    pytest examples/pytest
"""

import os
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("vllm")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "tests"))
import vllm_tiny  # noqa: E402

K, T = 3, 4  # draft steps, tokens


def drop_pos0_mask(layer):
    """The bug: the layer runs as if no row were at position 0, so the embedding
    of a sequence's first token is not zeroed (the capture still records the
    positions the engine passed)."""
    forward = layer.forward

    # the hooks read the arguments by the forward's parameter names: keep them
    def broken(input_ids, positions, previous_hidden_states, inputs_embeds=None,
               spec_step_index=0):
        return forward(input_ids, positions.clamp(min=1), previous_hidden_states,
                       inputs_embeds, spec_step_index)

    layer.forward = broken


def test_deepseek_v3_mtp_layer(tmp_path, mtpcheck_capture):
    model, vcfg = vllm_tiny.build("deepseek_v3", str(tmp_path), K=K)
    if os.environ.get("MTPCHECK_EXAMPLE_BREAK") == "1":
        for layer in model.model.layers.values():
            drop_pos0_mask(layer)
    gen = torch.Generator().manual_seed(11)
    ids = torch.randint(2, vllm_tiny.V, (T,), generator=gen)
    positions = torch.tensor([0, 7, 8, 20])  # row 0 starts a sequence
    hidden = torch.randn(T, vllm_tiny.H, generator=gen).to(torch.bfloat16)
    with mtpcheck_capture(model, engine="vllm", steps=K):
        vllm_tiny.draft(model, vcfg, ids, positions, hidden, K)
    assert mtpcheck_capture.results.verdicts  # every captured case was judged
