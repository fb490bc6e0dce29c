"""python -m mtpcheck.weights: the weights capture from the command line.

  python -m mtpcheck.weights --family deepseek_v3|deepseek_v32|glm|glm5|deepseek_v4|
      deepseek_v4_pro|deepseek_v41_dspark --out DIR [--quant fp8|ct-fp8|fp4] [--mtp-layers K]
      [--cuda-class]
      a tiny model of the family built from vLLM's classes, and a key list
      named as the published checkpoint (FP8: with dtypes and shapes);
  python -m mtpcheck.weights --model DIR (--keys KEYS | --checkpoint) --out DIR
      the MTP model of a model folder (its config.json) and a key list (one
      name a line, or a model.safetensors.index.json), or (--checkpoint) the
      dtypes and shapes of the folder's own safetensors headers.

--cuda-class builds V3.2 / GLM-5 with the CUDA platform's MTP class
(vllm/models/deepseek_v32/nvidia/mtp.py, the loader GPUs run) instead of
the class the CPU platform registers (deepseek_mtp.py). DeepSeek V4 is always
built with the CUDA class (models/deepseek_v4/nvidia/mtp.py; the CPU one is
a stub); its --quant fp8 has FP8 experts, fp4 MXFP4 experts (V4-Flash),
ct-fp8 compressed-tensors block FP8 with e_proj / h_proj ignored.
deepseek_v41_dspark builds DeepSeek V4.1's DSpark drafter (three stages,
vllm/models/deepseek_v41/nvidia/dspark.py DSparkDeepseekV4ForCausalLM) and
records its own load_weights; --quant fp8 / fp4 as for V4. vLLM 0.23
has no CUDA V3.2 class: --cuda-class there is an error (exit 2).

Writes DIR/keys.txt, params.txt, modules.txt and map.txt, and prints the
`mtpcheck audit-weights` command that judges them. Exit 2 on bad input."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable

from . import weights


def read_keys(path: str) -> list[str]:
    """The checkpoint keys of a model.safetensors.index.json (its weight_map) or a
    text file of one key a line (# comments)."""
    if path.endswith(".json"):
        with open(path) as f:
            return list(json.load(f)["weight_map"])
    with open(path) as f:
        return [s.strip() for s in f if s.strip() and not s.startswith("#")]


DSPARK = "deepseek_v41_dspark"


def write_capture(out: str, keys: Iterable[str], cap: weights.Capture) -> dict[str, str]:
    """DIR/keys.txt, params.txt, modules.txt, map.txt; their paths."""
    p = {n: os.path.join(out, n + ".txt") for n in ("keys", "params", "modules", "map")}
    with open(p["keys"], "w") as f:
        f.writelines(k + "\n" for k in keys)
    cap.write(p["params"], p["modules"], p["map"])
    return p


def dspark(a: argparse.Namespace) -> int:
    """--family deepseek_v41_dspark: vLLM 0.33's DSparkDeepseekV4ForCausalLM
    (models/deepseek_v41/nvidia/dspark.py) on a tiny V4.1 config and a key
    list named as a V4.1 checkpoint's DSpark stages (weights_dspark.py)."""
    from . import weights_dspark as wd

    if a.mtp_layers != 1 or a.quant == "ct-fp8" or a.cuda_class:
        print(f"mtpcheck.weights: --family {DSPARK}: {wd.STAGES} stages; --quant fp8 or fp4 "
              "only; no --mtp-layers or --cuda-class", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    tensors = wd.checkpoint_tensors(a.quant)
    keys = [k for k, _, _ in tensors]
    model, _ = wd.build(wd.write_config(a.out, a.quant))
    cap = weights.capture(model, weights.zeros(keys, {k: s for k, _, s in tensors},
                                               dtypes={k: d for k, d, _ in tensors}))
    p = write_capture(a.out, keys, cap)
    ed = " --expert-dtype fp8" if a.quant == "fp8" else ""
    print(f"mtpcheck audit-weights --family deepseek_v4 --layer {wd.N} --mtp-layers {wd.STAGES}"
          f"{ed} --keys {p['keys']} --params {p['params']} --modules {p['modules']} "
          f"--mapping {p['map']}")
    if cap.error:
        print(f"load_weights raised: {cap.error}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mtpcheck.weights")
    ap.add_argument("--family", choices=("deepseek_v3", "deepseek_v32", "glm", "glm5", "deepseek_v4",
                                         "deepseek_v4_pro", DSPARK))
    ap.add_argument("--quant", choices=("fp8", "ct-fp8", "fp4"))
    ap.add_argument("--mtp-layers", type=int, default=1)
    ap.add_argument("--cuda-class", action="store_true")
    ap.add_argument("--model")
    ap.add_argument("--keys")
    ap.add_argument("--checkpoint", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if bool(a.family) == bool(a.model) or (a.model and bool(a.keys) == a.checkpoint):
        print("mtpcheck.weights: give --family, or --model with --keys or --checkpoint",
              file=sys.stderr)
        return 2
    if a.family == DSPARK:
        return dspark(a)
    from . import weights_vllm as wv

    os.makedirs(a.out, exist_ok=True)
    src = a.keys or a.model
    try:
        if a.family:
            model_dir = wv.write_config(a.family, a.out, a.quant, a.mtp_layers)
            tensors = wv.checkpoint_tensors(a.family, a.quant, a.mtp_layers)
        elif a.checkpoint:
            model_dir, tensors = a.model, weights.checkpoint_headers(a.model)
        else:
            model_dir, tensors = a.model, [(k, None, (1,)) for k in read_keys(a.keys)]
    except (OSError, ValueError, KeyError) as e:
        print(f"mtpcheck.weights: {src}: {e}", file=sys.stderr)
        return 2
    keys = [k for k, _, _ in tensors]
    try:
        cls = wv.cuda_mtp_class() if a.cuda_class else None
    except ImportError:  # vLLM 0.23: no vllm/models/deepseek_v32 folder
        import vllm

        print(f"mtpcheck.weights: --cuda-class: vLLM {vllm.__version__} has no "
              "vllm/models/deepseek_v32/nvidia/mtp.py (DeepseekV32MTP); its V3.2 / GLM-5 MTP "
              "model is deepseek_mtp.py DeepSeekMTP (run without --cuda-class)", file=sys.stderr)
        return 2
    model, vcfg = wv.build(model_dir, cls)
    cap = weights.capture(model, weights.zeros(
        keys, {k: s for k, _, s in tensors}, dtypes={k: d for k, d, _ in tensors if d},
        meta=a.checkpoint))
    p = write_capture(a.out, keys, cap)
    hf = vcfg.model_config.hf_config
    # the audit's families: V3.2 and GLM-5 follow the V3 loader rules
    arch = hf.architectures[0]
    fam = ("glm" if arch.startswith("Glm4Moe") else
           "deepseek_v4" if arch == "DeepSeekV4MTPModel" else "deepseek_v3")
    if fam == "deepseek_v4" and getattr(hf, "expert_dtype", "fp4") == "fp8":
        fam += " --expert-dtype fp8"
    import vllm

    if vllm.__version__.startswith("0.23"):  # judged under its own rules
        fam += " --engine vllm@0.23"
    keys_opt = f"--checkpoint {a.model}" if a.checkpoint else "--keys {}".format(p["keys"])
    print(f"mtpcheck audit-weights --family {fam} --layer {hf.num_hidden_layers:d} "
          f"--mtp-layers {a.mtp_layers:d} {keys_opt} --params {p['params']} "
          f"--modules {p['modules']} --mapping {p['map']}")
    if cap.error:
        print(f"load_weights raised: {cap.error}", file=sys.stderr)
    return 0
