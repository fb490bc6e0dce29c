"""python -m mtpcheck.weights: the weights capture from the command line.

  python -m mtpcheck.weights --family deepseek_v3|glm --out DIR [--quant fp8]
      [--mtp-layers K]
      a tiny model of the family built from vLLM's classes, and a key list
      named as the published checkpoint;
  python -m mtpcheck.weights --model DIR --keys KEYS --out DIR
      the MTP model of a model folder (its config.json) and a key list (one
      name a line, or a model.safetensors.index.json).

Writes DIR/keys.txt, params.txt, modules.txt and map.txt, and prints the
`mtpcheck audit-weights` command that judges them. Exit 2 on bad input."""

import argparse
import json
import os
import sys

from . import weights


def read_keys(path):
    if path.endswith(".json"):
        with open(path) as f:
            return list(json.load(f)["weight_map"])
    with open(path) as f:
        return [s.strip() for s in f if s.strip() and not s.startswith("#")]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mtpcheck.weights")
    ap.add_argument("--family", choices=("deepseek_v3", "deepseek_v32", "glm"))
    ap.add_argument("--quant", choices=("fp8",))
    ap.add_argument("--mtp-layers", type=int, default=1)
    ap.add_argument("--model")
    ap.add_argument("--keys")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if bool(a.family) == bool(a.model) or bool(a.model) != bool(a.keys):
        print("mtpcheck.weights: give --family, or --model with --keys", file=sys.stderr)
        return 2
    from . import weights_vllm as wv

    os.makedirs(a.out, exist_ok=True)
    try:
        if a.family:
            model_dir = wv.write_config(a.family, a.out, a.quant, a.mtp_layers)
            keys = wv.checkpoint_keys(a.family, a.quant, a.mtp_layers)
        else:
            model_dir, keys = a.model, read_keys(a.keys)
    except (OSError, ValueError, KeyError) as e:
        print("mtpcheck.weights: %s: %s" % (a.keys, e), file=sys.stderr)
        return 2
    model, vcfg = wv.build(model_dir)
    cap = weights.capture(model, weights.zeros(keys))
    p = {n: os.path.join(a.out, n + ".txt") for n in ("keys", "params", "modules", "map")}
    with open(p["keys"], "w") as f:
        f.writelines(k + "\n" for k in keys)
    cap.write(p["params"], p["modules"], p["map"])
    hf = vcfg.model_config.hf_config
    # the audit's families: V3.2 follows the V3 loader rules
    fam = "glm" if "glm" in hf.model_type else "deepseek_v3"
    print("mtpcheck audit-weights --family %s --layer %d --mtp-layers %d --keys %s --params %s "
          "--modules %s --mapping %s" % (fam, hf.num_hidden_layers, a.mtp_layers, p["keys"],
                                         p["params"], p["modules"], p["map"]))
    if cap.error:
        print("load_weights raised: %s" % cap.error, file=sys.stderr)
    return 0
