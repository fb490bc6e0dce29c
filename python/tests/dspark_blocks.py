"""One draft block for two requests through a DSpark drafter with the
captured-block hooks (capture/dspark_block.py), as test_dspark_block.py and
dspark_v41_amd.py run it: the inputs, the two broken copies the captured form
names, the dump written."""

import torch

from mtpcheck.capture import tiny_dspark as td
from mtpcheck.capture.dspark_block import DSparkBlockCapture

C = 5  # context rows per request
CASES = ["dspark_step.captured.req0", "dspark_step.captured.req1"]


def inputs():
    """(aux per request: one [C, H] tensor per target layer, context
    positions, bonus tokens)."""
    gen = torch.Generator().manual_seed(3)
    aux = [[(3 * torch.randn(C, td.H, generator=gen)).to(torch.bfloat16)
            for _ in td.TARGET_LAYERS] for _ in range(2)]
    return aux, [torch.arange(C) + 10, torch.arange(C) + 40], [17, 200]


def capture(model, vcfg, path, drop_bias=False, early=False, per_op=None):
    """One block for two requests; `early`: the drafter run with every block
    position one less (seeded one position early, ik_llama.cpp #2296);
    `drop_bias`: the Markov bias replaced by zeros. Returns the captured
    case ids; `per_op`: a path for the per-op cases too."""
    if early:
        forward = model.forward
        model.forward = lambda ids, pos, *a, **k: forward(ids, pos - 1, *a, **k)
    cap = DSparkBlockCapture(model)

    def on_speculator(spec):
        cap.attach_speculator(spec)
        if drop_bias:
            model.markov_bias = lambda e: torch.zeros(e.shape[0], td.V, dtype=torch.bfloat16)

    try:
        td.run_block(model, vcfg, *inputs(), spec_hook=on_speculator)
    finally:
        cap.remove()
        for name in ("markov_bias", "forward"):
            if name in model.__dict__:
                delattr(model, name)
    if per_op is not None:
        cap.write(str(per_op), description="tiny DSpark, vLLM 0.33 on CPU, per-op cases")
    return cap.write_block(str(path), vcfg.model_config.max_model_len - 1,
                           description="tiny DSpark, vLLM 0.33 on CPU, captured block")
