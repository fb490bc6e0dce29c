"""python -m mtpcheck.capture: what a capture records, and how to start one."""

from __future__ import annotations

import argparse
import sys

from . import ENV, parse_env
from .recorder import Bounds
from .specs import SPECS

USAGE = """Start a capture in one of two ways:
  in code:  import mtpcheck.capture
            mtpcheck.capture.install(engine="vllm", path="mtp.h5", steps=3, max_tokens=16)
  vLLM:     %s=PATH[:STEPS[:key=value,...]] vllm serve ... --enforce-eager
            (keys: engine, max_tokens, chains, skip_chains, max_bytes, layers=0+1; %%p in PATH = pid)
Then: mtpcheck verify PATH""" % ENV


def describe(engine: str, bounds: Bounds) -> str:
    lines = ["engine %s; bounds: %s" % (engine, bounds.describe()), "hooked MTP layer classes:"]
    for spec in SPECS[engine]:
        lines.append("  %s  (%s)" % (", ".join(spec.classes), spec.source))
        conv = spec.conventions if not callable(spec.conventions) else {"final_add": "by platform"}
        conv = ", ".join("%s=%s" % kv for kv in sorted(conv.items()))
        lines.append("    declares: block=captured, %s%s" % (conv, ", logits_dtype from the logits"))
        lines.append("    per step, from the layer call: %s" % ", ".join(spec.layer_inputs))
        taps = spec.block_taps or {}
        outs = ", ".join(n for n in spec.block_outputs if n and n not in taps)
        if spec.block_tail:  # the outputs as the final add-norm receives them
            lines.append("    from the block (%s): block_in; from the call of %s: %s"
                         % (spec.block_attr, spec.block_tail, outs))
        elif spec.block_attr:
            lines.append("    from the block (%s): %s" % (spec.block_attr,
                                                          ", ".join(filter(None, (outs, "block_in")))))
        if taps:  # a block with no module of its own, read at its sub-modules
            lines.append("    at sub-modules: " + ", ".join(
                "%s = %s of %s (%d)" % (n, "input" if side == "in" else "output", path, i)
                for n, (path, side, i) in taps.items()))
        lines.append("    parameters: %s" % ", ".join(spec.weights))
        if spec.notes:
            lines.append("    note: " + spec.notes)
    lines += ["from the logits processor: hidden_post (the head GEMM's input), logits",
              ("recycled: the previous_hidden_states the engine passes to the next step "
              "(last step: the engine's own unpacking rule)"),
              "token: the input ids the engine feeds to the next step",
              ("cases written: draft_chain (when the steps line up and the head and embedding table "
              "fit in max_bytes/8) and one mtp_step per step (the judged cases when the head is a "
              "row subset)")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["sweep"]:
        from .sweep import main as sweep_main

        return sweep_main(argv[1:])
    p = argparse.ArgumentParser(prog="python -m mtpcheck.capture", description=__doc__,
                                epilog=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", choices=sorted(SPECS), default="vllm")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--chains", type=int, default=1)
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--max-bytes", type=int, default=256 << 20)
    p.add_argument("--layers", default=None, help="MTP layer indices, e.g. 0,1 (default all)")
    p.add_argument("--env", default=None, help="describe this %s value instead" % ENV)
    p.add_argument("--describe", "--dry-run", action="store_true", dest="describe",
                   help="print what a capture with these settings records, touch nothing")
    a = p.parse_args(argv)
    kw = {"steps": a.steps, "chains": a.chains, "max_tokens": a.max_tokens,
          "max_bytes": a.max_bytes,
          "layers": None if a.layers is None else [int(x) for x in a.layers.split(",")]}
    engine = a.engine
    try:
        if a.env is not None:
            env = parse_env(a.env)
            engine = env.pop("engine", engine)
            print("dump file: %s" % env.pop("path"))
            kw.update(env)
        bounds = Bounds(**kw)
    except ValueError as e:
        print("mtpcheck.capture: %s" % e, file=sys.stderr)
        return 2
    if not a.describe and a.env is None:
        p.print_help()
        return 0
    print(describe(engine, bounds))
    return 0
