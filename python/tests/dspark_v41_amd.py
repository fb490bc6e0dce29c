"""Run as a script (a fresh process: `hc_collapse_triton` runs under Triton's
interpreter, which is chosen before vLLM loads): DeepSeek V4.1's DSpark
drafter from vLLM 0.33's amd module (capture/tiny_dspark_v41.py) through one
draft block for two requests, captured (the captured-block `dspark_step`
cases and the per-op cases) and judged by `mtpcheck verify`, as one VARIANT:

  correct       the drafter as vLLM builds it
  dropped_bias  its Markov bias replaced by zeros
  early         its block run one position early (every position less one)

Prints {case: [verdict, [diagnoses]]} of both dumps as JSON on the last line.
Used by test_dspark_v41_amd.py."""

import json
import os
import sys
import tempfile

VARIANTS = {"correct": {}, "dropped_bias": {"drop_bias": True}, "early": {"early": True}}


def main(variant, outdir):
    import torch

    from dspark_blocks import capture
    from mtpcheck import verify
    from mtpcheck.capture import tiny_dspark_v41

    torch.set_num_threads(1)
    model, vcfg = tiny_dspark_v41.build(tempfile.mkdtemp(dir=outdir))
    block, per_op = (os.path.join(outdir, variant + n) for n in ("_block.h5", "_ops.h5"))
    capture(model, vcfg, block, per_op=per_op, **VARIANTS[variant])
    binary = verify.find_binary()
    got = {}
    for path in (block, per_op):
        v = verify.run(path, binary)
        got.update({c: [r, v.diagnoses_of(c)] for c, r in v.cases.items()})
    print(json.dumps(got))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main(sys.argv[1], sys.argv[2])
